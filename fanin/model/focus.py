"""The versions a report speaks of (`report --for`): which result set each spec means, identity-checked.

A spec is written the way people write them: a cell id (`adk-1.15.1-py3.10`), an exact version
(`google-adk==1.15.1`), or any PEP 440 specifier set (`deepagents==0.6.*`, `deepagents~=0.6`,
`langgraph>=1.2,<1.3`), with the PyPI name or the framework key. A range means its newest
reference cell, and says so. A version the reference lacks is a local run's or an upgrade's,
which must hold that very framework, version and installed package. On a Python whose twin the
matrix lacks, the reference cell of another Python stands in, and says so with the command that
fills the gap. Any refusal's advice is a command that runs.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from fanin.model import matrix as paths
from fanin.model.errors import FaninError
from fanin.model.matrix import Cell, Framework, Matrix
from fanin.model.names import canonicalize_name
from fanin.model.results import ResultFileError, ResultSet, load
from fanin.model.source import shown
from fanin.model.suggest import did_you_mean


@dataclass(frozen=True)
class Spec:
    """One version a report is asked about, as written: an exact version, or a specifier set (`within`)."""

    word: str
    framework: Framework
    python: str
    version: str = ""
    within: str = ""  # a PEP 440 specifier set: the newest cell in it

    def matches(self, version: str) -> bool:
        try:
            if self.within:
                return SpecifierSet(self.within).contains(version)
            return Version(version) == Version(self.version)
        except InvalidVersion:
            return False

    @property
    def requirement(self) -> str:
        """What `upgrade` and `add-cell` take for it (`deepagents==0.6.*`)."""
        return f"{self.framework.package}{self.within or '==' + self.version}"


@dataclass(frozen=True)
class Focus:
    """The versions a report speaks of, and the local result sets it needs for versions outside the reference."""

    cells: dict[str, str]  # framework key -> cell id
    extra: dict[str, tuple[ResultSet, str]]  # cell id -> (local result set, where it was read)
    said: tuple[str, ...]  # one line per version: where its observations come from
    specs: tuple[str, ...] = ()  # `package==version`, as resolved


def parse(word: str, matrix: Matrix, python: str | None = None) -> Spec:
    """A cell id, `PACKAGE==VERSION` or `PACKAGE<specifier set>`; one clear line when it is none of them."""
    text = word.strip()
    if not any(sign in text for sign in "<>=!~, "):
        framework, version, twin = matrix.named(text, python)
        return Spec(text, framework, twin, version=version)
    name, sep, rest = text.partition("==")
    if sep and rest.strip().lower() == "latest":
        newest = matrix.newest(matrix.framework(name.strip()).key)
        raise FaninError(
            f"report --for needs a version or a range, not {text}: e.g. {newest.requirement} (its newest reference cell)"
            f" or {shlex.quote(newest.framework.package + '~=' + '.'.join(newest.version.split('.')[:2]))}"
        )
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise FaninError(
            f"malformed spec {text!r}: {str(exc).splitlines()[0]}; "
            "expected PACKAGE==VERSION, a range like 'deepagents~=0.6', or a cell id"
        ) from None
    if requirement.extras or requirement.marker or requirement.url or not str(requirement.specifier):
        raise FaninError(
            f"malformed spec {text!r}: expected PACKAGE==VERSION, a range like 'deepagents~=0.6', or a cell id"
        )
    framework = matrix.framework(requirement.name)
    specifiers = list(requirement.specifier)
    python = python or matrix.default_python
    if len(specifiers) == 1 and specifiers[0].operator == "==" and "*" not in specifiers[0].version:
        return Spec(text, framework, python, version=specifiers[0].version)
    return Spec(text, framework, python, within=str(requirement.specifier))


def fill(framework: Framework, requirement: str, python: str, matrix: Matrix) -> str:
    """What to run so a version has a result set on this Python, as it would be typed (`run ./noxw -s …`).

    `upgrade` probes it locally (into reports/upgrade/, which `report --for` reads) when the matrix
    has a cell of the framework on that Python to compare with; else `add-cell` adds it to the matrix.
    """
    on = [] if python == matrix.default_python else ["--python", python]
    baselines = [c for c in matrix.of(framework.key) if c.python == python]  # what upgrade compares with
    if baselines and baselines[-1].reference_path.exists():
        return f"run `{shlex.join(['./noxw', '-s', 'upgrade', '--', requirement, *on])}`"
    return (
        f"run `{shlex.join(['./noxw', '-s', 'add-cell', '--', requirement, *on])}`, then probe and bless the new cell"
    )


def _reference(spec: Spec, matrix: Matrix, source: Path, python: str | None) -> list[Cell]:
    """The reference cells the spec matches (on `python`, or on every other Python), oldest first."""
    return [
        c
        for c in matrix.of(spec.framework.key)
        if (c.python == python if python else c.python != spec.python)
        and spec.matches(c.version)
        and (source / f"{c.id}.json").is_file()
    ]


def _local(spec: Spec, matrix: Matrix) -> Path | None:
    """The newest local result set (a run's, else an upgrade's) the spec matches on its Python."""
    found: list[tuple[Version, int, Path]] = []
    for rank, directory in enumerate((paths.RUN_RESULTS, paths.REPORTS / "upgrade")):
        for path in directory.glob(f"{spec.framework.key}-*.json"):
            try:
                framework, version, python = matrix.named(path.stem)
                if framework == spec.framework and python == spec.python and spec.matches(version):
                    found.append((Version(version), -rank, path))
            except (FaninError, InvalidVersion):
                continue
    return max(found)[2] if found else None


def _unknown(spec: Spec, matrix: Matrix, source: Path) -> FaninError:
    """No result set anywhere: what there is, the nearest name for a typo, and the command that makes one."""
    on = "" if spec.python == matrix.default_python else f" on Python {spec.python}"
    cells = [c for c in matrix.of(spec.framework.key) if (source / f"{c.id}.json").is_file()]
    if spec.within:
        have = f"{cells[0].version} to {cells[-1].version}" if cells else "none"
        what = f"no reference cell matches {spec.word}{on} ({spec.framework.key} reference cells: {have})"
        what += " and no local result set does"
        hint = ""
    else:
        cell_id = matrix.cell_id(spec.framework, spec.version, spec.python)
        candidates = [paths.RUN_RESULTS / f"{cell_id}.json", paths.REPORTS / "upgrade" / f"{cell_id}.json"]
        in_matrix = any(c.id == cell_id for c in matrix.cells)
        what = (
            f"no result set for {spec.framework.package}=={spec.version}{on}: "
            + ("its cell has no reference yet" if in_matrix else "not a reference cell")
            + f", and neither {shown(candidates[0])} nor {shown(candidates[1])} exists"
        )
        typed_id = "=" not in spec.word  # a mistyped cell id: the nearest ones (a version may be a real release)
        hint = did_you_mean(spec.word, [c.id for c in cells], "") if typed_id else ""
    advice = fill(spec.framework, spec.requirement, spec.python, matrix)
    return FaninError(f"{what}{hint + ' To' if hint else '; to'} make one, {advice}")


def _read(found: Path, cell_id: str, framework: Framework, version: str) -> ResultSet:
    try:
        rs = load(found, expect_cell=cell_id)
    except ResultFileError as exc:
        raise FaninError(str(exc)) from None
    installed = {canonicalize_name(k): v for k, v in rs.environment.get("packages", {}).items()}
    seen = installed.get(canonicalize_name(framework.package), rs.version)
    if (rs.framework, rs.version, seen) != (framework.key, version, version):
        raise FaninError(f"{shown(found)}: holds {rs.framework} {rs.version} (installed {seen}), not {version}")
    return rs


@dataclass(frozen=True)
class Found:
    """The result set one spec means: a cell id, where it comes from in one line, and a local set if it is one."""

    cell: str
    said: str
    asked: str  # `package==version`, as resolved (`… on Python 3.10` for a twin)
    local: tuple[ResultSet, str] | None = None  # (the result set, where it was read) outside the reference


def find(spec: Spec, matrix: Matrix, source: Path | None = None) -> Found:
    """A reference cell on the spec's Python, else a local result set, else another Python's reference cell (said
    so, with the command that fills the gap); one clear error, with a command that makes one, if none."""
    source = source or paths.REFERENCE_RESULTS
    framework = spec.framework
    on = "" if spec.python == matrix.default_python else f" on Python {spec.python}"
    label = f"{spec.word if spec.within else framework.package + '==' + spec.version}{on}"
    here = _reference(spec, matrix, source, spec.python)
    if here:
        cell = here[-1]
        said = f"{label} means {cell.id}, the newest reference cell matching it" if spec.within else ""
        return Found(cell.id, said or f"{label}: reference cell {cell.id}", _asked(cell, matrix))
    local = _local(spec, matrix)
    if local is not None:
        _, version, _ = matrix.named(local.stem)
        rs = _read(local, local.stem, framework, version)
        said = f"{label}: local result set {shown(local)} (not in the reference)"
        return Found(local.stem, said, f"{framework.package}=={version}{on}", (rs, shown(local)))
    other = _reference(spec, matrix, source, None)
    if not other:
        raise _unknown(spec, matrix, source)
    cell = max(other, key=lambda c: (Version(c.version), c.python == matrix.default_python))
    gap = fill(framework, f"{framework.package}=={cell.version}", spec.python, matrix)
    newest = ", the newest reference cell matching it," if spec.within else ""
    said = (
        f"{label}: no Python {spec.python} reference cell; {cell.id}{newest} stands in from Python"
        f" {cell.python} (another Python); to fill the gap, {gap}"
    )
    return Found(cell.id, said, _asked(cell, matrix))


def _asked(cell: Cell, matrix: Matrix) -> str:
    return cell.requirement + ("" if cell.python == matrix.default_python else f" on Python {cell.python}")


def resolve(specs: Sequence[Spec], matrix: Matrix, source: Path | None = None) -> Focus:
    """Each spec's result set (`find`), one version per framework."""
    cells: dict[str, str] = {}
    extra: dict[str, tuple[ResultSet, str]] = {}
    said = []
    asked = []
    for spec in specs:
        if spec.framework.key in cells:
            raise FaninError(f"report --for names {spec.framework.package} twice; give one version per framework")
        found = find(spec, matrix, source)
        cells[spec.framework.key] = found.cell
        if found.local is not None:
            extra[found.cell] = found.local
        said.append(found.said)
        asked.append(found.asked)
    return Focus(cells, extra, tuple(said), tuple(asked))
