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

from fanin import catalog, compare, pypi
from fanin.errors import FaninError
from fanin.matrix import Framework, Matrix
from fanin.model import Observation, write_atomic
from fanin.source import REPO_ROOT

FINDINGS = REPO_ROOT / "reference" / "bisect.json"


@dataclass(frozen=True)
class BisectPlan:
    framework: Framework
    probe_id: str
    good: pypi.Release
    bad: pypi.Release
    between: tuple[pypi.Release, ...]


def plan(args: list[str], matrix: Matrix) -> BisectPlan:
    if len(args) != 4:
        raise FaninError(
            f"bisect takes FRAMEWORK PROBE-ID GOOD-VERSION BAD-VERSION, got {len(args)} argument(s): "
            "e.g. nox -s bisect -- langgraph langgraph/join/defer 0.3.34 0.4.10"
        )
    name, probe_id, good, bad = args
    framework = matrix.framework(name)
    declared = {p.id for p in catalog.declared()}
    if probe_id not in declared:
        raise FaninError(f"no probe {probe_id!r} in suites/; `python -m fanin cells` lists cells, REPORT.md lists probes")
    if not probe_id.startswith(f"{framework.key}/"):
        raise FaninError(f"{probe_id} is not a {framework.key} probe")
    for version in (good, bad):
        try:
            Version(version)
        except InvalidVersion:
            raise FaninError(f"{version!r} is not a version like 1.2.18") from None
    if Version(good) == Version(bad):
        raise FaninError(f"good and bad are the same version ({good}); give the last known-good and the first known-bad")
    if Version(good) > Version(bad):
        raise FaninError(f"the versions are in the wrong order: good {good} is newer than bad {bad}; give GOOD first")
    good_release, bad_release = pypi.resolve(framework.package, good), pypi.resolve(framework.package, bad)
    between = tuple(
        r for r in pypi.releases(framework.package)
        if not r.yanked and Version(good) < Version(r.version) < Version(bad)
    )
    return BisectPlan(framework, probe_id, good_release, bad_release, between)


def search(
    good: str, candidates: list[str], bad: str, observe: Callable[[str], Observation]
) -> tuple[str, dict[str, Observation]]:
    """Binary search for the first version whose observation is not the good one's.

    Assumes one change point (as git bisect does); every observation made is
    returned so the finding shows its evidence.
    """
    seen = {good: observe(good), bad: observe(bad)}
    if compare.classify("probe", seen[good], seen[bad]).kind in (compare.SAME, compare.MINOR):
        raise FaninError(f"the probe observes the same behaviour in {good} and {bad}: nothing to bisect")
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


def record(probe_id: str, good: str, bad: str, first: str, seen: dict[str, Observation], path: Path = FINDINGS) -> None:
    findings: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    entries = [e for e in findings.get(probe_id, []) if (e["good"], e["bad"]) != (good, bad)]
    entries.append({
        "good": good,
        "bad": bad,
        "first_changed": first,
        "observed": {v: {"outcome": o.outcome, "label": o.label} for v, o in sorted(seen.items(), key=lambda i: Version(i[0]))},
    })
    findings[probe_id] = sorted(entries, key=lambda e: Version(e["good"]))
    write_atomic(path, json.dumps(findings, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def findings(path: Path = FINDINGS) -> dict[str, list[dict[str, Any]]]:
    return json.loads(path.read_text()) if path.exists() else {}
