"""A supervisor routed by Command (the multi-agent supervisor shape): one worker at a time — safe.

The supervisor picks the next worker and returns `Command(goto=...)`; each worker reports back
with `Command(goto="supervisor", update=...)`. Nothing runs in parallel, so `messages`
(add_messages) is never written by two nodes in one superstep; workers are reached only through
Command, declared by their return annotations.
"""

from typing import Annotated, Literal, TypedDict

from langchain_core.messages import AIMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command


class State(TypedDict):
    messages: Annotated[list, add_messages]
    next: str
    turns: int


def supervisor(state: State) -> Command[Literal["researcher", "coder", "__end__"]]:
    turns = state.get("turns", 0)
    order = ["researcher", "coder", "__end__"]
    goto = order[min(turns, 2)]
    return Command(goto=goto, update={"next": goto, "turns": turns + 1})


def researcher(state: State) -> Command[Literal["supervisor"]]:
    return Command(goto="supervisor", update={"messages": [AIMessage("found three sources", name="researcher")]})


def coder(state: State) -> Command[Literal["supervisor"]]:
    return Command(goto="supervisor", update={"messages": [AIMessage("wrote the chart", name="coder")]})


builder = StateGraph(State)
builder.add_node("supervisor", supervisor)
builder.add_node("researcher", researcher)
builder.add_node("coder", coder)
builder.add_edge(START, "supervisor")
graph = builder.compile()

INPUT = {"messages": [{"role": "user", "content": "chart the data"}], "next": "", "turns": 0}
