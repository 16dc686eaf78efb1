"""Two parallel searchers append to `results`, whose reducer was removed (`results: list`) — hazardous.

The one-line edit of issue 20: with `Annotated[list, operator.add]` this is safe; as a plain
list both searchers write the LastValue `results` in one superstep (langgraph/same-key/no-reducer).
"""

from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    query: str
    results: list
    answer: str


def web_search(state: State) -> dict:
    return {"results": [f"web: {state['query']}"]}


def wiki_search(state: State) -> dict:
    return {"results": [f"wiki: {state['query']}"]}


def answer(state: State) -> dict:
    return {"answer": "; ".join(state["results"])}


builder = StateGraph(State)
builder.add_node("web_search", web_search)
builder.add_node("wiki_search", wiki_search)
builder.add_node("answer", answer)
builder.add_edge(START, "web_search")
builder.add_edge(START, "wiki_search")
builder.add_edge(["web_search", "wiki_search"], "answer")
builder.add_edge("answer", END)
graph = builder.compile()

INPUT = {"query": "tea", "results": [], "answer": ""}
