"""Is a new observation the same behaviour as the reference?

Breaking: the outcome, the hazard or the observed value changed, or a probe
vanished. Minor: only the human text changed (label or detail, e.g. an error
message reworded). New: nothing to compare with. Kept free of pytest and tabulate so
the plugin (inside a framework's venv) and the CLI share one definition.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fanin.model import Observation, ResultSet

SAME = "same"
MINOR = "minor"
BREAKING = "breaking"
NEW = "new"
MISSING = "missing"

_COMPARED = ("outcome", "hazard", "value")


@dataclass(frozen=True)
class Change:
    probe_id: str
    kind: str
    before: Observation | None
    after: Observation | None
    fields: tuple[str, ...] = ()

    @property
    def is_breaking(self) -> bool:
        return self.kind in (BREAKING, MISSING)


def classify(probe_id: str, before: Observation | None, after: Observation | None) -> Change:
    if before is None and after is None:
        raise ValueError("nothing to compare")
    if before is None:
        return Change(probe_id, NEW, None, after)
    if after is None:
        return Change(probe_id, MISSING, before, None)
    fields = tuple(name for name in (*_COMPARED, "label", "detail") if getattr(before, name) != getattr(after, name))
    if before.hazard == after.hazard == "nondeterministic":
        # Such a probe's detail carries the counts of its own repeats; only its outcome set is behaviour.
        fields = tuple(name for name in fields if name != "detail")
    if not fields:
        kind = SAME
    elif any(name in _COMPARED for name in fields):
        kind = BREAKING
    else:
        kind = MINOR
    return Change(probe_id, kind, before, after, fields)


def diff(base: ResultSet, new: ResultSet, probe_ids: set[str] | None = None) -> list[Change]:
    """Every probe that is not the same, in id order. `probe_ids` limits the comparison."""
    ids = set(base.observations) | set(new.observations)
    if probe_ids is not None:
        ids &= probe_ids
    changes = [classify(pid, base.observations.get(pid), new.observations.get(pid)) for pid in sorted(ids)]
    return [change for change in changes if change.kind != SAME]


def value_differences(before: Any, after: Any, path: str = "value") -> Iterator[tuple[str, Any, Any]]:
    """The paths where two JSON values differ, so a before/after shows the change, not two blobs."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            missing = object()
            b, a = before.get(key, missing), after.get(key, missing)
            if b is missing:
                yield f"{path}.{key}", "(absent)", a
            elif a is missing:
                yield f"{path}.{key}", b, "(absent)"
            else:
                yield from value_differences(b, a, f"{path}.{key}")
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (b, a) in enumerate(zip(before, after)):
            yield from value_differences(b, a, f"{path}[{index}]")
    elif before != after:
        yield path, before, after


def compact(value: Any) -> str:
    return value if isinstance(value, str) and value == "(absent)" else json.dumps(value, sort_keys=True, ensure_ascii=False)


def describe(change: Change) -> str:
    """A readable before/after for one changed probe (pytest failure text, `diff` detail)."""
    lines = [f"{change.probe_id}: {change.kind}"]
    if change.before is None:
        assert change.after is not None
        lines.append(f"  no reference observation; observed: {change.after.outcome} [{change.after.hazard}] {change.after.detail}")
        return "\n".join(lines)
    if change.after is None:
        lines.append(f"  not observed in this run; reference: {change.before.outcome} [{change.before.hazard}] {change.before.detail}")
        return "\n".join(lines)
    for name in ("outcome", "hazard", "label", "detail"):
        if name in change.fields:
            lines.append(f"  {name}:")
            lines.append(f"    before: {getattr(change.before, name)}")
            lines.append(f"    after:  {getattr(change.after, name)}")
    if "value" in change.fields:
        lines.append("  value:")
        for path, before, after in value_differences(change.before.value, change.after.value):
            lines.append(f"    {path}")
            lines.append(f"      before: {compact(before)}")
            lines.append(f"      after:  {compact(after)}")
    return "\n".join(lines)
