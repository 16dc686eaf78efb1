"""Is a result set what its name says: the cell, its framework and version, observed on that version?

The part of the identity check that needs only the data (fanin.run.identity adds the lock and
the venv's pins), so the report's published data is checked by the same rule as a reference.
"""

from __future__ import annotations

from fanin.model.matrix import Cell
from fanin.model.names import canonicalize_name
from fanin.model.results import ResultFileError, ResultSet


def check(result_set: ResultSet, cell: Cell, origin: str) -> None:
    """The result set names `cell`, its framework and version, and was observed on that version."""
    if result_set.cell != cell.id:
        raise ResultFileError(f"{origin}: holds cell {result_set.cell!r}, but its name says {cell.id!r}")
    if (result_set.framework, result_set.version) != (cell.framework.key, cell.version):
        raise ResultFileError(
            f"{origin}: holds {result_set.framework} {result_set.version}, but {cell.id} is {cell.framework.key} {cell.version}"
        )
    installed = packages(result_set).get(canonicalize_name(cell.framework.package))
    if installed is not None and installed != cell.version:
        raise ResultFileError(f"{origin}: was observed on {cell.framework.package} {installed}, not {cell.version}")


def packages(result_set: ResultSet) -> dict[str, str]:
    """The packages the run had installed, by their PyPI-normalised names."""
    return {canonicalize_name(k): str(v) for k, v in result_set.environment.get("packages", {}).items()}
