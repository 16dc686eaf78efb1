"""Writes to one plain key (no reducer) from parallel and sequential nodes."""

from collections.abc import Callable
from typing import TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

import lg_modes
from fanin.probe import Claim, Observer, probe

CONCURRENT_UPDATE_DOC = "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE"


@probe(
    "langgraph/same-key/no-reducer",
    title="Two nodes fanned out from START write one plain key in the same superstep",
    claim=Claim(
        "A key without a reducer takes one value per superstep; two parallel writes raise InvalidUpdateError.",
        CONCURRENT_UPDATE_DOC,
        expect={"outcome": "raises:InvalidUpdateError"},
    ),
    modes=("sync", "async"),
)
def test_no_reducer(obs: Observer) -> None:
    class State(TypedDict):
        value: str

    steps: dict[str, int] = {}

    def writer(name: str, value: str) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"value": value}

        return node

    builder = StateGraph(State)
    builder.add_node("a", lg_modes.node(obs, writer("a", "A")))
    builder.add_node("b", lg_modes.node(obs, writer("b", "B")))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = lg_modes.invoke(obs, graph, {"value": "init"})
    obs.require_same_step(steps, expected=2, what="writers")
    kept = final["value"]
    lost = sorted({"A", "B"} - {kept})
    obs.record(
        {"final": final, "writer_steps": steps},
        label=f"last write wins: {kept}" if lost else f"kept: {kept}",
        detail=f"no error; last write wins: {kept}" if lost else f"no error; value: {kept}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "langgraph/same-key/same-value",
    title="Two parallel nodes write the identical value to one plain key",
    claim=Claim(
        "The one-value-per-step rule counts writes, not distinct values: identical writes still raise.",
        CONCURRENT_UPDATE_DOC,
        expect={"outcome": "raises:InvalidUpdateError"},
    ),
    modes=("sync", "async"),
)
def test_same_value(obs: Observer) -> None:
    class State(TypedDict):
        value: str

    steps: dict[str, int] = {}

    def writer(name: str) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"value": "same"}

        return node

    builder = StateGraph(State)
    builder.add_node("a", lg_modes.node(obs, writer("a")))
    builder.add_node("b", lg_modes.node(obs, writer("b")))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = lg_modes.invoke(obs, graph, {"value": "init"})
    obs.require_same_step(steps, expected=2, what="writers")
    kept = final["value"] == "same"
    obs.record(
        {"final": final, "writer_steps": steps},
        label="accepted" if kept else f"wrong value: {final['value']}",
        detail=f"no error; identical writes accepted: {final['value']}",
        hazard="safe" if kept else "silent",
    )


@probe(
    "langgraph/same-key/max-concurrency-1",
    title="Two parallel writers to one plain key, invoked with max_concurrency=1",
    claim=Claim(
        "max_concurrency limits how many tasks run at once, not the superstep: the writes still collide.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#parallelism",
        expect={"outcome": "raises:InvalidUpdateError"},
    ),
    modes=("sync", "async"),
)
def test_max_concurrency_1(obs: Observer) -> None:
    class State(TypedDict):
        value: str

    steps: dict[str, int] = {}

    def writer(name: str, value: str) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"value": value}

        return node

    builder = StateGraph(State)
    builder.add_node("a", lg_modes.node(obs, writer("a", "A")))
    builder.add_node("b", lg_modes.node(obs, writer("b", "B")))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = lg_modes.invoke(obs, graph, {"value": "init"}, {"max_concurrency": 1})
    obs.require_same_step(steps, expected=2, what="writers")
    lost = sorted({"A", "B"} - {final["value"]})
    obs.record(
        {"final": final, "writer_steps": steps},
        label=f"last write wins: {final['value']}" if lost else f"kept: {final['value']}",
        detail=f"no error with max_concurrency=1; last write wins: {final['value']}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "langgraph/same-key/across-supersteps",
    title="Two nodes in sequence write one plain key",
    claim=Claim(
        "Without a reducer each superstep's single write replaces the value: the later node wins, no error.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#reducers",
        expect={"value.final.value": "SECOND"},
    ),
    modes=("sync", "async"),
)
def test_across_supersteps(obs: Observer) -> None:
    class State(TypedDict):
        value: str

    steps: dict[str, int] = {}

    def writer(name: str, value: str) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"value": value}

        return node

    builder = StateGraph(State)
    builder.add_node("first", lg_modes.node(obs, writer("first", "FIRST")))
    builder.add_node("second", lg_modes.node(obs, writer("second", "SECOND")))
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = lg_modes.invoke(obs, graph, {"value": "init"})
    # By the legend a write that is gone with no error is `silent`, even when replacing it is the
    # documented semantics of a plain key: the report says so, the claim says it is by design.
    first_lost = final["value"] != "FIRST"
    obs.record(
        {"final": final, "writer_steps": steps},
        label=f"later step wins: {final['value']}" if first_lost else f"kept: {final['value']}",
        detail=f"no error; value after both steps: {final['value']}; the first write is {'gone' if first_lost else 'kept'}",
        hazard="silent" if first_lost else "safe",
    )


@probe(
    "langgraph/same-key/nested-dict",
    title="Two parallel nodes write different sub-keys of one plain dict key",
    claim=Claim(
        "State updates replace a key without a reducer; there is no deep merge: two parallel writes to one"
        " dict key are two values for one key in one step, and raise InvalidUpdateError.",
        CONCURRENT_UPDATE_DOC,
        expect={"outcome": "raises:InvalidUpdateError"},
    ),
    modes=("sync", "async"),
)
def test_nested_dict(obs: Observer) -> None:
    class State(TypedDict):
        results: dict

    steps: dict[str, int] = {}

    def writer(name: str, update: dict) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"results": update}

        return node

    builder = StateGraph(State)
    builder.add_node("a", lg_modes.node(obs, writer("a", {"a": 1})))
    builder.add_node("b", lg_modes.node(obs, writer("b", {"b": 2})))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = lg_modes.invoke(obs, graph, {"results": {}})
    obs.require_same_step(steps, expected=2, what="writers")
    results = final["results"]
    if results == {"a": 1, "b": 2}:
        label, detail, hazard = "deep merge", "no error; the two sub-keys were merged", "safe"
    else:
        label = f"last write wins: {sorted(results)}"
        detail = f"no error; one dict replaced the other: {results}"
        hazard = "silent"
    obs.record({"final": final, "writer_steps": steps}, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/same-key/full-state-return",
    title="A parallel node returns the whole state (`return state`), as in a retry loop",
    claim=Claim(
        "A node's return value is an update: returning the whole state writes every key again, so a sibling"
        " writing any key in the same step collides (InvalidUpdateError, langgraph #2336).",
        "https://github.com/langchain-ai/langgraph/issues/2336",
        expect={"outcome": "raises:InvalidUpdateError"},
    ),
    modes=("sync", "async"),
)
def test_full_state_return(obs: Observer) -> None:
    class State(TypedDict):
        attempts: int
        a_result: str
        b_result: str

    # Both namings: were the writes folded by name with the last one kept, the sibling's b_result would
    # survive when the sibling's name sorts last and be lost when it sorts first, so one naming cannot pass by luck.
    namings = {"a retries, b is its sibling": ("a", "b"), "b retries, a is its sibling": ("b", "a")}
    runs: dict[str, dict] = {}
    for case, (retrier, sibling_name) in namings.items():
        steps: dict[str, int] = {}

        def retrying(state: State, config: RunnableConfig) -> State:
            steps[retrier] = config["metadata"]["langgraph_step"]
            state["attempts"] += 1
            state["a_result"] = "A"
            return state

        def sibling(state: State, config: RunnableConfig) -> dict:
            steps[sibling_name] = config["metadata"]["langgraph_step"]
            return {"b_result": "B"}

        builder = StateGraph(State)
        builder.add_node(retrier, lg_modes.node(obs, retrying))
        builder.add_node(sibling_name, lg_modes.node(obs, sibling))
        builder.add_edge(START, retrier)
        builder.add_edge(START, sibling_name)
        graph = builder.compile()

        with obs.framework(value=lambda: {**runs, "raised in": case, "writer_steps": steps}):
            final = lg_modes.invoke(obs, graph, {"attempts": 0, "a_result": "", "b_result": ""})
        obs.require_same_step(steps, expected=2, what="writers")
        runs[case] = {"final": final, "writer_steps": steps}
    made = {"attempts": 1, "a_result": "A", "b_result": "B"}  # the retrier's two changes, the sibling's one write
    lost = [f"{case} | {key}={value}" for case, run in runs.items() for key, value in made.items() if run["final"][key] != value]
    obs.record(
        {**runs, "lost": lost},
        label=f"lost: {', '.join(sorted({w.split(' | ')[1] for w in lost}))}" if lost else "every write kept",
        detail=f"no error; lost {lost}; final states {[run['final'] for run in runs.values()]}"
        if lost
        else f"no error; every write kept in both namings: {[run['final'] for run in runs.values()]}",
        hazard="silent" if lost else "safe",
    )
