"""A deep-research shape: clarify → brief → a supervisor loop routed by Command, research units run
inside one tool node (asyncio.gather over a compiled researcher subgraph), then a final report — safe.

The parallelism is inside one node (the subgraph invoked in Python), not graph branches: no two
graph nodes share a superstep. Nodes are reached through `Command(goto=...)`.
"""

import asyncio
import operator
from typing import Annotated, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command


class AgentState(TypedDict):
    question: str
    brief: str
    notes: Annotated[list, operator.add]
    iterations: int
    final_report: str


class ResearcherState(TypedDict):
    topic: str
    compressed: str


class ResearcherOut(TypedDict):
    compressed: str


def research(state: ResearcherState) -> dict:
    return {"compressed": f"notes on {state['topic']}"}


researcher = StateGraph(ResearcherState, output_schema=ResearcherOut)
researcher.add_node("research", research)
researcher.add_edge(START, "research")
researcher.add_edge("research", END)
researcher_graph = researcher.compile()


def clarify(state: AgentState) -> Command[Literal["write_brief"]]:
    return Command(goto="write_brief")


def write_brief(state: AgentState) -> Command[Literal["supervisor"]]:
    return Command(goto="supervisor", update={"brief": f"brief: {state['question']}"})


def supervisor(state: AgentState) -> Command[Literal["supervisor_tools"]]:
    return Command(goto="supervisor_tools", update={"iterations": state.get("iterations", 0) + 1})


async def supervisor_tools(state: AgentState) -> Command[Literal["supervisor", "final_report"]]:
    topics = [f"{state['brief']} / part {n}" for n in (1, 2)]
    results = await asyncio.gather(*(researcher_graph.ainvoke({"topic": t}) for t in topics))
    update = {"notes": [r["compressed"] for r in results]}
    if state.get("iterations", 0) >= 2:
        return Command(goto="final_report", update=update)
    return Command(goto="supervisor", update=update)


def final_report(state: AgentState) -> dict:
    return {"final_report": "\n".join(state["notes"])}


builder = StateGraph(AgentState)
builder.add_node("clarify", clarify)
builder.add_node("write_brief", write_brief)
builder.add_node("supervisor", supervisor)
builder.add_node("supervisor_tools", supervisor_tools)
builder.add_node("final_report", final_report)
builder.add_edge(START, "clarify")
builder.add_edge("final_report", END)
graph = builder.compile()

INPUT = {"question": "why tea", "brief": "", "notes": [], "iterations": 0, "final_report": ""}
