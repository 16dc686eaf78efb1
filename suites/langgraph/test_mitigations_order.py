"""Mitigations of the fold-order hazards: the write order read from a reducer list.

Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. The
mitigation is the one the stable-sorting how-to shows: each write carries a sort key the graph's author
controls (the branch's intended position, a task id, a job index), and the node that reads the list
sorts by it. Each probe runs its hazard probe's scenario in several fold orders (node names swapped or
renamed, other finishing orders, another graph shape, the Send list reordered); the sorted result must
be the same in every one.
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

STABLE_SORTING = "https://langchain-ai.github.io/langgraph/how-tos/branching/#stable-sorting"
REDUCERS_DOC = "https://docs.langchain.com/oss/python/langgraph/graph-api#reducers"
SEND_DOC = "https://docs.langchain.com/oss/python/langgraph/graph-api#send"


def by_key(entries: list) -> list:
    """What the reading node does: sort the folded entries by the key stored with each, keep the items."""
    return [entry["item"] for entry in sorted(entries, key=lambda entry: entry["key"])]


@probe(
    "langgraph/reducers/add-mitigated",
    title="add, mitigated: the two operator.add writers store a task id with their item; the reading node sorts by it",
    claim=Claim(
        "Treat the folded list as unordered: sorted by a key the graph stores with each item, the result no longer"
        " depends on the fold order.",
        REDUCERS_DOC,
        expect={"hazard": "safe"},
    ),
)
def test_add_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]
        ordered: list

    task_ids = {"A": "task-1", "B": "task-2"}

    def run(naming: dict[str, str]) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, item: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": [{"key": task_ids[item], "item": item}]}

            return node

        builder = StateGraph(State)
        for name, item in naming.items():
            builder.add_node(name, writer(name, item))
            builder.add_edge(START, name)
        builder.add_node("read", lambda state: {"ordered": by_key(state["items"])})
        builder.add_edge(list(naming), "read")
        outcome = obs.attempt(lambda: builder.compile().invoke({"items": [], "ordered": []}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        ordered = outcome["returned"]["ordered"]
        return {"made": [f"{n}:{i}" for n, i in naming.items()], "kept": kept_of(naming, ordered), "result": ordered}

    with obs.framework():
        variants = {"sorted by task id": {case: run(naming) for case, naming in NAMINGS.items()}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/reducers/metadata-before-reducer-mitigated",
    title="metadata-before-reducer, mitigated: Annotated[list, \"doc\", operator.add] (reducer last), read as"
    " unordered: sorted by a stored key",
    claim=Claim(
        "With the reducer last the key keeps both parallel writes; sorted by a stored key before use, their order"
        " no longer depends on the fold.",
        REDUCERS_DOC,
        expect={"hazard": "safe", "value.channel": "BinaryOperatorAggregate"},
    ),
)
def test_metadata_before_reducer_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, "collected results", operator.add]
        ordered: list

    task_ids = {"A": "task-1", "B": "task-2"}
    channels = set()

    def run(naming: dict[str, str]) -> dict:
        steps: dict[str, int] = {}

        def writer(name: str, item: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": [{"key": task_ids[item], "item": item}]}

            return node

        builder = StateGraph(State)
        for name, item in naming.items():
            builder.add_node(name, writer(name, item))
            builder.add_edge(START, name)
        builder.add_node("read", lambda state: {"ordered": by_key(state["items"])})
        builder.add_edge(list(naming), "read")
        graph = builder.compile()
        channels.add(type(graph.channels["items"]).__name__)
        outcome = obs.attempt(lambda: graph.invoke({"items": [], "ordered": []}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(naming))
        ordered = outcome["returned"]["ordered"]
        return {"made": [f"{n}:{i}" for n, i in naming.items()], "kept": kept_of(naming, ordered), "result": ordered}

    with obs.framework():
        variants = {"reducer last, sorted by task id": {case: run(naming) for case, naming in NAMINGS.items()}}
    value, hazard = judge(variants)
    value = {"channel": "/".join(sorted(channels)), **value}
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=f"channel {value['channel']}; {detail}", hazard=hazard)


@probe(
    "langgraph/fold-order/node-names-mitigated",
    title="node-names, mitigated: the retrievers of each name set store their intended position; the join sorts by it",
    claim=Claim(
        "A sort key stored in each update (the branch's intended position), sorted in the join, gives the intended"
        " order whatever the nodes are called.",
        STABLE_SORTING,
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_node_names_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]
        ordered: list

    name_sets = {
        "add order reversed": ["retriever_c", "retriever_b", "retriever_a"],
        "verify_a / analyze_b": ["verify_a", "analyze_b", "rank_c"],
        "KBSearch / search_docs": ["search_docs", "KBSearch", "Web"],
        "2_retriever / a_retriever": ["a_retriever", "B_retriever", "2_retriever"],
    }

    def run(names: list[str]) -> dict:
        steps: dict[str, int] = {}

        def retriever(name: str, position: int) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": [{"key": position, "item": name}]}

            return node

        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, lambda state: {"items": []}))
        builder.add_edge(START, "plan")
        for position, name in enumerate(names):
            builder.add_node(name, lg_modes.node(obs, retriever(name, position)))
            builder.add_edge("plan", name)
        builder.add_node("join", lg_modes.node(obs, lambda state: {"ordered": by_key(state["items"])}))
        builder.add_edge(names, "join")
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"items": [], "ordered": []}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(names))
        ordered = outcome["returned"]["ordered"]
        # compared across name sets: the intended position of each item, in the order the join produced
        positions = [names.index(name) if name in names else name for name in ordered]
        return {"made": list(names), "kept": [name for name in names if name in ordered], "result": positions}

    with obs.framework():
        variants = {"sorted by intended position": {case: run(names) for case, names in name_sets.items()}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/fold-order/rename-mitigated",
    title="rename, mitigated: the three retrievers store their intended position; the join sorts by it; then"
    " search_docs is renamed search_papers",
    claim=Claim(
        "Sorted on a key stored with each item, the result does not change when a node is renamed.",
        STABLE_SORTING,
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_rename_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]
        ordered: list

    def run(docs_node: str) -> dict:
        steps: dict[str, int] = {}

        def retriever(name: str, position: int, item: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": [{"key": position, "item": item}]}

            return node

        writers = [(docs_node, "docs"), ("search_news", "news"), ("KBSearch", "kb")]
        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, lambda state: {"items": []}))
        builder.add_edge(START, "plan")
        for position, (name, item) in enumerate(writers):
            builder.add_node(name, lg_modes.node(obs, retriever(name, position, item)))
            builder.add_edge("plan", name)
        builder.add_node("join", lg_modes.node(obs, lambda state: {"ordered": by_key(state["items"])}))
        builder.add_edge([name for name, _ in writers], "join")
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"items": [], "ordered": []}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=len(writers))
        ordered = outcome["returned"]["ordered"]
        made = dict(writers)
        return {"made": [f"{n}:{i}" for n, i in made.items()], "kept": kept_of(made, ordered), "result": ordered}

    with obs.framework():
        variants = {"sorted by intended position": {"search_docs": run("search_docs"), "search_papers": run("search_papers")}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/fold-order/completion-time-mitigated",
    title="completion-time, mitigated: the three gated writers store their intended position, the join sorts by it;"
    " two finishing orders, then the node names reversed",
    claim=Claim(
        "When order carries meaning, sort by a key stored with each item: the result is then the same whatever the"
        " finishing order or the fold order.",
        STABLE_SORTING,
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_completion_time_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]
        ordered: list

    positions = {"a": 0, "b": 1, "c": 2}

    def run(order: list[str], naming: dict[str, str]) -> dict:
        """`naming`: node name -> the item (and so the intended position) it writes; `order`: node names."""
        turns = lg_modes.Gate(obs, order)

        def writer(item: str) -> Callable[..., dict]:
            def node(state: State) -> dict:
                return {"items": [{"key": positions[item], "item": item}]}

            return node

        def release(chunk: tuple[str, Any]) -> None:
            mode, data = chunk
            if mode == "updates":
                for node in data:
                    turns.finished(node)

        builder = StateGraph(State)
        for name, item in naming.items():
            builder.add_node(name, turns.node(name, writer(item)))
            builder.add_edge(START, name)
        builder.add_node("join", lg_modes.node(obs, lambda state: {"ordered": by_key(state["items"])}))
        builder.add_edge(list(naming), "join")
        outcome = obs.attempt(
            lambda: lg_modes.stream(
                obs, builder.compile(), {"items": [], "ordered": []}, stream_mode=["updates", "values"], on_chunk=release
            )
        )
        if "raises" in outcome:
            return outcome
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        if turns.acted != order:
            obs.vacuous(f"the nodes finished as {turns.acted}, not {order}")
        ordered = [data for mode, data in outcome["returned"] if mode == "values"][-1]["ordered"]
        return {"made": [f"{n}:{i}" for n, i in naming.items()], "kept": kept_of(naming, ordered), "result": ordered}

    same = {"a": "a", "b": "b", "c": "c"}
    reversed_names = {"a": "c", "b": "b", "c": "a"}
    with obs.framework():
        variants = {
            "sorted by intended position": {
                "finish c, b, a": run(["c", "b", "a"], same),
                "finish a, b, c": run(["a", "b", "c"], same),
                "finish c, b, a, names reversed": run(["c", "b", "a"], reversed_names),
            }
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/fold-order/across-supersteps-mitigated",
    title="across-supersteps, mitigated: the writers at different depths store a task id; the reading node sorts by"
    " it; then the other branch is the deeper one",
    claim=Claim(
        "Items that carry a sort key, sorted before use, come out in the same order whichever writer runs in a later"
        " superstep.",
        STABLE_SORTING,
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_across_supersteps_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]
        ordered: list

    task_ids = {"z": "task-1", "a": "task-2"}

    def run(deep: str) -> dict:
        """Writers `z` and `a`; the one named `deep` is reached through a hop (one superstep later)."""
        steps: dict[str, int] = {}

        def writer(name: str, items: list) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"items": [{"key": task_ids[item], "item": item} for item in items]}

            return node

        builder = StateGraph(State)
        names = {item: f"{item}_deep" if item == deep else f"{item}_shallow" for item in ("z", "a")}
        for item, name in names.items():
            builder.add_node(name, lg_modes.node(obs, writer(name, [item])))
            if item == deep:
                builder.add_node(f"{item}_hop", lg_modes.node(obs, writer(f"{item}_hop", [])))
                builder.add_edge(START, f"{item}_hop")
                builder.add_edge(f"{item}_hop", name)
            else:
                builder.add_edge(START, name)
        builder.add_node("read", lg_modes.node(obs, lambda state: {"ordered": by_key(state["items"])}))
        builder.add_edge(list(names.values()), "read")
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"items": [], "ordered": []}))
        if "raises" in outcome:
            return outcome
        if steps.get(names["z"]) == steps.get(names["a"]):
            obs.vacuous(f"the writers ran in the same superstep: {steps}")
        ordered = outcome["returned"]["ordered"]
        made = {name: item for item, name in names.items()}
        return {"made": [f"{n}:{i}" for n, i in made.items()], "kept": kept_of(made, ordered), "result": ordered}

    with obs.framework():
        variants = {"sorted by task id": {"a's writer deeper": run("a"), "z's writer deeper": run("z")}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/send/order-mitigated",
    title="order, mitigated: each Send payload carries the job's index, the join sorts results by it; the Send list"
    " refactored (reversed, other target first) and finishing orders forced",
    claim=Claim(
        "Results sorted by the job index carried in the Send payload come back in job order whatever the Send list"
        " order, the finishing order or the target node names.",
        SEND_DOC,
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_order_mitigated(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")

    class State(TypedDict):
        items: Annotated[list, operator.add]
        ordered: list

    def run(sends: list[tuple[str, str, int]], finish: list[str]) -> dict:
        """`sends`: (target node, job, the job's index); `finish`: the jobs in the order their workers finish."""
        turns = lg_modes.Gate(obs, finish)

        def worker(payload: dict) -> dict:
            return {"items": [{"key": payload["index"], "item": payload["x"]}]}

        def release(chunk: tuple[str, Any]) -> None:
            mode, data = chunk
            if mode == "updates":
                for update in data.values():
                    for entry in (update or {}).get("items", []):
                        turns.finished(entry["item"])

        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, lambda state: {"items": []}))
        targets = sorted({node for node, _, _ in sends})
        for node in targets:
            builder.add_node(node, turns.node(lambda payload: payload["x"], worker))
            builder.add_edge(node, "join")
        builder.add_node("join", lg_modes.node(obs, lambda state: {"ordered": by_key(state["items"])}))
        builder.add_edge(START, "plan")
        builder.add_conditional_edges(
            "plan", lambda state: [Send(node, {"x": x, "index": i}) for node, x, i in sends], targets
        )
        outcome = obs.attempt(
            lambda: lg_modes.stream(
                obs, builder.compile(), {"items": [], "ordered": []}, stream_mode=["updates", "values"], on_chunk=release
            )
        )
        if "raises" in outcome:
            return outcome
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        if sorted(turns.acted) != sorted(x for _, x, _ in sends):
            obs.vacuous(f"not every Send task finished under the gate: {turns.acted}")
        ordered = [data for mode, data in outcome["returned"] if mode == "values"][-1]["ordered"]
        made = {f"{node}({x})": x for node, x, _ in sends}
        return {"made": [f"{n}:{x}" for n, x in made.items()], "kept": kept_of(made, ordered), "result": ordered}

    jobs = [("worker", "a", 0), ("worker", "b", 1), ("worker", "c", 2)]
    two = [("zeta", "z1", 0), ("alpha", "a1", 1)]
    with obs.framework():
        variants = {
            "three jobs, one target": {
                "forward, finish c, b, a": run(jobs, ["c", "b", "a"]),
                "Send list reversed, finish a, b, c": run(jobs[::-1], ["a", "b", "c"]),
            },
            "two jobs, two targets": {
                "zeta sent first, finish a1, z1": run(two, ["a1", "z1"]),
                "alpha sent first, finish z1, a1": run(two[::-1], ["z1", "a1"]),
            },
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/send/pull-before-push-mitigated",
    title="pull-before-push, mitigated: the edge-triggered writer and the two Send tasks store a sort key, the reading"
    " node sorts by it; then the edge writer refactored into a Send",
    claim=Claim(
        "Sorted by a stored key in the reading node, a list written by edge-triggered and Send tasks no longer"
        " depends on which kind of task is folded first.",
        SEND_DOC,
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_pull_before_push_mitigated(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")

    class State(TypedDict):
        items: Annotated[list, operator.add]
        ordered: list

    keys = {"aa_send:1": 1, "aa_send:2": 2, "zz_edge": 3}  # the intended position of each item

    def run(edge_writer: bool) -> dict:
        steps: dict[str, int] = {}

        def edge_node(state: State, config: RunnableConfig) -> dict:
            steps["zz_edge"] = config["metadata"]["langgraph_step"]
            return {"items": [{"key": keys["zz_edge"], "item": "zz_edge"}]}

        def send_node(payload: dict, config: RunnableConfig) -> dict:
            steps[payload["x"]] = config["metadata"]["langgraph_step"]
            return {"items": [{"key": keys[payload["x"]], "item": payload["x"]}]}

        sent = ["aa_send:1", "aa_send:2"] if edge_writer else ["zz_edge", "aa_send:1", "aa_send:2"]
        builder = StateGraph(State)
        builder.add_node("fan", lg_modes.node(obs, lambda state: {"items": []}))
        builder.add_node("aa_send", lg_modes.node(obs, send_node))
        builder.add_node("read", lg_modes.node(obs, lambda state: {"ordered": by_key(state["items"])}))
        builder.add_edge(START, "fan")
        builder.add_conditional_edges("fan", lambda state: [Send("aa_send", {"x": x}) for x in sent], ["aa_send"])
        builder.add_edge("aa_send", "read")
        if edge_writer:
            builder.add_node("zz_edge", lg_modes.node(obs, edge_node))
            builder.add_edge("fan", "zz_edge")
            builder.add_edge("zz_edge", "read")
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"items": [], "ordered": []}))
        if "raises" in outcome:
            return outcome
        obs.require_same_step(steps, expected=3)
        ordered = outcome["returned"]["ordered"]
        made = {"zz_edge": "zz_edge"} if edge_writer else {}
        made.update({f"aa_send({x})": x for x in sent})
        return {"made": [f"{n}:{x}" for n, x in made.items()], "kept": kept_of(made, ordered), "result": ordered}

    with obs.framework():
        variants = {
            "sorted by stored key": {
                "edge task + 2 Sends": run(True),
                "3 Sends (edge writer refactored)": run(False),
            }
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)
