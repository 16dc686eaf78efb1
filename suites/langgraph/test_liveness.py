"""Liveness: a parallel branch that never finishes. Does the run end, and does a step or node timeout end it?

"Never ends" is observed, not guessed from a clock: `quiesce` lets every runnable task run and then follows
the event loop's own timers (the framework's timeouts) until either the run has ended or nothing is ready and
no timer is pending. In that second state nothing inside the process can end the run: only the probe, which
then releases the held branch to show that the hold alone kept the run open.
"""

import asyncio
import inspect
import operator
from typing import Annotated, Any, TypedDict

from liveness import quiesce
from langgraph.graph import END, START, StateGraph

from fanin.probe import Claim, Observer, probe

TIMEOUT = 0.05  # the framework's clock in the mitigated variants; the probe never waits on a clock of its own
LONGEST_TIMEOUT = 3.2  # the stopping rule of `started_run`: 0.05 doubled six times


class State(TypedDict):
    items: Annotated[list, operator.add]


async def stalled_run(obs: Observer, variant: str, timeout: float = TIMEOUT) -> dict:
    """`fast` and `stalled` in parallel after START under astream; `stalled` waits on an Event only the probe
    sets. `variant` is "none", "step_timeout" (graph.step_timeout) or "node_timeout" (add_node(timeout=))."""
    hold = asyncio.Event()
    log: list[str] = []

    async def fast(state: State) -> dict:
        return {"items": ["fast"]}

    async def stalled(state: State) -> dict:
        log.append("holding")
        try:
            await hold.wait()
        except asyncio.CancelledError:
            log.append("cancelled")
            raise
        log.append("released")
        return {"items": ["stalled"]}

    builder = StateGraph(State)
    builder.add_node("fast", fast)
    if variant == "node_timeout":
        builder.add_node("stalled", stalled, timeout=timeout)
    else:
        builder.add_node("stalled", stalled)
    builder.add_edge(START, "fast")
    builder.add_edge(START, "stalled")
    builder.add_edge("fast", END)
    builder.add_edge("stalled", END)
    graph = builder.compile()
    if variant == "step_timeout":
        graph.step_timeout = timeout
    updates: list = []

    async def stream() -> None:
        async for chunk in graph.astream({"items": []}, stream_mode="updates"):
            updates.append(sorted(chunk))

    run = asyncio.ensure_future(obs.attempt_async(stream))
    seen = await quiesce(run)
    at_quiet = {
        "run_ended": seen["ended"],
        "updates_while_stalled": list(updates),
        "stalled_branch": log[-1] if log else "never started",
    }
    hold.set()  # the probe's release: a run that only the hold kept open ends now
    after = await quiesce(run)
    if not after["ended"]:
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)
    result = run.result() if run.done() and not run.cancelled() else {"raises": "still running after the release"}
    return {
        **at_quiet,
        "run": result if "raises" in result else "returned",
        "after_release": {"stalled_branch": log[-1] if log else "never started", "updates": updates},
    }


async def started_run(obs: Observer, variant: str) -> dict:
    """`stalled_run` with a timeout, run again with the timeout doubled while the framework's clock expired
    before `stalled` started (LangGraph starts a node after awaits of its own, which a loaded machine can
    delay past 0.05 s), up to LONGEST_TIMEOUT: what is observed is the timeout ending a stalled node."""
    timeout = TIMEOUT
    while True:
        seen = await stalled_run(obs, variant, timeout)
        if seen["stalled_branch"] != "never started" or timeout >= LONGEST_TIMEOUT:
            return seen
        timeout *= 2


def hazard_of(seen: dict) -> str:
    """hangs if the run did not end while the branch stalled; loud if it ended raising; else safe if the
    stalled branch's update arrived, silent if the run returned without it."""
    if not seen["run_ended"]:
        return "hangs"
    if "raises" in seen["run"]:
        return "loud"
    return "safe" if ["stalled"] in seen["after_release"]["updates"] else "silent"


@probe(
    "langgraph/errors/stalled-branch",
    title="`fast` and `stalled` in parallel under astream, `stalled` awaiting an Event nobody sets: does the run"
    " end, with no timeout configured?",
    claim=Claim(
        "A superstep ends when all its tasks have finished; step_timeout (default None) bounds how long the"
        " loop waits for them, so without it a task that never finishes keeps the run open.",
        "https://reference.langchain.com/python/langgraph/pregel/#langgraph.pregel.Pregel.step_timeout",
        expect={"value.run_ended": False},
    ),
)
async def test_stalled_branch(obs: Observer) -> None:
    seen = await stalled_run(obs, "none")
    if seen["stalled_branch"] == "never started":
        obs.vacuous("the stalled node never started")
    hazard = hazard_of(seen)
    obs.record(
        seen,
        label="hangs" if hazard == "hangs" else f"ends: {seen['run']['raises'] if hazard == 'loud' else 'returns'}",
        detail=f"with `stalled` holding and no timeout the run {'never ends' if hazard == 'hangs' else 'ends'}"
        f" (nothing ready and no timer pending); updates streamed while it stalls: {seen['updates_while_stalled']};"
        f" released, the run {'returns' if seen['run'] == 'returned' else 'raises ' + seen['run']['raises']}"
        f" with updates {seen['after_release']['updates']}",
        hazard=hazard,
    )


@probe(
    "langgraph/errors/stalled-branch-mitigated",
    title="stalled-branch, mitigated: step_timeout=0.05 on the compiled graph, and a node timeout=0.05 on"
    " `stalled` where add_node has one (doubled, up to 3.2 s, while it expired before `stalled` started)",
    claim=Claim(
        "A step that exceeds step_timeout raises a TimeoutError and cancels the nodes still running; a node"
        " timeout (add_node(timeout=...), async nodes) raises NodeTimeoutError: either ends a stalled run"
        " with an error instead of hanging it.",
        "https://reference.langchain.com/python/langgraph/pregel/#langgraph.pregel.Pregel.step_timeout",
        expect={"value.step_timeout.run_ended": True},
    ),
)
async def test_stalled_branch_mitigated(obs: Observer) -> None:
    observed: dict[str, Any] = {"step_timeout": await started_run(obs, "step_timeout")}
    if "timeout" in inspect.signature(StateGraph.add_node).parameters:
        observed["node_timeout"] = await started_run(obs, "node_timeout")
    else:
        observed["node_timeout"] = "n/a: StateGraph.add_node has no parameter 'timeout' in this version"
    variants = {name: seen for name, seen in observed.items() if isinstance(seen, dict)}
    if any(seen["stalled_branch"] == "never started" for seen in variants.values()):
        obs.vacuous("the stalled node never started")
    hazards = {name: hazard_of(seen) for name, seen in variants.items()}
    # The worst variant, in the legend's order of harm for the hazards hazard_of gives (safe < loud < hangs < silent).
    hazard = next((h for h in ("silent", "hangs", "loud") if h in hazards.values()), "safe")

    def said(name: str) -> str:
        seen = variants[name]
        if not seen["run_ended"]:
            return f"{name}: still hangs"
        return f"{name}: {seen['run']['raises'] if 'raises' in seen['run'] else 'returns'}"

    label = (
        "ends: " + ", ".join(said(n).split(": ", 1)[1] for n in variants)
        if hazard != "hangs"
        else ("; ".join(said(n) for n in variants))
    )
    obs.record(
        observed,
        label=label if len(label) <= 40 else label[:39] + "…",
        detail="; ".join(
            f"{said(name)} while `stalled` holds (stalled branch {seen['stalled_branch']},"
            f" updates {seen['updates_while_stalled']})"
            if isinstance(seen, dict)
            else f"{name}: {seen}"
            for name, seen in observed.items()
        ),
        hazard=hazard,
    )
