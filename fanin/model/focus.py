"""The versions a report speaks of (`report --for`): which result set each spec means, identity-checked.

A spec that is a reference cell is its committed result set; any other is a local run's or an
upgrade's, which must hold that very framework, version and installed package, or one clear error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fanin.model import matrix as paths
from fanin.model.errors import FaninError
from fanin.model.matrix import Framework, Matrix
from fanin.model.names import canonicalize_name
from fanin.model.results import ResultFileError, ResultSet, load
from fanin.model.source import shown


@dataclass(frozen=True)
class Focus:
    """The versions a report speaks of, and the local result sets it needs for versions outside the reference."""

    cells: dict[str, str]  # framework key -> cell id
    extra: dict[str, tuple[ResultSet, str]]  # cell id -> (local result set, where it was read)
    said: tuple[str, ...]  # one line per version: where its observations come from
    specs: tuple[str, ...] = ()  # `package==version`, as asked


def resolve(specs: Sequence[tuple[Framework, str, str]], matrix: Matrix, source: Path | None = None) -> Focus:
    """Each (framework, version, Python) as a reference cell when it is one, else a local result set; one clear error if neither."""
    source = source or paths.REFERENCE_RESULTS
    cells: dict[str, str] = {}
    extra: dict[str, tuple[ResultSet, str]] = {}
    said = []
    asked = []
    for framework, version, python in specs:
        if version == "latest":
            raise FaninError(f"report --for needs an exact version, not {framework.package}==latest")
        if framework.key in cells:
            raise FaninError(f"report --for names {framework.package} twice; give one version per framework")
        cell_id = matrix.cell_id(framework, version, python)
        on = "" if python == matrix.default_python else f" on Python {python}"
        asked.append(f"{framework.package}=={version}{on}")
        in_matrix = any(c.id == cell_id for c in matrix.cells)
        if in_matrix and (source / f"{cell_id}.json").is_file():
            cells[framework.key] = cell_id
            said.append(f"{framework.package}=={version}{on}: reference cell {cell_id}")
            continue
        candidates = [paths.RUN_RESULTS / f"{cell_id}.json", paths.REPORTS / "upgrade" / f"{cell_id}.json"]
        found = next((p for p in candidates if p.is_file()), None)
        if found is None:
            raise FaninError(
                f"no result set for {framework.package}=={version}: "
                + ("its cell has no reference yet" if in_matrix else "not a reference cell")
                + f", and neither {shown(candidates[0])} nor {shown(candidates[1])} exists; "
                f"run ./noxw -s upgrade -- {framework.package}=={version} first"
            )
        try:
            rs = load(found, expect_cell=cell_id)
        except ResultFileError as exc:
            raise FaninError(str(exc)) from None
        installed = {canonicalize_name(k): v for k, v in rs.environment.get("packages", {}).items()}
        seen = installed.get(canonicalize_name(framework.package), rs.version)
        if (rs.framework, rs.version, seen) != (framework.key, version, version):
            raise FaninError(f"{shown(found)}: holds {rs.framework} {rs.version} (installed {seen}), not {version}")
        cells[framework.key] = cell_id
        extra[cell_id] = (rs, shown(found))
        said.append(f"{framework.package}=={version}: local result set {shown(found)} (not in the reference)")
    return Focus(cells, extra, tuple(said), tuple(asked))
