"""`fanin probe --here`: run the catalogue against the frameworks installed in this environment.

Your exact resolved dependencies, not a lock of ours: this is what a team puts in its own CI
on a Renovate/Dependabot upgrade PR. Each registered framework found installed is probed with
this interpreter (pytest and pytest-timeout must be installed here too), isolated from the
network like any cell, and compared with the reference cell of that version, or the nearest
one, saying which and why. The comparison is the upgrade gate's: exit 1 on a regression or a
changed value, 0 otherwise; 3 when the run itself could not happen.
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from fanin.model import compare
from fanin.model.errors import EnvironmentFault, FaninError
from fanin.model.matrix import REPORTS, Cell, Framework, Matrix
from fanin.model.results import ResultSet, load
from fanin.run import one_cell
from fanin.run.identity import load_reference
from fanin.versions.upgrade import gate


@dataclass(frozen=True)
class Found:
    framework: Framework
    version: str
    baseline: Cell
    why: str


def _installed(package: str, python: str) -> str | None:
    done = subprocess.run(
        [python, "-c", f"import importlib.metadata as m; print(m.version({package!r}))"], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else None


def nearest(matrix: Matrix, framework: Framework, version: str, python: str) -> tuple[Cell, str]:
    """The reference cell to compare with: the same version (and Python), else the newest older one, else the oldest."""
    cells = [c for c in matrix.of(framework.key) if c.reference_path.exists()]
    if not cells:
        raise FaninError(f"the reference has no {framework.key} cell to compare with")
    same = [c for c in cells if Version(c.version) == Version(version)]
    for cell in same:
        if cell.python == python:
            return cell, "the reference cell of this very version and Python"
    if same:
        return same[0], f"the reference cell of this version (on Python {same[0].python}; none on {python})"
    older = [c for c in cells if Version(c.version) < Version(version) and c.python == matrix.default_python]
    if older:
        cell = older[-1]
        return (
            cell,
            f"no reference cell for {version}; the nearest older one, so every difference is what changed since",
        )
    return cells[0], f"no reference cell for {version} or older; the oldest one"


def find(matrix: Matrix, python: str) -> list[Found]:
    minor = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True, check=True
    ).stdout.strip()
    found = []
    for framework in matrix.frameworks.values():
        version = _installed(framework.package, python)
        if version is None:
            continue
        cell, why = nearest(matrix, framework, version, minor)
        found.append(Found(framework, version, cell, why))
    if not found:
        names = ", ".join(fw.package for fw in matrix.frameworks.values())
        raise FaninError(f"none of the frameworks fanin knows ({names}) is installed in {python}")
    return found


def run(matrix: Matrix, python: str | None = None) -> int:
    python = python or sys.executable
    for needed in ("pytest", "pytest_timeout"):
        if importlib.util.find_spec(needed) is None and python == sys.executable:
            raise EnvironmentFault(
                f"probe --here runs pytest in this environment: pip install pytest pytest-timeout ({needed} is missing)"
            )
    code = one_cell.SAME
    day = _dt.datetime.now(_dt.UTC).date().isoformat() + "T00:00:00Z"
    for found in find(matrix, python):
        cell = matrix.make_cell(found.framework, found.version, found.baseline.python, "current", day)
        results = REPORTS / "here" / f"{cell.id}.json"
        print(
            f"fanin: {found.framework.package} {found.version} installed here; comparing with {found.baseline.id}: {found.why}"
        )
        spec = one_cell.CellRun(
            cell_id=cell.id,
            framework=found.framework.key,
            package=found.framework.package,
            import_check=found.framework.import_check,
            python=Path(python),
            lock=None,
            reference=None,
            results=results,
            junit=results.with_suffix(".xml"),
            html=None,
            accept_new=True,
        )
        log = results.with_suffix(".log")
        log.parent.mkdir(parents=True, exist_ok=True)
        with one_cell.signals_end_children(), log.open("w", encoding="utf-8") as handle:
            outcome = one_cell.run_cell(spec, handle)
        if outcome.code not in (one_cell.SAME, one_cell.CHANGED):
            print(f"fanin: {cell.id}: NOT RUN: {outcome.reason} (log: {log})")
            code = max(code, outcome.code)
            continue
        code = max(code, _compare(load_reference(found.baseline.reference_path, found.baseline), load(results)))
    return code


def _compare(base: ResultSet, here: ResultSet) -> int:
    header = f"{base.cell} (reference) -> {here.framework} {here.version} installed here"
    return gate(header, compare.diff(base, here), len(here.observations))
