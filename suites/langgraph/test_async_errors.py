"""Async runs: a raising branch or a timeout cancels siblings that are still in flight. What happens to their writes?"""

import asyncio
import inspect
import operator
import threading
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, probe

ASYNC_TESTS = "https://github.com/langchain-ai/langgraph/blob/main/libs/langgraph/tests/test_pregel_async.py"


@probe(
    "langgraph/errors/async-sibling-cancelled",
    title="Under ainvoke, `failing` raises while its async sibling `slow` is awaiting (held by an asyncio.Event);"
    " then the run is resumed with the sibling released",
    claim=Claim(
        "When a node raises, LangGraph cancels the other nodes still running in that superstep (asyncio"
        " cancellation reaches them, so their cleanup runs) and the error propagates; the cancelled node"
        " leaves no write and runs again on resume.",
        ASYNC_TESTS,
        expect={
            "value.first_run.raises": "RuntimeError",
            "value.slow_log": ["started", "cancelled", "cleanup"],
            "value.slow_write_at_error": False,
        },
    ),
    sources=["https://github.com/langchain-ai/langgraph/issues/8277"],
)
async def test_async_sibling_cancelled(obs: Observer) -> None:
    MemorySaver = obs.need("langgraph.checkpoint.memory", "MemorySaver")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    hold = asyncio.Event()  # set only after the failed run: slow's first run never finishes by itself
    slow_in_flight = asyncio.Event()
    slow_log: list[str] = []
    slow_tasks: list = []
    never_in_flight: list[str] = []
    runs = {"slow": 0, "failing": 0, "join": 0}

    async def slow(state: State) -> dict:
        runs["slow"] += 1
        if runs["slow"] == 1:
            slow_tasks.append(asyncio.current_task())
            slow_log.append("started")
            slow_in_flight.set()
            try:
                # Deadlock breaker only: a sibling nobody cancels is released after 5 s, and says so.
                await asyncio.wait_for(hold.wait(), 5)
            except asyncio.CancelledError:
                slow_log.append("cancelled")
                raise
            except asyncio.TimeoutError:
                slow_log.append("never cancelled (released by the probe after 5 s)")
            finally:
                slow_log.append("cleanup")
        return {"items": ["slow"]}

    async def failing(state: State) -> dict:
        runs["failing"] += 1
        if runs["failing"] == 1:
            try:
                await asyncio.wait_for(slow_in_flight.wait(), 10)
            except asyncio.TimeoutError:
                never_in_flight.append("slow was never in flight while failing waited")
            raise RuntimeError("branch failed")
        return {"items": ["failing"]}

    async def join(state: State) -> dict:
        runs["join"] += 1
        return {"items": ["join"]}

    builder = StateGraph(State)
    builder.add_node("slow", slow)
    builder.add_node("failing", failing)
    builder.add_node("join", join)
    builder.add_edge(START, "slow")
    builder.add_edge(START, "failing")
    builder.add_edge(["slow", "failing"], "join")
    graph = builder.compile(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "async-cancel"}}

    failed = await obs.attempt_async(lambda: graph.ainvoke({"items": []}, config))
    if never_in_flight:
        obs.vacuous(never_in_flight[0])
    task = slow_tasks[0]
    sibling = {"done": task.done(), "cancelled": task.cancelled()}
    snapshot = await graph.aget_state(config)
    saved = await graph.checkpointer.aget_tuple(config)
    pending = lg_persist.pending_of(saved, snapshot)
    slow_write_at_error = "slow" in (snapshot.values.get("items") or []) or any(
        row[0] == "slow" and row[1] == "items" for row in pending
    )
    log_at_error = list(slow_log)
    hold.set()
    with obs.framework(value=lambda: {"first_run": failed if "raises" in failed else "returned", "slow_log": slow_log}):
        final = (await graph.ainvoke(None, config))["items"]
    leaked = not sibling["done"]
    clean = log_at_error[-1:] == ["cleanup"] and "cancelled" in log_at_error
    obs.record(
        {
            "first_run": failed if "raises" in failed else "returned",
            "slow_task_at_error": sibling,
            "slow_log": log_at_error,
            "slow_write_at_error": slow_write_at_error,
            "pending_at_error": pending,
            "runs_after_resume": runs,
            "final": sorted(final),
        },
        label="sibling still running after the error"
        if leaked
        else "sibling cancelled, cleanup ran"
        if clean
        else f"sibling: {', '.join(log_at_error)}",
        detail=f"first run {failed.get('raises', 'returned')}; slow {sibling}, log {log_at_error}; pending {pending};"
        f" after resume runs {runs}, final {final}",
        hazard="silent" if leaked or slow_write_at_error or not clean else "loud",
    )


class _TimeoutState(TypedDict):
    items: Annotated[list, operator.add]


async def _timeout_scenario(obs: Observer, MemorySaver: Any, kind: str) -> dict:
    """One case of test_timeout_discards_writes: fast and slow in parallel, slow outlasting the timeout `kind` sets."""
    runs = {"fast": 0, "slow": 0}
    slow_log: list[str] = []
    async_hold = asyncio.Event()
    thread_hold = threading.Event()
    thread_returned = threading.Event()

    async def fast(state: _TimeoutState) -> dict:
        runs["fast"] += 1
        return {"items": ["fast"]}

    async def slow_async(state: _TimeoutState) -> dict:
        runs["slow"] += 1
        if runs["slow"] == 1:
            slow_log.append("started")
            try:
                await asyncio.wait_for(async_hold.wait(), 5)  # deadlock breaker only
            except asyncio.CancelledError:
                slow_log.append("cancelled")
                raise
            except asyncio.TimeoutError:
                slow_log.append("never cancelled (released by the probe after 5 s)")
        return {"items": ["slow"]}

    def slow_sync(state: _TimeoutState) -> dict:
        runs["slow"] += 1
        if runs["slow"] == 1:
            slow_log.append("started")
            if not thread_hold.wait(5):  # deadlock breaker only
                slow_log.append("never released (released by the probe after 5 s)")
            slow_log.append("returned after the timeout")
            thread_returned.set()
        return {"items": ["slow"]}

    builder = StateGraph(_TimeoutState)
    builder.add_node("fast", fast)
    if kind == "node_timeout":
        builder.add_node("slow", slow_async, timeout=0.1)
    else:
        builder.add_node("slow", slow_sync if kind == "step_timeout_sync" else slow_async)
    builder.add_edge(START, "fast")
    builder.add_edge(START, "slow")
    graph = builder.compile(checkpointer=MemorySaver())
    if kind.startswith("step_timeout"):
        graph.step_timeout = 0.1
    config = {"configurable": {"thread_id": kind}}

    failed = await obs.attempt_async(lambda: graph.ainvoke({"items": []}, config))
    if kind == "step_timeout_sync":
        thread_hold.set()  # the thread cannot be cancelled: let it return, then look for its write
        await asyncio.get_running_loop().run_in_executor(None, thread_returned.wait, 5)
    snapshot = await graph.aget_state(config)
    pending = lg_persist.pending_of(await graph.checkpointer.aget_tuple(config), snapshot)
    at_timeout = {
        "first_run": failed if "raises" in failed else "returned",
        "slow_log": list(slow_log),
        "values_after_timeout": snapshot.values.get("items"),
        "pending_after_timeout": pending,
        "slow_write_after_timeout": "slow" in (snapshot.values.get("items") or [])
        or any(row[0] == "slow" and row[1] == "items" for row in pending),
    }
    async_hold.set()
    if kind.startswith("step_timeout"):
        # The resume is not under test, only what it re-runs: without the limit, a thread slow to start on a
        # loaded machine cannot time out the resume itself (it did, once, with 0.1 s).
        graph.step_timeout = None
    resumed = await obs.attempt_async(lambda: graph.ainvoke(None, config))
    final = (await graph.aget_state(config)).values.get("items")
    return {**at_timeout, "resume": resumed.get("raises", "returned"), "runs_after_resume": runs,
            "final": sorted(final or [])}


@probe(
    "langgraph/errors/timeout-discards-writes",
    title="`fast` and `slow` in parallel under ainvoke, slow held on an Event past a 0.1 s timeout: step_timeout"
    " with an async slow node, step_timeout with a sync one (a thread), and the node-level timeout",
    claim=Claim(
        "A step that exceeds step_timeout raises a TimeoutError and cancels the nodes still running; node"
        " timeouts (add_node(timeout=...), async nodes only) raise NodeTimeoutError. The timed-out node's"
        " write is discarded; the finished sibling's write is kept as a pending write for the resume.",
        "https://reference.langchain.com/python/langgraph/pregel/#langgraph.pregel.Pregel.step_timeout",
        expect={
            "value.step_timeout_async.first_run.raises": "TimeoutError",
            "value.step_timeout_async.slow_write_after_timeout": False,
            "value.step_timeout_async.runs_after_resume.fast": 1,
        },
    ),
    sources=[ASYNC_TESTS, "https://github.com/langchain-ai/langgraph/issues/4673"],
)
async def test_timeout_discards_writes(obs: Observer) -> None:
    MemorySaver = obs.need("langgraph.checkpoint.memory", "MemorySaver")

    add_node_parameters = inspect.signature(StateGraph.add_node).parameters
    observed: dict[str, dict | str] = {}
    with obs.framework(value=lambda: observed):
        observed["step_timeout_async"] = await _timeout_scenario(obs, MemorySaver, "step_timeout_async")
        observed["step_timeout_sync"] = await _timeout_scenario(obs, MemorySaver, "step_timeout_sync")
        if "timeout" in add_node_parameters:
            observed["node_timeout"] = await _timeout_scenario(obs, MemorySaver, "node_timeout")
        else:
            observed["node_timeout"] = "n/a: StateGraph.add_node has no parameter 'timeout' in this version"

    scenarios = {name: seen for name, seen in observed.items() if isinstance(seen, dict)}
    kept_late = sorted(name for name, seen in scenarios.items() if seen["slow_write_after_timeout"])
    no_error = sorted(name for name, seen in scenarios.items() if seen["first_run"] == "returned")
    fast_rerun = sorted(name for name, seen in scenarios.items() if seen["runs_after_resume"]["fast"] > 1)
    if kept_late:
        label = f"timed-out write kept: {', '.join(kept_late)}"
    elif no_error:
        label = f"no timeout error: {', '.join(no_error)}"
    elif fast_rerun:
        label = f"sibling re-runs: {', '.join(fast_rerun)}"
    else:
        label = f"discarded, {'/'.join(sorted({seen['first_run']['raises'] for seen in scenarios.values()}))}"
    obs.record(
        observed,
        label=label,
        detail="; ".join(
            f"{name}: first run {seen['first_run']}, slow {seen['slow_log']}, pending {seen['pending_after_timeout']},"
            f" after resume runs {seen['runs_after_resume']} final {seen['final']}"
            if isinstance(seen, dict)
            else f"{name}: {seen}"
            for name, seen in observed.items()
        ),
        hazard="silent" if kept_late or no_error or fast_rerun else "loud",
    )
