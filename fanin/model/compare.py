"""Is a new observation the same behaviour as another one, and if not, which way did it move?

One classifier for everything that compares: a probe run against its reference, `diff`,
the upgrade gate and the report's compare view. Behaviour is `Observation.behaviour`
(outcome, hazard, value); label and detail are wording. A behaviour change has a
direction, by the legend's order of harm (safe < order-coupled < loud, nondeterministic < hangs
< silent):

- regression: the hazard got worse, or an observed probe became n/a (its API is gone);
- fix: the hazard got better;
- new coverage: n/a before, observed now (the API appeared);
- changed: same hazard, another outcome or value.

A sub-case of a probe (a variant of a mitigation, a mode inside its value) that is n/a on one side
moves the same way as a whole probe: when every difference of the two values is such a sub-case
appearing, it is new coverage (the hazard it brings is the new API's, nothing a caller used moved);
when every one is a sub-case gone, a regression.

`probe --here` judges the user's version, not a reference cell, so a difference that is not that
version's own behaviour is named for what it is (`Standing`, `standing`): as the newer reference
(a version between two cells, where the newer one already shows it), not covered here (a module
this environment lacks), could not judge (the run timed out here). None of them fails the gate.

Kept free of pytest and tabulate so the plugin (inside a framework's venv) and the CLI
share it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from fanin.model.results import (
    NEEDS_EARLIER_RELEASE,
    NOT_APPLICABLE,
    PROBE_ERROR,
    TIMEOUT,
    VACUOUS,
    Hazard,
    Observation,
    ResultSet,
)


class Kind(str, Enum):
    SAME = "same"
    WORDING = "wording"  # label or detail only: listed, never a failure
    BEHAVIOUR = "behaviour"  # outcome, hazard or value: see `direction`
    NEW = "new"  # no observation to compare with
    MISSING = "missing"  # the probe is gone from the newer run


class Direction(str, Enum):
    REGRESSION = "regression"
    FIX = "fix"
    NEW_COVERAGE = "new coverage"
    CHANGED = "changed"


class Standing(str, Enum):
    """Why a probe --here difference from the reference is not the installed version's own behaviour."""

    AS_NEWER = "as the newer reference"
    NOT_COVERED = "not covered here"
    COULD_NOT_JUDGE = "could not judge"


STANDING_MEANINGS: dict[str, str] = {
    Standing.AS_NEWER.value: "a version between two reference cells: the newer cell shows the same behaviour",
    Standing.NOT_COVERED.value: "the probe needed a package this environment lacks, or an earlier release",
    Standing.COULD_NOT_JUDGE.value: "the run here did not finish the probe (a timeout where the reference did not hang)",
}


SAME, NEW, MISSING = (Kind.SAME, Kind.NEW, Kind.MISSING)

# The words a change is said with (a direction where the behaviour moved, else the kind), in the
# order a reader takes them in: what breaks first, then what moved, then what got better, then
# text. The gate's table, the report's counts and the compare pages all use this one vocabulary.
CHANGE_MEANINGS: dict[str, str] = {
    Direction.REGRESSION.value: "the hazard got worse, or an observed probe (or a sub-case of it) became n/a",
    Direction.CHANGED.value: "same hazard, another outcome or value",
    Direction.FIX.value: "the hazard got better",
    Direction.NEW_COVERAGE.value: "n/a before, observed now (the API appeared), the probe or a sub-case of it",
    Kind.WORDING.value: "only the label or detail text changed, or only the reason of an n/a in both",
    Kind.NEW.value: "no observation before",
    Kind.MISSING.value: "no observation after",
}
CHANGE_WORDS: tuple[str, ...] = tuple(CHANGE_MEANINGS)
assert set(CHANGE_WORDS) == {d.value for d in Direction} | {k.value for k in Kind} - {
    Kind.SAME.value,
    Kind.BEHAVIOUR.value,
}


def change_order(word: str) -> int:
    """Where a change word sorts in every table (probe --here's standings after the changes, unknown words last)."""
    words = (*CHANGE_WORDS, *STANDING_MEANINGS)
    return words.index(word) if word in words else len(words)


_COMPARED = ("outcome", "hazard", "value")
_HARM = {
    Hazard.SAFE.value: 0,
    Hazard.ORDER_COUPLED.value: 1,
    Hazard.LOUD.value: 2,
    Hazard.NONDETERMINISTIC.value: 2,
    Hazard.HANGS.value: 3,
    Hazard.SILENT.value: 4,
}


def harm(hazard: str) -> int:
    """The legend's order of harm (safe < order-coupled < loud, nondeterministic < hangs < silent); n/a ranks with safe.

    A hang outranks an error (nothing says the run failed, and nothing after it runs) and is below silent
    (a caller's timeout can see it; no write is lost while it hangs)."""
    return _HARM.get(hazard, 0)


def ranked(hazard: str) -> bool:
    """Whether the order of harm ranks the hazard: n/a is not ranked, so a change from or to it is "changed",
    never a regression or a fix (Change.direction; the viewer's port reads the same ranks)."""
    return hazard in _HARM


def _not_applicable(value: Any) -> bool:
    """A sub-case the version cannot run: `{"n/a": reason}` (suites/mitigation.py's variant) or `"n/a: reason"`."""
    if isinstance(value, dict):
        return NOT_APPLICABLE in value
    return isinstance(value, str) and (value == NOT_APPLICABLE or value.startswith(NOT_APPLICABLE + ":"))


def subcases(before: Any, after: Any) -> Direction | None:
    """NEW_COVERAGE when every difference of two values is a sub-case n/a before and observed now, REGRESSION
    when every one is a sub-case observed before and n/a now; None when anything else differs."""
    moves: set[Direction] = set()

    def alike(b: Any, a: Any) -> bool:
        if b == a:
            return True
        if _not_applicable(b) != _not_applicable(a):
            moves.add(Direction.NEW_COVERAGE if _not_applicable(b) else Direction.REGRESSION)
            return True
        if isinstance(b, dict) and isinstance(a, dict) and b.keys() == a.keys():
            return all(alike(b[key], a[key]) for key in b)
        if isinstance(b, list) and isinstance(a, list) and len(b) == len(a):
            return all(alike(x, y) for x, y in zip(b, a, strict=True))
        return False

    return moves.pop() if alike(before, after) and len(moves) == 1 else None


@dataclass(frozen=True)
class Change:
    probe_id: str
    kind: Kind
    before: Observation | None
    after: Observation | None
    fields: tuple[str, ...] = ()
    standing: Standing | None = None  # probe --here: not the installed version's own behaviour, and why
    reason: str = ""

    @property
    def is_breaking(self) -> bool:
        """Not the same behaviour as the reference: a probe run against its own reference fails."""
        return self.kind in (Kind.BEHAVIOUR, Kind.MISSING)

    @property
    def direction(self) -> Direction | None:
        if self.kind == Kind.MISSING:
            return Direction.REGRESSION
        if self.kind != Kind.BEHAVIOUR or self.before is None or self.after is None:
            return None
        before_na = self.before.outcome == NOT_APPLICABLE
        after_na = self.after.outcome == NOT_APPLICABLE
        if before_na and not after_na:
            return Direction.NEW_COVERAGE
        if after_na and not before_na:
            return Direction.REGRESSION
        if self.before.outcome == self.after.outcome:
            moved = subcases(self.before.value, self.after.value)
            if moved is not None:
                return moved
        old, new = _HARM.get(self.before.hazard), _HARM.get(self.after.hazard)
        if old is None or new is None or old == new:
            return Direction.CHANGED
        return Direction.REGRESSION if new > old else Direction.FIX

    @property
    def label(self) -> str:
        """The word a table shows: regression / fix / new coverage / changed / wording / new / missing, or the standing."""
        if self.standing is not None:
            return self.standing.value
        direction = self.direction
        return direction.value if direction is not None else self.kind.value

    @property
    def gates(self) -> bool:
        """Fails an upgrade: a regression, or a changed value your code may depend on. Fixes, new coverage and a
        standing (not the installed version's own behaviour) pass."""
        return self.standing is None and self.direction in (Direction.REGRESSION, Direction.CHANGED)


def classify(probe_id: str, before: Observation | None, after: Observation | None) -> Change:
    if before is None and after is None:
        raise ValueError("nothing to compare")
    if before is None:
        return Change(probe_id, Kind.NEW, None, after)
    if after is None:
        return Change(probe_id, Kind.MISSING, before, None)
    fields = tuple(name for name in (*_COMPARED, "label", "detail") if getattr(before, name) != getattr(after, name))
    if before.hazard == after.hazard == Hazard.NONDETERMINISTIC.value:
        # Such a probe's detail carries the counts of its own repeats; only its outcome set is behaviour.
        fields = tuple(name for name in fields if name != "detail")
    if not fields:
        kind = Kind.SAME
    elif before.behaviour != after.behaviour:
        kind = Kind.BEHAVIOUR
    else:
        kind = Kind.WORDING
    return Change(probe_id, kind, before, after, fields)


def diff(base: ResultSet, new: ResultSet, probe_ids: set[str] | None = None) -> list[Change]:
    """Every probe that is not the same, in id order. `probe_ids` limits the comparison."""
    ids = set(base.observations) | set(new.observations)
    if probe_ids is not None:
        ids &= probe_ids
    changes = [classify(pid, base.observations.get(pid), new.observations.get(pid)) for pid in sorted(ids)]
    return [change for change in changes if change.kind != Kind.SAME]


# reference/topics.toml's "Upgrading with live threads": a probe of this topic resumes a store another release wrote
# (its framework has live_threads), so its observation answers for the pair of releases, not for one.
LIVE_TOPIC = "upgrade"


def is_live(probe_id: str) -> bool:
    """Whether a probe (or one of its observations: `<framework>/upgrade/<case>[variant]`) is a live-thread probe."""
    return probe_id.split("/")[1] == LIVE_TOPIC


def live_ids(results: ResultSet) -> set[str]:
    """The observations of live-thread probes, with their variants."""
    return {oid for oid in results.observations if is_live(oid)}


def breaks_resume(observation: Observation) -> bool:
    """A live-thread probe's verdict on an upgrade: the resume was not the target's own (any hazard but safe), or
    the probe could not tell (a probe-error, a timeout). n/a (a side without the API) and vacuous do not gate."""
    if observation.outcome in (NOT_APPLICABLE, VACUOUS):
        return False
    return observation.outcome in (PROBE_ERROR, TIMEOUT) or observation.hazard != Hazard.SAFE.value


def resume_word(observation: Observation) -> str:
    """The live table's first column: broke / resumed / n/a / vacuous / probe-error / timeout."""
    if observation.outcome in (NOT_APPLICABLE, VACUOUS, PROBE_ERROR, TIMEOUT):
        return observation.outcome
    return "broke" if breaks_resume(observation) else "resumed"


# A live-thread probe's n/a where the run had no earlier release to write its store (probe --here: one environment).
NEEDS_EARLIER_REASON = (
    "resumes a store an earlier release wrote: this run has one environment (`fanin upgrade --from` runs it)"
)
MISSING_MODULE = "missing_module"  # a probe-error's value: the module its exception says is not installed


def standing(change: Change, newer: Observation | None = None, newer_cell: str = "") -> Change:
    """The change as probe --here judges it: with its standing where the difference is not the installed version's
    own behaviour (`newer`: the newer neighbour cell's observation, where the version lies between two cells)."""
    after = change.after
    if not change.is_breaking or after is None:
        return change
    value = after.value if isinstance(after.value, dict) else {}
    if after.outcome == PROBE_ERROR and value.get(MISSING_MODULE):
        reason = f"needs the module {value[MISSING_MODULE]}, not installed in this environment"
        return replace(change, standing=Standing.NOT_COVERED, reason=reason)
    if after.outcome == NOT_APPLICABLE and value.get(NEEDS_EARLIER_RELEASE):
        return replace(change, standing=Standing.NOT_COVERED, reason=NEEDS_EARLIER_REASON)
    if after.outcome == TIMEOUT:
        seconds = value.get("timeout_seconds", "?")
        hung = change.before is not None and change.before.hazard == Hazard.HANGS.value
        where = "the reference hangs too" if hung else "the reference did not hang"
        reason = f"timed out here after {seconds} s ({where}; a loaded machine can do this): run it again"
        return replace(change, standing=Standing.COULD_NOT_JUDGE, reason=reason)
    if newer is not None and newer.behaviour == after.behaviour:
        return replace(change, standing=Standing.AS_NEWER, reason=f"the same as the newer reference cell {newer_cell}")
    return change


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
        for index, (b, a) in enumerate(zip(before, after, strict=False)):
            yield from value_differences(b, a, f"{path}[{index}]")
    elif before != after:
        yield path, before, after


def compact(value: Any) -> str:
    return (
        value
        if isinstance(value, str) and value == "(absent)"
        else json.dumps(value, sort_keys=True, ensure_ascii=False)
    )


def describe(change: Change) -> str:
    """A readable before/after for one changed probe (pytest failure text, `diff` detail)."""
    lines = [f"{change.probe_id}: {change.label}" + (f": {change.reason}" if change.reason else "")]
    if change.before is None:
        assert change.after is not None
        lines.append(
            f"  no reference observation; observed: {change.after.outcome} [{change.after.hazard}] {change.after.detail}"
        )
        return "\n".join(lines)
    if change.after is None:
        lines.append(
            f"  not observed in this run; reference: {change.before.outcome} [{change.before.hazard}] {change.before.detail}"
        )
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
