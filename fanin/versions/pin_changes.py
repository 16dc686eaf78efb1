"""Pin every change between adjacent reference cells to its first installable release, in one pass.

For each pair of adjacent cells of a framework (same Python), every observation whose
behaviour changed and has no finding in reference/bisect.json yet is bisected. All such
probes of one range share each release's run: a release is locked, installed and probed
once (only the changed probes' functions), and every probe's binary search reads from
that run, so a range costs about log2(releases) runs per distinct change point, not per
probe. Yanked releases are never run; each finding lists them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from packaging.version import Version

from fanin.model import catalog, compare, exits
from fanin.model.errors import FaninError
from fanin.model.matrix import REPORTS, Cell, Matrix
from fanin.model.results import Observation, ResultFileError, ResultSet, load, probe_of
from fanin.run import all_cells, one_cell
from fanin.versions import dependencies, locking, pypi, registry
from fanin.versions.first_release import NothingToBisect, beside_first, findings, held_writer, record, search, span


@dataclass(frozen=True)
class Range:
    good: Cell
    bad: Cell
    observation_ids: tuple[str, ...]


def pending(matrix: Matrix, framework: str | None = None) -> list[Range]:
    """Every adjacent pair of reference cells with changes that reference/bisect.json does not pin yet."""
    known = findings()
    ranges = []
    for key in matrix.frameworks:
        if framework and key != framework:
            continue
        cells = [c for c in matrix.of(key) if c.python == matrix.default_python and c.reference_path.exists()]
        for good, bad in itertools.pairwise(cells):
            changes = compare.diff(load(good.reference_path), load(bad.reference_path))
            ids = tuple(
                c.probe_id
                for c in changes
                if c.is_breaking
                and c.after is not None
                and c.before is not None
                and not any(span(e) == (good.version, bad.version) for e in known.get(c.probe_id, []))
            )
            if ids:
                ranges.append(Range(good, bad, ids))
    return ranges


def _observer(
    rng: Range, matrix: Matrix, between: dict[str, pypi.Release], writer: Cell | None
) -> Callable[[str], ResultSet]:
    """Memoised: one lock, install and probe run per release for all the range's changed probes; `writer` writes
    a live-thread probe's store in each of them (first_release.held_writer)."""
    declared = {p.id: p for p in (*catalog.declared(), *catalog.declared_node())}
    targets = tuple(
        sorted({registry.target(declared[probe_of(oid)], rng.good.framework) for oid in rng.observation_ids})
    )
    work = REPORTS / "bisect"
    seen: dict[str, ResultSet] = {}

    def observe(version: str) -> ResultSet:
        if version in seen:
            return seen[version]
        if version == rng.good.version:
            cell = rng.good
            lock = cell.lock_path
        elif version == rng.bad.version:
            cell = rng.bad
            lock = cell.lock_path
        else:
            release = between[version]
            cell = matrix.make_cell(
                rng.good.framework, version, matrix.default_python, "as-released", release.as_released
            )
            lock = registry.lock_path(cell, work)
            if not lock.exists():
                locking.lock(cell, matrix, lock)
        options = all_cells.Options(
            lock=lock,
            results_dir=work / "runs",
            reference_dir=work / "none",
            targets=targets,
            accept_new=True,
            pytest_args=("-q",),
            earlier=writer,
        )
        result = all_cells.run_one(cell, matrix, options)
        if result.code not in (exits.SAME, exits.CHANGED):
            raise FaninError(f"{cell.id} could not run: {result.outcome.reason}")
        try:
            seen[version] = load(result.results, expect_cell=cell.id)
        except ResultFileError as exc:
            raise FaninError(f"{cell.id}: {exc}") from None
        print(
            f"fanin: bisect {rng.good.framework.key} {version}: probed {len(rng.observation_ids)} changed observation(s)",
            flush=True,
        )
        return seen[version]

    return observe


def run(matrix: Matrix, framework: str | None = None) -> int:
    ranges = pending(matrix, framework)
    if not ranges:
        print("fanin: every change between adjacent reference cells is already pinned to a release")
        return 0
    for rng in ranges:
        package = rng.good.framework.package
        in_range = [
            r
            for r in registry.releases(rng.good.framework)
            if Version(rng.good.version) < Version(r.version) < Version(rng.bad.version)
        ]
        between = {r.version: r for r in in_range if not r.yanked}
        skipped = [r.version for r in in_range if r.yanked]
        writer = held_writer(matrix, rng.good.framework, rng.good.version)
        observe_all = _observer(rng, matrix, between, writer)
        print(
            f"fanin: bisect {rng.good.id} -> {rng.bad.id}: {len(rng.observation_ids)} change(s), "
            f"{len(between)} installable release(s) between" + (f", yanked: {', '.join(skipped)}" if skipped else ""),
            flush=True,
        )
        with one_cell.signals_end_children():
            for oid in rng.observation_ids:

                def observe(
                    version: str,
                    oid: str = oid,
                    observe_all: Callable[[str], ResultSet] = observe_all,
                    package: str = package,
                ) -> Observation:
                    observations = observe_all(version).observations
                    if oid not in observations:
                        raise FaninError(f"{package} {version}: the run has no observation of {oid}")
                    return observations[oid]

                first: str | None
                try:
                    first, seen = search(rng.good.version, list(between), rng.bad.version, observe)
                except NothingToBisect as same:
                    if writer is None:
                        raise
                    # The reference's two cells read stores different releases wrote; with one writer they agree.
                    first, seen = None, same.seen
                locks = [c.lock_path for c in matrix.of(rng.good.framework.key)]
                packages = {v: dependencies.own(rng.good.framework, observe_all(v), locks) for v in seen}
                record(
                    oid, rng.good.version, rng.bad.version, first, seen, skipped=skipped, packages=packages,
                    writer=writer.version if writer else None,
                )  # fmt: skip
                if first is None:
                    print(
                        f"fanin: {oid}: {rng.good.version} and {rng.bad.version} resume what {rng.good.version} wrote"
                        f" alike: the change is the writer's ({rng.good.id} resumes what the cell before it wrote)",
                        flush=True,
                    )
                    continue
                beside = beside_first(first, seen, packages)
                print(f"fanin: {oid}: first in {package} {first}{beside}", flush=True)
    return 0
