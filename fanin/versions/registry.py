"""A framework's releases from its own registry (PyPI, or npm for a Node framework), and how an ad-hoc cell is locked.

`upgrade`, `bisect`, `add-cell`, `lock` and `watch` ask this module, never pypi or npm directly, so a Node
framework gets the same commands as a Python one: its releases come from `npm view`, its lock
is a package.json + package-lock.json directory, and its probes are run by file. Each runtime
(fanin.model.runtime) has one `Releases` here, looked up by its name: adding a runtime adds one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from packaging.specifiers import SpecifierSet

from fanin.model.catalog import DeclaredProbe
from fanin.model.matrix import Cell, Framework, Matrix
from fanin.model.source import REPO_ROOT
from fanin.versions import npm, pypi
from fanin.versions.pypi import RegistryError, Release

RANGE_SIGNS = "<>=!~"  # a wanted version that starts with one is a specifier set, not one version


class Releases(Protocol):
    """One runtime's registry: its frameworks' releases, and how a cell of it is locked as of its date."""

    def releases(self, package: str, prereleases: bool = False) -> list[Release]:
        """Every release of `package`, oldest first."""
        ...

    def resolve(self, package: str, wanted: str) -> Release:
        """An exact version or `latest`, checked against the registry."""
        ...

    def lock_files(self, cell: Cell, matrix: Matrix, lock: Path) -> dict[Path, str]:
        """Every file of the cell's lock, by path, resolved as of its date; `lock` is where its main file goes."""
        ...


class PyPIReleases:
    """PyPI's JSON API; a uv lock (fanin.versions.locking)."""

    def releases(self, package: str, prereleases: bool = False) -> list[Release]:
        return pypi.releases(package, prereleases=prereleases)

    def resolve(self, package: str, wanted: str) -> Release:
        return pypi.resolve(package, wanted)

    def lock_files(self, cell: Cell, matrix: Matrix, lock: Path) -> dict[Path, str]:
        from fanin.versions import locking

        return {lock: locking.resolve(cell, matrix)}


class NpmReleases:
    """`npm view`; package.json + package-lock.json resolved `--before` the cell's date (fanin.versions.npm)."""

    def releases(self, package: str, prereleases: bool = False) -> list[Release]:
        return npm.releases(package, prereleases=prereleases)

    def resolve(self, package: str, wanted: str) -> Release:
        return npm.resolve(package, wanted)

    def lock_files(self, cell: Cell, matrix: Matrix, lock: Path) -> dict[Path, str]:
        return npm.resolve_files(cell, matrix, lock.parent)


_REGISTRIES: dict[str, Releases] = {"python": PyPIReleases(), "node": NpmReleases()}


def register(runtime: str, registry: Releases) -> None:
    """The registry of the runtime `runtime` (fanin.model.runtime registers its data)."""
    _REGISTRIES[runtime] = registry


def unregister(runtime: str) -> None:
    _REGISTRIES.pop(runtime, None)


def of(framework: Framework) -> Releases:
    return _REGISTRIES[framework.runtime]


def releases(framework: Framework, prereleases: bool = False) -> list[Release]:
    """Every release, oldest first, from the framework's registry."""
    return of(framework).releases(framework.package, prereleases=prereleases)


def resolve(framework: Framework, wanted: str) -> Release:
    """An exact version, `latest`, or a PEP 440 specifier set (`~=0.6`, `==0.6.*`: its newest installable final
    release), checked against the framework's registry before anything is installed."""
    if wanted[:1] in RANGE_SIGNS:
        known = [r for r in releases(framework) if not r.prerelease]
        within = SpecifierSet(wanted)
        matching = [r for r in known if not r.yanked and within.contains(r.version)]
        if not matching:
            where = framework.runs_on.index
            newest = known[-1].version if known else "none"
            raise RegistryError(f"{framework.package} has no release matching {wanted} on {where} (newest is {newest})")
        return matching[-1]
    return of(framework).resolve(framework.package, wanted)


def lock_files(cell: Cell, matrix: Matrix, lock: Path | None = None) -> dict[Path, str]:
    """Every file of the cell's lock, resolved as of its date (nothing is written); `lock` defaults to its own."""
    return of(cell.framework).lock_files(cell, matrix, lock or cell.lock_path)


def lock_path(cell: Cell, work: Path) -> Path:
    """Where a cell outside the matrix keeps its lock under `work`: uv's file, or a Node cell's package-lock.json."""
    return cell.framework.runs_on.lock_path(work / "locks", cell.id)


def target(probe: DeclaredProbe, framework: Framework) -> str:
    """What to run for one probe: its test function (`file::name`), or for a Node probe its file (node --test runs files)."""
    return framework.runs_on.target.format(file=REPO_ROOT / probe.file, function=probe.function)
