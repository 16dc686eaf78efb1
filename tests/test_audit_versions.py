"""The pydantic-graph and Agent Framework inspectors read the oldest cell's graphs as they read the newest's.

They read the graph by class name and public attributes, never a private module path, so a user on an
old release gets the same findings. Each framework's corpus graphs (examples/corpus/) are audited in the
venv of its oldest cell with the API the graphs use and of its newest, and the silent/loud findings
must match pattern for pattern. pydantic-graph 1.x has the builder API in `pydantic_graph.beta`
(1.5.0's beta imports pydantic-ai, which the cell does not have: 1.7.0 is the oldest that runs), so
the graphs are read there with their imports moved to it, as a 1.x app writes them.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from fanin.model import matrix
from fanin.model.source import REPO_ROOT
from fanin.project import audit

CORPUS = REPO_ROOT / "examples" / "corpus"
EXPECTED = tomllib.loads((CORPUS / "expected.toml").read_text(encoding="utf-8"))
MATRIX = matrix.load()
OLDEST = {"pydantic_graph": "pydantic_graph-1.7.0", "agent_framework": "agent_framework-1.0.0"}
LOUD = ("silent", "loud")


def _as_beta(source: str) -> str:
    """`from pydantic_graph import GraphBuilder, ..., reduce_x` as pydantic-graph 1.x spells it."""
    found = re.search(r"from pydantic_graph import ([^\n]+)\n", source)
    assert found, "a pydantic-graph corpus graph imports from pydantic_graph"
    names = [n.strip() for n in found.group(1).split(",")]
    core = [n for n in names if not n.startswith("reduce_")]
    reducers = [n for n in names if n.startswith("reduce_")]
    moved = f"from pydantic_graph.beta import {', '.join(core)}\n"
    if reducers:
        moved += f"from pydantic_graph.beta.join import {', '.join(reducers)}\n"
    return source.replace(found.group(0), moved)


def _findings(target: str, python: str) -> list[tuple[str, str]]:
    audits = audit.evaluate(target, MATRIX, python, None)
    return sorted((f.pattern, f.hazard) for a in audits for f in a.findings if f.hazard in LOUD)


@pytest.mark.parametrize("framework", sorted(OLDEST))
def test_the_oldest_cell_reads_the_corpus_as_the_newest(framework: str, tmp_path: Path) -> None:
    oldest, newest = MATRIX.cell(OLDEST[framework]), MATRIX.newest(framework)
    assert oldest.version != newest.version
    python_old, python_new = audit.python_of(oldest), audit.python_of(newest)
    graphs = sorted(name for name, truth in EXPECTED.items() if truth["framework"] == framework)
    assert graphs
    differ = {}
    for name in graphs:
        path = CORPUS / f"{name}.py"
        old_path = path
        if framework == "pydantic_graph":
            old_path = tmp_path / path.name
            old_path.write_text(_as_beta(path.read_text(encoding="utf-8")), encoding="utf-8")
        target = EXPECTED[name]["target"]
        new, old = _findings(f"{path}:{target}", python_new), _findings(f"{old_path}:{target}", python_old)
        if new != old:
            differ[name] = {"newest": new, "oldest": old}
    assert not differ
