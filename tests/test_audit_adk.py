"""The ADK and deepagents inspectors on small trees in the shapes real apps use.

Each tree is written to a file and read by `fanin audit`'s inspector in the venv of its framework's
newest cell, as `tests/test_audit_examples.py` does: a ParallelAgent of SequentialAgents with one
output_key in two branches at depth 2 (found) or twice in one branch (not), a LoopAgent around a
ParallelAgent with and without an escalation below it, tool state writes read from source, Workflow
fan-ins (plain, JoinNode, routed, in a loop), and deep agents with and without file-writing subagents.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from fanin.model import matrix
from fanin.model.source import REPO_ROOT
from fanin.project import audit

MATRIX = matrix.load()

ADK_HEAD = """
from google.adk.agents import BaseAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.events import Event, EventActions
from google.adk.tools import exit_loop


def llm(name, key=None, tools=()):
    return LlmAgent(name=name, model="gemini-2.0-flash", instruction=name, output_key=key, tools=list(tools))


def lane(name, *agents):
    return SequentialAgent(name=name, sub_agents=list(agents))
"""


@pytest.fixture(scope="module")
def pythons() -> dict[str, str]:
    return {key: audit.python_of(MATRIX.newest(key)) for key in ("adk", "deepagents")}


def inspected(tmp_path: Path, python: str, framework: str, body: str, head: str = ADK_HEAD) -> dict[str, Any]:
    path = tmp_path / "app.py"
    path.write_text(textwrap.dedent(head) + textwrap.dedent(body))
    facts = audit.inspect(f"{path}:root", python, MATRIX, None)
    mine = [i for i in facts["inspected"] if i["framework"] == framework]
    assert len(mine) == 1, facts
    result: dict[str, Any] = mine[0]
    for finding in result["findings"]:
        assert finding["certainty"] in ("observed", "source", "static", "possible"), finding
        assert finding["how"] and finding["precondition"] and finding["probes"], finding
    return result


def patterns(facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["pattern"]: f for f in facts["findings"]}


def test_shared_output_key_two_branches_deep(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        root = SequentialAgent(name="app", sub_agents=[
            ParallelAgent(name="fan", sub_agents=[
                lane("pricing", llm("p_search", "p_raw"), llm("p_sum", "summary")),
                lane("rivals", llm("r_search", "r_raw"), llm("r_sum", "summary")),
            ]),
            llm("writer"),
        ])
    """,
    )
    found = patterns(facts)["parallel children share an output_key"]
    assert found["probes"] == ["adk/output-key/same-key", "adk/parallel-agent/same-key"]
    assert found["certainty"] == "static"
    assert (
        "'summary'" in found["where"][1]
        and "pricing/p_sum" in found["where"][1]
        and "rivals/r_sum" in found["where"][1]
    )
    assert facts["unknown_writers"] == []


def test_same_key_twice_in_one_branch_is_no_fan_in(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        root = ParallelAgent(name="fan", sub_agents=[
            lane("a", llm("draft", "text"), llm("polish", "text")),
            lane("b", llm("other", "notes")),
        ])
    """,
    )
    assert set(patterns(facts)) == {"deprecated class in the installed version"}


def test_loop_with_escalation_only_after_the_parallel_agent(tmp_path: Path, pythons: dict[str, str]) -> None:
    """The story-loop shape: the critic that calls exit_loop runs after the fan-out, never beside it."""
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        root = LoopAgent(name="story", max_iterations=3, sub_agents=[
            ParallelAgent(name="ideas", sub_agents=[lane("a", llm("a1", "idea_a")), lane("b", llm("b1", "idea_b"))]),
            llm("critic", "verdict", tools=[exit_loop]),
        ])
    """,
    )
    assert set(patterns(facts)) == {"deprecated class in the installed version"}


def test_loop_with_escalation_deep_in_a_branch(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        def stop_when_done(tool_context) -> dict:
            \"\"\"The app's own exit tool.\"\"\"
            tool_context.actions.escalate = True
            return {}

        root = LoopAgent(name="refine", max_iterations=3, sub_agents=[
            ParallelAgent(name="round", sub_agents=[
                lane("a", llm("a1", "a_out"), llm("a_check", "a_ok", tools=[stop_when_done])),
                lane("b", llm("b1", "b_out")),
            ]),
        ])
    """,
    )
    found = patterns(facts)
    in_loop = found["ParallelAgent inside a LoopAgent"]
    assert in_loop["probes"] == ["adk/parallel-agent/in-loop"]
    assert in_loop["certainty"] == "source"
    assert "refine/round/a/a_check" in in_loop["how"] and "LoopAgent refine" in in_loop["precondition"]
    # a_check is below a direct child: not the direct-child probe's precondition
    assert "escalation from a direct child of a ParallelAgent" not in found


def test_custom_agent_yielding_escalate(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        class Gate(BaseAgent):
            async def _run_async_impl(self, ctx):
                yield Event(author=self.name, invocation_id=ctx.invocation_id,
                            actions=EventActions(state_delta={"gate": "shut"}, escalate=True))

        root = LoopAgent(name="loop", max_iterations=2, sub_agents=[
            ParallelAgent(name="fan", sub_agents=[Gate(name="gate"), lane("b", llm("b1", "b_out"))]),
        ])
    """,
    )
    found = patterns(facts)
    assert found["escalation from a direct child of a ParallelAgent"]["certainty"] == "source"
    assert found["ParallelAgent inside a LoopAgent"]["certainty"] == "source"
    assert facts["writes"]["loop/fan/gate"] == {"keys": ["gate"], "how": "source"}


def test_tool_state_writes_in_two_branches(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        def save_note(note: str, tool_context) -> dict:
            \"\"\"Keep a note.\"\"\"
            tool_context.state["notes"] = note
            return {}

        def remember(callback_context):
            callback_context.state["last_agent"] = "b"

        root = ParallelAgent(name="fan", sub_agents=[
            lane("a", llm("a1", "a_out", tools=[save_note])),
            lane("b", llm("b1", "b_out", tools=[save_note])),
            LlmAgent(name="c", model="gemini-2.0-flash", instruction="c", after_agent_callback=remember),
        ])
    """,
    )
    found = patterns(facts)["parallel branches write the same state key"]
    assert found["probes"] == ["adk/parallel-agent/same-key"]
    assert found["certainty"] == "source" and "'notes'" in found["where"][1]
    assert facts["writes"]["fan/c"] == {"keys": ["last_agent"], "how": "source"}
    assert len(facts["findings"]) == 2  # last_agent is written in one branch only; plus the deprecation


WORKFLOW_HEAD = """
from google.adk.workflow import JoinNode, Workflow


def a(node_input):
    return "a"


def b(node_input):
    return {"b": 1}


def maybe(node_input):
    if node_input:
        return "yes"


def merge(node_input):
    return node_input


def route(node_input):
    return node_input
"""


def test_workflow_plain_fan_in(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        root = Workflow(name="wf", edges=[("START", (a, b), merge)])
    """,
        WORKFLOW_HEAD,
    )
    found = patterns(facts)
    assert set(found) == {"workflow fan-in"}
    assert found["workflow fan-in"]["probes"] == ["adk/workflow/plain-fan-in"]
    assert "['a', 'b']" in found["workflow fan-in"]["where"][1]


def test_workflow_join_none_output_and_start(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        join = JoinNode(name="join")
        root = Workflow(name="wf", edges=[("START", (a, maybe), join, merge), ("START", join)])
    """,
        WORKFLOW_HEAD,
    )
    found = patterns(facts)
    assert set(found) == {"join predecessor may output None", "join with START as a predecessor"}
    assert found["join predecessor may output None"]["where"] == ["join", "predecessor maybe"]
    assert found["join predecessor may output None"]["certainty"] == "source"


def test_workflow_join_of_safe_branches_is_quiet(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        root = Workflow(name="wf", edges=[("START", (a, b), JoinNode(name="join"), merge)])
    """,
        WORKFLOW_HEAD,
    )
    assert facts["findings"] == []
    assert facts["joins"] == ["join"]


def test_workflow_routes_that_exclude_each_other_are_no_fan_in(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        root = Workflow(name="wf", edges=[("START", route, {"left": a, "right": b}), (a, merge), (b, merge)])
    """,
        WORKFLOW_HEAD,
    )
    assert facts["findings"] == []


DEEP_HEAD = f"""
import sys

sys.path.insert(0, {str(REPO_ROOT / "suites" / "deepagents")!r})
from da_kit import ScriptedModel
from deepagents import create_deep_agent
from langchain.agents import create_agent

model = ScriptedModel()


def search(query: str) -> str:
    \"\"\"Search the web.\"\"\"
    return query
"""


def test_deep_agent_with_file_writing_subagents(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["deepagents"],
        "deepagents",
        """
        root = create_deep_agent(model=model, tools=[search], subagents=[
            {"name": "researcher", "description": "Researches.", "system_prompt": "Research.", "tools": [search]},
            {"name": "critic", "description": "Critiques.", "system_prompt": "Critique.", "tools": [search]},
        ])
    """,
        DEEP_HEAD,
    )
    found = patterns(facts)["parallel subagents write files"]
    assert found["probes"] == ["deepagents/subagents/parallel-files"]
    assert found["certainty"] == "static"
    assert "'researcher'" in found["where"][1] and "'critic'" in found["where"][1]
    assert facts["unknown_writers"] == []


def test_deep_agent_without_file_tools(tmp_path: Path, pythons: dict[str, str]) -> None:
    facts = inspected(
        tmp_path,
        pythons["deepagents"],
        "deepagents",
        """
        plain = create_agent(model, tools=[search])
        root = create_deep_agent(model=model, tools=[search], subagents=[
            {"name": "general-purpose", "description": "Anything.", "runnable": plain},
            {"name": "searcher", "description": "Searches.", "runnable": plain},
        ])
    """,
        DEEP_HEAD,
    )
    assert "parallel subagents write files" not in patterns(facts)
    assert facts["findings"] == []


def test_deep_agent_with_files_on_disk(tmp_path: Path, pythons: dict[str, str]) -> None:
    """Files kept by a FilesystemBackend never fan in through graph state: not the probe's precondition."""
    facts = inspected(
        tmp_path,
        pythons["deepagents"],
        "deepagents",
        f"""
        from deepagents.backends import FilesystemBackend

        root = create_deep_agent(model=model, backend=FilesystemBackend(root_dir={str(tmp_path)!r}), subagents=[
            {{"name": "researcher", "description": "Researches.", "system_prompt": "Research.", "tools": [search]}},
        ])
    """,
        DEEP_HEAD,
    )
    assert "parallel subagents write files" not in patterns(facts)


def test_custom_agent_building_its_fan_out_at_run_time(tmp_path: Path, pythons: dict[str, str]) -> None:
    """A custom orchestrator that makes its ParallelAgent inside _run_async_impl: the tree cannot show it."""
    facts = inspected(
        tmp_path,
        pythons["adk"],
        "adk",
        """
        class Searcher(BaseAgent):
            async def _run_async_impl(self, ctx):
                fan = ParallelAgent(name="fan", sub_agents=[llm(f"s{i}", f"hit_{i}") for i in range(2)])
                async for event in fan.run_async(ctx):
                    yield event

        root = SequentialAgent(name="app", sub_agents=[Searcher(name="search"), llm("writer")])
        """,
    )
    assert facts["unknown_writers"] == ["app/search"]
    assert facts["findings"] == []
