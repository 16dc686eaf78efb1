"""Streaming a fan-out: can each update be attributed to its writer?"""

import operator
from collections.abc import Callable
from typing import Annotated, TypedDict

from langgraph.graph import START, StateGraph

from fanin.probe import Claim, Observer, probe


@probe(
    "langgraph/stream/updates-attribution",
    title="stream_mode=\"updates\" over two parallel nodes and two Send tasks, finishing in a forced order",
    claim=Claim(
        "stream_mode=\"updates\" streams the updates after each step, one chunk per node keyed by the node"
        " name, so every parallel write can be attributed to its writer.",
        "https://docs.langchain.com/oss/python/langgraph/streaming#stream-graph-state",
        expect={"hazard": "safe"},
    ),
)
def test_updates_attribution(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")
    from liveness import PoolTurns  # the `updates` chunk a gate listens to can lag (FINDINGS.md, "Races and traps")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    turns = PoolTurns(["b", "a"])
    send_turns = PoolTurns(["job2", "job1"])

    def writer(name: str) -> Callable[..., dict]:
        def node(state: State) -> dict:
            turns.arrive(name)
            return {"items": [name]}

        return node

    def worker(payload: dict) -> dict:
        send_turns.arrive(payload["job"])
        return {"items": [payload["job"]]}

    builder = StateGraph(State)
    builder.add_node("a", writer("a"))
    builder.add_node("b", writer("b"))
    builder.add_node("worker", worker)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_conditional_edges("a", lambda state: [Send("worker", {"job": j}) for j in ("job1", "job2")], ["worker"])
    graph = builder.compile()

    chunks: list = []
    with obs.framework(value=lambda: {"chunks": chunks}):
        for chunk in graph.stream({"items": []}, stream_mode="updates"):
            chunks.append(chunk)
            for update in chunk.values():
                for item in (update or {}).get("items", []):
                    turns.done(item)
                    send_turns.done(item)
    vacuous = turns.vacuous or send_turns.vacuous
    if vacuous:
        obs.vacuous(vacuous)
    one_writer_each = all(len(chunk) == 1 for chunk in chunks)
    shape = [f"{name}: {', '.join(update['items'])}" for chunk in chunks for name, update in chunk.items()]
    arrival = [item for chunk in chunks for update in chunk.values() for item in (update or {}).get("items", [])]
    finished = turns.acted + send_turns.acted
    order = "finish order" if arrival == finished else "not finish order"
    obs.record(
        {"chunks": chunks, "finished": finished},
        label=f"one chunk per task, {order}" if one_writer_each else f"chunks merge writers, {order}",
        detail=f"chunks in arrival order: {shape}; Send tasks are keyed by node name only",
        hazard="safe" if one_writer_each else "silent",
    )
