"""The LangGraph inspector (suites/langgraph/audit.py) on small graphs in the shapes real apps use.

Each graph below is written to a temporary folder and inspected in the newest LangGraph cell's
venv (built from its lock if missing), as `fanin audit --cell` does; one subprocess inspects them
all. The tests check the facts and findings the inspector returns (patterns, probes, certainty,
precondition), not the harness's rendering (tests/test_audit_examples.py does that).
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from fanin.model import matrix
from fanin.model.source import SUITES
from fanin.project import audit

MATRIX = matrix.load()

HEAD = """
import operator
from typing import Annotated, Literal, TypedDict

from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, Send
"""

GRAPHS: dict[str, tuple[str, Any]] = {
    # A supervisor routed only by Command: every worker is reached through Command[Literal[...]].
    "command_supervisor": (
        """
def supervisor(state: MessagesState) -> Command[Literal["researcher", "writer", "__end__"]]:
    if len(state["messages"]) > 3:
        return Command(goto=END)
    nxt = "researcher" if len(state["messages"]) % 2 else "writer"
    return Command(goto=nxt, update={"messages": [("ai", "routing")]})

def researcher(state: MessagesState) -> Command[Literal["supervisor"]]:
    return Command(goto="supervisor", update={"messages": [("ai", "found")]})

def writer(state: MessagesState) -> Command[Literal["supervisor"]]:
    return Command(goto="supervisor", update={"messages": [("ai", "wrote")]})

builder = StateGraph(MessagesState)
builder.add_node(supervisor)
builder.add_node(researcher)
builder.add_node(writer)
builder.add_edge(START, "supervisor")
graph = builder.compile()
""",
        {"messages": [("user", "hi")]},
    ),
    # The same supervisor fanning out to both workers at once, which write one plain key.
    "command_fanout_plain": (
        """
class State(TypedDict):
    task: str
    result: str

def supervisor(state: State) -> Command[Literal["a", "b"]]:
    return Command(goto=["a", "b"])

def a(state: State) -> Command[Literal["__end__"]]:
    return Command(goto=END, update={"result": "a"})

def b(state: State):
    return {"result": "b"}

builder = StateGraph(State)
builder.add_node(supervisor)
builder.add_node(a)
builder.add_node(b)
builder.add_edge(START, "supervisor")
graph = builder.compile()
""",
        None,
    ),
    "send_plain": (
        """
class State(TypedDict):
    topics: list
    joke: str

def fan_out(state: State):
    return [Send("write_joke", {"topic": t}) for t in state["topics"]]

def write_joke(state: dict):
    return {"joke": "a joke about " + state["topic"]}

builder = StateGraph(State)
builder.add_node("write_joke", write_joke)
builder.add_conditional_edges(START, fan_out)
builder.add_edge("write_joke", END)
graph = builder.compile()
""",
        {"topics": ["cats", "dogs"]},
    ),
    "send_reducer": (
        """
class State(TypedDict):
    topics: list
    jokes: Annotated[list, operator.add]
    best: str

def fan_out(state: State):
    sends = []
    for t in state["topics"]:
        sends.append(Send("write_joke", {"topic": t}))
    return sends

def write_joke(state: dict):
    return {"jokes": ["a joke about " + state["topic"]]}

def pick(state: State):
    return {"best": state["jokes"][0]}

builder = StateGraph(State)
builder.add_node("write_joke", write_joke)
builder.add_node("pick", pick)
builder.add_conditional_edges(START, fan_out, ["write_joke"])
builder.add_edge("write_joke", "pick")
builder.add_edge("pick", END)
graph = builder.compile()
""",
        {"topics": ["cats", "dogs"], "jokes": []},
    ),
    # A research assistant: interviews are a subgraph with an output schema, run as Send workers.
    "research_assistant": (
        """
class Interview(TypedDict):
    analyst: str
    messages: list
    sections: list

class InterviewOut(TypedDict):
    sections: list

def ask(state: Interview):
    return {"messages": ["q from " + state["analyst"]]}

def write_section(state: Interview):
    return {"sections": ["section by " + state["analyst"]]}

inner = StateGraph(Interview, output=InterviewOut) if False else None
try:
    inner = StateGraph(Interview, output_schema=InterviewOut)
except TypeError:
    inner = StateGraph(Interview, output=InterviewOut)
inner.add_node("ask", ask)
inner.add_node("write_section", write_section)
inner.add_edge(START, "ask")
inner.add_edge("ask", "write_section")
inner.add_edge("write_section", END)

class Research(TypedDict):
    topic: str
    analysts: list
    sections: Annotated[list, operator.add]
    report: str

def create_analysts(state: Research):
    return {"analysts": ["ann", "bob"]}

def start_interviews(state: Research):
    return [Send("interview", {"analyst": a, "messages": []}) for a in state["analysts"]]

def write_report(state: Research):
    return {"report": "\\n".join(state["sections"])}

builder = StateGraph(Research)
builder.add_node("create_analysts", create_analysts)
builder.add_node("interview", inner.compile())
builder.add_node("write_report", write_report)
builder.add_edge(START, "create_analysts")
builder.add_conditional_edges("create_analysts", start_interviews, ["interview"])
builder.add_edge("interview", "write_report")
builder.add_edge("write_report", END)
graph = builder.compile()
""",
        {"topic": "t", "analysts": [], "sections": [], "report": ""},
    ),
    # Two parallel subgraphs on the parent's schema: each returns the shared plain key `question`.
    "subgraphs_shared": (
        """
class State(TypedDict):
    question: str
    s1: str
    s2: str

def sub(key):
    inner = StateGraph(State)
    inner.add_node("work", lambda state: {key: "done"})
    inner.add_edge(START, "work")
    return inner.compile()

builder = StateGraph(State)
builder.add_node("one", sub("s1"))
builder.add_node("two", sub("s2"))
builder.add_edge(START, "one")
builder.add_edge(START, "two")
graph = builder.compile()
""",
        {"question": "q", "s1": "", "s2": ""},
    ),
    # The mitigation: each subgraph's output schema carries only its own key.
    "subgraphs_output_schema": (
        """
class State(TypedDict):
    question: str
    s1: str
    s2: str

class Out1(TypedDict):
    s1: str

class Out2(TypedDict):
    s2: str

def sub(key, out):
    try:
        inner = StateGraph(State, output_schema=out)
    except TypeError:
        inner = StateGraph(State, output=out)
    inner.add_node("work", lambda state: {key: "done"})
    inner.add_edge(START, "work")
    return inner.compile()

builder = StateGraph(State)
builder.add_node("one", sub("s1", Out1))
builder.add_node("two", sub("s2", Out2))
builder.add_edge(START, "one")
builder.add_edge(START, "two")
graph = builder.compile()
""",
        {"question": "q", "s1": "", "s2": ""},
    ),
    # The parallelization workflow: three calls from START, a list-edge join, one key each.
    "parallelization": (
        """
class State(TypedDict):
    topic: str
    joke: str
    story: str
    poem: str
    combined: str

def call_1(state: State):
    return {"joke": "joke"}

def call_2(state: State):
    return {"story": "story"}

def call_3(state: State):
    return {"poem": "poem"}

def aggregator(state: State):
    combined = f"{state['joke']} {state['story']} {state['poem']}"
    return {"combined": combined}

builder = StateGraph(State)
for name, fn in (("call_1", call_1), ("call_2", call_2), ("call_3", call_3)):
    builder.add_node(name, fn)
    builder.add_edge(START, name)
builder.add_node("aggregator", aggregator)
builder.add_edge(["call_1", "call_2", "call_3"], "aggregator")
builder.add_edge("aggregator", END)
graph = builder.compile()
""",
        {"topic": "cats"},
    ),
    # The one-line edit from issue 20: the reducer removed from a key three parallel nodes write.
    "reducer_removed": (
        """
class State(TypedDict):
    topic: str
    results: list   # was Annotated[list, operator.add]

def search_web(state: State):
    out = {}
    out["results"] = ["web"]
    return out

def search_docs(state: State):
    return dict(results=["docs"])

def search_code(state: State) -> Command[Literal["summarise"]]:
    return Command(goto="summarise", update={**{"results": ["code"]}})

def summarise(state: State):
    return {}

builder = StateGraph(State)
builder.add_node("search_web", search_web)
builder.add_node("search_docs", search_docs)
builder.add_node("search_code", search_code)
builder.add_node("summarise", summarise)
for name in ("search_web", "search_docs", "search_code"):
    builder.add_edge(START, name)
builder.add_edge(["search_web", "search_docs"], "summarise")
builder.add_edge("summarise", END)
graph = builder.compile()
""",
        {"topic": "t", "results": []},
    ),
    # A node whose update comes from a helper: its writes cannot be read, so it is listed, not guessed.
    "unknown_writer": (
        """
class State(TypedDict):
    a: str
    b: str

def helper():
    return {"a": "x"}

def one(state: State):
    return helper()

def two(state: State):
    return {"b": "y"}

builder = StateGraph(State)
builder.add_node("one", one)
builder.add_node("two", two)
builder.add_edge(START, "one")
builder.add_edge(START, "two")
graph = builder.compile()
""",
        None,
    ),
    # A dry run whose second task raises: the error is kept and the static finding stays.
    "dry_run_fails": (
        """
class State(TypedDict):
    answer: str

def fine(state: State):
    return {"answer": "fine"}

def broken(state: State):
    raise ConnectionError("network unreachable")
    return {"answer": "never"}

builder = StateGraph(State)
builder.add_node("fine", fine)
builder.add_node("broken", broken)
builder.add_edge(START, "fine")
builder.add_edge(START, "broken")
graph = builder.compile()
""",
        {"answer": ""},
    ),
    # A chat model that would call the network: the dry run fakes it and says so.
    "chat_model": (
        """
from langchain_core.language_models.chat_models import BaseChatModel

class NetworkModel(BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "network"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        raise ConnectionError("this model needs the network")

model = NetworkModel()

def agent(state: MessagesState):
    return {"messages": [model.invoke(state["messages"])]}

builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_edge(START, "agent")
builder.add_edge("agent", END)
graph = builder.compile()
""",
        {"messages": [("user", "hi")]},
    ),
    # Async nodes (a research app's `async def` nodes calling an async chat model): the dry run uses astream.
    "async_nodes": (
        """
class State(TypedDict):
    topic: str
    notes: Annotated[list, operator.add]

async def search_web(state: State):
    return {"notes": ["web"]}

async def search_docs(state: State):
    return {"notes": ["docs"]}

builder = StateGraph(State)
builder.add_node("search_web", search_web)
builder.add_node("search_docs", search_docs)
builder.add_edge(START, "search_web")
builder.add_edge(START, "search_docs")
graph = builder.compile()
""",
        {"topic": "tea"},
    ),
    # An async node inside a subgraph, under a sync parent: the sync run refuses, the dry run starts over with astream.
    "async_in_subgraph": (
        """
class State(TypedDict):
    topic: str
    notes: Annotated[list, operator.add]

async def inner(state: State):
    return {"notes": ["inner"]}

sub = StateGraph(State)
sub.add_node("inner", inner)
sub.add_edge(START, "inner")

def other(state: State):
    return {"notes": ["other"]}

builder = StateGraph(State)
builder.add_node("team", sub.compile())
builder.add_node("other", other)
builder.add_edge(START, "team")
builder.add_edge(START, "other")
graph = builder.compile()
""",
        {"topic": "tea"},
    ),
    # Command routing and a static edge from one node: both run.
    "command_and_edge": (
        """
class State(TypedDict):
    x: str

def a(state: State) -> Command[Literal["b"]]:
    return Command(goto="b", update={"x": "a"})

builder = StateGraph(State)
builder.add_node("a", a)
builder.add_node("b", lambda state: {})
builder.add_node("c", lambda state: {})
builder.add_edge(START, "a")
builder.add_edge("a", "c")
graph = builder.compile()
""",
        None,
    ),
    # Parallel nodes each returning the whole list plus their item into operator.add.
    "whole_list": (
        """
class State(TypedDict):
    items: Annotated[list, operator.add]

def a(state: State):
    return {"items": state["items"] + ["a"]}

def b(state: State):
    return {"items": ["b"]}

builder = StateGraph(State)
builder.add_node("a", a)
builder.add_node("b", b)
builder.add_edge(START, "a")
builder.add_edge(START, "b")
graph = builder.compile()
""",
        None,
    ),
    # A router returning one of two targets: they never meet, so the plain key is safe.
    "exclusive_router": (
        """
class State(TypedDict):
    kind: str
    answer: str

def route(state: State) -> Literal["math", "chat"]:
    return "math" if state["kind"] == "math" else "chat"

builder = StateGraph(State)
builder.add_node("math", lambda state: {"answer": "42"})
builder.add_node("chat", lambda state: {"answer": "hello"})
builder.add_conditional_edges(START, route)
builder.add_edge("math", END)
builder.add_edge("chat", END)
graph = builder.compile()
""",
        {"kind": "math", "answer": ""},
    ),
}

RUNNER = """
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])  # the inspector's own modules (audit_lg_*), as audit_inspect puts them
spec = importlib.util.spec_from_file_location("fanin_audit_langgraph", sys.argv[1])
inspector = importlib.util.module_from_spec(spec)
spec.loader.exec_module(inspector)
out = {}
for name, given in json.loads(sys.argv[3]).items():
    path = sys.argv[2] + "/" + name + ".py"
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    out[name] = inspector.inspect(module.graph, given)
print(json.dumps(out, default=str))
"""


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    python = audit.python_of(MATRIX.newest("langgraph"))
    folder: Path = tmp_path_factory.mktemp("graphs")
    for name, (body, _) in GRAPHS.items():
        (folder / f"{name}.py").write_text(HEAD + textwrap.dedent(body))
    given = {name: g for name, (_, g) in GRAPHS.items()}
    done = subprocess.run(
        [python, "-c", RUNNER, str(SUITES / "langgraph" / "audit.py"), str(folder), json.dumps(given)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def found(facts: dict[str, Any], name: str) -> list[tuple[str, list[str]]]:
    return sorted((f["pattern"], f["probes"]) for f in facts[name]["findings"])


def test_every_finding_keeps_the_contract(facts: dict[str, Any]) -> None:
    for name, fact in facts.items():
        for finding in fact["findings"]:
            assert finding["certainty"] in ("observed", "source", "static", "possible"), (name, finding)
            assert finding["how"] and finding["precondition"], (name, finding)


def test_command_supervisor_reaches_every_worker(facts: dict[str, Any]) -> None:
    fact = facts["command_supervisor"]
    assert found(facts, "command_supervisor") == []
    assert set(fact["supersteps"]) == {"supervisor", "researcher", "writer"}
    assert fact["parallel"] == [] and fact["unknown_writers"] == []
    assert fact["dry_run"]["error"] is None


def test_command_fanout_to_one_plain_key(facts: dict[str, Any]) -> None:
    assert found(facts, "command_fanout_plain") == [
        ("plain key written in parallel", ["langgraph/same-key/no-reducer"])
    ]
    assert facts["command_fanout_plain"]["findings"][0]["certainty"] == "source"


def test_send_workers_without_a_reducer(facts: dict[str, Any]) -> None:
    fact = facts["send_plain"]
    assert found(facts, "send_plain") == [("plain key written in parallel", ["langgraph/send/reducer-required"])]
    assert fact["send_fanout"] == {"write_joke": ["__start__"]}
    assert fact["findings"][0]["certainty"] == "observed"  # the dry run saw it too
    assert "InvalidUpdateError" in fact["dry_run"]["error"]


def test_send_workers_with_a_reducer(facts: dict[str, Any]) -> None:
    assert found(facts, "send_reducer") == [
        ("order-sensitive reducer", ["langgraph/reducers/commutativity", "langgraph/send/order"])
    ]


def test_research_assistant_subgraph_output_schema(facts: dict[str, Any]) -> None:
    fact = facts["research_assistant"]
    assert fact["writes"]["interview"] == {"keys": ["sections"], "how": "subgraph"}
    assert found(facts, "research_assistant") == [
        ("order-sensitive reducer", ["langgraph/reducers/commutativity", "langgraph/send/order"])
    ]
    assert fact["dry_run"]["error"] is None


def test_parallel_subgraphs_share_a_plain_key(facts: dict[str, Any]) -> None:
    assert found(facts, "subgraphs_shared") == [
        ("parallel subgraphs sharing state keys", ["langgraph/subgraph/shared-keys"])
    ]
    assert "question" in facts["subgraphs_shared"]["findings"][0]["where"][-1]


def test_output_schemas_are_the_mitigation(facts: dict[str, Any]) -> None:
    assert found(facts, "subgraphs_output_schema") == []
    assert facts["subgraphs_output_schema"]["dry_run"]["error"] is None


def test_parallelization_list_edge_join_is_safe(facts: dict[str, Any]) -> None:
    fact = facts["parallelization"]
    assert found(facts, "parallelization") == []
    assert fact["parallel"] == [["call_1", "call_2", "call_3"]]
    assert fact["supersteps"]["aggregator"] == [2]


def test_a_removed_reducer_is_found(facts: dict[str, Any]) -> None:
    fact = facts["reducer_removed"]
    assert found(facts, "reducer_removed") == [("plain key written in parallel", ["langgraph/same-key/no-reducer"])]
    assert {n: w["keys"] for n, w in fact["writes"].items() if n.startswith("search")} == {
        "search_code": ["results"],
        "search_docs": ["results"],
        "search_web": ["results"],
    }
    assert fact["findings"][0]["certainty"] == "observed"


def test_unknown_writers_are_listed(facts: dict[str, Any]) -> None:
    fact = facts["unknown_writer"]
    assert fact["unknown_writers"] == ["one"]
    assert fact["writes"]["one"]["how"] == "unknown"
    assert found(facts, "unknown_writer") == []


def test_a_failed_dry_run_keeps_its_error_and_the_static_finding(facts: dict[str, Any]) -> None:
    fact = facts["dry_run_fails"]
    assert "ConnectionError" in fact["dry_run"]["error"]
    assert found(facts, "dry_run_fails") == [("plain key written in parallel", ["langgraph/same-key/no-reducer"])]
    assert fact["findings"][0]["certainty"] == "source"


def test_the_dry_run_fakes_chat_models(facts: dict[str, Any]) -> None:
    run = facts["chat_model"]["dry_run"]
    assert run["error"] is None and run["fake_model"] is True and "fake" in run["note"]
    assert run["by_step"] == {"1": {"agent": ["messages"]}}


def test_the_dry_run_of_async_nodes_uses_astream(facts: dict[str, Any]) -> None:
    run = facts["async_nodes"]["dry_run"]
    assert run["error"] is None and run["mode"] == "async"
    assert run["by_step"] == {"1": {"search_docs": ["notes"], "search_web": ["notes"]}}
    nested = facts["async_in_subgraph"]["dry_run"]  # the parent is sync: the sync run refuses, then astream
    assert nested["error"] is None and nested["mode"] == "async"
    assert nested["by_step"]["1"]["other"] == ["notes"] and "notes" in nested["by_step"]["1"]["team"]


def test_command_beside_a_static_edge(facts: dict[str, Any]) -> None:
    assert found(facts, "command_and_edge") == [
        ("Command routing beside a static edge", ["langgraph/command/static-edge-still-runs"])
    ]


def test_whole_list_returned_into_operator_add(facts: dict[str, Any]) -> None:
    assert ("parallel nodes return the whole list", ["langgraph/reducers/full-state-not-delta"]) in found(
        facts, "whole_list"
    )


def test_an_exclusive_router_is_not_a_fan_out(facts: dict[str, Any]) -> None:
    assert found(facts, "exclusive_router") == []
    assert facts["exclusive_router"]["parallel"] == []


DEEP_AGENT = """
import importlib.util, json, sys
from deepagents import create_deep_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.tools import tool

class NetworkModel(BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "network"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        raise ConnectionError("this model needs the network")

    def bind_tools(self, tools, **kwargs):
        return self

@tool
def search(query: str) -> str:
    "Search the web."
    return "results"

sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])  # the inspector's own modules (audit_lg_*), as audit_inspect puts them
spec = importlib.util.spec_from_file_location("fanin_audit_langgraph", sys.argv[1])
inspector = importlib.util.module_from_spec(spec)
spec.loader.exec_module(inspector)
agent = create_deep_agent(
    model=NetworkModel(), tools=[search],
    subagents=[{"name": "researcher", "description": "researches", "system_prompt": "research"}],
)
print(json.dumps(inspector.inspect(agent, {"messages": [{"role": "user", "content": "hi"}]}), default=str))
"""


def test_a_deep_agent_graph_without_noise() -> None:
    """deepagents' internal nodes (model, tools as Send tasks, middleware) raise no LangGraph finding."""
    python = audit.python_of(MATRIX.newest("deepagents"))
    done = subprocess.run(
        [python, "-c", DEEP_AGENT, str(SUITES / "langgraph" / "audit.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    fact = json.loads(done.stdout.strip().splitlines()[-1])
    assert fact["findings"] == [] and fact["unknown_writers"] == []
    assert fact["send_fanout"] == {"tools": ["model"]}
    assert fact["dry_run"]["error"] is None and fact["dry_run"]["fake_model"] is True
