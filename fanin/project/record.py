"""`fanin record -- PYTEST-ARGS`: the write relation your own test suite exercises, and what it means.

A static read and one dry run see only what they reach; a team's tests reach much more. This runs
the user's pytest, unchanged and with their own stubs, in their own interpreter, with one plugin
(fanin.project.record_plugin) that records which node wrote which key in which superstep of every
graph run. Each graph's runs are crossed with its merge policies and which of its nodes can run
together (the framework's inspector), and the findings carry their own certainty ("seen in your
tests") and the evidence of the reference, as `fanin audit`'s do. It is a lower bound, said as such:
the runs these tests made, never "no hazard".

Exit: 0 when the tests passed (1 with a --fail-on hazard found), 1 when they failed, 2 for a pytest
usage error, 3 when no test ran or the record could not be read, 130 when interrupted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fanin.model import contract, exits
from fanin.model.errors import EnvironmentFault, FaninError
from fanin.model.matrix import Matrix
from fanin.model.results import HAZARDS
from fanin.model.source import SUITES
from fanin.project import audit, here

PLUGIN = "fanin.project.record_plugin"
_PYTEST_EXIT = {0: exits.SAME, 1: exits.CHANGED, 2: exits.INTERRUPTED, 4: exits.BAD_INPUT, 5: exits.NOT_RUN}


def frameworks(matrix: Matrix) -> dict[str, dict[str, str]]:
    """The registry's frameworks the user's own interpreter can import (their module and package)."""
    return {
        key: {"module": fw.import_check, "package": fw.package}
        for key, fw in matrix.frameworks.items()
        if fw.runs_on.imported_here
    }


def record(pytest_args: list[str], matrix: Matrix, python: str | None = None) -> dict[str, Any]:
    """Run the user's tests with the recorder; the facts it wrote (the tests' own output goes to the terminal)."""
    python = python or sys.executable
    with tempfile.TemporaryDirectory(prefix="fanin-record-") as scratch:
        result = Path(scratch) / "record.json"
        env = {
            **os.environ,
            **here.run_environment(),
            contract.RECORD_RESULT: str(result),
            contract.RECORD_SUITES: str(SUITES),
            contract.RECORD_FRAMEWORKS: json.dumps(frameworks(matrix)),
        }
        started = time.monotonic()
        try:
            done = subprocess.run([python, "-m", "pytest", "-p", PLUGIN, *pytest_args], env=env, check=False)
        except OSError as exc:
            raise EnvironmentFault(f"cannot run {python}: {exc.strerror or exc}") from None
        took = time.monotonic() - started
        if not result.is_file():
            raise EnvironmentFault(
                f"pytest ended (exit {done.returncode}) without the recorder's facts: is fanin importable by {python}?"
            )
        facts: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
    facts["wall_seconds"] = round(took, 2)
    facts["pytest_args"] = pytest_args
    return facts


def audits(facts: dict[str, Any], matrix: Matrix) -> list[audit.Audit]:
    """One audit per graph that ran, its findings with the nearest reference cell's evidence."""
    found = []
    for inspected in facts["inspected"]:
        nodes = ", ".join(sorted(inspected.get("writes") or {})) or "none seen"
        name = f"graph {inspected.get('name') or '?'} (nodes seen: {nodes})"
        found += audit.audits_from(name, {**facts, "inspected": [inspected]}, matrix, None)
    return found


def markdown(facts: dict[str, Any], found: list[audit.Audit]) -> str:
    tests = facts.get("tests", 0)
    lines = [
        "# fanin record: the writes your tests made",
        "",
        (
            f"`pytest {' '.join(facts.get('pytest_args') or [])}`: {tests} test(s) ran (pytest exit"
            f" {facts.get('pytest_exit')}), {len(found)} graph(s) ran in them."
        ),
        "",
        (
            "A lower bound: these are the runs your tests made. A node or branch they never ran is listed as such;"
            " nothing here says a hazard is absent."
        ),
        "",
    ]
    for error in facts.get("errors") or []:
        lines += [f"**Not recorded:** {error}", ""]
    for one in found:
        seen = one.facts.get("recorded") or {}
        rendered = audit.markdown([one], heading="fanin record of").splitlines()  # its heading, then the rest
        lines += rendered[:3]
        runs = f"Seen in {seen.get('runs', 0)} run(s) of {len(seen.get('tests') or [])} test(s)"
        outside = seen.get("outside_tests")
        lines += [runs + (f" and {outside} run(s) outside a test (collection, fixtures)." if outside else "."), ""]
        never = seen.get("never_ran") or []
        if never:
            lines += [f"Never ran in these tests: {', '.join(never)}.", ""]
        silent = seen.get("never_wrote") or []  # where the recorder sees writes, not runs (Agent Framework)
        if silent:
            lines += [f"Never seen writing state in these tests: {', '.join(silent)}.", ""]
        lines += _writers_table(one.facts)
        lines += rendered[3:]
    return "\n".join(lines).rstrip("\n") + "\n"


def _writers_table(facts: dict[str, Any]) -> list[str]:
    """Every key written by more than one node, or by a merge that depends on order: who wrote it, in the tests."""
    seen = facts.get("recorded") or {}
    policies = {c["key"]: c for c in facts.get("channels") or []}
    rows = []
    for key, writers in sorted((seen.get("writers") or {}).items()):
        row = policies.get(key, {})
        if "met_by_key" in seen:  # the writers seen writing this very key together (ADK: in one invocation)
            together = seen["met_by_key"].get(key) or []
        else:  # the nodes seen in one superstep, two of them this key's writers
            together = [g for g in seen.get("seen_together") or [] if len(set(g) & set(writers)) > 1]
        if len(writers) < 2 and not together:
            continue
        met = "; ".join(", ".join(g) for g in together) or "never"
        rows.append(f"| `{key}` | {row.get('policy', '?')} | {', '.join(writers)} | {met} |")
    if not rows:
        return []
    head = [
        f"| key | merge policy | written by (seen) | in one {seen.get('unit', 'superstep')} (seen) |",
        "|---|---|---|---|",
    ]
    return [*head, *rows]


def run(
    pytest_args: list[str],
    matrix: Matrix,
    python: str | None = None,
    json_path: Path | None = None,
    fail_on: list[str] | None = None,
) -> int:
    wrong = [h for h in fail_on or [] if h not in HAZARDS]
    if wrong:
        raise FaninError(f"--fail-on {', '.join(wrong)}: hazards are {', '.join(HAZARDS)}")
    facts = record(pytest_args, matrix, python)
    found = audits(facts, matrix)
    print(markdown(facts, found))
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        data = {"record": facts, "audits": [asdict(a) for a in found]}
        json_path.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    code = int(facts.get("pytest_exit", 3))
    if code != 0:
        print(f"fanin: your tests did not pass (pytest exit {code}); the record covers the runs they made", flush=True)
        return _PYTEST_EXIT.get(code, exits.NOT_RUN)
    if any(f.hazard in (fail_on or []) for a in found for f in a.findings):
        return exits.CHANGED
    return exits.SAME
