"""ParallelAgent in production shapes, failing and stalling: a sibling in flight when a child raises, a branch
that stalls (and its mitigation).

Orders are forced with gates (`Turns`) and with holds: an asyncio.Event only the probe sets, so a branch
stays in flight for as long as the probe needs. "Would hang" is observed without waiting on the clock:
the probe lets the event loop run until nothing but the held branch is left (`settle`), looks, then
releases the branch itself.
"""

import asyncio
from typing import Any, AsyncGenerator

from gates import Turns
from liveness import quiesce
from adk_kit import APP, USER, Event, EventActions, FanOut, Step, run_turn, stored_state, settle

from google.adk.agents import BaseAgent, ParallelAgent
from google.adk.sessions import InMemorySessionService
from pydantic import Field

from fanin.probe import Claim, Observer, probe


class Held(BaseAgent):
    """A branch that stays in flight until the probe lets it go.

    Waits for its turn (if `turns`), emits `first` as a state_delta (if any), marks its turn done,
    then waits on `hold`, an asyncio.Event only the probe sets, and emits `then`. `log` gets
    `(name, "holding")`, then `(name, "released")` or `(name, "cancelled")`.
    """

    hold: Any
    turns: Any = None
    first: dict = Field(default_factory=dict)
    then: dict = Field(default_factory=dict)
    log: Any = Field(default_factory=list)

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        if self.turns is not None:
            await self.turns.wait(self.name)
        if self.first:
            yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch,
                        actions=EventActions(state_delta=dict(self.first)))
        if self.turns is not None:
            self.turns.done(self.name)
        self.log.append((self.name, "holding"))
        try:
            await self.hold.wait()
        except asyncio.CancelledError:
            self.log.append((self.name, "cancelled"))
            raise
        self.log.append((self.name, "released"))
        yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch,
                    actions=EventActions(state_delta=dict(self.then)))


def fate(log: list, name: str) -> str:
    """The last thing `name` noted in the log."""
    return next((what for who, what in reversed(log) if who == name), "never started")


@probe(
    "adk/parallel-agent/child-exception-running-sibling",
    title="A ParallelAgent child raises while a sibling is in flight (past its gate, awaiting I/O)",
    claim=Claim(
        "When a sub-agent fails, the ParallelAgent and all its other sub-agents stop processing and the "
        "exception is thrown to the top-level runner.",
        "https://github.com/google/adk-python/blob/main/tests/unittests/agents/test_parallel_agent.py",
        expect={"value.c_when_run_ended": "cancelled", "value.persisted.result_c2": None},
    ),
)
async def test_child_exception_running_sibling(obs: Observer) -> None:
    # b writes; c writes result_c1, then waits on `hold` (in flight); only then a raises.
    turns = Turns(["b", "c", "a"])
    hold = asyncio.Event()
    log: list = []
    children = [
        Step(name="a", turns=turns, fail=True, log=log),
        Step(name="b", turns=turns, delta={"result_b": "B"}, log=log),
        Held(name="c", turns=turns, hold=hold, first={"result_c1": "C1"}, then={"result_c2": "C2"}, log=log),
    ]
    fan = await FanOut.on_new_session(children)
    result = await obs.attempt_async(fan.run)
    obs.require_in_flight(turns)
    if ("c", "holding") not in log:
        obs.vacuous("c was not in flight when a raised")
    await settle()
    c_at_end = fate(log, "c")
    hold.set()  # the I/O c was waiting for completes: does a c left running still get its write in?
    await settle()
    state = await fan.state()
    raised = result.get("raises")
    value: dict[str, Any] = {
        "run_async": {"raises": raised, "inside": [type(e).__name__ for e in getattr(fan.caught[0], "exceptions", [])]}
        if raised else "returned",
        "event_authors": [e.author for e in fan.events],
        "c_when_run_ended": c_at_end,
        "c_after_hold_released": fate(log, "c"),
        "persisted": {k: state.get(k) for k in ("result_b", "result_c1", "result_c2")},
    }
    lost = "result_c2" if value["persisted"]["result_c2"] is None else None
    sibling = {"cancelled": "sibling cancelled", "holding": "sibling left running"}.get(c_at_end, f"c {c_at_end}")
    obs.record(
        value,
        label=f"{raised or 'no error'}, {sibling}",
        detail=f"run_async {'raises ' + raised if raised else 'returns'}; c, in flight when a raised, "
        f"{'was cancelled' if c_at_end == 'cancelled' else 'was still in flight' if c_at_end == 'holding' else 'was ' + c_at_end}"
        + (f"; once released it ran on ({fate(log, 'c')}) but its write is lost" if c_at_end == "holding" and lost else "")
        + f"; persisted: {', '.join(k for k, v in value['persisted'].items() if v is not None) or 'nothing'}",
        hazard="loud" if raised else "silent",
        outcome=f"raises:{raised}" if raised else "ok",
    )


@probe(
    "adk/parallel-agent/stalled-branch",
    title="One ParallelAgent branch never yields: does the run hang, and is there an idle timeout?",
    claim=Claim(
        "When one leaf of a ParallelAgent stops emitting events without an error, the parent never completes "
        "and the stream stays open (the fix adds an opt-in branch_idle_timeout_secs that raises TimeoutError).",
        "https://github.com/google/adk-python/issues/5455",
        expect={"value.default.run_ended": False},
    ),
    sources=("https://github.com/google/adk-python/blob/main/tests/unittests/agents/test_parallel_agent_idle_timeout.py",),
)
async def test_stalled_branch(obs: Observer) -> None:
    async def stall(root: Any, hold: asyncio.Event) -> dict:
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        events: list = []
        run = asyncio.ensure_future(obs.attempt_async(lambda: run_turn(root, service, "s1", events=events)))
        await settle()  # everything that can run has run; only the stalled branch is left
        seen = {
            "run_ended": run.done(),
            "events_before_release": [e.author for e in events],
            "stalled_branch": fate(log, "stalled"),
        }
        hold.set()
        await settle()
        result = await run if run.done() else {"raises": "still running after the release"}
        seen["after_release"] = "returned" if "returned" in result else result
        seen["persisted"] = {k: v for k, v in sorted((await stored_state(service, "s1")).items())}
        return seen

    log: list = []
    hold = asyncio.Event()
    branches = [Step(name="normal", delta={"result_normal": "N"}, log=log),
                Held(name="stalled", hold=hold, then={"result_stalled": "S"}, log=log)]
    default = await stall(ParallelAgent(name="fanout", sub_agents=branches), hold)
    if default["stalled_branch"] != "holding" and not default["run_ended"]:
        obs.vacuous(f"the stalled branch was {default['stalled_branch']}")

    if "branch_idle_timeout_secs" not in ParallelAgent.model_fields:
        idle: str | dict[str, Any] = "ParallelAgent has no branch_idle_timeout_secs in this version"
    else:
        # The timeout is the framework's own clock: give it 0.05 s; the probe's bound (0.5 s) only stops it
        # waiting forever, and the branch's own log says whether the timeout cancelled it.
        log.clear()
        hold = asyncio.Event()
        branches = [Step(name="normal", delta={"result_normal": "N"}, log=log),
                    Held(name="stalled", hold=hold, then={"result_stalled": "S"}, log=log)]
        root = ParallelAgent(name="fanout", sub_agents=branches, branch_idle_timeout_secs=0.05)
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        run = asyncio.ensure_future(obs.attempt_async(lambda: run_turn(root, service, "s1")))
        await asyncio.wait({run}, timeout=0.5)
        ended = run.done()
        hold.set()
        result = await run
        idle = {"branch_idle_timeout_secs": 0.05, "run_ended_while_stalled": ended,
                "run": "returned" if "returned" in result else result, "stalled_branch": fate(log, "stalled")}
    hangs = not default["run_ended"]
    obs.record(
        {"default": default, "idle_timeout": idle},
        label=("hangs" if hangs else "ends") + ("; no idle timeout" if isinstance(idle, str) else
                                                f"; idle timeout {'ends it' if idle['run_ended_while_stalled'] else 'fails'}"),
        detail=f"with one branch stalled the run {'never ends' if hangs else 'ends'} (the other branch's "
        f"events arrive: {default['events_before_release']}); released, it {default['after_release']}; "
        + (idle if isinstance(idle, str) else "with branch_idle_timeout_secs=0.05 the run "
           + (f"raises {idle['run']['raises']}" if idle["run"] != "returned" else "returns")
           + f" and the stalled branch is {idle['stalled_branch']}"),
        hazard="hangs" if hangs else "safe",
    )


@probe(
    "adk/parallel-agent/stalled-branch-mitigated",
    title="stalled-branch, mitigated: the same two branches as Workflow nodes after START, the stalled one with the"
    " node timeout (timeout=0.05), joined by a JoinNode",
    claim=Claim(
        "A node's timeout bounds how long it may run: a node that exceeds it is cancelled and NodeTimeoutError is"
        " raised, so a stalled branch ends the run with an error instead of hanging it.",
        "https://github.com/google/adk-python/blob/main/src/google/adk/workflow/_node_runner.py",
        expect={"value.run_ended_while_stalled": True},
    ),
    sources=("https://github.com/google/adk-python/issues/5455",),
)
async def test_stalled_branch_mitigated(obs: Observer) -> None:
    Workflow, JoinNode, node = obs.need("google.adk.workflow", "Workflow", "JoinNode", "node")
    from adk_kit import run_workflow

    hold = asyncio.Event()
    log: list = []
    collected: list = []

    async def normal(node_input: Any) -> str:
        log.append(("normal", "returned"))
        return "N"

    async def stalled(node_input: Any) -> str:
        log.append(("stalled", "holding"))
        try:
            await hold.wait()
        except asyncio.CancelledError:
            log.append(("stalled", "cancelled"))
            raise
        log.append(("stalled", "released"))
        return "S"

    def collect(node_input: Any) -> str:
        collected.append(node_input)
        return "report"

    workflow = Workflow(
        name="wf",
        edges=[("START", (normal, node(stalled, timeout=0.05)), JoinNode(name="join"), collect)],
    )
    run = asyncio.ensure_future(obs.attempt_async(lambda: run_workflow(workflow)))
    # The timeout is the framework's own clock (0.05 s): `quiesce` follows the loop's timers until the run
    # has ended or nothing is ready and no timer is pending (then nothing but the probe can end it); the
    # stalled node's own log says whether the timeout cancelled it.
    ended = (await quiesce(run))["ended"]
    stalled_then = fate(log, "stalled")
    hold.set()
    result = await run
    if ("stalled", "holding") not in log:
        obs.vacuous(f"the stalled node never started ({log})")
    value = {
        "timeout": 0.05,
        "run_ended_while_stalled": ended,
        "run": "returned" if "returned" in result else result,
        "stalled_node": stalled_then,
        "collect_ran": len(collected),
    }
    if not ended:
        label, hazard = "still hangs with the node timeout", "hangs"
    elif "raises" in result:
        label, hazard = f"ends: raises {result['raises']}"[:40], "loud"
    else:
        label, hazard = "ends, returns", "safe" if collected else "silent"
    obs.record(
        value,
        label=label,
        detail=f"with timeout=0.05 on the stalled node the run {'ends' if ended else 'does not end'} while it is"
        f" stalled ({'raises ' + result['raises'] if 'raises' in result else 'returns'}); the stalled node is"
        f" {stalled_then}; the collector ran {len(collected)} time(s)",
        hazard=hazard,
    )
