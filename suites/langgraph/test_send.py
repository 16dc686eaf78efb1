"""Send: dynamic fan-out (map-reduce) and how its tasks' writes fan back in."""

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

import lg_modes
from fanin.probe import Claim, Observer, probe

SEND_DOC = "https://docs.langchain.com/oss/python/langgraph/graph-api#send"


@probe(
    "langgraph/send/order",
    title="Send workers finish in the opposite order to the Send list (forward, reversed, to two node names) and rotated",
    claim=Claim(
        "Send tasks of one superstep are folded in a deterministic order; map-reduce results come back in"
        " the order of the Send list, whatever the finishing order or target node names.",
        SEND_DOC,
        expect={"value.forward.items": ["a", "b", "c"], "value.reversed.items": ["c", "b", "a"]},
    ),
    modes=("sync", "async"),
)
def test_order(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    def run(sends: list[tuple[str, str]], finish: list[str]) -> dict:
        turns = lg_modes.Gate(obs, finish)

        def worker(payload: dict) -> dict:
            return {"items": [payload["x"]]}

        def release(chunk: tuple[str, Any]) -> None:
            mode, data = chunk
            if mode == "updates":
                for update in data.values():
                    for x in (update or {}).get("items", []):
                        turns.finished(x)

        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, lambda state: {"items": []}))
        targets = sorted({node for node, _ in sends})
        for node in targets:
            builder.add_node(node, turns.node(lambda payload: payload["x"], worker))
        builder.add_edge(START, "plan")
        builder.add_conditional_edges("plan", lambda state: [Send(node, {"x": x}) for node, x in sends], targets)
        chunks = lg_modes.stream(
            obs, builder.compile(), {"items": []}, stream_mode=["updates", "values"], on_chunk=release
        )
        final = [data for mode, data in chunks if mode == "values"][-1]
        obs.require_in_flight(turns)
        return {"sent": [x for _, x in sends], "finished": turns.acted, "items": final["items"]}

    with obs.framework():
        runs = {
            "forward": run([("worker", "a"), ("worker", "b"), ("worker", "c")], ["c", "b", "a"]),
            "reversed": run([("worker", "c"), ("worker", "b"), ("worker", "a")], ["a", "b", "c"]),
            "two targets, zeta sent first": run([("zeta", "z1"), ("alpha", "a1")], ["a1", "z1"]),
            # neither the list nor its reverse: the one case that tells finish order from reversed list order
            "rotated": run([("worker", "a"), ("worker", "b"), ("worker", "c")], ["b", "c", "a"]),
        }
    for case, result in runs.items():
        if sorted(result["finished"]) != sorted(result["sent"]):
            obs.vacuous(f"{case}: not every Send task finished under the gate: {result['finished']}")
    # the orders every case agrees with; a case whose finish order is the list's reverse agrees with two
    def orders(r: dict) -> dict[str, list]:
        return {"Send list order": r["sent"], "finish order": r["finished"], "reversed Send list order": r["sent"][::-1]}

    common = [name for name in orders(runs["forward"]) if all(r["items"] == orders(r)[name] for r in runs.values())]
    rule = common[0] if common else "mixed"
    obs.record(
        runs,
        label=f"order: {rule}",
        detail=f"results come back in {rule} in every case" if rule != "mixed" else f"order differs by case: {runs}",
        hazard="nondeterministic" if "finish order" in rule else "order-coupled",
    )


@probe(
    "langgraph/send/pull-before-push",
    title="An edge-triggered node and two Send tasks, in one superstep, append to the same list",
    claim=Claim(
        "Edge-triggered (pull) tasks and Send (push) tasks of one superstep fold in one deterministic order;"
        " the docs say nothing of which comes first, so a list mixing them is ordered by task kind.",
        SEND_DOC,
    ),
    modes=("sync", "async"),
)
def test_pull_before_push(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    steps: dict[str, int] = {}

    def edge_node(state: State, config: RunnableConfig) -> dict:
        steps["zz_edge"] = config["metadata"]["langgraph_step"]
        return {"items": ["zz_edge"]}

    def send_node(payload: dict, config: RunnableConfig) -> dict:
        steps[payload["x"]] = config["metadata"]["langgraph_step"]
        return {"items": [payload["x"]]}

    builder = StateGraph(State)
    builder.add_node("fan", lg_modes.node(obs, lambda state: {"items": []}))
    builder.add_node("zz_edge", lg_modes.node(obs, edge_node))
    builder.add_node("aa_send", lg_modes.node(obs, send_node))
    builder.add_edge(START, "fan")
    builder.add_edge("fan", "zz_edge")
    builder.add_conditional_edges(
        "fan", lambda state: [Send("aa_send", {"x": "aa_send:1"}), Send("aa_send", {"x": "aa_send:2"})], ["aa_send"]
    )
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = lg_modes.invoke(obs, graph, {"items": []})
    obs.require_same_step(steps, expected=3, what="edge and Send tasks")
    items = final["items"]
    if items[0] == "zz_edge":
        rule = "edge task first"
    elif items[-1] == "zz_edge":
        rule = "Send tasks first"
    else:
        rule = "interleaved"
    sent = ["aa_send:1", "aa_send:2"]
    sends = [item for item in items if item in sent]  # the Send tasks' order among themselves
    among = "" if sends == sent else ", Sends reversed" if sends == sent[::-1] else ", Sends reordered"
    obs.record(
        {"final": final, "writer_steps": steps, "sends_folded": sends},
        label=f"order: {rule}{among}",
        detail=f"items {items}: {rule}, although 'aa_send' sorts before 'zz_edge' by name;"
        f" the Send tasks in {'the Send list order' if sends == sent else 'the order ' + ', '.join(sends)}",
        hazard="order-coupled",
    )


@probe(
    "langgraph/send/empty",
    title="A conditional edge returns no Send: does the graph end silently, and with an explicit fallback?",
    claim=Claim(
        "A conditional edge that returns an empty list of Sends schedules nothing: the graph ends there"
        " without running the reduce step, unless the edge routes to it explicitly.",
        SEND_DOC,
        expect={"value.no fallback.ran": ["plan"], "value.fallback to join.ran": ["plan", "join"]},
    ),
    modes=("sync", "async"),
)
def test_empty(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")

    class State(TypedDict):
        jobs: list
        items: Annotated[list, operator.add]

    def run(fallback: bool) -> dict:
        ran: list[str] = []

        def plan(state: State) -> dict:
            ran.append("plan")
            return {"items": []}

        def worker(payload: dict) -> dict:
            ran.append("worker")
            return {"items": [payload["job"]]}

        def join(state: State) -> dict:
            ran.append("join")
            return {"items": ["joined"]}

        def route(state: State) -> list:
            sends = [Send("worker", {"job": job}) for job in state["jobs"]]
            return (sends or ["join"]) if fallback else sends

        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, plan))
        builder.add_node("worker", lg_modes.node(obs, worker))
        builder.add_node("join", lg_modes.node(obs, join))
        builder.add_edge(START, "plan")
        builder.add_conditional_edges("plan", route, ["worker", "join"])
        builder.add_edge("worker", "join")
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"jobs": [], "items": []}))
        return {"ran": ran, **outcome}

    with obs.framework():
        runs = {"no fallback": run(False), "fallback to join": run(True)}
    plain, fallback = runs["no fallback"], runs["fallback to join"]
    silent_end = "raises" not in plain and "join" not in plain["ran"]
    if "raises" in plain:
        label = f"empty Send list raises {plain['raises']}"
    elif silent_end:
        label = "ends silently; fallback runs join" if "join" in fallback["ran"] else "ends silently, fallback too"
    else:
        label = "join runs without fallback"
    obs.record(
        runs,
        label=label,
        detail=f"no Send: nodes run {plain['ran']}; with a fallback to the join: {fallback['ran']}",
        hazard="silent" if silent_end else "loud" if "raises" in plain else "safe",
    )


@probe(
    "langgraph/send/reducer-required",
    title="Two Send workers write one plain key (no reducer)",
    claim=Claim(
        "Send workers run in one superstep, so their writes to a key without a reducer collide like any"
        " parallel writes: InvalidUpdateError.",
        "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE",
        expect={"outcome": "raises:InvalidUpdateError"},
    ),
    modes=("sync", "async"),
)
def test_reducer_required(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")

    class State(TypedDict):
        result: str

    steps: dict[str, int] = {}

    def worker(payload: dict, config: RunnableConfig) -> dict:
        steps[payload["job"]] = config["metadata"]["langgraph_step"]
        return {"result": payload["job"]}

    builder = StateGraph(State)
    builder.add_node("plan", lg_modes.node(obs, lambda state: {}))
    builder.add_node("worker", lg_modes.node(obs, worker))
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", lambda state: [Send("worker", {"job": j}) for j in ("j1", "j2")], ["worker"])
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = lg_modes.invoke(obs, graph, {"result": "init"})
    obs.require_same_step(steps, expected=2, what="Send workers")
    obs.record(
        {"final": final, "writer_steps": steps},
        label=f"last write wins: {final['result']}",
        detail=f"no error; one Send worker's write survives: {final['result']}",
        hazard="silent",
    )
