"""A stream consumer that goes away mid-superstep."""

import asyncio
import operator
from typing import Annotated, TypedDict

from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, probe


@probe(
    "langgraph/stream/consumer-disconnect",
    title="The consumer of astream(stream_mode=\"updates\") stops (break, then aclose) after `fast`'s update while"
    " its sibling `slow` is still running; then the thread is resumed",
    claim=Claim(
        "Closing the stream cancels the run: nodes still in flight are cancelled, while the writes of nodes"
        " that finished in that superstep are saved as pending writes, so a resume runs only the unfinished"
        " node. Here the stream is the async one (astream) and the node in flight is async: closing a sync"
        " stream waits for its threads instead.",
        "https://github.com/langchain-ai/langgraph/blob/main/libs/langgraph/tests/test_pregel_async.py",
        expect={"value.fast_write_kept": True, "value.runs_after_resume.fast": 1},
    ),
    sources=["https://docs.langchain.com/oss/python/langgraph/persistence#pending-writes"],
    backends=("memory", "sqlite", "postgres"),
)
async def test_consumer_disconnect(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    hold = asyncio.Event()  # set only for the resume: slow's first run never finishes by itself
    slow_in_flight = asyncio.Event()
    slow_log: list[str] = []
    never_in_flight: list[str] = []
    runs = {"fast": 0, "slow": 0, "join": 0}

    async def fast(state: State) -> dict:
        runs["fast"] += 1
        if runs["fast"] == 1:
            try:
                await asyncio.wait_for(slow_in_flight.wait(), 10)
            except asyncio.TimeoutError:
                never_in_flight.append("slow was never in flight while fast waited")
        return {"items": ["fast"]}

    async def slow(state: State) -> dict:
        runs["slow"] += 1
        if runs["slow"] == 1:
            slow_log.append("started")
            slow_in_flight.set()
            try:
                await asyncio.wait_for(hold.wait(), 5)  # deadlock breaker only
            except asyncio.CancelledError:
                slow_log.append("cancelled")
                raise
            except asyncio.TimeoutError:
                slow_log.append("never cancelled (released by the probe after 5 s)")
        return {"items": ["slow"]}

    async def join(state: State) -> dict:
        runs["join"] += 1
        return {"items": ["join"]}

    builder = StateGraph(State)
    builder.add_node("fast", fast)
    builder.add_node("slow", slow)
    builder.add_node("join", join)
    builder.add_edge(START, "fast")
    builder.add_edge(START, "slow")
    builder.add_edge(["fast", "slow"], "join")
    config = {"configurable": {"thread_id": "disconnect"}}

    async with lg_persist.acheckpointer(obs) as saver:
        graph = builder.compile(checkpointer=saver)
        received: list = []
        with obs.framework(value=lambda: {"received": received, "slow_log": slow_log}):
            stream = graph.astream({"items": []}, config, stream_mode="updates")
            async for chunk in stream:
                received.append(sorted(chunk))
                if "fast" in chunk:
                    break
            await stream.aclose()
        if never_in_flight:
            obs.vacuous(never_in_flight[0])
        log_at_close = list(slow_log)
        snapshot = await graph.aget_state(config)
        pending = lg_persist.pending_of(await saver.aget_tuple(config), snapshot)
        at_close = {
            "values": snapshot.values.get("items"),
            "next": sorted(snapshot.next),
            "pending": pending,
        }
        hold.set()
        with obs.framework(value=lambda: {"at_close": at_close, "runs": runs}):
            resumed = await graph.ainvoke(None, config)
    final = sorted((resumed or {}).get("items") or [])
    kept = "fast" in (at_close["values"] or []) or any(row[:2] == ["fast", "items"] for row in pending)
    complete = final == ["fast", "join", "slow"]
    if not kept:
        label = "finished sibling's write lost"
    elif runs["fast"] > 1:
        label = f"kept, but fast re-runs (×{runs['fast']})"
    elif not complete:
        label = f"resume ends with {final}"
    else:
        label = "kept pending; resume runs slow only"
    obs.record(
        {
            "received": received,
            "slow_log": log_at_close,
            "at_close": at_close,
            "fast_write_kept": kept,
            "lost": [] if kept else ["fast"],
            "runs_after_resume": runs,
            "final": final,
        },
        label=label,
        detail=f"updates received {received}; slow {log_at_close}; at close values {at_close['values']}, next"
        f" {at_close['next']}, pending {pending}; after resume runs {runs}, final {final}",
        hazard="safe" if kept and runs["fast"] == 1 and complete else "silent",
    )
