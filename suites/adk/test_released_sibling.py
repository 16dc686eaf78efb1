"""A failing ParallelAgent child that releases its waiting siblings as it raises: how do the siblings end?

The release and the raise happen in one step of the event loop (`go.set()`, then `raise`), so which of
ADK's reactions runs first is decided by the framework's own code (CPython's ready queue is FIFO), not by
the probe: no timer, no sleep. What is observed after the loop has settled: did each sibling reach its
`yield`, was it cancelled before, and did its event reach the runner and the session.

Where ADK merges with `asyncio.wait` (1.0, 1.5) the result depends on the iteration order of the `done`
set (task addresses), so it may differ from process to process: the probe repeats the scenario with
seven released siblings under a stopping rule, and calls the result nondeterministic if two outcomes are
seen. The exact orderings either side of the coincidence are other probes: the raise strictly before the
release is `adk/parallel-agent/child-exception` (the sibling never reaches its yield); a sibling in flight
when its peer raises is `adk/parallel-agent/child-exception-running-sibling`.
"""

import asyncio
from typing import Any, AsyncGenerator

from adk_failure import ChildFailure, where_the_child_failure_is
from adk_kit import Event, EventActions, FanOut, settle

from google.adk.agents import BaseAgent

from fanin.probe import Claim, Observer, probe

MAX_RUNS = 240  # stopping rule of the repeated scenario (see `repeated`)
SIBLINGS = 7  # released siblings in the repeated scenario: eight tasks done together


class Released(BaseAgent):
    """Notes its arrival, waits for `go` (a plain asyncio.Event: no timer whose cancellation could race ADK's),
    notes `reached its yield`, yields an event with `delta`, and notes what ADK does to it at and after the yield."""

    arrived: Any
    all_in: Any
    siblings: int
    go: Any
    log: Any
    delta: dict[str, Any]

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        self.arrived.append(self.name)
        if len(self.arrived) == self.siblings:
            self.all_in.set()
        try:
            await self.go.wait()
        except asyncio.CancelledError:
            self.log.append((self.name, "cancelled before its yield"))
            raise
        self.log.append((self.name, "reached its yield"))
        try:
            yield Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                branch=ctx.branch,
                actions=EventActions(state_delta=dict(self.delta)),
            )
        except (asyncio.CancelledError, GeneratorExit) as exc:
            self.log.append((self.name, f"{type(exc).__name__} at its yield"))
            raise
        self.log.append((self.name, "resumed after its yield"))


class ReleasingRaiser(BaseAgent):
    """Waits until every sibling waits on `go` (`all_in`), then sets `go` and raises ChildFailure in the same
    step. If the siblings never all start (a version that runs children one by one), the run hangs here: the
    probe sees that once the loop has settled and calls it vacuous."""

    all_in: Any
    go: Any
    log: Any

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        await self.all_in.wait()
        self.go.set()
        self.log.append((self.name, "raised"))
        raise ChildFailure(f"{self.name} failed")
        yield  # an async generator, as ADK expects


def unstick(hung: "asyncio.Future") -> None:
    """End a run that will never end by itself: cancel it and every future a task of the loop still waits on
    (only after the probe has seen that nothing is left to run)."""
    hung.cancel()
    for task in asyncio.all_tasks():
        waiter = getattr(task, "_fut_waiter", None)
        if task is not asyncio.current_task() and waiter is not None and not waiter.done():
            waiter.cancel()


async def coincide(siblings: int) -> dict:
    """One run: child `a` releases `siblings` waiting siblings and raises in the same step; what each sibling
    did, what the run raised, which events reached the runner and the session, once the loop has settled."""
    arrived: list = []
    all_in, go = asyncio.Event(), asyncio.Event()
    log: list = []
    names = ["b"] if siblings == 1 else [f"b{i}" for i in range(1, siblings + 1)]
    children = [
        ReleasingRaiser(name="a", all_in=all_in, go=go, log=log),
        *(
            Released(
                name=n,
                arrived=arrived,
                all_in=all_in,
                siblings=siblings,
                go=go,
                log=log,
                delta={f"result_{n}": n.upper()},
            )
            for n in names
        ),
    ]
    fan = await FanOut.on_new_session(children)
    run = asyncio.ensure_future(fan.run_keeping_exception())  # the framework's answer, recorded by the caller
    await settle()  # everything that can run has run: the turn has ended, or nothing will ever end it
    ended = run.done()
    if not ended:
        unstick(run)  # the probe ends the hung run; what ADK did is already seen
        await asyncio.gather(run, return_exceptions=True)
        await settle()
    state = await fan.state()
    authors = [e.author for e in fan.events]
    return {
        "released": go.is_set(),
        "ended": ended,
        "surfaced": fan.caught[0] if fan.caught else None,
        "siblings": {n: [what for who, what in log if who == n] or ["still waiting"] for n in names},
        "event_authors": authors,
        "kept": [n for n in names if state.get(f"result_{n}") is not None or n in authors],
        "persisted": {f"result_{n}": state.get(f"result_{n}") for n in names},
    }


def outcome_of(run: dict) -> str:
    """The repeated scenario's outcome: were the events of all released siblings kept, or was one dropped."""
    return "every sibling's event kept" if len(run["kept"]) == len(run["siblings"]) else "a sibling's event dropped"


@probe(
    "adk/parallel-agent/child-exception-released-sibling",
    title="A ParallelAgent child raises at the very step it releases its waiting sibling: does the sibling"
    " reach its yield, and is its event kept?",
    repetition=True,
    claim=Claim(
        "When a sub-agent fails, the ParallelAgent and all its other sub-agents stop processing and the "
        "exception is thrown to the top-level runner.",
        "https://github.com/google/adk-python/blob/main/tests/unittests/agents/test_parallel_agent.py",
        expect={"value.persisted.result_b": None},
    ),
    sources=("https://github.com/google/adk-python/blob/main/src/google/adk/agents/parallel_agent.py",),
)
async def test_child_exception_released_sibling(obs: Observer) -> None:
    one = await coincide(1)
    if not one["released"]:
        obs.vacuous(f"b was not waiting when a ran (arrived: {one['siblings']})")
    # Repeated with seven siblings: eight tasks done in one step. Stopping rule: run until two outcomes are
    # seen, or MAX_RUNS runs with one; by the rule of three another outcome's rate is then below 3/240 = 1.25%
    # (95% confidence). Where the merge iterates a set of done tasks, the raiser comes last (every event
    # kept) in about 1 run in 8 when idle and far less often on a loaded machine: a fresh-clone CI run beside
    # another saw 60 runs of one outcome on 1.5.0, so the rule was widened from 60 to 240 runs.
    seen: dict[str, int] = {}
    while sum(seen.values()) < MAX_RUNS and len(seen) < 2:
        many = await coincide(SIBLINGS)
        if not many["released"]:
            obs.vacuous(f"the {SIBLINGS} siblings were not all waiting when a ran")
        seen[outcome_of(many)] = seen.get(outcome_of(many), 0) + 1
    varies = len(seen) > 1
    surfaced = one["surfaced"]
    raised = type(surfaced).__name__ if surfaced else None
    b_log = one["siblings"]["b"]
    reached = "reached its yield" in b_log
    if not reached:
        reading = "b cancelled first" if any("cancelled" in w for w in b_log) else "b never ran"
    else:
        reading = "b's event kept" if "b" in one["kept"] else "b yielded, event dropped"
    coincident = {
        "run_ended": one["ended"],
        "run_async": {"raises": raised, "child_failure": where_the_child_failure_is(surfaced)}
        if surfaced
        else ("returned" if one["ended"] else "never ended"),
        "b": b_log,
        "event_authors": one["event_authors"],
        "persisted": one["persisted"],
    }
    repeated = {
        "siblings": SIBLINGS,
        "varies": varies,
        "outcomes": sorted(seen),
        "max_runs": MAX_RUNS,
        "stopping_rule": "until two outcomes are seen, else 240 runs: another outcome's rate < 1.25% (95% confidence)",
    }
    counts = ", ".join(f"{k} ×{v}" for k, v in sorted(seen.items()))
    if varies:
        # The single run is one draw of a varying result: only the fact that it varies is recorded.
        value: dict = {"repeated": repeated}
        label, hazard = f"varies; {raised or 'no error'}", "nondeterministic"
    else:
        value = {**coincident, "repeated": repeated}
        if not one["ended"]:
            label, hazard = f"hangs, {reading}", "hangs"
        elif raised:
            label, hazard = f"{raised}, {reading}", "loud"
        else:
            label, hazard = f"no error, {reading}", "safe" if "b" in one["kept"] else "silent"
    obs.record(
        value,
        label=label if len(label) <= 40 else label[:39] + "…",
        detail=(
            "the run never ends (nothing is left to run once the loop settles); "
            if not one["ended"]
            else f"run_async {'raises ' + raised if raised else 'returns'}; "
        )
        + f"b, released as a raised: {', '.join(b_log)}; events from {one['event_authors'] or 'nobody'};"
        f" result_b persisted: {one['persisted']['result_b']}; with {SIBLINGS} released siblings,"
        f" {sum(seen.values())} runs: {counts}",
        hazard=hazard,
        outcome=f"raises:{raised}" if raised and one["ended"] and not varies else "ok",
    )
