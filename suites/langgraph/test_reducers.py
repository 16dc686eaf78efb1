"""Keys with reducers: what parallel writes fold into."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import START, StateGraph

from fanin.probe import Claim, Observer, probe


@probe(
    "langgraph/reducers/add",
    title="Two parallel writers append to an Annotated[list, operator.add] key",
    claim=Claim(
        "A reducer folds every write of a superstep into the key, so both parallel writes are kept.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#reducers",
    ),
)
def test_add(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    steps: dict[str, int] = {}

    def writer(name: str, item: str):
        def node(state: State, config) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"items": [item]}

        return node

    builder = StateGraph(State)
    builder.add_node("a", writer("a", "A"))
    builder.add_node("b", writer("b", "B"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = graph.invoke({"items": []})
    if len(set(steps.values())) != 1 or len(steps) != 2:
        obs.vacuous(f"the writers did not share one superstep: {steps}")
    items = final["items"]
    both_kept = sorted(items) == ["A", "B"]
    obs.record(
        {"final": final, "writer_steps": steps},
        label=f"both kept: {', '.join(items)}" if both_kept else f"lost: {', '.join(items)}",
        detail=f"both kept, folded as {items}" if both_kept else f"writes lost: {items}",
        hazard="order-coupled" if both_kept else "silent",
    )
