"""Failure handling at fan-in as users report it upstream: node error handlers beside a parallel sibling,
and what a sync sibling that outlives a failure keeps."""

import asyncio
import logging
import operator
import sys
import threading
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, probe

ERROR_HANDLER_ISSUE = "https://github.com/langchain-ai/langgraph/issues/8277"


class HandlerState(TypedDict):
    items: Annotated[list, operator.add]


# error-handler-parallel-sibling's stream modes (the key is the run's name in the value): the reported one
# (updates and custom), then every other mode alone or with custom, to see which ones the lone node raises under
STREAMS: dict[str, Any] = {
    "stream-custom": ["updates", "custom"],
    "stream:custom": "custom",
    "stream:values,custom": ["values", "custom"],
    "stream:updates": "updates",
    "stream:values": "values",
}


@probe(
    "langgraph/errors/error-handler-parallel-sibling",
    title="`boom` has a node error_handler and raises beside a parallel sibling `ok` (ok's write saved first, then"
    " the handler first), and alone as the control; under invoke and stream(updates, custom), and alone under"
    " other stream modes: does the run raise, and what does its checkpoint have left to run?",
    claim=Claim(
        "A node's error_handler turns its exception into the handler's update: the handler runs, the run"
        " returns, and the state holds the handler's and the sibling's writes, whether or not the failing node"
        " has a parallel sibling.",
        ERROR_HANDLER_ISSUE,
        expect={
            "value.invoke.sibling-first.run": "returned",
            "value.invoke.failure-first.run": "returned",
            "value.invoke.solo.run": "returned",
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
    obs.need("langgraph.errors", "NodeError")
    obs.need_parameter(StateGraph.add_node, "error_handler", "StateGraph.add_node")
    orders = ("solo", "sibling-first", "failure-first")
    with obs.framework():
        seen = {
            entry: {order: _error_handler_run(obs, entry, order) for order in orders}
            for entry in ("invoke", "stream-custom")
        }
        # the lone node under every other stream mode: which ones raise, and is the raised run's checkpoint complete?
        solo = {entry: _error_handler_run(obs, entry, "solo") for entry in STREAMS if entry != "stream-custom"}
    runs = {f"{entry}/{order}": run for entry, by_order in seen.items() for order, run in by_order.items()}
    raised = sorted(name for name, run in runs.items() if run["run"] != "returned")
    unhandled = sorted(name for name, run in runs.items() if not run["handler_ran"])
    lost = sorted(
        name
        for name, run in runs.items()
        if not ({"handled"} | ({"ok"} if "solo" not in name else set())) <= set(run["final"])
    )
    parallel_raised = [name for name in raised if "solo" not in name]
    solo_raised_in = sorted(entry for entry, run in solo.items() if run["run"] != "returned")
    # the lone node's runs: invoke, stream(updates, custom) and every other stream mode, all counted
    solo_raised = [name for name in raised if "solo" in name] + solo_raised_in
    if unhandled:
        label = f"handler never ran: {', '.join(unhandled)}"
    elif raised:
        label = f"handled, raises {len(parallel_raised)}/4 par {len(solo_raised)}/{2 + len(solo)} solo"
    else:
        label = "handled: every run returns"
    left = sorted({str(r["next"]) for r in [*runs.values(), *solo.values()] if r["run"] != "returned"})
    left_said = "nothing was raised" if not left else "none: marked complete" if left == ["[]"] else ", ".join(left)
    obs.record(
        {**seen, "solo_by_stream_mode": solo},
        label=label,
        detail="; ".join(
            f"{name}: {run['run'] if run['run'] == 'returned' else 'raises ' + run['run']['raises']},"
            f" handler {run['handler_ran']}, state {run['final']}"
            for name, run in runs.items()
        )
        + f"; alone, raises under {solo_raised_in or 'no other stream mode'}; what the checkpoint has left to"
        + f" run after a raise: {left_said}",
        # a raise after the handler ran stops the caller's run (loud); a handler's or sibling's write
        # missing from the state without an error is lost (silent)
        hazard="silent" if lost and not raised else "loud" if raised or unhandled else "safe",
    )


def _error_handler_run(obs: Observer, entry: str, order: str) -> dict:
    """One run of error-handler-parallel-sibling: `entry` is invoke or a stream mode (STREAMS), `order` says who
    acts first; each waits on a signal the framework emits, never a clock. `next` is the checkpoint's own
    account of what is left to run after the run (empty: marked complete)."""
    NodeError: Any = obs.need("langgraph.errors", "NodeError")
    MemorySaver: Any = obs.need("langgraph.checkpoint.memory", "MemorySaver")
    asynchronous = obs.mode == "async"
    made: list = []  # events are made inside the run (asyncio ones bind to its loop)
    stuck: list[str] = []
    handled: list[str] = []

    def event() -> list:
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
        def put_writes(self, config: Any, writes: Any, task_id: str, *args: Any, **kwargs: Any) -> None:
            super().put_writes(config, writes, task_id, *args, **kwargs)
            if ("items", ["ok"]) in [tuple(write) for write in writes]:
                event()[0].set()

    def boom_body(state: HandlerState) -> dict:
        raise RuntimeError("boom")

    def handler(state: HandlerState, error: NodeError) -> dict:
        handled.append(f"{error.node}:{type(error.error).__name__}")
        event()[1].set()
        return {"items": ["handled"]}

    if asynchronous:

        async def boom(state: HandlerState) -> dict:
            if order == "sibling-first":
                await await_event(0, "boom")
            return boom_body(state)

        async def ok(state: HandlerState) -> dict:
            if order == "failure-first":
                await await_event(1, "ok")
            return {"items": ["ok"]}

    else:

        def boom(state: HandlerState) -> dict:  # type: ignore[misc]  # the sync twin of the async node above
            if order == "sibling-first":
                wait_event(0, "boom")
            return boom_body(state)

        def ok(state: HandlerState) -> dict:  # type: ignore[misc]  # the sync twin of the async node above
            if order == "failure-first":
                wait_event(1, "ok")
            return {"items": ["ok"]}

    builder = StateGraph(HandlerState)
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
        got = obs.attempt(lambda: graph.stream({"items": []}, config, stream_mode=STREAMS[entry]))
    if stuck:
        obs.vacuous(stuck[0])
    snapshot = graph.get_state(config)
    final = snapshot.values.get("items") or []
    return {
        "run": got if "raises" in got else "returned",
        "handler_ran": handled,
        "final": sorted(final),
        "next": sorted(snapshot.next),
    }


MAX_RUNS = 1000
SIBLINGS = 7  # siblings released together in each repeated run: eight tasks end together
SWITCH_INTERVAL = 1e-6  # seconds between the interpreter's thread switches in the repeated runs (default 5 ms)
HOLD_PATIENCE = 1.0  # seconds a held sync sibling waits while the framework waits for its thread


class _SiblingState(TypedDict):
    items: Annotated[list, operator.add]


class _Shutdown(logging.Handler):
    """Collects what concurrent.futures logs when a done callback raises (the lost put_writes says why)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        error = record.exc_info[1] if record.exc_info else None
        self.seen.append(str(error) if error else record.getMessage())


def _sync_siblings_once(obs: Observer, MemorySaver: Any, order: str, siblings: int) -> tuple[list[str], bool]:
    """One run of test_sync_sibling_pending_writes: (kept or lost for each sibling's write, whether a callback
    logged that the executor had shut down)."""
    raised = threading.Event()  # failing's exception is on its way out
    saved = threading.Event()  # the saver holds the (first) sibling's write
    started = threading.Semaphore(0)  # one release per sibling that is running
    stuck: list[str] = []
    names = [f"sibling{i}" for i in range(siblings)]

    class Saver(MemorySaver):
        def put_writes(self, config: Any, writes: Any, task_id: str, *args: Any, **kwargs: Any) -> None:
            super().put_writes(config, writes, task_id, *args, **kwargs)
            if ("items", [names[0]]) in [tuple(write) for write in writes]:
                saved.set()

    def sibling(name: str) -> Callable[..., dict]:
        def run(state: _SiblingState) -> dict:
            started.release()
            if order != "finished-before-failure" and not raised.wait(10):
                stuck.append("failing never raised while the siblings waited")
            if order == "held-past-failure":
                # The framework waits for this thread (threads cannot be cancelled); the bound ends that wait.
                threading.Event().wait(HOLD_PATIENCE)
            return {"items": [name]}

        return run

    def failing(state: _SiblingState) -> dict:
        if order == "finished-before-failure" and not saved.wait(10):
            stuck.append("the sibling's write never reached the saver while failing waited")
        # every sibling is running before failing raises: one not yet started would be cancelled, not lost
        if not all(started.acquire(timeout=10) for _ in names):
            stuck.append("a sibling never started while failing waited")
        try:
            raise RuntimeError("branch failed")
        finally:
            raised.set()  # released by the failing thread itself, as its exception leaves the node

    builder = StateGraph(_SiblingState)
    for name in names:
        builder.add_node(name, sibling(name))
        builder.add_edge(START, name)
    builder.add_node("failing", failing)
    builder.add_edge(START, "failing")
    graph = builder.compile(checkpointer=Saver())
    # a worker thread for every task and every save: no task waits for a free thread
    config = {"configurable": {"thread_id": order}, "max_concurrency": 4 * (siblings + 1)}
    handler = _Shutdown()
    logger = logging.getLogger("concurrent.futures")
    logger.addHandler(handler)
    try:
        got = obs.attempt(lambda: graph.invoke({"items": []}, config))
    finally:
        logger.removeHandler(handler)
    if stuck:
        obs.vacuous(stuck[0])
    if got.get("raises") != "RuntimeError":
        obs.vacuous(f"the run did not raise the failing node's error: {got}")
    saved_tuple = graph.checkpointer.get_tuple(config)
    pending = {tuple(value) for _, channel, value in saved_tuple.pending_writes or [] if channel == "items"}
    return ["kept" if (name,) in pending else "lost" for name in names], any(
        "after shutdown" in text for text in handler.seen
    )


@probe(
    "langgraph/errors/sync-sibling-pending-writes",
    title="Sync mode, `failing` raises while parallel siblings are still running: seven siblings return the moment"
    " failing raises (repeated), and, gated, one sibling before the failure and long after it: is its write kept?",
    claim=Claim(
        "With a checkpointer, the writes of a node that completes in a failed superstep are kept as pending"
        " writes, whether it finished before or after its sibling raised.",
        "https://docs.langchain.com/oss/python/langgraph/persistence#pending-writes",
        expect={
            "value.released-by-failure.outcomes": ["kept"],
            "value.finished-before-failure": "kept",
            "value.held-past-failure": "kept",
        },
    ),
    sources=[
        "https://github.com/langchain-ai/langgraph/blob/main/libs/langgraph/langgraph/pregel/_executor.py",
        "https://github.com/langchain-ai/langgraph/issues/8115",
    ],
    repetition=True,
)
def test_sync_sibling_pending_writes(obs: Observer) -> None:
    """Why a write can be lost: a sibling's writes are saved from its future's done callback, which submits
    put_writes to the run's thread pool; `concurrent.futures.wait` (the executor's exit) returns when the
    future is resolved, before its callbacks run, and the pool is then shut down, so a callback that comes
    later cannot submit ("cannot schedule new futures after shutdown") and the write never reaches the saver.
    Failing raises once every sibling is running (a sibling not yet started is cancelled, which is no lost
    write). Seven siblings released together by the failing thread itself, with the interpreter switching threads
    every microsecond (sys.setswitchinterval: no framework code is touched), make a callback that trails the
    shutdown likely within a few runs; one sibling at the default switch interval made it depend on load."""
    MemorySaver: Any = obs.need("langgraph.checkpoint.memory", "MemorySaver")

    gated = {order: _sync_siblings_once(obs, MemorySaver, order, 1)[0][0] for order in ("finished-before-failure", "held-past-failure")}
    # Stopping rule: until a sibling's write is lost (kept ones come in the first run), else MAX_RUNS runs
    # of SIBLINGS writes each; by the rule of three the loss rate per write is then below 3/7000 = 0.043%
    # with 95% confidence. Measured (2026-12-01, 2 shared cores, 3 runs of each of the 11 LangGraph cells):
    # the first loss came within 30 runs, and every loss logged the shutdown; one sibling at the default
    # 5 ms switch interval lost its write within 145 runs, or in none of 300.
    seen: dict[str, int] = {}
    runs = 0
    logged_when_lost: set[bool] = set()
    switch = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)  # threads are preempted often: a trailing callback becomes likely
    try:
        while runs < MAX_RUNS and len(seen) < 2:
            outcomes, logged = _sync_siblings_once(obs, MemorySaver, "released-by-failure", SIBLINGS)
            runs += 1
            for outcome in outcomes:
                seen[outcome] = seen.get(outcome, 0) + 1
            if "lost" in outcomes:
                logged_when_lost.add(logged)
    finally:
        sys.setswitchinterval(switch)
    outcomes = sorted(seen)
    value = {
        **gated,
        "released-by-failure": {
            "outcomes": outcomes,
            "every_loss_logged_executor_shutdown": logged_when_lost == {True} if "lost" in seen else None,
            "siblings": SIBLINGS,
            "max_runs": MAX_RUNS,
            "stopping_rule": f"until a write is lost, else {MAX_RUNS} runs of {SIBLINGS} released siblings:"
            " a loss rate per write < 0.043% (95% confidence), with the interpreter's switch interval at 1 µs",
        },
    }
    lost_gated = sorted(order for order, outcome in gated.items() if outcome == "lost")
    if len(outcomes) > 1:
        label = "released at failure: kept or lost"
    else:
        label = f"released at failure: {outcomes[0]}"
    obs.record(
        value,
        label=label,
        detail=f"gated: finished before the failure {gated['finished-before-failure']}, held past it"
        f" {gated['held-past-failure']}; {SIBLINGS} siblings released the moment failing raises: "
        + ("a write lost" if "lost" in seen else f"every write kept in {MAX_RUNS} runs")
        + (
            "; every lost write logged 'cannot schedule new futures after shutdown'"
            if logged_when_lost == {True}
            else ""
        ),
        # a write lost in some runs only: nondeterministic; lost every time (or in a gated order): silent
        hazard="silent" if lost_gated or outcomes == ["lost"] else "nondeterministic" if len(outcomes) > 1 else "safe",
    )
