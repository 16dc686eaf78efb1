"""Mitigations of the reducer and message-list hazards: each probe is its hazard probe's scenario with the fix applied.

Every probe id is the hazard probe's id plus `-mitigated`; reference/mitigations.toml names it.
Each alternative the mitigation offers is a variant; each variant runs the scenario twice, with the
writers' node names swapped (LangGraph folds one superstep's writes in an order it derives from node
names), and the two results must be equal for the variant to be order-independent.
"""

import operator
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

from fanin.probe import Claim, Observer, probe
from lg_mitigation import kept_of, NAMINGS
from mitigation import judge, words


REDUCERS_DOC = "https://docs.langchain.com/oss/python/langgraph/graph-api#reducers"


@probe(
    "langgraph/reducers/full-state-not-delta-mitigated",
    title="full-state-not-delta, mitigated: the two parallel writers return only their new item (the delta)",
    claim=Claim(
        "A node returns only its delta to an operator.add key, so nothing it read from the state is appended again.",
        REDUCERS_DOC,
        expect={"value.lost": [], "value.wrong": []},
    ),
)
def test_full_state_not_delta_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    def run(naming: dict[str, str]) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, item: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": [item]}

            return node

        builder = StateGraph(State)
        for name, item in naming.items():
            builder.add_node(name, writer(name, item))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: builder.compile().invoke({"items": ["seed"]}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        items = outcome["returned"]["items"]
        made = {"input": "seed", **naming}
        copies = Counter(items)
        wrong = [f"{n}:{item}" for n, item in made.items() if copies[item] > 1]
        return {"made": [f"{n}:{i}" for n, i in made.items()], "kept": kept_of(made, items), "wrong": wrong, "result": items}

    with obs.framework():
        variants = {"delta only": {case: run(naming) for case, naming in NAMINGS.items()}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/reducers/metadata-after-reducer-mitigated",
    title="metadata-after-reducer, mitigated: Annotated[list, \"doc\", operator.add] (reducer last) and the compiled"
    " channel type asserted, then the two parallel writers",
    claim=Claim(
        "With the reducer as the last Annotated item the key compiles to a BinaryOperatorAggregate channel and"
        " both parallel writes are kept.",
        REDUCERS_DOC,
        expect={"value.lost": [], "value.channel": "BinaryOperatorAggregate"},
    ),
)
def test_metadata_after_reducer_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, "collected results", operator.add]

    channels = set()

    def run(naming: dict[str, str]) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, item: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": [item]}

            return node

        builder = StateGraph(State)
        for name, item in naming.items():
            builder.add_node(name, writer(name, item))
            builder.add_edge(START, name)
        graph = builder.compile()
        channel = type(graph.channels["items"]).__name__
        channels.add(channel)
        if channel != "BinaryOperatorAggregate":  # the assertion the mitigation puts in a test
            return {"raises": "AssertionError", "channel": channel}
        outcome = obs.attempt(lambda: graph.invoke({"items": []}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        items = outcome["returned"]["items"]
        return {"made": [f"{n}:{i}" for n, i in naming.items()], "kept": kept_of(naming, items), "result": items}

    with obs.framework():
        variants = {"reducer last": {case: run(naming) for case, naming in NAMINGS.items()}}
    value, hazard = judge(variants)
    value = {"channel": "/".join(sorted(channels)), **value}
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=f"channel {value['channel']}; {detail}", hazard=hazard)


@probe(
    "langgraph/reducers/wrong-arity-mitigated",
    title="wrong-arity, mitigated: the (a, b, c=None) reducer wrapped in a closure of exactly (current, update)",
    claim=Claim(
        "A reducer of exactly two parameters, with any extra parameter bound by a closure, is accepted and folds"
        " both parallel writes.",
        REDUCERS_DOC,
        expect={"value.lost": []},
    ),
)
def test_wrong_arity_mitigated(obs: Observer) -> None:
    calls: list[int] = []

    def concatenating(c: Any = None) -> Callable[[list, list], list]:
        def concat(a: list, b: list) -> list:
            calls.append(1)
            return a + b

        return concat

    def run(naming: dict[str, str]) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, item: str) -> Callable[..., dict]:
            def node(state: Any, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": [item]}

            return node

        def build_and_invoke() -> Any:
            class State(TypedDict):
                items: Annotated[list, concatenating()]

            builder = StateGraph(State)
            for name, item in naming.items():
                builder.add_node(name, writer(name, item))
                builder.add_edge(START, name)
            return builder.compile().invoke({"items": []})

        outcome = obs.attempt(build_and_invoke)
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        items = outcome["returned"]["items"]
        return {"made": [f"{n}:{i}" for n, i in naming.items()], "kept": kept_of(naming, items), "result": items}

    with obs.framework():
        variants = {"two-parameter closure": {case: run(naming) for case, naming in NAMINGS.items()}}
    value, hazard = judge(variants)
    value = {"reducer_called": bool(calls), **value}
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/reducers/builtin-max-mitigated",
    title="builtin-max, mitigated: max wrapped as def keep_max(a, b), two parallel writers of a score",
    claim=Claim(
        "A two-argument Python function wrapping max is accepted as a reducer and keeps the largest parallel write.",
        REDUCERS_DOC,
        expect={"hazard": "safe"},
    ),
)
def test_builtin_max_mitigated(obs: Observer) -> None:
    # For max a write is kept when the reducer folded it in: the value is then the largest of them all.
    scores = {"A": 0.9, "B": 0.4}

    def run(naming: dict[str, str]) -> dict:
        steps: dict[str, int] = {}
        folded: list[float] = []

        def keep_max(a: float, b: float) -> float:
            folded.append(b)
            return max(a, b)

        def writer(name: str, score: float) -> Callable[..., dict]:
            def node(state: Any, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"score": score}

            return node

        def build_and_invoke() -> Any:
            class State(TypedDict):
                score: Annotated[float, keep_max]

            builder = StateGraph(State)
            for name, role in naming.items():
                builder.add_node(name, writer(name, scores[role]))
                builder.add_edge(START, name)
            return builder.compile().invoke({"score": 0.0})

        outcome = obs.attempt(build_and_invoke)
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        final = outcome["returned"]["score"]
        made = {name: scores[role] for name, role in naming.items()}
        top = final == max([0.0, *made.values()])
        kept = [f"{n}:{s}" for n, s in made.items() if s in folded and top]
        return {"made": [f"{n}:{s}" for n, s in made.items()], "kept": kept, "result": final}

    with obs.framework():
        variants = {"keep_max wrapper": {case: run(naming) for case, naming in NAMINGS.items()}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/reducers/dict-or-mitigated",
    title="dict-or, mitigated: the two writers' dict keys namespaced by branch, or a reducer that raises on a"
    " colliding key instead of operator.or_",
    claim=Claim(
        "Namespaced keys never collide, so operator.or_ keeps every branch's entries; a reducer that raises on a"
        " colliding key turns the silent overwrite into an error.",
        REDUCERS_DOC,
        expect={"value.variants.keys namespaced by branch.hazard": "safe", "value.variants.reducer raising on a colliding key.hazard": "loud"},
    ),
)
def test_dict_or_mitigated(obs: Observer) -> None:
    def merge_or_raise(current: dict, update: dict) -> dict:
        colliding = sorted(set(current) & set(update))
        if colliding:
            raise ValueError(f"parallel writes collide on {colliding}")
        return {**current, **update}

    class Namespaced(TypedDict):
        facts: Annotated[dict, operator.or_]

    class Raising(TypedDict):
        facts: Annotated[dict, merge_or_raise]

    schemes = {
        "keys namespaced by branch": (Namespaced, lambda role: {f"{role}.status": f"from {role}", role: True}),
        "reducer raising on a colliding key": (Raising, lambda role: {"status": f"from {role}", role: True}),
    }

    def run(schema: type, update: Callable[[str], dict], naming: dict[str, str]) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, role: str) -> Callable[..., dict]:
            def node(state: Any, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"facts": update(role)}

            return node

        builder = StateGraph(schema)
        for name, role in naming.items():
            builder.add_node(name, writer(name, role))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: builder.compile().invoke({"facts": {}}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        facts = outcome["returned"]["facts"]
        writes = {f"{n}:{k}={v}": (k, v) for n, role in naming.items() for k, v in update(role).items()}
        kept = [w for w, (k, v) in writes.items() if k in facts and facts[k] == v]
        return {"made": list(writes), "kept": kept, "result": facts}

    with obs.framework():
        variants = {
            scheme: {case: run(*parts, naming) for case, naming in NAMINGS.items()} for scheme, parts in schemes.items()
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/reducers/commutativity-mitigated",
    title="commutativity, mitigated: the hazard probe's pairs of parallel writes through commutative reducers"
    " (sets, counters, merge-by-id keeping conflicts), f(a, b) against f(b, a)",
    claim=Claim(
        "Commutative reducers (sets, counters, merge-by-id with a conflict check) give the same result in either"
        " fold order.",
        REDUCERS_DOC,
        expect={"hazard": "safe"},
    ),
)
def test_commutativity_mitigated(obs: Observer) -> None:
    from langchain_core.messages import AIMessage

    def merge_by_id(current: dict, update: dict) -> dict:
        """Merge by id; an id written with two different values keeps both, as a sorted conflict record."""

        def candidates(value: Any) -> set:
            return set(value["conflict"]) if isinstance(value, dict) and "conflict" in value else {value}

        merged = dict(current)
        for key, value in update.items():
            if key in merged and merged[key] != value:
                merged[key] = {"conflict": sorted(candidates(merged[key]) | candidates(value))}
            else:
                merged[key] = value
        return merged

    def keep_max(a: float, b: float) -> float:
        return max(a, b)

    def by_id(messages: list) -> dict:
        return {m.id: m.content for m in messages}

    def holds(result: Any, written: Any) -> bool:
        """Is every element of one write in the result (a conflict record counts each of its candidates)?"""
        if isinstance(written, Counter):
            return all(result[k] >= n for k, n in written.items())
        if isinstance(written, set):
            return written <= result
        if isinstance(written, dict):
            return all(
                result.get(k) == v or (isinstance(result.get(k), dict) and v in result[k].get("conflict", []))
                for k, v in written.items()
            )
        return result >= written  # max: a write is accounted for when the result is at least it

    samples: dict[str, tuple[Callable[[Any, Any], Any], Any, Any, Callable[[Any], Any]]] = {
        "lists -> Counter addition": (operator.add, Counter(["A"]), Counter(["B"]), lambda v: dict(sorted(v.items()))),
        "operator.or_ on sets": (operator.or_, {"A", "shared"}, {"B", "shared"}, lambda v: sorted(v)),
        "dicts -> merge-by-id": (merge_by_id, {"k": "A"}, {"k": "B"}, lambda v: v),
        "messages, same id -> merge-by-id": (
            merge_by_id,
            by_id([AIMessage(content="A", id="m1")]),
            by_id([AIMessage(content="B", id="m1")]),
            lambda v: v,
        ),
        "messages, distinct ids -> merge-by-id": (
            merge_by_id,
            by_id([AIMessage(content="A", id="m1")]),
            by_id([AIMessage(content="B", id="m2")]),
            lambda v: dict(sorted(v.items())),
        ),
        "max wrapper": (keep_max, 0.4, 0.9, lambda v: v),
    }
    variants: dict[str, dict] = {}
    for name, (reducer, a, b, view) in samples.items():
        with obs.framework():
            ab, ba = reducer(a, b), reducer(b, a)
        runs: dict[str, dict] = {}
        for case, result in (("f(a,b)", ab), ("f(b,a)", ba)):
            kept = [w for w, written in (("a", a), ("b", b)) if holds(result, written)]
            runs[case] = {"made": ["a", "b"], "kept": kept, "result": view(result)}
        variants[name] = runs
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/messages/id-collision-mitigated",
    title="id-collision, mitigated: the two parallel speakers give their messages unique ids (branch name plus task"
    " id); then one node is renamed",
    claim=Claim(
        "add_messages replaces only a message whose id is already present: with a unique id per branch both"
        " parallel messages are kept.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#messagesstate",
        expect={"value.lost": []},
    ),
)
def test_id_collision_mitigated(obs: Observer) -> None:
    add_messages = obs.need("langgraph.graph.message", "add_messages")
    from langchain_core.messages import AIMessage

    class State(TypedDict):
        messages: Annotated[list, add_messages]

    def run(speakers: dict[str, str]) -> dict:
        """`speakers`: node name -> its role; the role is what the message says, so results compare across renames."""
        steps: dict[str, int] = {}

        def speaker(name: str, role: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"messages": [AIMessage(content=f"answer of {role}", id=f"{name}-answer-1")]}

            return node

        builder = StateGraph(State)
        for name, role in speakers.items():
            builder.add_node(name, speaker(name, role))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: builder.compile().invoke({"messages": []}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(speakers))
        contents = [m.content for m in outcome["returned"]["messages"]]
        made = {name: f"answer of {role}" for name, role in speakers.items()}
        return {"made": [f"{n}:{c}" for n, c in made.items()], "kept": kept_of(made, contents), "result": contents}

    with obs.framework():
        variants = {
            "unique id per branch": {
                "alpha + beta": run({"alpha": "first", "beta": "second"}),
                "zeta + beta (alpha renamed)": run({"zeta": "first", "beta": "second"}),
            }
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)
