"""Mitigations of the ParallelAgent, AgentTool and escalation hazards where a branch fails or is stale.

Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. Each
probe is its hazard probe's scenario (same agents, same gates) with the fix applied, run in two or more
forced completion orders: every write the branches made must be kept (in state, or in the merge
record with the branch it came from), and the outcome must be the same in every order.
"""

from typing import Any, AsyncGenerator

from gates import Turns
from adk_kit import (
    fan_out_then,
    APP,
    USER,
    Event,
    EventActions,
    Step,
    run_turn,
    stored_state,
)

from google.adk.agents import BaseAgent, ParallelAgent
from google.adk.sessions import InMemorySessionService

from fanin.probe import Claim, Observer, probe
from mitigation import judge, words

STATE_DOC = "https://google.github.io/adk-docs/sessions/state/"


class Guard(BaseAgent):
    """A branch that runs its one sub-agent and catches what it raises, recording a failure result in `key`.

    `turns` is gate plumbing only: a branch that raised never marks its turn done, so its guard does,
    after the failure result is stored, to let the next branch go as in the hazard probe's order.
    """

    key: str
    turns: Any = None

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        child = self.sub_agents[0]
        try:
            async for event in child.run_async(ctx):
                yield event
        except Exception as exc:  # noqa: BLE001 - the mitigation: every failure becomes this branch's result
            yield Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                branch=ctx.branch,
                actions=EventActions(state_delta={self.key: {"failed": type(exc).__name__}}),
            )
            if self.turns is not None:
                self.turns.done(child.name)


@probe(
    "adk/parallel-agent/child-exception-mitigated",
    title="child-exception, mitigated: each ParallelAgent branch catches its exception and records a failure result"
    " in its own key; `a` raises between b's and c's writes; two completion orders",
    claim=Claim(
        "With exceptions caught inside each branch and recorded as that branch's result, the run completes and every"
        " branch's result (failures included) is kept, whatever the exception type.",
        "https://github.com/google/adk-python/blob/main/src/google/adk/agents/parallel_agent.py",
        expect={"hazard": "safe", "value.variants.caught in each branch.runs.b,a,c.result.result_a": {"failed": "RuntimeError"}},
    ),
)
async def test_child_exception_mitigated(obs: Observer) -> None:
    runs = {}
    for order in (["b", "a", "c"], ["c", "a", "b"]):
        turns = Turns(order)
        log: list = []
        branches = [
            Guard(name="guard_a", key="result_a", turns=turns, sub_agents=[Step(name="a", turns=turns, fail=True, log=log)]),
            Guard(name="guard_b", key="result_b", turns=turns, sub_agents=[Step(name="b", turns=turns, delta={"result_b": "B"}, log=log)]),
            Guard(name="guard_c", key="result_c", turns=turns, sub_agents=[Step(name="c", turns=turns, delta={"result_c": "C"}, log=log)]),
        ]
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        result = await obs.attempt_async(lambda: run_turn(ParallelAgent(name="fanout", sub_agents=branches), service, "s1"))
        if "raises" in result:
            runs[",".join(order)] = {"raises": result["raises"]}
            continue
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        state = await stored_state(service, "s1")
        writes = {"result_a": {"failed": "RuntimeError"}, "result_b": "B", "result_c": "C"}
        runs[",".join(order)] = {
            "made": [f"{k}: {v}" for k, v in writes.items()],
            "kept": [f"{k}: {v}" for k, v in writes.items() if state.get(k) == v],
            "result": {k: state.get(k) for k in writes},
            "observed": {"branches": dict(sorted({name: what for name, what in log}.items()))},
        }
    value, hazard = judge({"caught in each branch": runs})
    label, detail = words(value, hazard, safe="run completes, every result kept")
    obs.record(value, label=label, detail=detail, hazard=hazard)


class Accept(BaseAgent):
    """The step after the fan-out: accepts `result_<branch>` only if stamped with this run's id (`<run_id>:...`);
    a value of another run is rejected, a branch without one is listed as missing."""

    branches: list[str]

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        run_id = state.get("run_id")
        verdict: dict[str, Any] = {"accepted": {}, "rejected": [], "missing": []}
        for branch in self.branches:
            value = state.get(f"result_{branch}")
            if value is None:
                verdict["missing"].append(branch)
            elif str(value).startswith(f"{run_id}:"):
                verdict["accepted"][branch] = value
            else:
                verdict["rejected"].append(branch)
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={"gathered": verdict}),
        )


def accounted(made: dict[str, str], verdict: dict, run_id: str) -> dict:
    """A run's branch writes against what the checking step accepted; a value of another run accepted is wrong."""
    accepted = verdict.get("accepted", {})
    return {
        "made": [f"{b}: {v}" for b, v in made.items()],
        "kept": [f"{b}: {v}" for b, v in made.items() if accepted.get(b) == v],
        "wrong": [f"{b}: stale {v}" for b, v in accepted.items() if not str(v).startswith(f"{run_id}:")],
    }


@probe(
    "adk/escalate/direct-child-mitigated",
    title="escalate direct-child, mitigated: the step after the ParallelAgent checks which branch results are present"
    " and stamped with this run, after an earlier run on the same session left all three",
    claim=Claim(
        "A fan-in step that checks which branch results are present, and which run they belong to, never uses a"
        " cancelled branch's missing result or an earlier run's value as if it were this run's.",
        "https://github.com/google/adk-python/issues/5104",
        expect={"hazard": "safe"},
    ),
)
async def test_direct_child_mitigated(obs: Observer) -> None:
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    runs = {}
    for run_id, escalate in (("run-1", False), ("run-2", True)):
        turns = Turns(["a", "b", "c"])
        log: list = []
        branches = [
            Step(name="a", turns=turns, escalate=escalate, delta={"result_a": f"{run_id}:A"}, log=log),
            Step(name="b", turns=turns, delta={"result_b": f"{run_id}:B"}, log=log),
            Step(name="c", turns=turns, delta={"result_c": f"{run_id}:C"}, log=log),
        ]
        stamp = Step(name="stamp", delta={"run_id": run_id})
        gather = Accept(name="gather", branches=["a", "b", "c"])
        _, state = await fan_out_then(obs, branches, [gather], before=[stamp], turns=turns, service=service)
        verdict = state.get("gathered") or {}
        acted = [name for name, what in log if what == "acted"]
        made = {n: f"{run_id}:{n.upper()}" for n in ("a", "b", "c") if n in acted}
        runs[f"{run_id}{', a escalates' if escalate else ''}"] = {
            **accounted(made, verdict, run_id),
            "result": verdict,
            "observed": {"siblings": {n: dict(log).get(n, "never started") for n in ("b", "c")}},
        }
    # The runs differ on purpose (the second escalates): each is judged alone, not against the other.
    value, hazard = judge({run: {"run": seen} for run, seen in runs.items()})
    label, detail = words(value, hazard, safe="partial and stale results flagged")
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/session/stale-result-mitigated",
    title="stale-result, mitigated: the fan-out twice on one session, b writing nothing the second time; results"
    " stamped with the run id and checked, or the branch keys cleared at the start of each run",
    claim=Claim(
        "Results stamped with the run id (or branch keys cleared when a run starts), checked after the fan-out, never"
        " let an earlier run's value pass for this run's.",
        STATE_DOC,
        expect={"hazard": "safe"},
    ),
)
async def test_stale_result_mitigated(obs: Observer) -> None:
    async def sequence(clear: bool, order: list[str]) -> dict:
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        after = {}
        made_all: list[str] = []
        kept_all: list[str] = []
        wrong_all: list[str] = []
        for run_id, b_writes in (("run-1", True), ("run-2", False)):
            turns = Turns(order)
            branches = [
                Step(name="a", turns=turns, delta={"result_a": f"{run_id}:A"}),
                Step(name="b", turns=turns, delta={"result_b": f"{run_id}:B"} if b_writes else {}),
            ]
            start = {"run_id": run_id, **({"result_a": None, "result_b": None} if clear else {})}
            gather = Accept(name="gather", branches=["a", "b"])
            _, state = await fan_out_then(
                obs, branches, [gather], before=[Step(name="stamp", delta=start)], turns=turns, service=service
            )
            verdict = state.get("gathered") or {}
            made = {"a": f"{run_id}:A", **({"b": f"{run_id}:B"} if b_writes else {})}
            seen = accounted(made, verdict, run_id)
            made_all += [f"{run_id} {w}" for w in seen["made"]]
            kept_all += [f"{run_id} {w}" for w in seen["kept"]]
            wrong_all += [f"{run_id} {w}" for w in seen["wrong"]]
            after[run_id] = verdict
        return {"made": made_all, "kept": kept_all, "wrong": wrong_all, "result": after}

    variants = {}
    for variant, clear in (("stamped with the run id, checked", False), ("branch keys cleared at the start", True)):
        variants[variant] = {
            f"finish {','.join(order)}": await sequence(clear, order) for order in (["b", "a"], ["a", "b"])
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe="stale result rejected, order-independent")
    obs.record(value, label=label, detail=detail, hazard=hazard)
