"""Formatting shared by the renderers (no decisions: those are made in fanin.report.build)."""

from __future__ import annotations

import json
from typing import Any


def _flat(value: Any, memo: dict[int, str]) -> str:
    """json.dumps(value, sort_keys=True, ensure_ascii=False), made once per node and remembered."""
    if isinstance(value, dict):
        text = (
            "{"
            + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_flat(v, memo)}" for k, v in sorted(value.items()))
            + "}"
        )
    elif isinstance(value, list):
        text = "[" + ", ".join(_flat(v, memo) for v in value) + "]"
    else:
        text = json.dumps(value, ensure_ascii=False)
    memo[id(value)] = text
    return text


def pretty_json(value: object, indent: str = "", width: int = 88) -> str:
    """JSON that stays on one line while it fits, so observed values read like the probe's data."""
    memo: dict[int, str] = {}
    _flat(value, memo)
    return _pretty(value, indent, width, memo)


def _pretty(value: Any, indent: str, width: int, memo: dict[int, str]) -> str:
    flat = memo[id(value)]
    if len(indent) + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + " "
    if isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {_pretty(v, inner, width, memo).lstrip()}"
            for k, v in sorted(value.items())
        ]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [inner + _pretty(v, inner, width, memo).lstrip() for v in value]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"
