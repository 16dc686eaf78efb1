"""Mitigations of the same-key hazards: each probe is its hazard probe's scenario with the fix applied.

Every probe id is the hazard probe's id plus `-mitigated`; reference/mitigations.toml names it.
Each alternative the mitigation offers is a variant; each variant runs the scenario twice, with the
writers' node names swapped (LangGraph folds one superstep's writes in an order it derives from node
names), and the two results must be equal for the variant to be order-independent.
"""

import operator
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
