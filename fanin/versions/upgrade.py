"""The upgrade gate: compare the version you run with the one you want, and fail on what would hurt.

`upgrade -- google-adk==2.13.0 [--from 2.8.0]`. Each side is a reference cell when the matrix
has that version (its committed result set, identity-checked), and otherwise is locked, probed
and kept in reports/upgrade/: the `--from` side as it was released (the environment its users
had), the target as of today (what `pip install` gives now). Without `--from` the baseline is
the newest reference cell of the framework. The target may be a range (`deepagents==0.6.*`,
`deepagents~=0.6`): its newest release on the registry, said in one line.

Every difference is classified by fanin.model.compare: regression, fix, new coverage, changed, wording.
Exit 1 when a change gates (a regression, or a changed value your code may depend on), 0 when
the upgrade only fixes, adds coverage or rewords; 2 for bad input, 3 when a side could not run.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from fanin.model import exits
from fanin.model.errors import FaninError
from fanin.model.matrix import Cell, Framework, Matrix
from fanin.model.names import canonicalize_name
from fanin.model.source import shown
from fanin.versions import pypi, registry

if TYPE_CHECKING:  # imported where the gate runs: a short command's start does not pay for it
    from collections.abc import Mapping

    from fanin.model import catalog, compare, mitigations
    from fanin.model.results import ResultSet


@dataclass(frozen=True)
class Side:
    """One end of the comparison: a matrix cell (its reference), or a cell made for this check."""

    cell: Cell
    in_reference: bool


@dataclass(frozen=True)
class UpgradePlan:
    target: Side
    base: Side  # the side compared against
    said: str = ""  # what a range was resolved to, in one line

    @property
    def cell(self) -> Cell:
        return self.target.cell

    @property
    def baseline(self) -> Cell:
        return self.base.cell


def parse_spec(args: list[str]) -> tuple[str, str]:
    """`name==version` by PEP 508 rules (packaging's `Requirement`), the name normalised (google_adk = google-adk).

    The version is exact, `latest`, or any PEP 440 specifier set (`deepagents==0.6.*`, `deepagents~=0.6`),
    returned as written by packaging (`==0.6.*`) for the registry to resolve to its newest matching release.
    """
    if len(args) != 1:
        raise FaninError(
            f"upgrade takes one argument FRAMEWORK==VERSION (or FRAMEWORK==latest, or a range), got {len(args)}: "
            "e.g. ./noxw -s upgrade -- langgraph==1.2.20"
        )
    text = args[0].strip()
    name, sep, version = text.partition("==")
    if sep and version.strip().lower() == "latest":
        return canonicalize_name(name.strip()), "latest"
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise FaninError(
            f"malformed spec {text!r}: {str(exc).splitlines()[0]}; expected FRAMEWORK==VERSION or FRAMEWORK==latest"
        ) from None
    specifiers = list(requirement.specifier)
    if requirement.extras or requirement.marker or requirement.url or not specifiers:
        raise FaninError(
            f"malformed spec {text!r}: expected FRAMEWORK==VERSION, FRAMEWORK==latest or a range like 'langgraph~=1.2'"
        )
    if len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version:
        return canonicalize_name(requirement.name), str(requirement.specifier)
    wanted = specifiers[0].version
    try:
        Version(wanted)
    except InvalidVersion:
        raise FaninError(f"malformed spec {text!r}: {wanted!r} is not an exact version like 1.2.20") from None
    return canonicalize_name(requirement.name), wanted


def _option(words: list[str], name: str, what: str, example: str) -> str | None:
    """Take `name VALUE` out of `words` (the gate's own options, before the spec is read)."""
    if name not in words:
        return None
    at = words.index(name)
    if at + 1 >= len(words):
        raise FaninError(f"{name} takes {what}, e.g. {name} {example}")
    value = words[at + 1]
    del words[at : at + 2]
    return value


def _split(args: list[str]) -> tuple[list[str], str | None, str | None]:
    words = list(args)
    base = _option(words, "--from", "a version", "2.8.0")
    python = _option(words, "--python", "a Python version", "3.10")
    return words, base, python


def _side(
    matrix: Matrix, framework: Framework, release: pypi.Release, as_released: bool, today: _dt.date, python: str
) -> Side:
    for cell in matrix.of(framework.key):
        if Version(cell.version) == Version(release.version) and cell.python == python:
            return Side(cell, cell.reference_path.exists())
    if as_released:
        cell = matrix.make_cell(framework, release.version, python, "as-released", release.as_released)
    else:
        stamp = today.isoformat() + "T23:59:59Z"
        cell = matrix.make_cell(framework, release.version, python, "current", stamp)
    return Side(cell, False)


def plan(args: list[str], matrix: Matrix, today: _dt.date | None = None) -> UpgradePlan:
    """Validate against PyPI before anything is installed."""
    words, base_version, wanted_python = _split(args)
    python = wanted_python or matrix.default_python  # a Python twin: both sides on that Python
    name, wanted = parse_spec(words)
    framework = matrix.framework(name)
    day = today or _dt.datetime.now(_dt.UTC).date()
    release = registry.resolve(framework, wanted)
    target_side = _side(matrix, framework, release, as_released=False, today=day, python=python)
    if not target_side.in_reference:  # a version outside the matrix is resolved as of today
        stamp = day.isoformat() + "T23:59:59Z"
        target_side = Side(matrix.make_cell(framework, release.version, python, "current", stamp), False)
    if base_version is None:
        on_python = [c for c in matrix.of(framework.key) if c.python == python]
        if not on_python:
            raise FaninError(f"the matrix has no {framework.key} cell on Python {python} to compare with; give --from")
        baseline = on_python[-1]
        if not baseline.reference_path.exists():
            raise FaninError(f"no reference result set for {baseline.id} to compare with; run and bless it first")
        base_side = Side(baseline, True)
    else:
        try:
            Version(base_version)
        except InvalidVersion:
            raise FaninError(f"--from {base_version!r} is not a version like 2.8.0") from None
        base_side = _side(
            matrix, framework, registry.resolve(framework, base_version), as_released=True, today=day, python=python
        )
        if Version(base_side.cell.version) == Version(release.version):
            raise FaninError(
                f"--from and the target are the same version ({release.version}); give the one you run now"
            )
    said = ""
    if wanted[:1] in registry.RANGE_SIGNS:
        where = framework.runs_on.index
        said = (
            f"{words[0].strip()} means {framework.package} {release.version}, the newest release on {where} matching it"
        )
    return UpgradePlan(target=target_side, base=base_side, said=said)


def run(args: list[str], matrix: Matrix) -> int:
    """Lock and probe whichever side the reference lacks, then classify every difference."""
    from fanin.model import compare
    from fanin.model.matrix import REPORTS
    from fanin.model.results import load
    from fanin.run import all_cells, one_cell
    from fanin.run.identity import load_reference
    from fanin.versions import locking

    upgrade_plan = plan(args, matrix)
    if upgrade_plan.said:
        print(f"fanin: {upgrade_plan.said}")
    older, newer = upgrade_plan.base.cell.version, upgrade_plan.target.cell.version
    if Version(newer) < Version(older):
        print(
            f"fanin: {upgrade_plan.target.cell.framework.package} {newer} is older than {older}: this is a downgrade;"
            " the table reads from the version you run to the one you asked for"
        )

    rerun = resumes_elsewhere(upgrade_plan, matrix)
    # The target's live-thread probes alone run again, resuming what the base wrote, not what the cell below it did;
    # a run of them kept from before (same cell, lock, writer and probe code, identity-checked as a reference is)
    # is used as the reference is.
    live_dir = REPORTS / "upgrade" / f"from-{upgrade_plan.baseline.version}"
    kept = kept_live_run(live_dir / f"{upgrade_plan.cell.id}.json", upgrade_plan.cell) if rerun else None

    def observe(side: Side) -> ResultSet | int:
        results_dir: Path = REPORTS / "upgrade"
        targets: tuple[str, ...] = ()
        reference = None
        if side.in_reference:
            reference = load_reference(side.cell.reference_path, side.cell)
            if not (rerun and side is upgrade_plan.target):
                return reference
            if kept is not None:
                return merged(reference, kept)
            lock_path, results_dir, targets = side.cell.lock_path, live_dir, live_targets(side.cell)
        else:
            lock_path = registry.lock_path(side.cell, REPORTS)
            locking.lock(side.cell, matrix, lock_path)
        # The release you upgrade to resumes the live threads the one you run wrote (Matrix.earlier for the base),
        # from the base's own lock: the committed one, or the one this run made for a version outside the matrix.
        earlier = upgrade_plan.baseline if side is upgrade_plan.target else None
        earlier_lock = None if upgrade_plan.base.in_reference else registry.lock_path(upgrade_plan.baseline, REPORTS)
        options = all_cells.Options(
            lock=lock_path, results_dir=results_dir, reference_dir=REPORTS / "upgrade" / "none",
            accept_new=True, earlier=earlier, earlier_lock=earlier_lock, targets=targets,
        )  # fmt: skip
        with one_cell.signals_end_children():
            result = all_cells.run_one(side.cell, matrix, options)
        print(all_cells.describe(result, reference=REPORTS / "upgrade" / "none" / "-"))
        if result.code not in (exits.SAME, exits.CHANGED):
            return result.code
        observed = load(result.results, expect_cell=side.cell.id)
        return observed if reference is None else merged(reference, observed)

    base = observe(upgrade_plan.base)
    if isinstance(base, int):
        return base
    target = observe(upgrade_plan.target)
    if isinstance(target, int):
        return target
    # A live-thread probe's observation is itself this upgrade's answer (the target resuming what the base wrote);
    # the base's own is about the release before it, so the two are never compared.
    live = compare.live_ids(target) if Version(older) != Version(newer) else set()
    changes = compare.diff(base, target, (set(base.observations) | set(target.observations)) - live)
    where = {True: "reference", False: "probed now"}
    header = (
        f"{base.cell} ({base.version}, {where[upgrade_plan.base.in_reference]}) -> "
        f"{target.cell} ({target.version}, "
        + (
            (
                f"reference; live threads as run before, {shown(live_dir)}"
                if kept
                else "reference; live threads probed now"
            )
            if rerun
            else where[upgrade_plan.target.in_reference]
        )
        + ")"
    )
    observed = len(target.observations) - len(live)
    code = gate(header, changes, observed, details=True, proofs=proofs_at(changes, target))
    if live:
        package = upgrade_plan.cell.framework.package
        code = max(code, live_gate(f"{package} {older}", target, live))
    if changes:
        from fanin.versions import dependencies
        from fanin.versions.first_release import findings

        framework = upgrade_plan.cell.framework
        locks = [
            s.cell.lock_path if s.in_reference else registry.lock_path(s.cell, REPORTS)
            for s in (upgrade_plan.base, upgrade_plan.target)
        ]
        changed = [change.probe_id for change in changes if change.is_breaking]
        for line in dependencies.explained(framework, base, target, locks, changed, findings()):
            print(line + "\n")
    return code


def resumes_elsewhere(upgrade_plan: UpgradePlan, matrix: Matrix) -> bool:
    """Whether the target is a reference cell whose live-thread probes resumed another release's stores than the
    base's (the matrix cell below it wrote them): then it runs now, with the base as the writer."""
    target, base = upgrade_plan.target, upgrade_plan.base
    if not (target.in_reference and target.cell.framework.live_threads):
        return False
    if Version(base.cell.version) == Version(target.cell.version):
        return False
    below = matrix.earlier(target.cell)
    return below is None or below.id != base.cell.id


def _live_probes(cell: Cell) -> list[catalog.DeclaredProbe]:
    """The live-thread probes declared for the cell's framework."""
    from fanin.model import catalog
    from fanin.model.compare import is_live

    declared = [*catalog.declared(), *catalog.declared_node()]
    return [p for p in declared if p.framework == cell.framework.key and is_live(p.id)]


def live_targets(cell: Cell) -> tuple[str, ...]:
    """What to run for the cell's live-thread probes alone (their files or file::function ids)."""
    return tuple(sorted({registry.target(p, cell.framework) for p in _live_probes(cell)}))


def merged(reference: ResultSet, live: ResultSet) -> ResultSet:
    """The reference with its live-thread observations (and their probes' records) taken from `live`."""
    return replace(
        reference,
        probes={**reference.probes, **live.probes},
        observations={**reference.observations, **live.observations},
    )


def kept_live_run(path: Path, cell: Cell) -> ResultSet | None:
    """An earlier run of the cell's live-thread probes at `path`, where it is that cell's from its current lock and
    holds every one of them as their code is now; None otherwise (it runs again)."""
    from fanin.run.identity import load_reference

    if not path.is_file():
        return None
    try:
        kept = load_reference(path, cell)
    except (FaninError, OSError, ValueError):
        return None
    for probe in _live_probes(cell):
        info = kept.probes.get(probe.id)
        if info is None or info.source_hash != probe.source_hash:
            return None
        if any(oid not in kept.observations for oid in probe.observation_ids()):
            return None
    return kept


def live_gate(writer: str, target: ResultSet, live: set[str]) -> int:
    """Print what the target did with the stores `writer` left mid-fan-out, one row a live-thread probe; exit 1
    when one did not resume as the target's own (compare.breaks_resume)."""
    from fanin.model import compare
    from fanin.report.gate_table import live_table

    rows = [(compare.resume_word(target.observations[pid]), pid, target.observations[pid]) for pid in sorted(live)]
    broken = [pid for pid in sorted(live) if compare.breaks_resume(target.observations[pid])]
    said = f"{len(broken)} did not resume as its own" if broken else "none broke"
    probes = f"{len(rows)} probe" + ("s" if len(rows) != 1 else "")
    print(f"live threads: {target.cell} resumed what {writer} wrote mid-fan-out, {probes}: {said}")
    print(live_table(rows) + "\n")
    return exits.CHANGED if broken else exits.SAME


def proofs_at(changes: list[compare.Change], target: ResultSet) -> dict[str, mitigations.Proof]:
    """Each regression's and changed row's mitigation, proven (or not) by the target's own observations."""
    from fanin.model import mitigations
    from fanin.model.matrix import MITIGATIONS

    table = mitigations.read(MITIGATIONS)
    return mitigations.of_changes(table, [(c.probe_id, c.label) for c in changes], target.observations, target.version)


def gate(
    header: str,
    changes: list[compare.Change],
    observed: int,
    details: bool = False,
    proofs: Mapping[str, mitigations.Proof] | None = None,
) -> int:
    """Print the gate's verdict (counts per kind of change, the table, optionally each before/after); its exit code."""
    from fanin.model import compare
    from fanin.report.gate_table import changes_table

    if not changes:
        print(f"{header}: no change in {observed} observations")
        return exits.SAME
    counts = {label: sum(c.label == label for c in changes) for label in dict.fromkeys(c.label for c in changes)}
    print(f"{header}: " + ", ".join(f"{n} {label}" for label, n in counts.items()))
    print(changes_table(changes, proofs) + "\n")
    if details:
        for change in changes:
            if change.is_breaking:
                print(compare.describe(change) + "\n")
    return exits.CHANGED if any(change.gates for change in changes) else exits.SAME
