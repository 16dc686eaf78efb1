"""A research assistant (analysts, one interview subgraph per analyst via Send, then a report) — safe.

Each interview is a subgraph with an output schema returning only `sections` (operator.add);
after the interviews three writers run in parallel, each writing a key of its own, and a list
edge joins them. No plain key has two writers in a superstep; no subgraph leaks a shared key.
"""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


class ResearchState(TypedDict):
    topic: str
    analysts: list
    sections: Annotated[list, operator.add]
    introduction: str
    content: str
    conclusion: str
    final_report: str


class InterviewState(TypedDict):
    analyst: str
    topic: str
    answer: str
    sections: list


class InterviewOut(TypedDict):
    sections: list


def ask(state: InterviewState) -> dict:
    return {"answer": f"{state['analyst']} asks about {state['topic']}"}


def write_section(state: InterviewState) -> dict:
    return {"sections": [f"section by {state['analyst']}: {state['answer']}"]}


interview = StateGraph(InterviewState, output_schema=InterviewOut)
interview.add_node("ask", ask)
interview.add_node("write_section", write_section)
interview.add_edge(START, "ask")
interview.add_edge("ask", "write_section")
interview.add_edge("write_section", END)


def create_analysts(state: ResearchState) -> dict:
    return {"analysts": ["economist", "historian"]}


def start_interviews(state: ResearchState) -> list:
    return [Send("conduct_interview", {"analyst": a, "topic": state["topic"]}) for a in state["analysts"]]


def write_introduction(state: ResearchState) -> dict:
    return {"introduction": f"intro over {len(state['sections'])} sections"}


def write_report(state: ResearchState) -> dict:
    return {"content": "\n".join(sorted(state["sections"]))}


def write_conclusion(state: ResearchState) -> dict:
    return {"conclusion": "so it goes"}


def finalize_report(state: ResearchState) -> dict:
    return {"final_report": "\n\n".join([state["introduction"], state["content"], state["conclusion"]])}


builder = StateGraph(ResearchState)
builder.add_node("create_analysts", create_analysts)
builder.add_node("conduct_interview", interview.compile())
builder.add_node("write_introduction", write_introduction)
builder.add_node("write_report", write_report)
builder.add_node("write_conclusion", write_conclusion)
builder.add_node("finalize_report", finalize_report)
builder.add_edge(START, "create_analysts")
builder.add_conditional_edges("create_analysts", start_interviews, ["conduct_interview"])
builder.add_edge("conduct_interview", "write_introduction")
builder.add_edge("conduct_interview", "write_report")
builder.add_edge("conduct_interview", "write_conclusion")
builder.add_edge(["write_introduction", "write_report", "write_conclusion"], "finalize_report")
builder.add_edge("finalize_report", END)
graph = builder.compile()

INPUT = {
    "topic": "tea",
    "analysts": [],
    "sections": [],
    "introduction": "",
    "content": "",
    "conclusion": "",
    "final_report": "",
}
