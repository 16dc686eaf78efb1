"""`fanin audit` on targets as people write them (issue 35 §3).

- A factory target: `FILE.py:build()` calls it, `--args` gives it arguments (a JSON object or array), so no
  shim file is needed; bad arguments or a target that is not callable are one line, exit 2.
- Writes made through a helper a step hands the state to are followed; a helper that cannot be read makes
  the step's writes unknown, never nothing.
- `--input` on an ADK agent tree dry-runs it with every model replaced by a fake (the writes event by event,
  model calls capped by the recursion limit); where no dry run exists (an ADK Workflow, Agent Framework,
  pydantic-graph) it is refused in one line, exit 2.
- An incomplete audit names a few unknown writers and how many there are, not all of them.
- The dry run's recursion limit and the whole audit's time bound are settable; when the audit is stopped
  after the graph was read, its static findings are still printed (exit 3, incomplete).
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from fanin.model import exits, matrix
from fanin.model.errors import FaninError
from fanin.model.source import REPO_ROOT
from fanin.project import audit

MATRIX = matrix.load()
CORPUS = REPO_ROOT / "examples" / "corpus"

FACTORY = """
from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

class Split(Executor):
    @handler
    async def split(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

class Mapper(Executor):
    @handler
    async def count(self, text: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("counts", len(text))
        await ctx.send_message(self.id)

class EvenMapper(Executor):
    @handler
    async def count(self, text: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("counts_even", len(text[::2]))
        await ctx.send_message(self.id)

class OddMapper(Executor):
    @handler
    async def count(self, text: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("counts_odd", len(text[1::2]))
        await ctx.send_message(self.id)

class Reduce(Executor):
    @handler
    async def reduce(self, done: list[str], ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(str(done))

def build_workflow(shared: bool = True):
    split, reduce = Split(id="split"), Reduce(id="reduce")
    mappers = [Mapper(id="m0"), Mapper(id="m1")] if shared else [EvenMapper(id="m0"), OddMapper(id="m1")]
    return (
        WorkflowBuilder(start_executor=split)
        .add_fan_out_edges(split, mappers)
        .add_fan_in_edges(mappers, reduce)
        .build()
    )

async def build_later(shared: bool):
    return build_workflow(shared)

def broken():
    raise RuntimeError("the factory needs a database")

workflow = build_workflow()
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _python(framework: str) -> str:
    return audit.python_of(MATRIX.newest(framework))


def _silent(audits: list[audit.Audit]) -> list[str]:
    return sorted(f.pattern for a in audits for f in a.findings if f.hazard in ("silent", "loud"))


def test_a_factory_target_is_called_with_no_arguments_or_with_args(tmp_path: Path) -> None:
    path = _write(tmp_path, "factory.py", FACTORY)
    python = _python("agent_framework")
    shared = ["parallel executors set one shared-state key"]
    assert _silent(audit.evaluate(f"{path}:build_workflow()", MATRIX, python, None)) == shared
    own = audit.Options(call_with='{"shared": false}')
    assert _silent(audit.evaluate(f"{path}:build_workflow", MATRIX, python, None, options=own)) == []
    positional = audit.Options(call_with="[true]")
    assert _silent(audit.evaluate(f"{path}:build_later", MATRIX, python, None, options=positional)) == shared


@pytest.mark.parametrize(
    ("target", "call_with", "said"),
    [
        ("build_workflow", "[1,", "--args is not JSON"),
        ("build_workflow", '"yes"', r"--args must be a JSON object \(keyword arguments\) or array"),
        ("workflow()", None, "is not callable, so it cannot be a factory"),
        ("build_workflow(shared=1)", None, "is not an attribute name"),
    ],
)
def test_a_factory_target_that_cannot_be_called_is_one_line(
    tmp_path: Path, target: str, call_with: str | None, said: str
) -> None:
    path = _write(tmp_path, "factory.py", FACTORY)
    with pytest.raises(FaninError, match=said):
        audit.evaluate(f"{path}:{target}", MATRIX, _python("agent_framework"), None, options=audit.Options(call_with))


def test_a_factory_that_raises_is_the_users_code(tmp_path: Path) -> None:
    path = _write(tmp_path, "factory.py", FACTORY)
    with pytest.raises(audit.UserCodeError, match="the factory needs a database"):
        audit.evaluate(f"{path}:broken()", MATRIX, _python("agent_framework"), None)


HELPERS = """
from dataclasses import dataclass, field
from pydantic_graph import GraphBuilder, StepContext, reduce_list_append

@dataclass
class State:
    context: dict = field(default_factory=dict)

async def fetch(name: str) -> str:
    return name

async def remember(ctx: StepContext[State, None, None], key: str) -> None:
    seen = ctx.state.context
    value = await fetch(key)
    ctx.state.context = {**seen, key: value}

HELPERS = {"remember": remember}
g = GraphBuilder(state_type=State, output_type=list)

@g.step
async def search(ctx: StepContext[State, None, None]) -> str:
    await remember(ctx, "search")
    return "s"

@g.step
async def lookup(ctx: StepContext[State, None, None]) -> str:
    await HELPERS[WHICH](ctx, "lookup")
    return "l"

collect = g.join(reduce_list_append, initial_factory=list)
g.add(g.edge_from(g.start_node).to(search, lookup), g.edge_from(search, lookup).to(collect), g.edge_from(collect).to(g.end_node))
graph = g.build()
"""


def test_writes_through_a_helper_are_followed_and_an_unreadable_helper_is_unknown(tmp_path: Path) -> None:
    path = _write(tmp_path, "helpers.py", HELPERS.replace("await HELPERS[WHICH](ctx", "await remember(ctx"))
    (result,) = audit.evaluate(f"{path}:graph", MATRIX, _python("pydantic_graph"), None)
    assert result.facts["writes"]["search"] == {"keys": ["context"], "how": "source"}
    assert "read-modify-write" in " ".join(p for f in result.findings for p in f.probes)  # across the helper's await
    hidden = _write(tmp_path, "hidden.py", HELPERS.replace("WHICH", '"remember"'))
    (result,) = audit.evaluate(f"{hidden}:graph", MATRIX, _python("pydantic_graph"), None)
    assert result.facts["writes"]["lookup"]["how"] == "unknown"  # never "writes nothing"
    assert result.facts["unknown_writers"] == ["lookup"]
    assert audit.exit_code([result], ["silent", "loud"]) in (exits.CHANGED, exits.NOT_RUN)
    assert any("Writers unknown for 1 node (lookup)" in r for r in result.incomplete)


LANGGRAPH_HELPER = """
from typing import TypedDict
from langgraph.graph import END, START, StateGraph

class State(TypedDict):
    topic: str
    draft: str

def fill(update: dict, who: str) -> None:
    update["draft"] = who

def editor(state: State) -> dict:
    update: dict = {}
    fill(update, "editor")
    return update

def checker(state: State) -> dict:
    update = {"topic": state["topic"]}
    print(len(update))
    return update

builder = StateGraph(State)
builder.add_node("editor", editor)
builder.add_node("checker", checker)
builder.add_edge(START, "editor")
builder.add_edge(START, "checker")
builder.add_edge("editor", END)
builder.add_edge("checker", END)
graph = builder.compile()
"""


def test_a_langgraph_update_filled_by_a_helper_is_unknown_never_nothing(tmp_path: Path) -> None:
    path = _write(tmp_path, "filled.py", LANGGRAPH_HELPER)
    (result,) = audit.evaluate(f"{path}:graph", MATRIX, _python("langgraph"), None)
    assert result.facts["writes"]["editor"]["how"] == "unknown"
    assert result.facts["writes"]["checker"] == {"keys": ["topic"], "how": "source"}  # len() and print() only read it
    assert "editor" in result.facts["unknown_writers"]


@pytest.mark.parametrize(
    ("framework", "target"),
    [
        ("adk", "adk_workflow_fan_in.py:workflow"),
        ("agent_framework", "af_map_reduce_shared_key.py:workflow"),
        ("pydantic_graph", "pg_parallel_budget.py:graph"),
    ],
)
def test_input_is_refused_where_there_is_no_dry_run(framework: str, target: str) -> None:
    with pytest.raises(
        FaninError,
        match=r"--input dry-runs LangGraph graphs and ADK agent trees only, and no dry run exists for this \w+ target",
    ) as caught:
        audit.evaluate(f"{CORPUS / target}", MATRIX, _python(framework), '{"question": "q"}')
    assert "\n" not in str(caught.value)


def test_an_adk_agent_tree_is_dry_run_with_a_fake_model() -> None:
    target = f"{CORPUS / 'adk_parallel_of_sequentials_shared_key.py'}:root"
    (result,) = audit.evaluate(target, MATRIX, _python("adk"), '{"message": "energy", "state": {"region": "eu"}}')
    run = result.facts["dry_run"]
    assert run["error"] is None and run["unit"] == "event"
    assert [w["node"] for w in run["writes"] if w["keys"] == ["summary"]] == [
        "energy_summariser",
        "transport_summariser",
    ]
    assert result.network_attempts == [] and result.incomplete == []
    (shared,) = [f for f in result.findings if f.pattern == "parallel children share an output_key"]
    assert (
        shared.certainty == "observed" and "energy_summariser, transport_summariser each wrote 'summary'" in shared.how
    )
    assert "| event | node | keys written |" in audit.markdown([result])


def test_an_adk_dry_run_is_cut_at_the_recursion_limit_in_model_calls() -> None:
    target = f"{CORPUS / 'adk_loop_parallel_no_escalation.py'}:root"  # a loop of three rounds, three model calls each
    (cut,) = audit.evaluate(target, MATRIX, _python("adk"), '"a story"', options=audit.Options(recursion_limit=4))
    assert cut.facts["dry_run"]["error"].startswith("LlmCallsLimitExceededError")
    assert any(r.startswith("The dry run failed: LlmCallsLimitExceededError") for r in cut.incomplete)
    (whole,) = audit.evaluate(target, MATRIX, _python("adk"), '"a story"')
    assert whole.facts["dry_run"]["error"] is None


def test_an_incomplete_audit_names_a_few_unknown_writers_and_counts_them() -> None:
    many = {"unknown_writers": [f"node_{i:03}" for i in range(400)]}
    (reason,) = audit._incomplete(many, None)
    assert reason.startswith(
        "Writers unknown for 400 nodes (node_000, node_001, node_002, node_003, node_004 and 395 more"
    )
    assert "node_005" not in reason and len(reason) < 300


LOOP = """
from typing import TypedDict
from langgraph.graph import END, START, StateGraph

class State(TypedDict):
    n: int

def step(state: State) -> dict:
    return {"n": state["n"] + 1}

builder = StateGraph(State)
builder.add_node("step", step)
builder.add_edge(START, "step")
builder.add_conditional_edges("step", lambda s: END if s["n"] >= 30 else "step", ["step", END])
graph = builder.compile()
"""


def test_the_dry_runs_recursion_limit_is_settable(tmp_path: Path) -> None:
    path = _write(tmp_path, "loop.py", LOOP)
    python = _python("langgraph")
    (cut,) = audit.evaluate(f"{path}:graph", MATRIX, python, '{"n": 0}')
    assert "GraphRecursionError" in cut.facts["dry_run"]["error"]
    (whole,) = audit.evaluate(f"{path}:graph", MATRIX, python, '{"n": 0}', options=audit.Options(recursion_limit=40))
    assert not whole.facts["dry_run"].get("error") and len(whole.facts["dry_run"]["writes"]) == 30
    with pytest.raises(FaninError, match="--recursion-limit=0 must be at least 1"):
        audit.evaluate(f"{path}:graph", MATRIX, python, '{"n": 0}', options=audit.Options(recursion_limit=0))


HANGS = """
import threading
from typing import Annotated, TypedDict
from langgraph.graph import END, START, StateGraph

class State(TypedDict):
    topic: str
    draft: str

def writer(state: State) -> dict:
    threading.Event().wait()  # never returns: only the audit's bound ends it
    return {"draft": "w"}

def editor(state: State) -> dict:
    return {"draft": "e"}

builder = StateGraph(State)
builder.add_node("writer", writer)
builder.add_node("editor", editor)
builder.add_edge(START, "writer")
builder.add_edge(START, "editor")
builder.add_edge("writer", END)
builder.add_edge("editor", END)
graph = builder.compile()
"""


def test_an_audit_stopped_by_its_bound_still_prints_the_static_findings(tmp_path: Path) -> None:
    """The bound is a few times what reading the graph without a dry run takes on this machine now, so the reading
    is done before the bound ends the audit however loaded the machine is, and the test does not wait a fixed 40 s."""
    path = _write(tmp_path, "hangs.py", HANGS)
    started = time.monotonic()
    audit.evaluate(f"{path}:graph", MATRIX, _python("langgraph"), None)  # no input: read, not run
    bound = round(4 * (time.monotonic() - started) + 3)
    bounds = audit.Options(dry_run_seconds=600, audit_seconds=bound)  # the audit's bound ends it, not the dry run's
    (result,) = audit.evaluate(f"{path}:graph", MATRIX, _python("langgraph"), '{"topic": "t"}', options=bounds)
    assert "plain key written in parallel" in [f.pattern for f in result.findings]  # read before it was stopped
    assert any(r.startswith(f"The audit did not finish within {bound} s") for r in result.incomplete), result
    assert audit.exit_code([result], ["hangs"]) == exits.NOT_RUN
    with pytest.raises(FaninError, match="--audit-seconds=0 must be a positive number"):
        audit.evaluate(f"{path}:graph", MATRIX, _python("langgraph"), None, options=audit.Options(audit_seconds=0))
