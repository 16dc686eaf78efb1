"""A framework's releases from its own registry (PyPI, or npm for a Node framework), and where an ad-hoc cell's lock goes.

`upgrade`, `bisect` and `add-cell` ask this module, never pypi or npm directly, so a Node
framework gets the same commands as a Python one: its releases come from `npm view`, its lock
is a package.json + package-lock.json directory, and its probes are run by file.
"""

from __future__ import annotations

from pathlib import Path

from packaging.specifiers import SpecifierSet

from fanin.model.catalog import DeclaredProbe
from fanin.model.matrix import Cell, Framework
from fanin.model.source import REPO_ROOT
from fanin.versions import npm, pypi
from fanin.versions.pypi import RegistryError, Release

RANGE_SIGNS = "<>=!~"  # a wanted version that starts with one is a specifier set, not one version


def releases(framework: Framework, prereleases: bool = False) -> list[Release]:
    """Every release, oldest first, from the framework's registry."""
    if framework.runtime == "node":
        return npm.releases(framework.package, prereleases=prereleases)
    return pypi.releases(framework.package, prereleases=prereleases)


def resolve(framework: Framework, wanted: str) -> Release:
    """An exact version, `latest`, or a PEP 440 specifier set (`~=0.6`, `==0.6.*`: its newest installable final
    release), checked against the framework's registry before anything is installed."""
    if wanted[:1] in RANGE_SIGNS:
        known = [r for r in releases(framework) if not r.prerelease]
        within = SpecifierSet(wanted)
        matching = [r for r in known if not r.yanked and within.contains(r.version)]
        if not matching:
            where = "npm" if framework.runtime == "node" else "PyPI"
            newest = known[-1].version if known else "none"
            raise RegistryError(f"{framework.package} has no release matching {wanted} on {where} (newest is {newest})")
        return matching[-1]
    if framework.runtime == "node":
        return npm.resolve(framework.package, wanted)
    return pypi.resolve(framework.package, wanted)


def lock_path(cell: Cell, work: Path) -> Path:
    """Where a cell outside the matrix keeps its lock under `work`: uv's file, or a Node cell's package-lock.json."""
    if cell.framework.runtime == "node":
        return work / "locks" / cell.id / "package-lock.json"
    return work / "locks" / f"{cell.id}.txt"


def target(probe: DeclaredProbe, framework: Framework) -> str:
    """What to run for one probe: its test function (`file::name`), or for a Node probe its file (node --test runs files)."""
    if framework.runtime == "node":
        return str(REPO_ROOT / probe.file)
    return f"{REPO_ROOT / probe.file}::{probe.function}"
