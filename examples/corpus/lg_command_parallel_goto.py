"""A supervisor that dispatches two workers at once with `Command(goto=[...])`; both write the plain key `draft` — hazardous.

Both workers run in one superstep and update `draft`, a LastValue channel: LangGraph raises
InvalidUpdateError at the fan-in (langgraph/same-key/no-reducer).
"""

from typing import Annotated, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command


class State(TypedDict):
    messages: Annotated[list, add_messages]
    draft: str


def supervisor(state: State) -> Command[Literal["writer", "editor"]]:
    return Command(goto=["writer", "editor"])


def writer(state: State) -> dict:
    return {"draft": "first draft"}


def editor(state: State) -> dict:
    return {"draft": "edited draft"}


builder = StateGraph(State)
builder.add_node("supervisor", supervisor)
builder.add_node("writer", writer)
builder.add_node("editor", editor)
builder.add_edge(START, "supervisor")
builder.add_edge("writer", END)
builder.add_edge("editor", END)
graph = builder.compile()

INPUT = {"messages": [], "draft": ""}
