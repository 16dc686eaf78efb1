"""The pydantic-graph and Agent Framework inspectors on cases the corpus does not hold.

A step whose source cannot be read leaves the audit incomplete (exit 3), saying why without sending the
user to `--input` (these inspectors have no dry run); a finding whose probe changed between versions
is shown only at the versions where the probe saw the hazard.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from fanin.model import exits, matrix
from fanin.project import audit

MATRIX = matrix.load()

UNREADABLE_STEP = """
from dataclasses import dataclass
from pydantic_graph import GraphBuilder, reduce_list_append

@dataclass
class State:
    value: str = ""

namespace = {}
exec("async def hidden(ctx):\\n    ctx.state.value = 'h'\\n    return 'h'", namespace)  # no source to read

async def shown(ctx):
    ctx.state.value = "s"
    return "s"

g = GraphBuilder(state_type=State, output_type=list)
a = g.step(namespace["hidden"], node_id="hidden")
b = g.step(shown, node_id="shown")
collect = g.join(reduce_list_append, initial_factory=list)
g.add(g.edge_from(g.start_node).to(a, b), g.edge_from(a, b).to(collect), g.edge_from(collect).to(g.end_node))
graph = g.build()
"""

REUSED_WORKFLOW = """
from agent_framework import InMemoryCheckpointStorage, WorkflowBuilder, WorkflowContext, executor

@executor(id="start")
async def start(question: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(question)

@executor(id="lookup")
async def lookup(question: str, ctx: WorkflowContext[str]) -> None:
    if "cached" in question:
        ctx.set_state("answer", "from the cache")
    await ctx.send_message("lookup")

@executor(id="search")
async def search(question: str, ctx: WorkflowContext[str]) -> None:
    if not question:
        raise ValueError("empty question")
    await ctx.send_message("search")

@executor(id="reply")
async def reply(done: list[str], ctx: WorkflowContext[str, str]) -> None:
    await ctx.yield_output(str(ctx.get_state("answer")))

workflow = (
    WorkflowBuilder(start_executor=start, checkpoint_storage=InMemoryCheckpointStorage())
    .add_fan_out_edges(start, [lookup, search])
    .add_fan_in_edges([lookup, search], reply)
    .build()
)
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_a_step_without_source_leaves_the_audit_incomplete_and_says_why(tmp_path: Path) -> None:
    path = _write(tmp_path, "hidden_step.py", UNREADABLE_STEP)
    python = audit.python_of(MATRIX.newest("pydantic_graph"))
    (result,) = audit.evaluate(f"{path}:graph", MATRIX, python, None)
    assert result.facts["unknown_writers"] == ["hidden"]
    (reason,) = result.incomplete
    assert "hidden" in reason and "source could not be read" in reason and "--input" not in reason
    assert audit.exit_code([result], ["silent", "loud"]) == exits.NOT_RUN  # nothing found among what was read


def test_version_dependent_findings_follow_what_their_probe_saw(tmp_path: Path) -> None:
    """Both changed at 1.2.2 (bisected): state kept across runs from then on, a resume seeing a failed superstep's writes before."""
    path = _write(tmp_path, "reused.py", REUSED_WORKFLOW)
    shown = {}
    for cell in ("agent_framework-1.0.0", MATRIX.newest("agent_framework").id):
        python = audit.python_of(MATRIX.cell(cell))
        (result,) = audit.evaluate(f"{path}:workflow", MATRIX, python, None)
        shown[cell] = sorted(f.pattern for f in result.findings if f.hazard in ("silent", "loud"))
    assert shown == {
        "agent_framework-1.0.0": ["a parallel executor can raise", "resume after a failed superstep"],
        MATRIX.newest("agent_framework").id: [
            "a parallel executor can raise",
            "shared-state key written only in some runs",
        ],
    }


def test_a_failing_sibling_finding_names_each_raise_by_file_and_line() -> None:
    """Issue 35 §2, for every inspector with the finding: the raise it rests on is named, not only counted."""
    corpus = Path(__file__).resolve().parent.parent / "examples" / "corpus"
    path = corpus / "pg_parallel_budget.py"
    line = next(i for i, text in enumerate(path.read_text().splitlines(), start=1) if text.strip().startswith("raise "))
    (result,) = audit.evaluate(f"{path}:graph", MATRIX, audit.python_of(MATRIX.newest("pydantic_graph")), None)
    (raising,) = [f for f in result.findings if f.pattern == "a parallel step can raise"]
    assert raising.where[1].startswith("raising: optimist (") and raising.where[1].endswith(
        f"pg_parallel_budget.py:{line})"
    )
