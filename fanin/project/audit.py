"""`fanin audit FILE.py:ATTR`: where a user's own graph meets a fan-in hazard, with observed evidence.

The framework-specific looking (suites/<framework>/audit.py, run by fanin/project/audit_inspect.py in the
environment that has the graph) yields findings: where, the pattern, the probes it rests on. Here
each finding gets its evidence: what those probes observed at the installed version (the reference
cell of that version, or the nearest one, saying which), the hazard that follows (the worst among
the evidence), the mitigation and its own probe, and a cite line. Markdown for a design doc, JSON
with --json. Exit 1 when a finding's hazard is in --fail-on (default: silent, hangs, loud); else 3 when
the audit is incomplete (the dry run failed, or some nodes' writes are unknown); else 0. An import
of the target that fails in the user's code is 3 too, a malformed target 2.

A JavaScript target (a Mastra workflow module) goes to its framework's inspector script instead
(suites/mastra/audit.mjs, named by its runtime's data), run by the Node release of the framework's newest
cell; for one that no inspector reads (LangGraph.js, ADK for JavaScript) audit says what to read, in one line.

With --input the inspector runs the graph once (a dry run) inside the network namespace the cells
use (fanin.run.isolation), with Python's sockets refused in-process too; the Markdown says so.
"""

from __future__ import annotations

import json
import os
import re
import signal
import site
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from fanin.model import compare, exits, runtime
from fanin.model.errors import EnvironmentFault, FaninError
from fanin.model.matrix import MITIGATIONS, Cell, Framework, Matrix
from fanin.model.results import HAZARDS, Observation, ResultSet
from fanin.model.source import SUITES
from fanin.project import audit_inspect, here
from fanin.run import isolation, memory
from fanin.run.identity import load_reference

# How a finding was established (audit contract v2), in the words the Markdown uses.
CERTAINTY = {
    "observed": "seen in the dry run",
    "source": "read from the source",
    "static": "read from the graph's structure",
    "possible": "possible: writers unknown (run with --input)",
    "recorded": "seen in your tests",
    "recorded-static": "written in your tests by nodes the graph lets run in one superstep",
}
INCOMPLETE = exits.NOT_RUN  # exit 3: no silent/loud finding, but the dry run failed or writers are unknown
DRY_RUN = "ran the graph once on your input"
# How a node's writes are known, in the words of the "Keys each node writes" line.
WRITES_HOW = {
    "observed": "dry run",
    "recorded": "your tests",
    "source": "source",
    "static": "structure",
    "subgraph": "its output schema",
    "framework": "the framework's own node",
    "unknown": "unknown",
}
DRY_RUN_FAILED = "The dry run failed"
DRY_RUN_UNFINISHED = "The dry run did not finish"
DRY_RUN_VARIABLE = "FANIN_AUDIT_DRY_RUN_SECONDS"
AUDIT_VARIABLE = "FANIN_AUDIT_SECONDS"  # the whole audit's bound: load, read, dry run
AUDIT_UNFINISHED = "The audit did not finish"
RECURSION_VARIABLE = "FANIN_AUDIT_RECURSION_LIMIT"  # the dry run's recursion limit, read by the LangGraph inspector
RECURSION_DEFAULT = 25
NAMED = 5  # unknown writers named in the Markdown; the JSON has them all
DRY_RUN_DEFAULT = 60.0  # a graph on a fake model ends in seconds; one that loops is stopped, its static findings kept
LOAD_SECONDS = 300.0  # importing the user's module and reading the graph, on top of the dry run's bound


class UserCodeError(EnvironmentFault):
    """The target was named right, but importing it raised in the user's own code (exit 3)."""


@dataclass(frozen=True)
class Evidence:
    probe: str
    hazard: str
    label: str
    detail: str
    cite: str
    cell: str = ""
    observed_at: str = ""  # the version of the reference cell the observation comes from


@dataclass
class Finding:
    pattern: str
    where: list[str]
    hazard: str
    certainty: str  # one of CERTAINTY's keys
    evidence: list[Evidence] = field(default_factory=list)
    mitigation: str | None = None
    mitigation_probe: Evidence | None = None
    how: str = ""
    precondition: str | None = None
    probes: list[str] = field(default_factory=list)  # the probes the inspector cited (evidence lists those observed)


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
    isolation: str | None = None  # how the dry run was kept off the network; None when there was no dry run
    network_attempts: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)  # why "no finding" would not mean "no hazard"


@dataclass(frozen=True)
class Options:
    """How an audit loads and bounds the target: a factory's arguments (--args), the dry run's recursion limit
    and time bound, the whole audit's time bound (None: each from its variable, else its default); the cell whose
    interpreter runs a script inspector (--cell; None: the framework's newest)."""

    call_with: str | None = None
    recursion_limit: int | None = None
    dry_run_seconds: float | None = None
    audit_seconds: float | None = None
    cell: str | None = None


def recursion_limit(given: int | None = None) -> int:
    """The dry run's recursion limit: --recursion-limit, else FANIN_AUDIT_RECURSION_LIMIT, else 25 (bad: exit 2)."""
    raw: str | int = given if given is not None else os.environ.get(RECURSION_VARIABLE, str(RECURSION_DEFAULT))
    where = "--recursion-limit" if given is not None else RECURSION_VARIABLE
    try:
        limit = int(raw)
    except ValueError:
        raise FaninError(f"{where}={raw!r} is not a whole number of supersteps") from None
    if limit < 1:
        raise FaninError(f"{where}={raw!r} must be at least 1")
    return limit


def audit_seconds(given: float | None, dry_run: float) -> float:
    """The whole audit's bound: --audit-seconds, else FANIN_AUDIT_SECONDS, else 300 s plus the dry run's bound."""
    if given is None and AUDIT_VARIABLE not in os.environ:
        return LOAD_SECONDS + dry_run
    return _seconds(given, "--audit-seconds", AUDIT_VARIABLE, LOAD_SECONDS + dry_run)


def dry_run_seconds(given: float | None = None) -> float:
    """The dry run's bound: --dry-run-seconds, else FANIN_AUDIT_DRY_RUN_SECONDS, else 60 s (bad input: exit 2)."""
    return _seconds(given, "--dry-run-seconds", DRY_RUN_VARIABLE, DRY_RUN_DEFAULT)


def _seconds(given: float | None, option: str, variable: str, default: float) -> float:
    raw: str | float = given if given is not None else os.environ.get(variable, str(default))
    where = option if given is not None else variable
    try:
        seconds = float(raw)
    except ValueError:
        raise FaninError(f"{where}={raw!r} is not a number of seconds") from None
    if not seconds > 0 or seconds == float("inf"):
        raise FaninError(f"{where}={raw!r} must be a positive number of seconds")
    return seconds


def _command(
    target: str, python: str, matrix: Matrix, given: str | None, result: Path, seconds: float, call_with: str | None
) -> tuple[list[str], str | None]:
    registry = {key: fw.package for key, fw in matrix.frameworks.items()}
    # -m, not the file: run as a script, the script's folder would be first on sys.path, where a sibling could shadow a stdlib module.
    command = [python, "-m", "fanin.project.audit_inspect", str(SUITES), json.dumps(registry), target, given or ""]
    command += [str(result), repr(seconds), call_with or ""]
    if given is None:
        return command, None
    return isolation.wrap(command)  # the dry run runs the user's graph: in the cells' network namespace


def _own_home(folder: Path) -> dict[str, str]:
    """The inspector's HOME and XDG directories, in its scratch: what a framework writes there on import (CrewAI's
    settings under ~/.config, its storage under ~/.local/share) goes with the audit, never into the user's home.
    The user's own site-packages stay where HOME put them (a `pip install --user` framework still imports)."""
    return {**memory.home(folder), "PYTHONUSERBASE": os.environ.get("PYTHONUSERBASE") or site.getuserbase()}


def _run_inspector(command: list[str], env: dict[str, str], folder: Path, bound: float) -> tuple[int, str]:
    """Run the inspector to its end, never longer than `bound`, and leave nothing it started running.

    Its output goes to files, not pipes (a daemon the user's graph starts inherits a pipe and would hold it
    open long after the inspector ended); it runs in a session of its own and dies with this process; after
    it ends its group is killed too (it kills its adopted orphans itself, fanin.run.lifetime)."""
    from fanin.run import lifetime

    with (folder / "stdout").open("wb") as out, (folder / "stderr").open("wb") as err:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env={**env, **_own_home(folder)},
            start_new_session=True,
            preexec_fn=lifetime.die_with_parent(),
        )
        try:
            code = process.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
    stderr = (folder / "stderr").read_text(encoding="utf-8", errors="replace")
    if code is None:
        raise EnvironmentFault(f"loading and inspecting took more than {bound:.0f} s; stopped")
    return code, stderr


def _load_failure(target: str, error: dict[str, Any], full: bool) -> FaninError:
    if error.get("type") == "LoadError":
        return FaninError(error.get("message", "?"))
    lines = [f"cannot import {target}: {error.get('type')}: {error.get('message')}"]
    lines += [f"  caused by {cause}" for cause in error.get("causes", [])]
    if error.get("chain"):
        lines.append("  import chain (your code, last frames):")
        lines += [f"    {frame}" for frame in error["chain"]]
    if error.get("hint"):
        lines.append(f"  hint: {error['hint']}")
    if full:
        lines += ["", error.get("traceback", "").rstrip()]
    else:
        lines.append("  (--traceback shows the whole traceback)")
    return UserCodeError("\n".join(lines))


def inspect(
    target: str,
    python: str,
    matrix: Matrix,
    given: str | None,
    full_traceback: bool = False,
    options: Options = Options(),
) -> dict[str, Any]:
    bound = dry_run_seconds(options.dry_run_seconds)
    whole = audit_seconds(options.audit_seconds, bound)
    env = {**os.environ, **here.run_environment(), RECURSION_VARIABLE: str(recursion_limit(options.recursion_limit))}
    stopped = False
    with tempfile.TemporaryDirectory(prefix="fanin-audit-") as scratch:
        folder = Path(scratch)
        result = folder / "result.json"
        command, isolated = _command(target, python, matrix, given, result, bound, options.call_with)
        try:
            code, stderr = _run_inspector(command, env, folder, whole)
        except EnvironmentFault as exc:
            early = audit_inspect.static_path(result)
            if not early.is_file():  # stopped before the graph was read: nothing to show
                raise EnvironmentFault(f"{target}: {exc}") from None
            code, stderr, stopped = 0, "", True
            result = early
        answer = result.read_text(encoding="utf-8") if result.is_file() else ""
    if code == exits.BAD_INPUT and "fanin: error:" in stderr:
        raise FaninError(stderr.strip().splitlines()[-1].removeprefix("fanin: error: "))
    if code != 0 or not answer.strip():
        tail = stderr.strip().splitlines() or ["(no output)"]
        shown = tail if full_traceback else tail[-12:]
        raise EnvironmentFault(f"inspecting {target} failed (exit {code}):\n" + "\n".join(shown))
    found: dict[str, Any] = json.loads(answer)
    if found.get("load_error"):
        raise _load_failure(target, found["load_error"], full_traceback)
    found["isolation"] = isolated
    if stopped:
        for facts in found.get("inspected", []):
            facts["audit_unfinished"] = whole
            if "no_dry_run" not in facts:
                facts["dry_run"] = {"writes": [], "by_step": {}, "error": f"stopped with the audit after {whole:g} s"}
    return found


def _mitigations() -> dict[str, dict[str, Any]]:
    path = MITIGATIONS
    return tomllib.loads(path.read_text(encoding="utf-8")).get("probe", {}) if path.exists() else {}


def _evidence(reference: ResultSet, probe_id: str, package: str) -> Evidence | None:
    observation: Observation | None = reference.observations.get(probe_id)
    info = reference.probes.get(probe_id)
    if observation is None or info is None:
        return None
    date = reference.environment.get("date", "?")
    cite = f"fanin {probe_id}@{info.source_hash} · {package} {reference.version} · reference {date}"
    return Evidence(
        probe_id, observation.hazard, observation.label, observation.detail, cite, reference.cell, reference.version
    )


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


def certainty_of(raw: dict[str, Any]) -> tuple[str, str]:
    """(certainty key, how we know) of a finding; old-style free-text certainty keeps working."""
    said = str(raw.get("certainty", ""))
    if said in CERTAINTY:
        return said, str(raw.get("how") or "")
    lowered = said.lower()
    if lowered.startswith("observed") or ("dry run" in lowered and not lowered.startswith("possible")):
        return "observed", said
    if lowered.startswith("possible"):
        return "possible", said
    return "static", said


def relation(installed: str, cell_version: str) -> str:
    """How the reference cell's version stands to the installed one, in words."""
    try:
        a, b = Version(installed), Version(cell_version)
    except InvalidVersion:
        return "the nearest"
    if a == b:
        return "this very version"
    return "the nearest older" if b < a else "the oldest there is, newer than yours"


def _incomplete(facts: dict[str, Any], given: str | None) -> list[str]:
    reasons = []
    unknown = [str(n) for n in facts.get("unknown_writers") or []]
    if unknown:
        fix = "the dry run did not run them" if given is not None else "run with --input to see them"
        if facts.get("no_dry_run"):  # an inspector that reads source only: --input would not help
            fix = f"their source could not be read, or that of a helper they hand the state to ({facts['no_dry_run']})"
        named = ", ".join(unknown[:NAMED]) + (
            f" and {len(unknown) - NAMED} more (all in --json)" if len(unknown) > NAMED else ""
        )
        reasons.append(f"Writers unknown for {len(unknown)} node{'s' * (len(unknown) != 1)} ({named}): {fix}")
    run = facts.get("dry_run") or {}
    if facts.get("audit_unfinished"):
        reasons.append(
            f"{AUDIT_UNFINISHED} within {facts['audit_unfinished']:g} s (--audit-seconds or {AUDIT_VARIABLE}): it was"
            " stopped; the findings below were read from the graph before that"
        )
    elif run.get("unfinished"):
        reasons.append(f"{DRY_RUN_UNFINISHED} within {run['unfinished']:g} s")
    elif run.get("error"):
        reasons.append(f"{DRY_RUN_FAILED}: {run['error']}")
    return reasons


def _python_module(dotted: str) -> bool:
    """Is `dotted` a Python module of the working directory (`app.ts` as app/ts.py), not a file name?"""
    if Path(dotted).is_file():
        return False
    base = Path(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def refuse_javascript(target: str, matrix: Matrix | None = None) -> Framework | None:
    """The framework whose script inspector reads `target` (a Mastra workflow module), None for a Python target;
    one line, exit 2, for a JavaScript or TypeScript target none reads (LangGraph.js, ADK for JavaScript)."""
    where = target.rpartition(":")[0] or target
    endings = tuple(e for name in runtime.names() for e in runtime.get(name).sources)  # JavaScript, TypeScript
    if not endings or not where.lower().endswith(endings) or _python_module(where):
        return None
    from fanin.model import matrix as matrices

    frameworks = list((matrix or matrices.load()).frameworks.values())
    scripted = [fw for fw in frameworks if where.lower().endswith(runtime.get(fw.runtime).sources)]
    readers = [fw for fw in scripted if _inspector(fw) is not None]
    text = Path(where).read_text(encoding="utf-8", errors="replace") if Path(where).is_file() else ""
    for fw in readers:
        if re.search(rf"""["']{re.escape(fw.package)}(/[^"']*)?["']""", text):
            return fw
    others = [fw for fw in scripted if fw not in readers]
    reads = " and ".join(f"{fw.display} workflows (a module that imports {fw.package})" for fw in readers)
    raise FaninError(
        f"{where}: fanin audit reads Python graphs (it imports FILE.py:ATTR){' and ' + reads if reads else ''}; for"
        f" {' and '.join(fw.display for fw in others)} read what the probes observed (`fanin report`: the"
        f" {' and '.join(fw.key for fw in others)} cells) and answer the review checklist (reference/CHECKLIST.md)"
    )


def _inspector(framework: Framework) -> Path | None:
    """suites/<framework>/<its runtime's inspector>, where the framework has one."""
    name = runtime.get(framework.runtime).inspector
    path = SUITES / framework.key / name
    return path if name and path.is_file() else None


def _project(where: Path, framework: Framework) -> Path | None:
    """The nearest folder above the target whose packages folder (node_modules) holds the framework: the user's own."""
    packages = runtime.get(framework.runtime).packages
    for folder in where.resolve().parents if packages else ():
        if (folder / packages / framework.package).is_dir():
            return folder
    return None


def inspect_script(target: str, framework: Framework, matrix: Matrix, options: Options = Options()) -> dict[str, Any]:
    """Facts of a target in another runtime's language, from its framework's inspector script, run by the
    interpreter of the framework's newest cell (or --cell's) in the target's project (else, and with --cell, in
    that cell's installed directory)."""
    from fanin.run import runtimes

    inspector = _inspector(framework)
    assert inspector is not None
    where, sep, name = target.rpartition(":")
    where, name = (where, name) if sep else (target, "")
    if not Path(where).is_file():
        raise FaninError(f"{where}: no such file")
    cell = matrix.cell(options.cell) if options.cell else matrix.newest(framework.key)
    if cell.framework.key != framework.key:
        raise FaninError(f"{where} imports {framework.package}; --cell {cell.id} is a {cell.framework.key} cell")
    runner = runtimes.of(cell)
    own = None if options.cell else _project(Path(where), framework)  # --cell: that cell's install, as a venv
    project = own or runner.installed(cell)
    whole = audit_seconds(options.audit_seconds, dry_run_seconds(options.dry_run_seconds))
    with tempfile.TemporaryDirectory(prefix="fanin-audit-") as scratch:
        folder = Path(scratch)
        result = folder / "result.json"
        command = [
            *runner.interpreter(cell),
            str(inspector),
            str(project),
            str(Path(where).resolve()),
            name,
            str(result),
        ]
        try:
            code, stderr = _run_inspector(command, dict(os.environ), folder, whole)
        except EnvironmentFault as exc:
            raise EnvironmentFault(f"{target}: {exc}") from None
        answer = result.read_text(encoding="utf-8") if result.is_file() else ""
    if code != 0 or not answer.strip():
        tail = stderr.strip().splitlines()[-12:] or ["(no output)"]
        raise EnvironmentFault(f"inspecting {target} failed (exit {code}):\n" + "\n".join(tail))
    found: dict[str, Any] = json.loads(answer)
    if found.get("load_error"):
        raise _load_failure(target, found["load_error"], False)
    if not found["versions"].get(framework.key):
        raise EnvironmentFault(f"{target}: {framework.package} is not installed in {project}")
    found.update(python=cell.python, isolation=None)
    for facts in found["inspected"]:
        facts["installed_in"] = str(project)  # whose install of the framework was read
    return found


def refuse_input(target: str, inspected: list[dict[str, Any]]) -> None:
    """One line, exit 2: --input was given for a graph no inspector can dry-run (it would do nothing)."""
    names = sorted({str(f["framework"]) for f in inspected})
    why = "; ".join(str(f["no_dry_run"]) for f in inspected if f.get("no_dry_run")) or "no dry run for it"
    raise FaninError(
        f"{target}: --input dry-runs LangGraph graphs and ADK agent trees only, and no dry run exists for this {', '.join(names)} target"
        f" ({why}); run without --input"
    )


def evaluate(
    target: str,
    matrix: Matrix,
    python: str | None = None,
    given: str | None = None,
    full_traceback: bool = False,
    options: Options = Options(),
) -> list[Audit]:
    scripted = refuse_javascript(target, matrix)
    if scripted is not None:
        facts = inspect_script(target, scripted, matrix, options)
    else:
        facts = inspect(target, python or sys.executable, matrix, given, full_traceback, options)
    if not facts["inspected"]:
        known = ", ".join(fw.package for fw in matrix.frameworks.values())
        raise FaninError(f"{target} is a {facts['kind']}, not a graph or agent of a framework fanin knows ({known})")
    if given is not None and not any("dry_run" in f for f in facts["inspected"]):
        refuse_input(target, facts["inspected"])
    return audits_from(target, facts, matrix, given)


def audits_from(target: str, facts: dict[str, Any], matrix: Matrix, given: str | None) -> list[Audit]:
    """The findings of every inspected graph, each with its evidence from the nearest reference cell
    (`fanin audit`'s facts, and `fanin record`'s: the writes a test suite made)."""
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
            certainty, how = certainty_of(raw)
            finding = Finding(
                raw["pattern"],
                [str(w) for w in raw["where"]],
                hazard,
                certainty,
                evidence,
                how=how,
                precondition=raw.get("precondition"),
                probes=[str(p) for p in raw["probes"]],
            )
            for probe in raw["probes"]:
                entry = mitigations.get(probe)
                if entry:
                    finding.mitigation = entry.get("text")
                    mitigated = entry.get("probe")
                    finding.mitigation_probe = _evidence(reference, mitigated, framework.package) if mitigated else None
                    break
            findings.append(finding)
        ran = inspected.get("dry_run") is not None
        audits.append(
            Audit(
                target,
                framework.key,
                framework.package,
                version,
                cell.id,
                why,
                inspected,
                findings,
                isolation=facts.get("isolation") if ran else None,
                network_attempts=list(facts.get("network_attempts") or []) if ran else [],
                incomplete=_incomplete(inspected, given),
            )
        )
    return audits


def _evidence_line(audit: Audit, e: Evidence) -> str:
    if e.observed_at == audit.version:
        return f"- Evidence `{e.probe}` at {audit.package} {audit.version}: [{e.hazard}] {e.detail}"
    return (
        f"- Evidence `{e.probe}` (installed {audit.version}; observed in reference cell `{e.cell}`,"
        f" {relation(audit.version, e.observed_at)}): [{e.hazard}] {e.detail}"
    )


def _dry_run_lines(audit: Audit) -> list[str]:
    run = audit.facts.get("dry_run")
    if run is None:
        return []
    isolated = {
        isolation.NAMESPACE: "isolated from the network (a network namespace with loopback only)",
        isolation.IN_PROCESS: "isolated from the network in-process only (no network namespace here)",
    }.get(audit.isolation or "", "isolated from the network in-process only")
    fake = run.get("fake_model")
    if fake:
        model = "chat models replaced by a fake" + (f" ({fake})" if isinstance(fake, str) else "")
    elif "fake_model" in run:
        model = "no chat model found to replace"
    else:
        model = "chat models not replaced (a call to a real one is cut off by the isolation)"
    unit = str(run.get("unit") or "superstep")
    how = " (with astream: the graph has async nodes)" if run.get("mode") == "async" and unit == "superstep" else ""
    lines = ["### Dry run", "", f"fanin {DRY_RUN}{how}, {isolated}, {model}.", ""]
    writes = run.get("writes") or []
    if writes:
        lines += [f"| {unit} | node | keys written |", "|---|---|---|"]
        for w in writes:
            keys = ", ".join(f"`{k}`" for k in w.get("keys") or []) or "(nothing)"
            lines.append(f"| {w.get('step', '?')} | {w.get('node', '?')} | {keys} |")
        lines.append("")
    else:
        lines += ["No node finished in the dry run.", ""]
    if run.get("error") and str(run["error"]).startswith("InvalidUpdateError"):
        stopped = (
            f"**The dry run stopped at a fan-in:** `{run['error']}`: the loud failure a finding below reports."
            f" The nodes after it did not run; the audit is incomplete (exit {INCOMPLETE} unless a finding is silent"
            " or loud)."
        )
        lines += [stopped, ""]
    elif run.get("unfinished"):
        stopped = (
            f"**{DRY_RUN_UNFINISHED} within {run['unfinished']:g} s** (the bound: --dry-run-seconds or"
            f" {DRY_RUN_VARIABLE}): it was stopped, with every process it started. The findings below come from"
            f" the graph's structure and its source only; the audit is incomplete (exit {INCOMPLETE} unless a"
            " finding is silent or loud)."
        )
        lines += [stopped, ""]
    elif run.get("error"):
        failed = (
            f"**{DRY_RUN_FAILED}:** `{run['error']}`. The findings below come from the graph's structure and"
            f" its source only; the audit is incomplete (exit {INCOMPLETE} unless a finding is silent or loud)."
        )
        lines += [failed, ""]
    if audit.network_attempts:
        lines += [f"It tried to reach the network (refused): {', '.join(audit.network_attempts)}.", ""]
    return lines


def markdown(audits: list[Audit], heading: str = "fanin audit of") -> str:
    lines: list[str] = []
    for audit in audits:
        lines += [
            f"## {heading} `{audit.target}`",
            "",
            f"{audit.package} {audit.version} installed; evidence from reference cell `{audit.compared_with}` ({audit.why}).",
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
                "Nodes that can run at the same time: " + "; ".join(", ".join(g) for g in audit.facts["parallel"])
            )
            lines.append("")
        writes = audit.facts.get("writes") or {}
        if writes:
            shown = []
            for node, info in sorted(writes.items()):
                keys = ", ".join(info.get("keys") or []) or "nothing"
                how = WRITES_HOW.get(info.get("how", ""), "?")
                shown.append(f"{node} → {keys if how != 'unknown' else '?'} ({how})")
            lines += ["Keys each node writes: " + "; ".join(shown), ""]
        lines += _dry_run_lines(audit)
        for reason in audit.incomplete:
            if not reason.startswith((DRY_RUN_FAILED, DRY_RUN_UNFINISHED)):  # shown in the dry run's section
                lines += [f"**{reason.rstrip('.')}.**", ""]
        if not audit.findings:
            if audit.incomplete:
                lines += ["No finding in what could be seen; the audit is incomplete (above).", ""]
            else:
                lines += ["No fan-in hazard found.", ""]
        for number, finding in enumerate(audit.findings, start=1):
            how = CERTAINTY.get(finding.certainty, finding.certainty)
            if finding.certainty == "possible" and audit.facts.get("no_dry_run"):
                how = "possible: the code that decides it could not be read"
            if finding.how:
                how += f" ({finding.how})"
            lines += [
                f"### {number}. {finding.pattern} — **{finding.hazard}**",
                "",
                f"- Where: {'; '.join(finding.where)}",
                f"- How we know: {how}",
            ]
            if finding.precondition:
                lines.append(f"- Holds here: {finding.precondition}")
            for e in finding.evidence:
                lines.append(_evidence_line(audit, e))
                lines.append(f"  - Cite: `{e.cite}`")
            if finding.mitigation:
                lines.append(f"- Mitigation: {finding.mitigation}")
                if finding.mitigation_probe:
                    m = finding.mitigation_probe
                    lines.append(f"  - Shown by `{m.probe}`: [{m.hazard}] {m.detail} (cite: `{m.cite}`)")
            lines.append("")
    return "\n".join(lines)


def exit_code(audits: list[Audit], fail_on: list[str]) -> int:
    """1 when a finding's hazard is in fail_on; else 3 when the audit is incomplete; else 0."""
    if any(f.hazard in fail_on for a in audits for f in a.findings):
        return exits.CHANGED
    if any(a.incomplete for a in audits):
        return INCOMPLETE
    return exits.SAME


def run(
    target: str,
    matrix: Matrix,
    python: str | None,
    given: str | None,
    json_path: Path | None,
    fail_on: list[str],
    full_traceback: bool = False,
    options: Options = Options(),
) -> int:
    wrong = [h for h in fail_on if h not in HAZARDS]
    if wrong:
        raise FaninError(f"--fail-on {', '.join(wrong)}: hazards are {', '.join(HAZARDS)}")
    audits = evaluate(target, matrix, python, given, full_traceback, options)
    print(markdown(audits))
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps([asdict(a) for a in audits], indent=2, sort_keys=True, default=str) + "\n")
    return exit_code(audits, fail_on)


def python_of(cell: Cell) -> str:
    from fanin.run import pythons, venvs

    interpreter = pythons.find(cell.python)
    if interpreter is None:
        raise EnvironmentFault(f"Python {cell.python} is not installed (looked in pyenv and on PATH)")
    lock_names = (cell.framework.package, cell.version)  # a swapped lock is refused before anything installs
    return str(venvs.ensure(cell.id, interpreter, cell.lock_path, framework=lock_names).python)
