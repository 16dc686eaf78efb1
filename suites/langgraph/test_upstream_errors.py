"""Failure handling at fan-in as users report it upstream: node error handlers beside a parallel sibling,
and what a sync sibling that outlives a failure keeps."""

import asyncio
import operator
import threading
from typing import Annotated, TypedDict

from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, probe

ERROR_HANDLER_ISSUE = "https://github.com/langchain-ai/langgraph/issues/8277"


@probe(
    "langgraph/errors/error-handler-parallel-sibling",
    title="`boom` has a node error_handler and raises beside a parallel sibling `ok` (ok's write saved first, then"
    " the handler first), and alone as the control; under invoke and stream(updates, custom): does the run raise?",
    claim=Claim(
        "A node's error_handler turns its exception into the handler's update: the handler runs, the run"
        " returns, and the state holds the handler's and the sibling's writes, whether or not the failing node"
        " has a parallel sibling.",
        ERROR_HANDLER_ISSUE,
        expect={
            "value.invoke.sibling-first.run": "returned",
            "value.invoke.failure-first.run": "returned",
            "value.invoke.sibling-first.final": ["handled", "ok"],
            "value.stream-custom.failure-first.run": "returned",
        },
    ),
    sources=[
        ERROR_HANDLER_ISSUE,
        "https://github.com/langchain-ai/langgraph/issues/8608",
        "https://github.com/langchain-ai/langgraph/pull/8611",
    ],
    modes=("sync", "async"),
)
def test_error_handler_parallel_sibling(obs: Observer) -> None:
    NodeError = obs.need("langgraph.errors", "NodeError")
    obs.need_parameter(StateGraph.add_node, "error_handler", "StateGraph.add_node")
    MemorySaver = obs.need("langgraph.checkpoint.memory", "MemorySaver")
    asynchronous = obs.mode == "async"

    class State(TypedDict):
        items: Annotated[list, operator.add]

    def scenario(entry: str, order: str) -> dict:
        """One run: `order` says who acts first; each waits on a signal the framework emits, never a clock."""
        made: list = []  # events are made inside the run (asyncio ones bind to its loop)
        stuck: list[str] = []
        handled: list[str] = []

        def event():
            if not made:
                made.extend([asyncio.Event(), asyncio.Event()] if asynchronous else [threading.Event(), threading.Event()])
            return made

        async def await_event(which: int, who: str) -> None:
            try:
                await asyncio.wait_for(event()[which].wait(), 10)
            except asyncio.TimeoutError:
                stuck.append(f"{who} waited 10 s for a signal that never came")

        def wait_event(which: int, who: str) -> None:
            if not event()[which].wait(10):
                stuck.append(f"{who} waited 10 s for a signal that never came")

        # event 0: the saver holds ok's write; event 1: the handler has run
        class Saver(MemorySaver):
            def put_writes(self, config, writes, task_id, *args, **kwargs):
                super().put_writes(config, writes, task_id, *args, **kwargs)
                if ("items", ["ok"]) in [tuple(write) for write in writes]:
                    event()[0].set()

        def boom_body(state: State) -> dict:
            raise RuntimeError("boom")

        def handler(state: State, error: NodeError) -> dict:  # type: ignore[valid-type]
            handled.append(f"{error.node}:{type(error.error).__name__}")
            event()[1].set()
            return {"items": ["handled"]}

        if asynchronous:

            async def boom(state: State) -> dict:
                if order == "sibling-first":
                    await await_event(0, "boom")
                return boom_body(state)

            async def ok(state: State) -> dict:
                if order == "failure-first":
                    await await_event(1, "ok")
                return {"items": ["ok"]}

        else:

            def boom(state: State) -> dict:
                if order == "sibling-first":
                    wait_event(0, "boom")
                return boom_body(state)

            def ok(state: State) -> dict:
                if order == "failure-first":
                    wait_event(1, "ok")
                return {"items": ["ok"]}

        builder = StateGraph(State)
        builder.add_node("boom", boom, error_handler=handler)
        builder.add_edge(START, "boom")
        if order != "solo":
            builder.add_node("ok", ok)
            builder.add_edge(START, "ok")
        graph = lg_persist.driven(obs, builder.compile(checkpointer=Saver()))
        config = {"configurable": {"thread_id": f"{entry}-{order}"}}
        if entry == "invoke":
            got = obs.attempt(lambda: graph.invoke({"items": []}, config))
        else:
            got = obs.attempt(lambda: graph.stream({"items": []}, config, stream_mode=["updates", "custom"]))
        if stuck:
            obs.vacuous(stuck[0])
        final = graph.get_state(config).values.get("items") or []
        return {"run": got.get("raises", "returned"), "handler_ran": handled, "final": sorted(final)}

    orders = ("solo", "sibling-first", "failure-first")
    with obs.framework():
        seen = {entry: {order: scenario(entry, order) for order in orders} for entry in ("invoke", "stream-custom")}
    runs = {f"{entry}/{order}": run for entry, by_order in seen.items() for order, run in by_order.items()}
    raised = sorted(name for name, run in runs.items() if run["run"] != "returned")
    unhandled = sorted(name for name, run in runs.items() if not run["handler_ran"])
    lost = sorted(
        name for name, run in runs.items() if not ({"handled"} | ({"ok"} if "solo" not in name else set())) <= set(run["final"])
    )
    parallel_raised = [name for name in raised if "solo" not in name]
    solo_raised = [name for name in raised if "solo" in name]
    if unhandled:
        label = f"handler never ran: {', '.join(unhandled)}"
    elif raised:
        label = f"handled, raises {len(parallel_raised)}/4 par {len(solo_raised)}/2 solo"
    else:
        label = "handled: every run returns"
    obs.record(
        seen,
        label=label,
        detail="; ".join(f"{name}: {run['run']}, handler {run['handler_ran']}, state {run['final']}" for name, run in runs.items()),
        # a raise after the handler ran stops the caller's run (loud); a handler's or sibling's write
        # missing from the state without an error is lost (silent)
        hazard="silent" if lost and not raised else "loud" if raised or unhandled else "safe",
    )
