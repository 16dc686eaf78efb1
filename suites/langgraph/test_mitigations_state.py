"""Mitigations of the state hazards (same key, reducers, messages, subgraphs, Command): each probe is its hazard probe's scenario with the fix applied.

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

import lg_modes
from fanin.probe import Claim, Observer, probe
from lg_mitigation import kept_of, NAMINGS
from mitigation import judge, words

CONCURRENT_UPDATE_DOC = "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE"
# A way to store the two writes: its state schema, the input, the update a writer of a role returns, and the
# writes a final state holds.
Scheme = tuple[type, dict, Callable[[str], dict], Callable[[dict], Any]]











@probe(
    "langgraph/same-key/no-reducer-mitigated",
    title="no-reducer, mitigated: the two writers of `value` with a reducer on it (operator.add; merge-by-id),"
    " or each with its own key",
    claim=Claim(
        "Give every key that parallel nodes write a reducer, or give each branch its own key: then neither"
        " parallel write is lost.",
        CONCURRENT_UPDATE_DOC,
        expect={"value.lost": []},
    ),
    modes=("sync", "async"),
)
def test_no_reducer_mitigated(obs: Observer) -> None:
    def merge_by_id(current: dict, update: dict) -> dict:
        return {**current, **update}

    class WithAdd(TypedDict):
        value: Annotated[list, operator.add]

    class WithMergeById(TypedDict):
        value: Annotated[dict, merge_by_id]

    class OwnKeys(TypedDict):
        value_A: str
        value_B: str

    schemes: dict[str, Scheme] = {
        "operator.add reducer": (WithAdd, {"value": []}, lambda role: {"value": [role]}, lambda f: f["value"]),
        "merge-by-id reducer": (
            WithMergeById,
            {"value": {}},
            lambda role: {"value": {f"task-{role}": role}},
            lambda f: [f["value"][k] for k in f["value"]],
        ),
        "own key per branch": (
            OwnKeys,
            {"value_A": "init", "value_B": "init"},
            lambda role: {f"value_{role}": role},
            lambda f: [f["value_A"], f["value_B"]],
        ),
    }

    def run(
        schema: type, init: dict, update: Callable[[str], dict], items: Callable[[dict], Any], naming: dict[str, str]
    ) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, role: str) -> Callable[..., dict]:
            def node(state: Any, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return update(role)

            return node

        builder = StateGraph(schema)
        for name, role in naming.items():
            builder.add_node(name, lg_modes.node(obs, writer(name, role)))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), init))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        final = outcome["returned"]
        return {"made": [f"{n}:{r}" for n, r in naming.items()], "kept": kept_of(naming, items(final)), "result": final}

    with obs.framework():
        variants = {
            scheme: {case: run(*parts, naming) for case, naming in NAMINGS.items()} for scheme, parts in schemes.items()
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/same-key/same-value-mitigated",
    title="same-value, mitigated: the two writers of one identical value with a reducer on the key, or with one"
    " branch owning it",
    claim=Claim(
        "Declare a reducer, or let only one branch own the key: identical parallel writes are then kept without"
        " relying on their being equal.",
        CONCURRENT_UPDATE_DOC,
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_same_value_mitigated(obs: Observer) -> None:
    class WithAdd(TypedDict):
        value: Annotated[list, operator.add]

    class OneOwner(TypedDict):
        value: str
        value_of_B: str

    schemes: dict[str, Scheme] = {
        # both write "same": the role only decides which branch owns the key
        "operator.add reducer": (WithAdd, {"value": []}, lambda role: {"value": ["same"]}, lambda f: f["value"]),
        "one branch owns the key": (
            OneOwner,
            {"value": "init", "value_of_B": "init"},
            lambda role: {"value": "same"} if role == "A" else {"value_of_B": "same"},
            lambda f: [f["value"], f["value_of_B"]],
        ),
    }

    def run(
        schema: type, init: dict, update: Callable[[str], dict], items: Callable[[dict], Any], naming: dict[str, str]
    ) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, role: str) -> Callable[..., dict]:
            def node(state: Any, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return update(role)

            return node

        builder = StateGraph(schema)
        for name, role in naming.items():
            builder.add_node(name, lg_modes.node(obs, writer(name, role)))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), init))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        final = outcome["returned"]
        made = {name: "same" for name in naming}
        return {"made": [f"{n}:same" for n in naming], "kept": kept_of(made, items(final)), "result": final}

    with obs.framework():
        variants = {
            scheme: {case: run(*parts, naming) for case, naming in NAMINGS.items()} for scheme, parts in schemes.items()
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/same-key/max-concurrency-1-mitigated",
    title="max-concurrency-1, mitigated: the same invoke(max_concurrency=1) with the state schema fixed (a reducer;"
    " per-branch keys)",
    claim=Claim(
        "max_concurrency only throttles; with a reducer or per-branch keys in the state schema both parallel"
        " writes are kept whatever the concurrency limit.",
        CONCURRENT_UPDATE_DOC,
        expect={"value.lost": []},
    ),
    modes=("sync", "async"),
)
def test_max_concurrency_1_mitigated(obs: Observer) -> None:
    class WithAdd(TypedDict):
        value: Annotated[list, operator.add]

    class OwnKeys(TypedDict):
        value_A: str
        value_B: str

    schemes: dict[str, Scheme] = {
        "operator.add reducer": (WithAdd, {"value": []}, lambda role: {"value": [role]}, lambda f: f["value"]),
        "per-branch keys": (
            OwnKeys,
            {"value_A": "init", "value_B": "init"},
            lambda role: {f"value_{role}": role},
            lambda f: [f["value_A"], f["value_B"]],
        ),
    }

    def run(
        schema: type, init: dict, update: Callable[[str], dict], items: Callable[[dict], Any], naming: dict[str, str]
    ) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, role: str) -> Callable[..., dict]:
            def node(state: Any, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return update(role)

            return node

        builder = StateGraph(schema)
        for name, role in naming.items():
            builder.add_node(name, lg_modes.node(obs, writer(name, role)))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), init, {"max_concurrency": 1}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        final = outcome["returned"]
        return {"made": [f"{n}:{r}" for n, r in naming.items()], "kept": kept_of(naming, items(final)), "result": final}

    with obs.framework():
        variants = {
            scheme: {case: run(*parts, naming) for case, naming in NAMINGS.items()} for scheme, parts in schemes.items()
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=f"with max_concurrency=1: {detail}", hazard=hazard)


@probe(
    "langgraph/same-key/nested-dict-mitigated",
    title="nested-dict, mitigated: the two writers of sub-keys of `results` with a merging reducer (operator.or_),"
    " or each with its own key",
    claim=Claim(
        "A merging reducer on a dict key (or one key per branch) keeps both branches' sub-keys.",
        CONCURRENT_UPDATE_DOC,
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_nested_dict_mitigated(obs: Observer) -> None:
    class Merged(TypedDict):
        results: Annotated[dict, operator.or_]

    class OwnKeys(TypedDict):
        results_A: dict
        results_B: dict

    sub_keys = {"A": {"a": 1}, "B": {"b": 2}}  # what each writer role adds, as in the hazard probe
    schemes: dict[str, Scheme] = {
        "operator.or_ reducer": (Merged, {"results": {}}, lambda role: {"results": sub_keys[role]}, lambda f: f["results"]),
        "own key per branch": (
            OwnKeys,
            {"results_A": {}, "results_B": {}},
            lambda role: {f"results_{role}": sub_keys[role]},
            lambda f: {**f["results_A"], **f["results_B"]},
        ),
    }

    def run(
        schema: type, init: dict, update: Callable[[str], dict], merged: Callable[[dict], Any], naming: dict[str, str]
    ) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, role: str) -> Callable[..., dict]:
            def node(state: Any, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return update(role)

            return node

        builder = StateGraph(schema)
        for name, role in naming.items():
            builder.add_node(name, lg_modes.node(obs, writer(name, role)))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), init))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        final = outcome["returned"]
        found = merged(final)
        made = [f"{n}:{k}={v}" for n, role in naming.items() for k, v in sub_keys[role].items()]
        kept = [f"{n}:{k}={v}" for n, role in naming.items() for k, v in sub_keys[role].items() if found.get(k) == v]
        return {"made": made, "kept": kept, "result": final}

    with obs.framework():
        variants = {
            scheme: {case: run(*parts, naming) for case, naming in NAMINGS.items()} for scheme, parts in schemes.items()
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/same-key/full-state-return-mitigated",
    title="full-state-return, mitigated: the retrying node returns only the keys it changed, beside its sibling",
    claim=Claim(
        "A node that returns only the keys it changed does not write its siblings' keys, so parallel siblings"
        " do not collide and every write is kept.",
        "https://github.com/langchain-ai/langgraph/issues/2336",
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_full_state_return_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        attempts: int
        a_result: str
        b_result: str

    # role A is the retrying node, role B its sibling; the second naming swaps which node name is which
    def run(naming: dict[str, str]) -> dict:
        steps: dict[str, int] = {}

        def retrying(name: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"attempts": state["attempts"] + 1, "a_result": "A"}

            return node

        def sibling(name: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"b_result": "B"}

            return node

        builder = StateGraph(State)
        for name, role in naming.items():
            builder.add_node(name, lg_modes.node(obs, retrying(name) if role == "A" else sibling(name)))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"attempts": 0, "a_result": "", "b_result": ""}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        final = outcome["returned"]
        writes = {name: ({"attempts": 1, "a_result": "A"} if role == "A" else {"b_result": "B"}) for name, role in naming.items()}
        made = [f"{n}:{k}={v}" for n, w in writes.items() for k, v in w.items()]
        kept = [f"{n}:{k}={v}" for n, w in writes.items() for k, v in w.items() if final[k] == v]
        return {"made": made, "kept": kept, "result": final}

    with obs.framework():
        variants = {"changed keys only": {case: run(naming) for case, naming in NAMINGS.items()}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


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


SUBGRAPH_DOC = "https://docs.langchain.com/oss/python/langgraph/use-subgraphs"


def schema_keywords() -> tuple[str, str]:
    """StateGraph's keywords for input and output schemas: `input`/`output` before 1.0, `input_schema`/`output_schema` after."""
    import inspect

    parameters = inspect.signature(StateGraph.__init__).parameters
    return ("input_schema", "output_schema") if "output_schema" in parameters else ("input", "output")


@probe(
    "langgraph/subgraph/operator-add-duplication-mitigated",
    title="operator-add-duplication, mitigated: the subgraph returns only its new items (its own output schema), or"
    " is called from a node that returns just its delta",
    claim=Claim(
        "A subgraph whose output holds only the new items (or a wrapper node returning just the delta) adds each"
        " item to the parent's operator.add key once.",
        "https://github.com/langchain-ai/langgraph/issues/4007",
        expect={"hazard": "safe"},
    ),
)
def test_operator_add_duplication_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        list_a: Annotated[list, operator.add]

    class SubState(TypedDict):
        list_a: list  # the parent's items come in here; at the end it holds only the new ones
        new_items: Annotated[list, operator.add]

    class SubOutput(TypedDict):
        list_a: list

    def output_schema_subgraph() -> Any:
        _, output_keyword = schema_keywords()
        sub = StateGraph(SubState, **{output_keyword: SubOutput})
        sub.add_node("sub_node_1", lambda state: {"new_items": ["sub_node_1"]})
        sub.add_node("emit", lambda state: {"list_a": state["new_items"]})
        sub.add_edge(START, "sub_node_1")
        sub.add_edge("sub_node_1", "emit")
        return sub.compile()

    def delta_node() -> Callable[..., dict]:
        sub = StateGraph(State)
        sub.add_node("sub_node_1", lambda state: {"list_a": ["sub_node_1"]})
        sub.add_edge(START, "sub_node_1")
        compiled = sub.compile()

        def call_subgraph(state: State) -> dict:
            result = compiled.invoke(state)
            return {"list_a": result["list_a"][len(state["list_a"]):]}

        return call_subgraph

    def run(subgraph: Any) -> dict:
        builder = StateGraph(State)
        builder.add_node("node_1", lambda state: {"list_a": ["node_1"]})
        builder.add_node("subgraph", subgraph)
        builder.add_node("node_2", lambda state: {"list_a": ["node_2"]})
        builder.add_edge(START, "node_1")
        builder.add_edge("node_1", "subgraph")
        builder.add_edge("subgraph", "node_2")
        outcome = obs.attempt(lambda: builder.compile().invoke({"list_a": ["input"]}))
        if "raises" in outcome:
            return outcome
        items = outcome["returned"]["list_a"]
        made = {"input": "input", "node_1": "node_1", "subgraph": "sub_node_1", "node_2": "node_2"}
        copies = Counter(items)
        wrong = [f"{n}:{i}" for n, i in made.items() if copies[i] > 1]
        return {"made": [f"{n}:{i}" for n, i in made.items()], "kept": kept_of(made, items), "wrong": wrong, "result": items}

    with obs.framework():
        variants = {
            "subgraph output schema with only the new items": {"run": run(output_schema_subgraph())},
            "wrapper node returning the delta": {"run": run(delta_node())},
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/subgraph/shared-keys-mitigated",
    title="shared-keys, mitigated: the two parallel subgraphs with an output schema without the shared keys, or with"
    " reducers on the shared keys",
    claim=Claim(
        "Parallel subgraphs whose output schema leaves out the shared keys (or whose shared keys have reducers) do"
        " not collide, and each keeps its update.",
        "https://github.com/langchain-ai/langgraph/issues/6446",
        expect={"hazard": "safe"},
    ),
    sources=[SUBGRAPH_DOC],
)
def test_shared_keys_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        question: str
        s1: int
        s2: int

    def unchanged(current: str, update: str) -> str:
        if current and update != current:
            raise ValueError(f"parallel subgraphs changed the question: {current!r} -> {update!r}")
        return update

    def keep_max(a: int, b: int) -> int:
        return max(a, b)

    class Reduced(TypedDict):
        question: Annotated[str, unchanged]
        s1: Annotated[int, keep_max]
        s2: Annotated[int, keep_max]

    def output_schema(key: str) -> type:
        return TypedDict("Output", {key: int})  # type: ignore[operator]  # the functional form, a key known at run time

    def subgraph(key: str, schema: type, with_output: bool) -> Any:
        _, output_keyword = schema_keywords()
        extra = {output_keyword: output_schema(key)} if with_output else {}
        sub = StateGraph(schema, **extra)
        sub.add_node("work", lambda state: {key: 1})
        sub.add_edge(START, "work")
        return sub.compile()

    def run(schema: type, with_output: bool, naming: dict[str, str]) -> dict:
        builder = StateGraph(schema)
        for name, key in naming.items():
            builder.add_node(name, subgraph(key, schema, with_output))
            builder.add_edge(START, name)
        outcome = obs.attempt(lambda: builder.compile().invoke({"question": "q", "s1": 0, "s2": 0}))
        if "raises" in outcome:
            return outcome
        final = outcome["returned"]
        made = {f"{name}:{key}=1": key for name, key in naming.items()}
        return {"made": list(made), "kept": [w for w, key in made.items() if final[key] == 1], "result": final}

    namings = {"sub1 writes s1, sub2 writes s2": {"sub1": "s1", "sub2": "s2"}, "sub1 writes s2, sub2 writes s1": {"sub1": "s2", "sub2": "s1"}}
    with obs.framework():
        variants = {
            "output schema without the shared keys": {case: run(State, True, n) for case, n in namings.items()},
            "reducers on the shared keys": {case: run(Reduced, False, n) for case, n in namings.items()},
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/command/static-edge-still-runs-mitigated",
    title="static-edge-still-runs, mitigated: the router returns Command(goto=\"target\") and its add_edge to"
    " `other` is removed",
    claim=Claim(
        "A node that routes with Command(goto) and has no static edges runs only the goto target next, so nothing"
        " collides with the target's writes.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#command",
        expect={"hazard": "safe"},
    ),
)
def test_static_edge_still_runs_mitigated(obs: Observer) -> None:
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
        # mitigation: no builder.add_edge("router", "other") beside the Command
        outcome = obs.attempt(lambda: builder.compile().invoke({"items": [], "status": ""}))
        if "raises" in outcome:
            return outcome
        final = outcome["returned"]
        writes = {"router:items=router": "router" in final["items"]}
        for name in sorted(set(steps) - {"router"}):
            writes[f"{name}:{'status' if plain_key else 'items'}={name}"] = (
                final["status"] == name if plain_key else name in final["items"]
            )
        return {"made": list(writes), "kept": [w for w, ok in writes.items() if ok], "result": {"ran": sorted(steps), **final}}

    with obs.framework():
        variants = {
            "writes to a reducer key": {"run": run(False)},
            "writes to a plain key": {"run": run(True)},
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/send/reducer-required-mitigated",
    title="reducer-required, mitigated: the two Send workers write an Annotated[list, operator.add] key; the Send"
    " list in both orders",
    claim=Claim(
        "A key that Send workers write needs a reducer; with Annotated[list, operator.add] every worker's result"
        " is kept.",
        CONCURRENT_UPDATE_DOC,
        expect={"value.lost": []},
    ),
    modes=("sync", "async"),
)
def test_reducer_required_mitigated(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")

    class State(TypedDict):
        result: Annotated[list, operator.add]

    def run(jobs: list[str]) -> dict:
        steps: dict[str, int] = {}

        def worker(payload: dict, config: RunnableConfig) -> dict:
            steps[payload["job"]] = config["metadata"]["langgraph_step"]
            return {"result": [payload["job"]]}

        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, lambda state: {}))
        builder.add_node("worker", lg_modes.node(obs, worker))
        builder.add_edge(START, "plan")
        builder.add_conditional_edges("plan", lambda state: [Send("worker", {"job": j}) for j in jobs], ["worker"])
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"result": []}))
        if "raises" in outcome:
            return outcome
        if len(set(steps.values())) != 1 or len(steps) != len(jobs):
            obs.vacuous(f"the Send workers did not share one superstep: {steps}")
        result = outcome["returned"]["result"]
        made = {f"worker({j})": j for j in jobs}
        return {"made": [f"{n}:{j}" for n, j in made.items()], "kept": kept_of(made, result), "result": result}

    with obs.framework():
        variants = {"operator.add reducer": {"Send j1, j2": run(["j1", "j2"]), "Send j2, j1": run(["j2", "j1"])}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)
