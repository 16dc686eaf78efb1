"""`fanin audit FILE.py:ATTR`: where a user's own graph meets a fan-in hazard, with observed evidence.

The framework-specific looking (suites/<framework>/audit.py, run by fanin/project/audit_inspect.py in the
environment that has the graph) yields findings: where, the pattern, the probes it rests on. Here
each finding gets its evidence: what those probes observed at the installed version (the reference
cell of that version, or the nearest one, saying which), the hazard that follows (the worst among
the evidence), the mitigation and its own probe, and a cite line. Markdown for a design doc, JSON
with --json. Exit 1 when a finding's hazard is in --fail-on (default: silent, hangs, loud).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fanin.model import compare
from fanin.model.errors import EnvironmentFault, FaninError
from fanin.model.matrix import Cell, Matrix
from fanin.model.results import HAZARDS, Observation, ResultSet
from fanin.model.source import REPO_ROOT, SUITES
from fanin.project import here
from fanin.run import one_cell
from fanin.run.identity import load_reference


@dataclass(frozen=True)
class Evidence:
    probe: str
    hazard: str
    label: str
    detail: str
    cite: str


@dataclass
class Finding:
    pattern: str
    where: list[str]
    hazard: str
    certainty: str
    evidence: list[Evidence] = field(default_factory=list)
    mitigation: str | None = None
    mitigation_probe: Evidence | None = None


@dataclass
class Audit:
    target: str
    framework: str
    package: str
    version: str
    compared_with: str
    why: str
    facts: dict[str, Any]
    findings: list[Finding]


def inspect(target: str, python: str, matrix: Matrix, given: str | None) -> dict[str, Any]:
    registry = {key: fw.package for key, fw in matrix.frameworks.items()}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        # -m, not the file: run as a script, the script's folder would be first on sys.path, where a sibling could shadow a stdlib module.
        [python, "-m", "fanin.project.audit_inspect", str(SUITES), json.dumps(registry), target, given or ""],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise (FaninError if last.startswith("fanin: error:") else EnvironmentFault)(
            last.removeprefix("fanin: error: ") if last.startswith("fanin: error:") else f"cannot load {target}: {last}"
        )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _mitigations() -> dict[str, dict[str, Any]]:
    path = REPO_ROOT / "reference" / "mitigations.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")).get("probe", {}) if path.exists() else {}


def _evidence(reference: ResultSet, probe_id: str, package: str) -> Evidence | None:
    observation: Observation | None = reference.observations.get(probe_id)
    info = reference.probes.get(probe_id)
    if observation is None or info is None:
        return None
    date = reference.environment.get("date", "?")
    cite = f"fanin {probe_id}@{info.source_hash} · {package} {reference.version} · reference {date}"
    return Evidence(probe_id, observation.hazard, observation.label, observation.detail, cite)


def _condition(finding: dict[str, Any], reference: ResultSet) -> bool:
    only_if = finding.get("only_if")
    if not only_if:
        return True
    for probe in finding.get("probes", []):
        observation = reference.observations.get(probe)
        if observation is None or observation.outcome != only_if.get("outcome", observation.outcome):
            return False
        if only_if.get("value_has") and only_if["value_has"] not in json.dumps(observation.value):
            return False
    return True


def evaluate(target: str, matrix: Matrix, python: str | None = None, given: str | None = None) -> list[Audit]:
    python = python or sys.executable
    facts = inspect(target, python, matrix, given)
    if not facts["inspected"]:
        known = ", ".join(fw.package for fw in matrix.frameworks.values())
        raise FaninError(f"{target} is a {facts['kind']}, not a graph or agent of a framework fanin knows ({known})")
    mitigations = _mitigations()
    audits = []
    for inspected in facts["inspected"]:
        framework = matrix.frameworks[inspected["framework"]]
        version = facts["versions"][framework.key]
        cell, why = here.nearest(matrix, framework, version, facts["python"])
        reference = load_reference(cell.reference_path, cell)
        findings = []
        for raw in inspected["findings"]:
            if not _condition(raw, reference):
                continue
            evidence = [e for e in (_evidence(reference, p, framework.package) for p in raw["probes"]) if e is not None]
            hazard = max((e.hazard for e in evidence), key=compare.harm, default="n/a")
            if not raw["probes"]:
                hazard = "silent"  # structural: a join nobody reaches, routes nobody can check
            finding = Finding(raw["pattern"], [str(w) for w in raw["where"]], hazard, raw["certainty"], evidence)
            for probe in raw["probes"]:
                entry = mitigations.get(probe)
                if entry:
                    finding.mitigation = entry.get("text")
                    mitigated = entry.get("probe")
                    finding.mitigation_probe = _evidence(reference, mitigated, framework.package) if mitigated else None
                    break
            findings.append(finding)
        audits.append(Audit(target, framework.key, framework.package, version, cell.id, why, inspected, findings))
    return audits


def markdown(audits: list[Audit]) -> str:
    lines: list[str] = []
    for audit in audits:
        lines += [
            f"## fanin audit of `{audit.target}`",
            "",
            f"{audit.package} {audit.version} installed; evidence from `{audit.compared_with}` ({audit.why}).",
            "",
        ]
        channels = audit.facts.get("channels")
        if channels:
            lines += ["| key | merge policy | commutative | associative |", "|---|---|---|---|"]
            lines += [
                f"| `{c['key']}` | {c['policy']} | {c.get('commutative', '—')} | {c.get('associative', '—')} |"
                for c in channels
            ]
            lines.append("")
        if audit.facts.get("parallel"):
            lines.append(
                "Nodes that can run in one superstep: " + "; ".join(", ".join(g) for g in audit.facts["parallel"])
            )
            lines.append("")
        if not audit.findings:
            lines += ["No fan-in hazard found.", ""]
        for number, finding in enumerate(audit.findings, start=1):
            lines += [
                f"### {number}. {finding.pattern} — **{finding.hazard}**",
                "",
                f"- Where: {'; '.join(finding.where)}",
                f"- How we know: {finding.certainty}",
            ]
            for e in finding.evidence:
                lines.append(f"- Evidence `{e.probe}` at {audit.package} {audit.version}: [{e.hazard}] {e.detail}")
                lines.append(f"  - Cite: `{e.cite}`")
            if finding.mitigation:
                lines.append(f"- Mitigation: {finding.mitigation}")
                if finding.mitigation_probe:
                    m = finding.mitigation_probe
                    lines.append(f"  - Shown by `{m.probe}`: [{m.hazard}] {m.detail} (cite: `{m.cite}`)")
            lines.append("")
    return "\n".join(lines)


def run(
    target: str, matrix: Matrix, python: str | None, given: str | None, json_path: Path | None, fail_on: list[str]
) -> int:
    wrong = [h for h in fail_on if h not in HAZARDS]
    if wrong:
        raise FaninError(f"--fail-on {', '.join(wrong)}: hazards are {', '.join(HAZARDS)}")
    audits = evaluate(target, matrix, python, given)
    print(markdown(audits))
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps([asdict(a) for a in audits], indent=2, sort_keys=True, default=str) + "\n")
    failing = [f for a in audits for f in a.findings if f.hazard in fail_on]
    return one_cell.CHANGED if failing else one_cell.SAME


def python_of(cell: Cell) -> str:
    from fanin.run import pythons, venvs

    interpreter = pythons.find(cell.python)
    if interpreter is None:
        raise EnvironmentFault(f"Python {cell.python} is not installed (looked in pyenv and on PATH)")
    return str(venvs.ensure(cell.id, interpreter, cell.lock_path).python)
