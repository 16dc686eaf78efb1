"""Mitigations of the subgraph, Command and Send hazards: each probe is its hazard probe's scenario with the fix applied.

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
from lg_mitigation import kept_of
from mitigation import judge, words

CONCURRENT_UPDATE_DOC = "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE"


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
