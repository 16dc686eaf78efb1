"""Command: routing from inside a node, and what else still runs."""

import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

from fanin.probe import Claim, Observer, probe


@probe(
    "langgraph/command/static-edge-still-runs",
    title="A node returns Command(goto=\"target\") and also has a static edge to `other`",
    claim=Claim(
        "Command(goto) adds a destination, it does not replace the node's static edges: both `target` and"
        " `other` run in the next step, so their writes to one plain key collide.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#command",
        expect={"value.writes to a plain key.raises": "InvalidUpdateError"},
    ),
    sources=["https://github.com/langchain-ai/docs/pull/1246"],
)
def test_static_edge_still_runs(obs: Observer) -> None:
    Command = obs.need("langgraph.types", "Command")

    def run(plain_key: bool) -> dict:
        class State(TypedDict):
            items: Annotated[list, operator.add]
            status: str

        steps: dict[str, int] = {}

        def router(state: State, config: RunnableConfig) -> Any:
            steps["router"] = config["metadata"]["langgraph_step"]
            return Command(update={"items": ["router"]}, goto="target")

        def writer(name: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"status": name} if plain_key else {"items": [name]}

            return node

        builder = StateGraph(State)
        builder.add_node("router", router, destinations=("target",))
        builder.add_node("target", writer("target"))
        builder.add_node("other", writer("other"))
        builder.add_edge(START, "router")
        builder.add_edge("router", "other")
        outcome = obs.attempt(lambda: builder.compile().invoke({"items": [], "status": ""}))
        return {"node_steps": steps, **outcome}

    with obs.framework():
        runs = {"writes to a reducer key": run(False), "writes to a plain key": run(True)}
    reducer = runs["writes to a reducer key"]
    plain = runs["writes to a plain key"]
    both = {"target", "other"} <= set(reducer["node_steps"])
    items = reducer.get("returned", {}).get("items", [])
    collision = plain.get("raises", "no error")
    obs.record(
        runs,
        label=f"both run: {', '.join(items[1:])}" if both else "only the goto target runs",
        detail=f"nodes run {dict(sorted(reducer['node_steps'].items()))}; on a plain key: {collision}",
        hazard="silent" if both and "raises" not in plain else "loud" if both else "safe",
    )
