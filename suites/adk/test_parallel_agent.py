"""ParallelAgent children writing shared session state."""

from gates import Turns
from adk_kit import GatedWriter, run_once

from google.adk.agents import ParallelAgent

from fanin.probe import Claim, Observer, probe

PARALLEL_AGENT_DOC = "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/"


@probe(
    "adk/parallel-agent/same-key",
    title="Three ParallelAgent children emit a state_delta for the same key",
    claim=Claim(
        "Branches share session state and nothing merges their writes: each state_delta is applied "
        "as its event arrives, so the last arrival wins and the others are lost without an error.",
        PARALLEL_AGENT_DOC,
    ),
)
async def test_same_key(obs: Observer) -> None:
    runs = {}
    for order in (["a", "b", "c"], ["c", "b", "a"]):
        turns = Turns(order)
        children = [GatedWriter(name=n, turns=turns, delta={"result": n.upper()}) for n in ("a", "b", "c")]
        root = ParallelAgent(name="fanout", sub_agents=children)
        with obs.framework():
            events, state = await run_once(root)
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        deltas = [e.author for e in events if e.actions and "result" in (e.actions.state_delta or {})]
        runs[",".join(order)] = {"state_delta_events": deltas, "final": state.get("result")}
    last_wins = all(r["final"] == r["state_delta_events"][-1].upper() for r in runs.values() if r["state_delta_events"])
    arrived = sorted({len(r["state_delta_events"]) for r in runs.values()})
    rule = "last arrival wins" if last_wins else "the final value is not the last arrival"
    obs.record(
        runs,
        label="last arrival wins" if last_wins else "not the last arrival",
        detail=f"{'/'.join(map(str, arrived))} deltas arrive, {rule}: "
        + "; ".join(f"{k} -> {r['final']}" for k, r in runs.items()),
        hazard="silent" if max(arrived) > 1 else "safe",
    )


@probe(
    "adk/parallel-agent/distinct-keys",
    title="Three ParallelAgent children each write their own state key",
    claim=Claim(
        "Give each parallel branch its own output key so results do not overwrite each other.",
        PARALLEL_AGENT_DOC,
    ),
)
async def test_distinct_keys(obs: Observer) -> None:
    turns = Turns(["c", "b", "a"])
    children = [GatedWriter(name=n, turns=turns, delta={f"result_{n}": n.upper()}) for n in ("a", "b", "c")]
    root = ParallelAgent(name="fanout", sub_agents=children)
    with obs.framework():
        events, state = await run_once(root)
    if turns.vacuous:
        obs.vacuous(turns.vacuous)
    deltas = [e.author for e in events if e.actions and e.actions.state_delta]
    kept = {key: state.get(key) for key in ("result_a", "result_b", "result_c")}
    obs.record(
        {"state_delta_events": deltas, "final": kept},
        label=f"{sum(v is not None for v in kept.values())} of 3 keys kept",
        detail=f"{len(deltas)} deltas, kept {sum(v is not None for v in kept.values())} of 3 keys",
        hazard="safe" if all(kept.values()) else "silent",
    )
