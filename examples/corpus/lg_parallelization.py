"""The parallelization workflow: three calls from START, each its own key, an aggregator behind a list edge — safe."""

from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    topic: str
    joke: str
    story: str
    poem: str
    combined_output: str


def call_llm_1(state: State) -> dict:
    return {"joke": f"a joke about {state['topic']}"}


def call_llm_2(state: State) -> dict:
    return {"story": f"a story about {state['topic']}"}


def call_llm_3(state: State) -> dict:
    return {"poem": f"a poem about {state['topic']}"}


def aggregator(state: State) -> dict:
    return {"combined_output": "\n".join([state["joke"], state["story"], state["poem"]])}


builder = StateGraph(State)
builder.add_node("call_llm_1", call_llm_1)
builder.add_node("call_llm_2", call_llm_2)
builder.add_node("call_llm_3", call_llm_3)
builder.add_node("aggregator", aggregator)
builder.add_edge(START, "call_llm_1")
builder.add_edge(START, "call_llm_2")
builder.add_edge(START, "call_llm_3")
builder.add_edge(["call_llm_1", "call_llm_2", "call_llm_3"], "aggregator")
builder.add_edge("aggregator", END)
graph = builder.compile()

INPUT = {"topic": "cats", "joke": "", "story": "", "poem": "", "combined_output": ""}
