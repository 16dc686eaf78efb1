"""`fanin audit` on the shipped examples: the hazardous ones flagged with the right probes, the safe ones not.

Each example runs in the venv of its framework's newest cell (built from its lock if missing),
as `fanin audit --cell` does; LangGraph examples are dry-run with their INPUT.
"""

from __future__ import annotations

import json
import subprocess
import tomllib

import pytest

from fanin.model import matrix
from fanin.model.source import REPO_ROOT
from fanin.project import audit

EXAMPLES = REPO_ROOT / "examples"
EXPECTED = tomllib.loads((EXAMPLES / "expected" / "audits.toml").read_text())
MATRIX = matrix.load()


@pytest.fixture(scope="module")
def pythons() -> dict[str, str]:
    return {key: audit.python_of(MATRIX.newest(key)) for key in ("langgraph", "adk")}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_example_audit(name: str, pythons: dict[str, str]) -> None:
    expected = EXPECTED[name]
    python = pythons[expected["cell"]]
    given = None
    if expected["cell"] == "langgraph":
        given = subprocess.run(
            [
                python,
                "-c",
                f"import json, sys; sys.path.insert(0, {str(EXAMPLES)!r}); import {name} as m; print(json.dumps(m.INPUT))",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    audits = audit.evaluate(f"{EXAMPLES / name}.py:{expected['target']}", MATRIX, python, given)
    found = [[f.pattern, [e.probe for e in f.evidence]] for a in audits for f in a.findings]
    assert sorted(found) == sorted(expected["patterns"])
    flagged = any(f.hazard in ("silent", "loud") for a in audits for f in a.findings)
    assert flagged == expected["flagged"]
    for finding in (f for a in audits for f in a.findings):
        assert all(e.cite.startswith(f"fanin {e.probe}@") for e in finding.evidence)
    assert json.dumps([a.compared_with for a in audits]) == json.dumps([MATRIX.newest(expected["cell"]).id])
