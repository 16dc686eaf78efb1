"""Mitigations of the ParallelAgent hazards where the outcome follows the order branches finish in.

Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. Each
probe is its hazard probe's scenario (same agents, same gates) with the fix applied, run in two or more
forced completion orders: every write the branches made must be kept (in state, or in the merge
record with the branch it came from), and the outcome must be the same in every order.
"""

from typing import Any, AsyncGenerator

from gates import Turns
from adk_kit import (
    callback_gate,
    fan_out_then,
    Event,
    EventActions,
    FakeModel,
    Step,
    run_once,
)

from google.adk.agents import BaseAgent, LlmAgent, ParallelAgent

from fanin.probe import Claim, Observer, probe
from mitigation import judge, words

PARALLEL_AGENT_DOC = "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/"


class Present(BaseAgent):
    """After the ParallelAgent: reads each branch's key in the order of the sub-agent list, writes that list."""

    branches: list[str]
    prefix: str
    target: str

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        presented = [state.get(self.prefix + branch) for branch in self.branches]
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={self.target: presented}),
        )


@probe(
    "adk/parallel-agent/completion-order-mitigated",
    title="completion-order, mitigated: a step after the ParallelAgent presents the results in sub-agent list order"
    " (reading each branch's key); children released c, b, a, then a, b, c",
    claim=Claim(
        "Results read from each branch's key in the order of the sub-agent list come out in that order whatever the"
        " completion order.",
        PARALLEL_AGENT_DOC,
        expect={"hazard": "safe", "value.variants.read in sub-agent order.runs.c,b,a.result": ["A", "B", "C"]},
    ),
)
async def test_completion_order_mitigated(obs: Observer) -> None:
    runs = {}
    for order in (["c", "b", "a"], ["a", "b", "c"]):
        turns = Turns(order)
        children = [Step(name=n, turns=turns, delta={f"result_{n}": n.upper()}) for n in ("a", "b", "c")]
        present = Present(name="present", branches=["a", "b", "c"], prefix="result_", target="presented")
        events, state = await fan_out_then(obs, children, [present], turns=turns)
        presented = state.get("presented") or []
        writes = {n: n.upper() for n in ("a", "b", "c")}
        runs[",".join(order)] = {
            "made": [f"{b}: {v}" for b, v in writes.items()],
            "kept": [f"{b}: {v}" for b, v in writes.items() if v in presented],
            "result": presented,
            "observed": {"event_order": [e.author for e in events if e.author in writes]},
        }
    value, hazard = judge({"read in sub-agent order": runs})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/parallel-agent/branch-name-prefix-mitigated",
    title="branch-name-prefix, mitigated: the sibling LlmAgents named worker_01 and worker_10 (no name a prefix of"
    " another); both completion orders",
    claim=Claim(
        "Sibling names of which none is a prefix of another keep each branch's conversation isolated.",
        "https://github.com/google/adk-python/issues/2948",
        expect={"hazard": "safe"},
    ),
)
async def test_branch_name_prefix_mitigated(obs: Observer) -> None:
    names = ("worker_01", "worker_10")
    runs = {}
    for first, second in (names, names[::-1]):
        turns = Turns([first, second])
        models = {n: FakeModel(replies=[f"REPORT-OF-{n}"]) for n in names}

        children = [LlmAgent(name=n, model=models[n], output_key=f"out_{n}", **callback_gate(turns, n)) for n in names]
        with obs.framework():
            events, state = await run_once(ParallelAgent(name="fanout", sub_agents=children))
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        leaks = [
            f"{reader} sees {other}"
            for reader in names
            for other in names
            if other != reader and any(f"REPORT-OF-{other}" in t for request in models[reader].requests for t in request)
        ]
        writes = {f"out_{n}": f"REPORT-OF-{n}" for n in names}
        runs[f"{first} first"] = {
            "made": [f"{k}: {v}" for k, v in writes.items()],
            "kept": [f"{k}: {v}" for k, v in writes.items() if state.get(k) == v],
            "wrong": leaks,
            "result": {"leaks": leaks, "outputs": {k: state.get(k) for k in writes}},
        }
    value, hazard = judge({"names without a shared prefix": runs})
    label, detail = words(value, hazard, safe="isolated both ways, every reply kept")
    obs.record(value, label=label, detail=detail, hazard=hazard)
