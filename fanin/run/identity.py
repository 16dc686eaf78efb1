"""Is a result set what its name says? Checked wherever one is read as a reference or blessed.

A file copied under another cell's name, a reference observed on another version than
its cell, one made from another lock, or a run whose installed packages differ from its
lock: each is refused with one line (the first two by fanin.model.identity, which the report's
published data uses too), so the upgrade gate can never compare against the
wrong thing and bless can never vouch for it.
"""

from __future__ import annotations

from pathlib import Path

from fanin.model.identity import check as check  # re-exported: the reference's check, then the lock's
from fanin.model.identity import packages
from fanin.model.matrix import Cell, Matrix
from fanin.model.results import ResultFileError, ResultSet, load
from fanin.model.source import shown
from fanin.run import runtimes
from fanin.run.environment import file_sha256


def check_lock(result_set: ResultSet, cell: Cell, lock: Path, origin: str) -> None:
    """The result set was made from this very lock, and its installed packages are the lock's pins (as the cell's
    runtime reads its lock)."""
    recorded = result_set.environment.get("lock_sha256")
    if recorded != file_sha256(lock):
        raise ResultFileError(f"{origin}: was made from another lock than {shown(lock)}; re-run the cell")
    installed = packages(result_set)
    wanted = runtimes.of(cell).pins(lock, result_set.environment)
    drifted = [
        f"{name} {installed.get(name, 'absent')} (lock: {version})"
        for name, version in sorted(wanted.items())
        if installed.get(name) != version
    ]
    if drifted:
        raise ResultFileError(f"{origin}: the run's packages differ from {shown(lock)}: {', '.join(drifted[:3])}")


def load_reference(path: Path, cell: Cell, with_lock: bool = True) -> ResultSet:
    """A cell's reference, refused unless it is that cell's, on its version, from its current lock."""
    result_set = load(path, expect_cell=cell.id)
    check(result_set, cell, shown(path))
    if with_lock and cell.lock_path.exists():
        recorded = result_set.environment.get("lock_sha256")
        if recorded != file_sha256(cell.lock_path):
            raise ResultFileError(
                f"{shown(path)}: was made from another lock than {shown(cell.lock_path)}; "
                f"re-run and bless {cell.id} (./noxw -s 'probe({cell.id})', then ./noxw -s bless -- {cell.id})"
            )
    return result_set


def source_path(arg: str, matrix: Matrix) -> Path:
    """What `diff` names: a result file (a path), or a cell id meaning its reference."""
    if arg.endswith(".json") or "/" in arg:
        return Path(arg)
    return matrix.cell(arg).reference_path


def load_source(arg: str, matrix: Matrix) -> ResultSet:
    """A result file, or a cell id meaning that cell's reference; either is identity-checked against its cell."""
    cells = {cell.id: cell for cell in matrix.cells}
    if not (arg.endswith(".json") or "/" in arg):
        cell = matrix.cell(arg)
        return load_reference(cell.reference_path, cell)
    path = Path(arg)
    result_set = load(path)
    named: Cell | None = cells.get(path.stem)
    if named is not None:
        check(result_set, named, shown(path))
    return result_set
