"""Promote reviewed local runs into the reference: every check first, then every file at once.

A cell is refused, and nothing at all is written, when its run is not what the reference
may vouch for: its last run failed (a marker), it names another cell or version, it was
made from another lock or its installed packages differ from the lock, it was made from a work
tree with uncommitted changes (its cite line would name code other than what ran), probe code
changed since it ran, it has probe errors, or it lacks declared probes (a partial run). The result
sets and the re-rendered REPORT.md / CHECKLIST.md are then written in one staged step.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fanin.model import compare, markers, staging
from fanin.model import matrix as paths
from fanin.model.errors import FaninError
from fanin.model.matrix import Cell, Matrix
from fanin.model.results import PROBE_ERROR, ResultFileError, ResultSet, dumps, load
from fanin.model.source import shown
from fanin.model.staging import write_all
from fanin.report import links

if TYPE_CHECKING:  # every command imports this module for recover(); the catalogue only bless reads
    from fanin.model import catalog


def journal() -> Path:
    """Where a bless is journalled: a kill between its moves is completed by the next fanin command."""
    return paths.REFERENCE_REPORT.parent / ".fanin-staging.json"


def recover() -> list[str]:
    """Complete a bless a kill cut short (every fanin command calls this first); name stray staging files."""
    home = paths.REFERENCE_REPORT.parent
    return staging.recover(journal(), (*(home / name for name in links.COMMITTED_DIRS), paths.REFERENCE_RESULTS))


@dataclass(frozen=True)
class Accepted:
    cell: Cell
    run: ResultSet
    note: str


def check(cell: Cell, force: bool, declared: list[catalog.DeclaredProbe]) -> Accepted:
    from fanin.run import identity  # here: every command imports this module for recover(), few bless

    path = cell.results_path
    origin = shown(path)
    marker = markers.reason(path)
    if marker is not None:
        raise FaninError(f"{cell.id}: its last run did not finish ({marker}); run the cell again before blessing")
    run = load(path, expect_cell=cell.id)
    identity.check(run, cell, origin)
    identity.check_lock(run, cell, cell.lock_path, origin)
    commit = str(run.environment.get("suite_commit") or "")
    if commit.endswith("+dirty"):
        raise FaninError(
            f"{cell.id}: its run was made from a work tree with uncommitted changes (suite_commit {commit}); "
            "commit them, run the cell again, then bless"
        )
    errors = [pid for pid, o in run.observations.items() if o.outcome == PROBE_ERROR]
    if errors and not force:
        raise FaninError(f"{cell.id} has probe errors ({', '.join(errors)}); fix the probes, or bless with --force")
    mine = [p for p in declared if p.framework == cell.framework.key]
    wanted = {oid for p in mine for oid in p.observation_ids()}
    absent = sorted(wanted - set(run.observations))
    if absent and not force:
        raise FaninError(
            f"{cell.id}: the run lacks {len(absent)} declared probe(s) ({', '.join(absent[:3])}"
            f"{', …' if len(absent) > 3 else ''}); a partial run (-k, or another session's output) is not a reference"
        )
    edited = sorted(p.id for p in mine if p.id in run.probes and run.probes[p.id].source_hash != p.source_hash)
    if edited:
        raise FaninError(
            f"{cell.id}: probe code changed since the run ({', '.join(edited[:3])}{', …' if len(edited) > 3 else ''}); "
            "run the cell again so the reference is made by today's probes"
        )
    try:
        changes = compare.diff(load(cell.reference_path, expect_cell=cell.id), run)
        from fanin.report.gate_table import (
            changes_table,  # here, not at the top: every command imports this module to recover()
        )
        from fanin.versions.upgrade import proofs_at  # each row's mitigation, proven (or not) by the run blessed

        table = changes_table(changes, proofs_at(changes, run)) if changes else ""
        note = f"blessing {len(changes)} change(s)" + (f"\n{table}" if changes else "")
    except ResultFileError as exc:
        note = f"new reference with {len(run.observations)} probes (replacing: {exc})"
    return Accepted(cell, run, note)


def bless(matrix: Matrix, names: list[str], force: bool = False) -> list[Accepted]:
    from fanin.model import catalog
    from fanin.report import outputs

    cells = [matrix.cell(c) for c in names] if names else [c for c in matrix.cells if c.results_path.exists()]
    if not cells:
        raise FaninError(f"nothing to bless: no local results in {shown(paths.RUN_RESULTS)}")
    declared = catalog.declared()
    accepted = [check(cell, force, declared) for cell in cells]
    replace = {a.cell.id: a.run for a in accepted}
    rendered, unreadable = outputs.reference(matrix, replace=replace)
    if unreadable:
        raise FaninError("another reference result set is unreadable (see above); nothing blessed")
    files = {a.cell.reference_path: dumps(a.run) for a in accepted}
    files.update({path: text for path, text in rendered.items() if outputs.committed(path)})
    write_all(files, journal=journal())
    return accepted
