"""The sensitivity check's data (reference/sensitivity.toml) and its one verdict.

A probe that always answers the same thing proves nothing. Each patch in the data file is a
small edit of one installed framework file (search/replace, on the real file of the cell's
lock) that simulates a behaviour its probes claim to see: a LastValue that keeps the last write,
a barrier that fires on the first arrival, escalate ignored. Applied in a copy of the cell's
venv (fanin.run.sensitivity), every probe it names must change its hazard or its label; a change
of value alone, a probe-error (the patch broke the probe, not the behaviour) or no change fails.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fanin.model.errors import FaninError
from fanin.model.matrix import SENSITIVITY
from fanin.model.results import NOT_APPLICABLE, PROBE_ERROR, Observation


class PatchError(FaninError):
    """A patch that does not fit its file (the installed file changed): the check fails, never skips it."""


@dataclass(frozen=True)
class Edit:
    search: str  # must occur exactly once in the installed file
    replace: str


@dataclass(frozen=True)
class Patch:
    id: str
    cell: str
    file: str  # relative to the venv's site-packages (a Node cell's node_modules)
    simulates: str  # the behaviour the edit stands for, in words
    probes: tuple[str, ...]  # probe ids that must move (every variant of the probe is compared)
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Move:
    """One probe under one patch: did its hazard or label change, and how."""

    patch: str
    probe: str
    moved: bool
    why: str


def load(path: Path = SENSITIVITY) -> list[Patch]:
    """Every `[[patch]]` of the data file, validated; a malformed file is bad input (exit 2)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise FaninError(f"{path}: cannot be read ({type(exc).__name__}: {exc})") from None
    patches: list[Patch] = []
    for number, raw in enumerate(data.get("patch", []), 1):
        where = f"{path.name}: patch {number} ({raw.get('id', 'no id')})"
        missing = [k for k in ("id", "cell", "file", "simulates", "probes", "edit") if not raw.get(k)]
        if missing:
            raise FaninError(f"{where}: missing {', '.join(missing)}")
        file = PurePosixPath(raw["file"])
        if file.is_absolute() or ".." in file.parts:
            raise FaninError(
                f"{where}: file must be a path inside site-packages (node_modules for a Node cell), got {raw['file']!r}"
            )
        edits = tuple(Edit(e["search"], e["replace"]) for e in raw["edit"])
        if any(not e.search or e.search == e.replace for e in edits):
            raise FaninError(f"{where}: every edit needs a search text and a different replacement")
        patches.append(
            Patch(raw["id"], raw["cell"], raw["file"], raw["simulates"].strip(), tuple(raw["probes"]), edits)
        )
    ids = [p.id for p in patches]
    if len(set(ids)) != len(ids):
        raise FaninError(f"{path.name}: patch ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
    return patches


def apply(text: str, patch: Patch) -> str:
    """The file's text with the patch's edits made; each search text must occur exactly once."""
    for edit in patch.edits:
        count = text.count(edit.search)
        if count != 1:
            first = edit.search.strip().splitlines()[0] if edit.search.strip() else edit.search
            raise PatchError(f"{patch.id}: {patch.file}: search text {first!r} found {count} times (must be once)")
        text = text.replace(edit.search, edit.replace)
    return text


def _shown(o: Observation) -> str:
    return f"[{o.hazard}] {o.label}"


def verdict(
    patch: str,
    probe: str,
    observation_ids: list[str],
    baseline: dict[str, Observation],
    patched: dict[str, Observation],
) -> Move:
    """Whether `probe` moved under `patch`: its hazard or label changed in at least one of its variants.

    A probe that was not observed, errs or is n/a on either side proves nothing, so it fails;
    so does a change confined to the value (the defect this check exists to catch). `vacuous` under
    the patch counts as a move: the probe saw its own precondition (concurrency) fail and said so.
    """
    moved, value_only = [], []
    for oid in observation_ids:
        before, after = baseline.get(oid), patched.get(oid)
        if before is None or after is None:
            side = "without" if before is None else "with"
            return Move(patch, probe, False, f"{oid} was not observed {side} the patch")
        for side, o in (("without", before), ("with", after)):
            if o.outcome in (PROBE_ERROR, NOT_APPLICABLE):
                return Move(patch, probe, False, f"{oid} is {o.outcome} {side} the patch: {o.detail}")
        if (before.hazard, before.label) != (after.hazard, after.label):
            moved.append(f"{oid}: {_shown(before)} -> {_shown(after)}")
        elif (before.outcome, before.value) != (after.outcome, after.value):
            value_only.append(oid)
    if moved:
        return Move(patch, probe, True, "; ".join(moved))
    if value_only:
        return Move(patch, probe, False, f"only the value changed ({', '.join(value_only)}): hazard and label stayed")
    return Move(patch, probe, False, f"nothing changed: {_shown(baseline[observation_ids[0]])}")
