"""Writes to one plain key (no reducer) from parallel and sequential nodes."""

from typing import TypedDict

from langgraph.graph import START, StateGraph

from fanin.probe import Claim, Observer, probe

CONCURRENT_UPDATE_DOC = "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE"


@probe(
    "langgraph/same-key/no-reducer",
    title="Two nodes fanned out from START write one plain key in the same superstep",
    claim=Claim(
        "A key without a reducer takes one value per superstep; two parallel writes raise InvalidUpdateError.",
        CONCURRENT_UPDATE_DOC,
    ),
)
def test_no_reducer(obs: Observer) -> None:
    class State(TypedDict):
        value: str

    steps: dict[str, int] = {}

    def writer(name: str, value: str):
        def node(state: State, config) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"value": value}

        return node

    builder = StateGraph(State)
    builder.add_node("a", writer("a", "A"))
    builder.add_node("b", writer("b", "B"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = graph.invoke({"value": "init"})
    if len(set(steps.values())) != 1 or len(steps) != 2:
        obs.vacuous(f"the writers did not share one superstep: {steps}")
    kept = final["value"]
    obs.record(
        {"final": final, "writer_steps": steps},
        label=f"last write wins: {kept}",
        detail=f"no error; last write wins: {kept}",
        hazard="silent",
    )


@probe(
    "langgraph/same-key/same-value",
    title="Two parallel nodes write the identical value to one plain key",
    claim=Claim(
        "The one-value-per-step rule counts writes, not distinct values: identical writes still raise.",
        CONCURRENT_UPDATE_DOC,
    ),
)
def test_same_value(obs: Observer) -> None:
    class State(TypedDict):
        value: str

    steps: dict[str, int] = {}

    def writer(name: str):
        def node(state: State, config) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"value": "same"}

        return node

    builder = StateGraph(State)
    builder.add_node("a", writer("a"))
    builder.add_node("b", writer("b"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = graph.invoke({"value": "init"})
    if len(set(steps.values())) != 1 or len(steps) != 2:
        obs.vacuous(f"the writers did not share one superstep: {steps}")
    obs.record(
        {"final": final, "writer_steps": steps},
        label="accepted",
        detail=f"no error; identical writes accepted: {final['value']}",
        hazard="safe",
    )


@probe(
    "langgraph/same-key/max-concurrency-1",
    title="Two parallel writers to one plain key, invoked with max_concurrency=1",
    claim=Claim(
        "max_concurrency limits how many tasks run at once, not the superstep: the writes still collide.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#parallelism",
    ),
)
def test_max_concurrency_1(obs: Observer) -> None:
    class State(TypedDict):
        value: str

    steps: dict[str, int] = {}

    def writer(name: str, value: str):
        def node(state: State, config) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"value": value}

        return node

    builder = StateGraph(State)
    builder.add_node("a", writer("a", "A"))
    builder.add_node("b", writer("b", "B"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = graph.invoke({"value": "init"}, {"max_concurrency": 1})
    if len(set(steps.values())) != 1 or len(steps) != 2:
        obs.vacuous(f"the writers did not share one superstep: {steps}")
    obs.record(
        {"final": final, "writer_steps": steps},
        label=f"last write wins: {final['value']}",
        detail=f"no error with max_concurrency=1; last write wins: {final['value']}",
        hazard="silent",
    )


@probe(
    "langgraph/same-key/across-supersteps",
    title="Two nodes in sequence write one plain key",
    claim=Claim(
        "Without a reducer each superstep's single write replaces the value: the later node wins, no error.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#reducers",
    ),
)
def test_across_supersteps(obs: Observer) -> None:
    class State(TypedDict):
        value: str

    steps: dict[str, int] = {}

    def writer(name: str, value: str):
        def node(state: State, config) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"value": value}

        return node

    builder = StateGraph(State)
    builder.add_node("first", writer("first", "FIRST"))
    builder.add_node("second", writer("second", "SECOND"))
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = graph.invoke({"value": "init"})
    overwritten = final["value"] == "SECOND"
    obs.record(
        {"final": final, "writer_steps": steps},
        label=f"later step wins: {final['value']}" if overwritten else f"kept: {final['value']}",
        detail=f"no error; value after both steps: {final['value']}",
        hazard="safe" if overwritten else "silent",
    )
