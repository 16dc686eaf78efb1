"""Formatting shared by the renderers (no decisions: those are made in fanin.report.build)."""

from __future__ import annotations

import html
import json
from functools import lru_cache
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
    """JSON that stays on one line while it fits, so observed values read like the probe's data.

    A value read from a result set is JSON data (string keys, lists), whose one-line form is
    json.dumps' own: made in C, and most values fit on their line. A value that does not is laid
    out once per report run for each text (the copies of an observation across cells share it)."""
    flat = json.dumps(value, sort_keys=True, ensure_ascii=False)
    if len(indent) + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    key = (flat, indent, width)
    laid_out = _LAID_OUT.get(key)
    if laid_out is None:
        if len(_LAID_OUT) >= _LAID_OUT_MAX:  # bounded in a long-lived process (tests, watch)
            _LAID_OUT.clear()
        memo: dict[int, str] = {}
        _flat(value, memo)
        laid_out = _LAID_OUT[key] = _pretty(value, indent, width, memo)
    return laid_out


_LAID_OUT: dict[tuple[str, str, int], str] = {}
_LAID_OUT_MAX = 8192


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


# The HTML page escapes the same probe ids, labels and versions tens of thousands of times.
escape = lru_cache(maxsize=65536)(html.escape)


@lru_cache(maxsize=8192)
def escape_text(text: str) -> str:
    """Text between tags (a <pre> of JSON or code): quotes stay quotes, a sixth of a probe section's bytes."""
    return html.escape(text, quote=False)
