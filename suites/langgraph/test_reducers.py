"""Keys with reducers: what parallel writes fold into."""

import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

import lg_modes
from fanin.probe import Claim, Observer, probe


# The two parallel writers under both namings: a fold that follows the node names swaps the items, one
# that keeps the last write loses a different item in each, so neither can hide behind `b` sorting after `a`.
NAMINGS = {"a writes A, b writes B": {"a": "A", "b": "B"}, "a writes B, b writes A": {"a": "B", "b": "A"}}


def fold_both_namings(obs: Observer, state_schema: type) -> dict[str, dict]:
    """Two nodes fanned out from START each append their item to `items`, once per naming.

    Returns naming -> the compiled `items` channel's type, the final items and the writers' supersteps.
    A raise is the observation, shown with the channel, the namings seen before it and the one it raised
    in; writers that did not share a superstep make the probe `vacuous`.
    """
    observed: dict[str, dict] = {}
    for case, naming in NAMINGS.items():
        steps: dict[str, int] = {}

        def writer(name: str, item: str) -> Callable[..., dict]:
            def node(state: Any, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": [item]}

            return node

        builder = StateGraph(state_schema)
        for name, item in naming.items():
            builder.add_node(name, writer(name, item))
            builder.add_edge(START, name)
        graph = builder.compile()
        channel = type(graph.channels["items"]).__name__
        with obs.framework(value=lambda: {"channel": channel, **observed, "raised in": case, "writer_steps": steps}):
            final = graph.invoke({"items": []})
        obs.require_same_step(steps, expected=2, what="writers")
        observed[case] = {"channel": channel, "items": final["items"], "writer_steps": steps}
    return observed


def fold_grade(runs: dict[str, dict]) -> tuple[list[str], bool, str]:
    """(writes lost, whether swapping the names changed the result, hazard) of `fold_both_namings`' runs."""
    lost = [f"{case} | {n}:{item}" for case, naming in NAMINGS.items() for n, item in naming.items() if item not in runs[case]["items"]]
    follows_names = len({tuple(run["items"]) for run in runs.values()}) > 1
    return lost, follows_names, "silent" if lost else "order-coupled" if follows_names else "safe"


@probe(
    "langgraph/reducers/add",
    title="Two parallel writers append to an Annotated[list, operator.add] key",
    claim=Claim(
        "A reducer folds every write of a superstep into the key, so both parallel writes are kept.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#reducers",
        expect={"hazard": "order-coupled"},
    ),
)
def test_add(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    runs = fold_both_namings(obs, State)
    lost, follows_names, hazard = fold_grade(runs)
    folds = {case: run["items"] for case, run in runs.items()}
    # Which way the names order the fold: ascending (a's write first), descending, or neither.
    by_name = {case: [naming[n] for n in sorted(naming)] for case, naming in NAMINGS.items()}
    fold_by = (
        "node names, ascending" if all(folds[c] == by_name[c] for c in folds)
        else "node names, descending" if all(folds[c] == by_name[c][::-1] for c in folds)
        else "neither name order"
    )
    obs.record(
        {**runs, "lost": lost, "order_follows_names": follows_names, "fold_by": fold_by},
        label=f"lost {len(lost)} writes" if lost else f"both kept, by {fold_by}" if follows_names else "both kept, same order",
        detail=f"writes lost: {lost}; folds {folds}" if lost else f"both kept in both namings, folded as {folds}",
        hazard=hazard,
    )


REDUCERS_DOC = "https://docs.langchain.com/oss/python/langgraph/graph-api#reducers"


@probe(
    "langgraph/reducers/full-state-not-delta",
    title="Two parallel nodes each return the whole operator.add list plus their item",
    claim=Claim(
        "A reducer receives each node's return as an update to fold in, not as the new value: a node must"
        " return only its delta, or whatever it copies from the state is appended again.",
        REDUCERS_DOC,
        expect={"value.seed_count": 3},
    ),
)
def test_full_state_not_delta(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    steps: dict[str, int] = {}

    def writer(name: str, item: str) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"items": state["items"] + [item]}

        return node

    builder = StateGraph(State)
    builder.add_node("a", writer("a", "A"))
    builder.add_node("b", writer("b", "B"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = graph.invoke({"items": ["seed"]})
    obs.require_same_step(steps, expected=2, what="writers")
    seeds = final["items"].count("seed")
    obs.record(
        {"final": final, "writer_steps": steps, "seed_count": seeds},
        label=f"seed ×{seeds}",
        detail=f"{seeds} copies of the one initial item survive: {final['items']}",
        hazard="silent" if seeds != 1 else "safe",
    )


@probe(
    "langgraph/reducers/metadata-after-reducer",
    title="Annotated[list, operator.add, \"doc\"]: a string after the reducer, then two parallel writers",
    claim=Claim(
        "The reducer is read from the last Annotated metadata item only; with a docstring after it the key"
        " gets a plain LastValue channel, so parallel writes collide.",
        REDUCERS_DOC,
        expect={"outcome": "raises:InvalidUpdateError", "value.observed.channel": "LastValue"},
    ),
)
def test_metadata_after_reducer(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add, "collected results"]

    runs = fold_both_namings(obs, State)
    channel = "/".join(sorted({run["channel"] for run in runs.values()}))
    lost, follows_names, hazard = fold_grade(runs)
    folds = {case: run["items"] for case, run in runs.items()}
    obs.record(
        {"channel": channel, **runs, "lost": lost, "order_follows_names": follows_names},
        label=f"{channel}: lost {len(lost)}" if lost else f"{channel}: both kept",
        detail=f"channel {channel}; no error; items {folds}" + (f"; lost {lost}" if lost else ""),
        hazard=hazard,
    )


@probe(
    "langgraph/reducers/metadata-before-reducer",
    title="Annotated[list, \"doc\", operator.add]: the reducer last, then two parallel writers",
    claim=Claim(
        "With the reducer as the last Annotated item, the key gets a BinaryOperatorAggregate channel and"
        " both parallel writes are kept.",
        REDUCERS_DOC,
        expect={"value.channel": "BinaryOperatorAggregate"},
    ),
)
def test_metadata_before_reducer(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, "collected results", operator.add]

    runs = fold_both_namings(obs, State)
    channel = "/".join(sorted({run["channel"] for run in runs.values()}))
    lost, follows_names, hazard = fold_grade(runs)
    folds = {case: run["items"] for case, run in runs.items()}
    obs.record(
        {"channel": channel, **runs, "lost": lost, "order_follows_names": follows_names},
        label=f"{channel}: lost {len(lost)}" if lost else f"{channel}: both kept",
        detail=f"channel {channel}; no error; items {folds}" + (f"; lost {lost}" if lost else ""),
        hazard=hazard,
    )


@probe(
    "langgraph/reducers/wrong-arity",
    title="A reducer with a third, defaulted parameter: (a, b, c=None)",
    claim=Claim(
        "A reducer is a function of two arguments (current value, update); a reducer whose signature"
        " counts three positional parameters is refused when the graph is built.",
        REDUCERS_DOC,
        expect={"outcome": "raises:ValueError"},
    ),
)
def test_wrong_arity(obs: Observer) -> None:
    calls: list[int] = []

    def concat(a: list, b: list, c=None) -> list:  # type: ignore[no-untyped-def]  # `c` as it was: the ValueError quotes this signature
        calls.append(1)
        return a + b

    steps: dict[str, int] = {}

    def writer(name: str, item: str) -> Callable[..., dict]:
        def node(state: Any, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"items": [item]}

        return node

    with obs.framework(value=lambda: {"reducer_calls": len(calls), "writer_steps": steps}):

        class State(TypedDict):
            items: Annotated[list, concat]

        builder = StateGraph(State)
        builder.add_node("a", writer("a", "A"))
        builder.add_node("b", writer("b", "B"))
        builder.add_edge(START, "a")
        builder.add_edge(START, "b")
        graph = builder.compile()
        final = graph.invoke({"items": []})
    obs.record(
        {"final": final, "reducer_calls": len(calls), "writer_steps": steps},
        label=f"accepted: {final['items']}",
        detail=f"the 3-parameter reducer was accepted and called {len(calls)} times: {final['items']}",
        hazard="safe" if sorted(final["items"]) == ["A", "B"] else "silent",
    )


@probe(
    "langgraph/reducers/builtin-max",
    title="Annotated[float, max]: a builtin as the reducer, two parallel writers",
    claim=Claim(
        "Any two-argument callable can be a reducer; `max` keeps the largest parallel write.",
        REDUCERS_DOC,
        expect={"outcome": "ok"},
    ),
)
def test_builtin_max(obs: Observer) -> None:
    scores = {"A": 0.9, "B": 0.4}  # under both namings, so the largest write is folded first in one and last in the other
    runs: dict[str, dict] = {}
    for case, naming in NAMINGS.items():
        steps: dict[str, int] = {}

        def writer(name: str, score: float) -> Callable[..., dict]:
            def node(state: Any, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"score": score}

            return node

        with obs.framework(value=lambda: {**runs, "raised in": case, "writer_steps": steps}):

            class State(TypedDict):
                score: Annotated[float, max]

            builder = StateGraph(State)
            for name, role in naming.items():
                builder.add_node(name, writer(name, scores[role]))
                builder.add_edge(START, name)
            final = builder.compile().invoke({"score": 0.0})
        obs.require_same_step(steps, expected=2, what="writers")
        runs[case] = {"final": final, "writer_steps": steps}
    lost = [f"{case} | max 0.9" for case, run in runs.items() if run["final"]["score"] != 0.9]
    finals = {case: run["final"]["score"] for case, run in runs.items()}
    obs.record(
        {**runs, "lost": lost},
        label="max kept" if not lost else f"max lost in {len(lost)} of 2 namings",
        detail=f"no error; final score {finals}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "langgraph/reducers/dict-or",
    title="Annotated[dict, operator.or_]: two parallel writers with one colliding key",
    claim=Claim(
        "operator.or_ merges dicts; on a colliding key the update folded last wins, so one parallel write"
        " of that key is lost without an error.",
        REDUCERS_DOC,
        expect={"hazard": "silent"},
    ),
)
def test_dict_or(obs: Observer) -> None:
    class State(TypedDict):
        facts: Annotated[dict, operator.or_]

    steps: dict[str, int] = {}

    def writer(name: str) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"facts": {"status": f"from {name}", name: True}}

        return node

    builder = StateGraph(State)
    builder.add_node("a", writer("a"))
    builder.add_node("b", writer("b"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = graph.invoke({"facts": {}})
    obs.require_same_step(steps, expected=2, what="writers")
    facts = final["facts"]
    made = {name: {"status": f"from {name}", name: True} for name in ("a", "b")}
    lost = [f"{name}:{key}={value}" for name, write in made.items() for key, value in write.items() if facts.get(key) != value]
    obs.record(
        {"final": final, "writer_steps": steps, "lost": lost},
        label=f"collision: {facts.get('status')} wins" if lost else "every entry kept",
        detail=f"no error; lost {lost}; other keys merged, colliding key kept {facts.get('status')!r}"
        if lost
        else f"no error; every entry kept: {facts}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "langgraph/reducers/merge-by-id",
    title="A reducer that merges results by task id and raises on a conflicting id",
    claim=Claim(
        "A custom reducer decides how parallel writes combine; an exception it raises stops the run, so a"
        " merge-by-id reducer can turn a silent collision into a loud one.",
        REDUCERS_DOC,
        expect={"value.same-id-different-content.raises": "ValueError"},
    ),
)
def test_merge_by_id(obs: Observer) -> None:
    def merge_by_id(current: dict, update: dict) -> dict:
        merged = dict(current)
        for task_id, result in update.items():
            if task_id in merged and merged[task_id] != result:
                raise ValueError(f"conflicting results for task {task_id}")
            merged[task_id] = result
        return merged

    class State(TypedDict):
        results: Annotated[dict, merge_by_id]

    def run(update_a: dict, update_b: dict) -> dict:
        builder = StateGraph(State)
        builder.add_node("a", lambda state: {"results": update_a})
        builder.add_node("b", lambda state: {"results": update_b})
        builder.add_edge(START, "a")
        builder.add_edge(START, "b")
        return builder.compile().invoke({"results": {}})["results"]

    cases = {
        "distinct-ids": obs.attempt(lambda: run({"t1": "A"}, {"t2": "B"})),
        "same-id-same-content": obs.attempt(lambda: run({"t1": "X"}, {"t1": "X"})),
        "same-id-different-content": obs.attempt(lambda: run({"t1": "A"}, {"t1": "B"})),
    }
    as_designed = (
        cases["distinct-ids"] == {"returned": {"t1": "A", "t2": "B"}}
        and cases["same-id-same-content"] == {"returned": {"t1": "X"}}
        and "raises" in cases["same-id-different-content"]
    )
    conflict = cases["same-id-different-content"]
    obs.record(
        cases,
        label=f"conflict raises {conflict['raises']}" if "raises" in conflict else "conflict accepted",
        detail="distinct and identical ids merge; a conflicting id stops the run"
        if as_designed
        else f"merge-by-id did not behave as written: {cases}",
        hazard="safe" if as_designed else "silent",
    )


@probe(
    "langgraph/reducers/commutativity",
    title="Does each common reducer give the same result in both fold orders, f(a, b) == f(b, a)?",
    claim=Claim(
        "Parallel writes are folded in a framework-chosen order; only a commutative reducer makes the result"
        " independent of it (operator.add on lists, dict merge and add_messages by id are not).",
        REDUCERS_DOC,
        expect={"hazard": "order-coupled"},
    ),
)
def test_commutativity(obs: Observer) -> None:
    add_messages = obs.need("langgraph.graph.message", "add_messages")
    from langchain_core.messages import AIMessage

    from lg_kit import message_view

    def keep_max(a: float, b: float) -> float:
        return max(a, b)

    samples = {
        "operator.add on lists": (operator.add, ["A"], ["B"], lambda v: v),
        "operator.or_ on sets": (operator.or_, {"A", "shared"}, {"B", "shared"}, lambda v: sorted(v)),
        "operator.or_ on dicts": (operator.or_, {"k": "A"}, {"k": "B"}, lambda v: v),
        "add_messages, same id": (
            add_messages,
            [AIMessage(content="A", id="m1")],
            [AIMessage(content="B", id="m1")],
            lambda v: [message_view(m) for m in v],
        ),
        "add_messages, distinct ids": (
            add_messages,
            [AIMessage(content="A", id="m1")],
            [AIMessage(content="B", id="m2")],
            lambda v: [message_view(m) for m in v],
        ),
        "max wrapper": (keep_max, 0.4, 0.9, lambda v: v),
    }
    results = {}
    for name, (reducer, a, b, view) in samples.items():
        with obs.framework():
            ab, ba = view(reducer(a, b)), view(reducer(b, a))
        results[name] = {"f(a,b)": ab, "f(b,a)": ba, "commutes": ab == ba}
    order_sensitive = [name for name, r in results.items() if not r["commutes"]]
    obs.record(
        results,
        label=f"{len(order_sensitive)} of {len(results)} order-sensitive",
        detail=f"order-sensitive: {', '.join(order_sensitive) or 'none'}",
        hazard="order-coupled" if order_sensitive else "safe",
    )


UPSTREAM_TESTS = "https://github.com/langchain-ai/langgraph/blob/f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f/libs/langgraph/tests"


@probe(
    "langgraph/reducers/overwrite-parallel",
    title="One branch returns Overwrite([...]) while its siblings append to the same operator.add list in one"
    " superstep (Overwrite folded first, then last, then after a JSON round trip); then two Overwrites",
    claim=Claim(
        "Overwrite bypasses the reducer and replaces the value; LangGraph's own test expects the siblings'"
        " appends of the same superstep to be dropped (\"a, c are overwritten by b\"), and two Overwrites in"
        " one superstep to raise InvalidUpdateError.",
        f"{UPSTREAM_TESTS}/test_pregel.py#L9294",
        expect={
            "value.Overwrite folded first.returned.items": ["over"],
            "value.Overwrite folded last.returned.items": ["over"],
            "value.two Overwrites.raises": "InvalidUpdateError",
        },
    ),
    sources=[f"{UPSTREAM_TESTS}/test_pregel.py#L9334", "https://docs.langchain.com/oss/python/langgraph/graph-api#overwrite"],
    modes=("sync", "async"),
)
def test_overwrite_parallel(obs: Observer) -> None:
    Overwrite = obs.need("langgraph.types", "Overwrite")
    import dataclasses
    import json

    class State(TypedDict):
        items: Annotated[list, operator.add]

    def run(writes: dict) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, update: Any) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": update}

            return node

        builder = StateGraph(State)
        for name, update in writes.items():
            builder.add_node(name, lg_modes.node(obs, writer(name, update)))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"items": ["seed"]}))
        if "raises" not in outcome and (len(set(steps.values())) != 1 or len(steps) != len(writes)):
            obs.vacuous(f"the writers did not share one superstep: {steps}")  # a raise is the outcome either way
        return {"writer_steps": steps, **outcome}

    cases = {
        "Overwrite folded first": run({"a_over": Overwrite(["over"]), "b": ["b"], "c": ["c"]}),
        "Overwrite folded last": run({"a": ["a"], "b": ["b"], "z_over": Overwrite(["over"])}),
        "two Overwrites": run({"a_over": Overwrite(["over-a"]), "b_over": Overwrite(["over-b"]), "c": ["c"]}),
        # what an Overwrite becomes after crossing JSON (e.g. a state update sent through the API server)
        "Overwrite after a JSON round trip": run(
            {"a": ["a"], "b": ["b"], "z_over": json.loads(json.dumps(dataclasses.asdict(Overwrite(["over"]))))}
        ),
    }

    def items(result: dict) -> list | None:
        return result["returned"]["items"] if "returned" in result else None

    def said(result: dict) -> str:
        return f"raises {result['raises']}" if "raises" in result else f"returns {items(result)}"

    single = [cases["Overwrite folded first"], cases["Overwrite folded last"]]
    dropped = [sorted(set(appends) - set(items(r) or [])) for r, appends in zip(single, [["b", "c"], ["a", "b"]])]
    raised = [r["raises"] for r in single if "raises" in r]
    two = cases["two Overwrites"]
    if raised:
        first = f"Overwrite + appends: {raised[0]}"
    else:
        first = "appends dropped" if any(dropped) else "appends kept"
    second = "2 Overwrites raise" if "raises" in two else f"2 Overwrites: {items(two)} kept"
    if (any(dropped) and not raised) or "raises" not in two:
        hazard = "silent"
    elif items(single[0]) != items(single[1]):
        hazard = "order-coupled"
    else:
        hazard = "loud" if raised or "raises" in two else "safe"
    label = f"{first}; {second}"

    obs.record(
        cases,
        label=label if len(label) <= 40 else first,
        detail=f"one Overwrite beside two appends leaves {[items(r) for r in single]} (folded first, folded last);"
        f" appends dropped: {dropped}; two Overwrites in one step: {said(two)};"
        f" Overwrite after a JSON round trip: {said(cases['Overwrite after a JSON round trip'])}",
        hazard=hazard,
    )
