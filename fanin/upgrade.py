"""Plan an upgrade check: which cell to build for `framework==version`, and which reference to diff it with."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from fanin import pypi
from fanin.errors import FaninError
from fanin.matrix import Cell, Matrix


@dataclass(frozen=True)
class UpgradePlan:
    cell: Cell
    baseline: Cell


def parse_spec(args: list[str]) -> tuple[str, str]:
    """`name==version` by PEP 508 rules (packaging's `Requirement`), the name normalised (google_adk = google-adk)."""
    if len(args) != 1:
        raise FaninError(
            f"upgrade takes one argument FRAMEWORK==VERSION (or FRAMEWORK==latest), got {len(args)}: "
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
    if (
        requirement.extras
        or requirement.marker
        or requirement.url
        or len(specifiers) != 1
        or specifiers[0].operator != "=="
    ):
        raise FaninError(f"malformed spec {text!r}: expected exactly FRAMEWORK==VERSION or FRAMEWORK==latest")
    wanted = specifiers[0].version
    try:
        if "*" in wanted:
            raise InvalidVersion(wanted)
        Version(wanted)
    except InvalidVersion:
        raise FaninError(f"malformed spec {text!r}: {wanted!r} is not an exact version like 1.2.20") from None
    return canonicalize_name(requirement.name), wanted


def plan(args: list[str], matrix: Matrix, today: _dt.date | None = None) -> UpgradePlan:
    """Validate against PyPI before anything is installed; the cell resolves as of today."""
    name, wanted = parse_spec(args)
    framework = matrix.framework(name)
    baseline = matrix.newest(framework.key)
    release = pypi.resolve(framework.package, wanted)
    stamp = (today or _dt.datetime.now(_dt.UTC).date()).isoformat() + "T23:59:59Z"
    cell = matrix.make_cell(framework, release.version, matrix.default_python, "current", stamp)
    if not baseline.reference_path.exists():
        raise FaninError(f"no reference result set for {baseline.id} to compare with; run and bless it first")
    return UpgradePlan(cell=cell, baseline=baseline)


def run(args: list[str], matrix: Matrix) -> int:
    """Lock the version as of today, probe it, diff it with the newest reference of its framework."""
    from fanin import compare, execute, locking, runner
    from fanin.identity import load_reference
    from fanin.matrix import REPORTS
    from fanin.model import load
    from fanin.render import markdown

    upgrade_plan = plan(args, matrix)
    baseline = load_reference(upgrade_plan.baseline.reference_path, upgrade_plan.baseline)
    lock_path = REPORTS / "locks" / f"{upgrade_plan.cell.id}.txt"
    locking.lock(upgrade_plan.cell, matrix, lock_path)
    options = execute.Options(
        lock=lock_path, results_dir=REPORTS / "upgrade", baseline=upgrade_plan.baseline, accept_new=True
    )
    with runner.signals_end_children():
        result = execute.run_one(upgrade_plan.cell, matrix, options)
    print(execute.describe(result))
    if result.code not in (runner.SAME, runner.CHANGED):
        return result.code
    candidate = load(result.results, expect_cell=upgrade_plan.cell.id)
    changes = compare.diff(baseline, candidate)
    header = f"{baseline.cell} ({baseline.version}) -> {candidate.cell} ({candidate.version})"
    if not changes:
        print(f"{header}: no change in {len(candidate.observations)} probes")
        return runner.SAME
    print(f"{header}:\n{markdown.changes(changes)}\n")
    for change in changes:
        print(compare.describe(change) + "\n")
    return runner.CHANGED if any(change.is_breaking for change in changes) else runner.SAME
