"""Find the first release where a probe's observation changed, between a good and a bad version.

The matrix says "changed between 0.3.34 and 0.4.10"; bisect installs the
releases in between (as released, like the matrix cells) and names the first
one whose observation differs from the good version's. Findings are kept in
reference/bisect.json, which the report reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from fanin.model import catalog, compare, exits
from fanin.model.errors import FaninError
from fanin.model.matrix import BISECT_FINDINGS, Cell, Framework, Matrix
from fanin.model.results import Observation, ResultSet, probe_of, write_atomic
from fanin.model.suggest import LIST_PROBES, did_you_mean
from fanin.versions import dependencies, pypi, registry

FINDINGS = BISECT_FINDINGS


@dataclass(frozen=True)
class BisectPlan:
    framework: Framework
    probe_id: str
    good: pypi.Release
    bad: pypi.Release
    between: tuple[pypi.Release, ...]
    skipped: tuple[pypi.Release, ...] = ()  # yanked releases in the range: never installable, so never run


def plan(args: list[str], matrix: Matrix) -> BisectPlan:
    if len(args) != 4:
        raise FaninError(
            f"bisect takes FRAMEWORK PROBE-ID GOOD-VERSION BAD-VERSION, got {len(args)} argument(s): "
            "e.g. nox -s bisect -- langgraph langgraph/join/defer 0.3.34 0.4.10"
        )
    name, probe_id, good, bad = args
    framework = matrix.framework(name)
    check(framework, probe_id, good, bad)
    good_release, bad_release = registry.resolve(framework, good), registry.resolve(framework, bad)
    in_range = [r for r in registry.releases(framework) if Version(good) < Version(r.version) < Version(bad)]
    between = tuple(r for r in in_range if not r.yanked)
    skipped = tuple(r for r in in_range if r.yanked)
    return BisectPlan(framework, probe_id, good_release, bad_release, between, skipped)


def check(framework: Framework, probe_id: str, good: str, bad: str) -> None:
    """A declared probe of this framework, and two versions in order (bad input otherwise: nothing installed)."""
    declared = {oid for p in (*catalog.declared(), *catalog.declared_node()) for oid in p.observation_ids()}
    if probe_id not in declared:
        raise FaninError(f"no probe {probe_id!r} in suites/{did_you_mean(probe_id, sorted(declared), LIST_PROBES)}")
    if not probe_id.startswith(f"{framework.key}/"):
        raise FaninError(f"{probe_id} is not a {framework.key} probe")
    for version in (good, bad):
        try:
            Version(version)
        except InvalidVersion:
            raise FaninError(f"{version!r} is not a version like 1.2.18") from None
    if Version(good) == Version(bad):
        raise FaninError(
            f"good and bad are the same version ({good}); give the last known-good and the first known-bad"
        )
    if Version(good) > Version(bad):
        raise FaninError(f"the versions are in the wrong order: good {good} is newer than bad {bad}; give GOOD first")


class NothingToBisect(FaninError):
    """Both ends observe the same when probed now; `seen` holds the two observations."""

    def __init__(self, message: str, seen: dict[str, Observation]) -> None:
        super().__init__(message)
        self.seen = seen


def search(
    good: str, candidates: list[str], bad: str, observe: Callable[[str], Observation]
) -> tuple[str, dict[str, Observation]]:
    """Binary search for the first version whose observation is not the good one's.

    Assumes one change point (as git bisect does); every observation made is
    returned so the finding shows its evidence.
    """
    seen = {good: observe(good), bad: observe(bad)}
    if not compare.classify("probe", seen[good], seen[bad]).is_breaking:
        raise NothingToBisect(f"the probe observes the same behaviour in {good} and {bad}: nothing to bisect", seen)
    low, high = -1, len(candidates)  # candidates[low] behaves like good, candidates[high] like bad
    while high - low > 1:
        middle = (low + high) // 2
        version = candidates[middle]
        seen[version] = observe(version)
        if compare.classify("probe", seen[good], seen[version]).is_breaking:
            high = middle
        else:
            low = middle
    first = candidates[high] if high < len(candidates) else bad
    return first, seen


def record(
    probe_id: str,
    good: str,
    bad: str,
    first: str | None,
    seen: dict[str, Observation],
    path: Path = FINDINGS,
    skipped: list[str] | None = None,
    packages: dict[str, dict[str, str]] | None = None,
    companion: tuple[str, str] | None = None,
    held: dict[str, str] | None = None,
    writer: str | None = None,
) -> None:
    """One finding under the probe's id, replacing the one of the same range; `packages` are the framework's own
    dependencies each step installed; `companion` (package, the framework's version held) makes it a companion's."""
    findings: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    key = (good, bad, *(companion or ()))
    installed = packages or {}
    entries = [e for e in findings.get(probe_id, []) if span(e) != key]
    entry: dict[str, Any] = {
        "good": good,
        "bad": bad,
        "first_changed": first,
        "skipped_yanked": sorted(skipped or [], key=Version),
        "observed": {
            v: {"outcome": o.outcome, "label": o.label, **({"packages": installed[v]} if v in installed else {})}
            for v, o in sorted(seen.items(), key=lambda i: Version(i[0]))
        },
    }
    if writer:
        entry["writer"] = writer  # a live-thread probe: every step resumed a store this release wrote
    if companion:
        entry["companion"], entry["at"] = companion
        if held:
            entry["with"] = dict(sorted(held.items()))  # other companions held in every step
    entries.append(entry)
    findings[probe_id] = sorted(entries, key=lambda e: (e.get("companion", ""), Version(e["good"])))
    write_atomic(path, json.dumps(findings, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def beside_first(first: str, seen: dict[str, Observation], packages: dict[str, dict[str, str]]) -> str:
    """`, with langgraph-checkpoint 4.2.0 → 4.3.0 beside it`: the framework's own dependencies that moved between the
    newest release run before `first` and `first` itself (the change may come with one of them: bisect it)."""
    before = [v for v in seen if Version(v) < Version(first)]
    if not before or first not in packages:
        return ""
    last = max(before, key=Version)
    a, b = packages.get(last, {}), packages[first]
    moves = [
        f"{name} {a.get(name, 'absent')} → {b.get(name, 'absent')}"
        for name in sorted({*a, *b})
        if a.get(name) != b.get(name)
    ]
    return f", with {', '.join(moves)} beside it (bisect over it: --companion)" if moves else ""


def held_writer(matrix: Matrix, framework: Framework, good: str) -> Cell | None:
    """Who writes a live-thread probe's store in every step, the good end included: the good end's matrix cell (on
    the default Python), so each step reads what one release wrote; None where the framework has no such probes or
    the good end is no matrix cell (each step then gets Matrix.earlier's cell)."""
    if not framework.live_threads:
        return None
    return next((c for c in matrix.of(framework.key) if c.version == good and c.python == matrix.default_python), None)


def span(entry: dict[str, Any]) -> tuple[str, ...]:
    """What a finding is of: its range of the framework's releases, or of a companion's at one framework version."""
    held = (entry["companion"], entry["at"]) if "companion" in entry else ()
    return (entry["good"], entry["bad"], *held)


def findings(path: Path = FINDINGS) -> dict[str, list[dict[str, Any]]]:
    return json.loads(path.read_text()) if path.exists() else {}


def probe_once(
    cell: Cell, matrix: Matrix, target: str, probe_id: str, earlier: Cell | None = None
) -> tuple[ResultSet, Observation, Path]:
    """One bisect step: lock `cell` into the bisect's own directory, run the one probe, read its observation
    (the framework bisect and the companion bisect take their steps alike); the result set and its lock come back."""
    from fanin.model.matrix import REPORTS
    from fanin.model.results import ResultFileError, load
    from fanin.run import all_cells, one_cell
    from fanin.versions import locking

    work = REPORTS / "bisect"
    lock_path = registry.lock_path(cell, work)
    locking.lock(cell, matrix, lock_path)
    options = all_cells.Options(
        lock=lock_path,
        results_dir=work,
        reference_dir=work / "none",
        targets=(target,),
        accept_new=True,
        pytest_args=("-q",),
        earlier=earlier,
    )
    with one_cell.signals_end_children():
        result = all_cells.run_one(cell, matrix, options)
    if result.code not in (exits.SAME, exits.CHANGED):
        raise FaninError(f"{cell.id} could not run: {result.outcome.reason}")
    try:
        result_set = load(result.results, expect_cell=cell.id)
        return result_set, result_set.observations[probe_id], lock_path
    except (ResultFileError, KeyError) as exc:
        raise FaninError(f"{cell.id}: no observation of {probe_id} ({exc})") from None


def run(args: list[str], matrix: Matrix) -> int:
    """Bisect from the command line: lock and probe releases between GOOD and BAD, record the finding."""
    bisect_plan = plan(args, matrix)
    declared = next(
        p for p in (*catalog.declared(), *catalog.declared_node()) if p.id == probe_of(bisect_plan.probe_id)
    )
    releases = {r.version: r for r in (bisect_plan.good, *bisect_plan.between, bisect_plan.bad)}
    target = registry.target(declared, bisect_plan.framework)
    packages: dict[str, dict[str, str]] = {}
    writer = held_writer(matrix, bisect_plan.framework, bisect_plan.good.version)

    def observe(version: str) -> Observation:
        release = releases[version]
        cell = matrix.make_cell(
            bisect_plan.framework, version, matrix.default_python, "as-released", release.as_released
        )
        result_set, observation, lock_path = probe_once(cell, matrix, target, bisect_plan.probe_id, writer)
        locks = [lock_path, *(c.lock_path for c in matrix.of(bisect_plan.framework.key))]
        packages[version] = dependencies.own(bisect_plan.framework, result_set, locks)
        print(f"fanin: {version}: {observation.outcome} [{observation.hazard}] {observation.label}", flush=True)
        return observation

    first, seen = search(
        bisect_plan.good.version, [r.version for r in bisect_plan.between], bisect_plan.bad.version, observe
    )
    record(
        bisect_plan.probe_id,
        bisect_plan.good.version,
        bisect_plan.bad.version,
        first,
        seen,
        skipped=[r.version for r in bisect_plan.skipped],
        packages=packages,
        writer=writer.version if writer else None,
    )
    beside = beside_first(first, seen, packages)
    print(
        f"fanin: {bisect_plan.probe_id}: first changed in {bisect_plan.framework.package} {first}{beside} "
        f"({len(seen)} of {len(releases)} releases run"
        + (f"; yanked, skipped: {', '.join(r.version for r in bisect_plan.skipped)}" if bisect_plan.skipped else "")
        + "); recorded in reference/bisect.json"
    )
    return 0
