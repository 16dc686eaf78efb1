"""Bisect over a companion: the framework held at one version, one of its own dependencies moved release by release.

A behaviour can move with a companion package, not the framework (LangGraph's DeltaChannel replay order
moved with langgraph-checkpoint). `bisect FRAMEWORK PROBE GOOD BAD --companion PACKAGE --at VERSION` locks
the framework at VERSION as released with PACKAGE pinned at each of its releases from GOOD to BAD (only
PACKAGE may be newer than the framework's moment: `matrix.Pin`; a Node framework's companion comes from npm,
fanin.versions.npm), runs the probe, and records the first
release of PACKAGE whose observation changed under the probe's id in bisect.json, with `companion` and `at`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from packaging.version import InvalidVersion, Version

from fanin.model import catalog
from fanin.model.errors import FaninError
from fanin.model.matrix import Cell, Framework, Matrix, Pin
from fanin.model.names import canonicalize_name
from fanin.model.results import Observation, probe_of
from fanin.versions import dependencies, pypi, registry
from fanin.versions.first_release import check, probe_once, record, search


@dataclass(frozen=True)
class CompanionPlan:
    framework: Framework
    probe_id: str
    at: pypi.Release  # the framework's release, held
    companion: str  # the companion's name, as its registry compares them (PyPI's PEP 503, or npm's own)
    good: pypi.Release
    bad: pypi.Release
    between: tuple[pypi.Release, ...]
    skipped: tuple[pypi.Release, ...] = ()
    held: tuple[
        Pin, ...
    ] = ()  # other companions held at one version in every step (`--with`: what the moved one needs)


def plan(args: list[str], companion: str, at: str, matrix: Matrix, held: tuple[str, ...] = ()) -> CompanionPlan:
    """Checked before anything is installed: the probe, the framework's version, the companion and its two releases."""
    if len(args) != 4:
        raise FaninError(
            f"bisect --companion takes FRAMEWORK PROBE-ID GOOD BAD (the companion's versions), got {len(args)}"
            " argument(s): e.g. bisect langgraph langgraph/reducers/delta-channel-parallel 4.1.1 4.3.0"
            " --companion langgraph-checkpoint --at 1.2.14"
        )
    name, probe_id, good, bad = args
    framework = matrix.framework(name)
    try:
        Version(at)
    except InvalidVersion:
        raise FaninError(f"--at {at!r} is not a version like 1.2.14") from None
    wanted = canonicalize_name(companion)
    index = registry.of(framework)  # the framework's own registry: PyPI, or npm for a Node framework
    own = dependencies.own_names(framework, [c.lock_path for c in matrix.of(framework.key)])
    if wanted not in own:
        raise FaninError(
            f"{companion} is not one of {framework.package}'s own dependencies (its companions and what its"
            f" cells' locks install via it: {', '.join(sorted(own))})"
        )
    check(framework, probe_id, good, bad)  # the framework bisect's checks, with the companion's versions
    pins = []
    for requirement in held:
        package, sep, version = requirement.partition("==")
        if not sep or canonicalize_name(package) not in own or canonicalize_name(package) == wanted:
            raise FaninError(
                f"--with {requirement!r}: give another of {framework.package}'s own dependencies as PACKAGE==VERSION"
            )
        release = index.resolve(canonicalize_name(package), version)
        pins.append(Pin(canonicalize_name(package), release.version, release.as_released))
    in_range = [r for r in index.releases(wanted) if Version(good) < Version(r.version) < Version(bad)]
    return CompanionPlan(
        framework,
        probe_id,
        registry.resolve(framework, at),
        wanted,
        index.resolve(wanted, good),
        index.resolve(wanted, bad),
        tuple(r for r in in_range if not r.yanked and not r.prerelease),
        tuple(r for r in in_range if r.yanked),
        tuple(pins),
    )


def cell_of(bisect: CompanionPlan, release: pypi.Release, matrix: Matrix) -> Cell:
    """The framework at its version as released, the companion pinned at `release` (let in past that moment)."""
    cell = matrix.make_cell(
        bisect.framework, bisect.at.version, matrix.default_python, "as-released", bisect.at.as_released
    )
    return replace(cell, pins=(*bisect.held, Pin(bisect.companion, release.version, release.as_released)))


def run(args: list[str], companion: str, at: str, matrix: Matrix, held: tuple[str, ...] = ()) -> int:
    bisect = plan(args, companion, at, matrix, held)
    declared = next(p for p in (*catalog.declared(), *catalog.declared_node()) if p.id == probe_of(bisect.probe_id))
    releases = {r.version: r for r in (bisect.good, *bisect.between, bisect.bad)}
    target = registry.target(declared, bisect.framework)
    packages: dict[str, dict[str, str]] = {}
    locks = [c.lock_path for c in matrix.of(bisect.framework.key)]

    def observe(version: str) -> Observation:
        cell = cell_of(bisect, releases[version], matrix)
        result_set, observation, lock_path = probe_once(cell, matrix, target, bisect.probe_id)
        packages[version] = dependencies.own(bisect.framework, result_set, [lock_path, *locks])
        installed = packages[version].get(bisect.companion)
        if installed != version:
            raise FaninError(f"{cell.id}: installed {bisect.companion} {installed}, not {version}")
        print(f"fanin: {bisect.companion} {version}: {observation.outcome} [{observation.hazard}] {observation.label}")
        return observation

    first, seen = search(bisect.good.version, [r.version for r in bisect.between], bisect.bad.version, observe)
    record(
        bisect.probe_id,
        bisect.good.version,
        bisect.bad.version,
        first,
        seen,
        skipped=[r.version for r in bisect.skipped],
        packages=packages,
        companion=(bisect.companion, bisect.at.version),
        held={pin.package: pin.version for pin in bisect.held},
    )
    print(
        f"fanin: {bisect.probe_id}: changed with {bisect.companion} {first} ({bisect.framework.package} held at"
        f" {bisect.at.version}{''.join(f', {p.package} at {p.version}' for p in bisect.held)};"
        f" {len(seen)} of {len(releases)} releases run); recorded in reference/bisect.json"
    )
    return 0
