"""LlmAgent children of a ParallelAgent storing their reply with `output_key`.

The model is the suite's FakeModel (ADK's BaseLlm interface, canned text), so
the reply is saved to state by LlmAgent's own output_key code path.
"""

from typing import Any

from gates import Turns
from adk_kit import fake_llm_agent, run_once

from google.adk.agents import ParallelAgent

from fanin.probe import Claim, Observer, probe

PARALLEL_AGENT_DOC = "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/"


@probe(
    "adk/output-key/same-key",
    title="Three LlmAgent children of a ParallelAgent share one output_key",
    claim=Claim(
        "Parallel sub-agents share session state; to avoid race conditions each one should write "
        "its result to a distinct output_key. A shared key keeps only one reply.",
        PARALLEL_AGENT_DOC,
        expect={"value.a,b,c.final": "reply c", "value.c,b,a.final": "reply a"},
    ),
)
async def test_same_key(obs: Observer) -> None:
    runs: dict[str, dict[str, Any]] = {}
    for order in (["a", "b", "c"], ["c", "b", "a"]):
        turns = Turns(order)
        children = [fake_llm_agent(n, f"reply {n}", turns=turns, output_key="result") for n in ("a", "b", "c")]
        with obs.framework():
            events, state = await run_once(ParallelAgent(name="fanout", sub_agents=children))
        obs.require_in_flight(turns)
        writers = [e.author for e in events if e.actions and "result" in (e.actions.state_delta or {})]
        # the gate's record of who finished when: graded by it, not by the events, so a reply
        # dropped on its way to the session (its event without the key) is not taken for the last
        runs[",".join(order)] = {"finish_order": list(turns.acted), "output_key_events": writers, "final": state.get("result")}
    last_wins = all(r["finish_order"] and r["final"] == f"reply {r['finish_order'][-1]}" for r in runs.values())
    lost = sum(sum(r["final"] != f"reply {n}" for n in r["finish_order"]) for r in runs.values())
    stored = sum(len(r["output_key_events"]) for r in runs.values())
    finished = sum(len(r["finish_order"]) for r in runs.values())
    survivors = "; ".join(f"{order} -> {r['final']}" for order, r in runs.items())
    rule = "the last to finish wins" if last_wins else "the survivor is not the last to finish"
    obs.record(
        runs,
        label="last reply wins" if last_wins else "not the last reply",
        detail=f"{stored} of {finished} replies stored under 'result' and {rule} ({survivors}); {lost} replies lost, no error",
        hazard="silent" if lost else "safe",
    )


@probe(
    "adk/output-key/distinct-keys",
    title="Three LlmAgent children of a ParallelAgent each have their own output_key",
    claim=Claim(
        "Give each parallel sub-agent its own output_key; every reply is then kept in session state.",
        PARALLEL_AGENT_DOC,
        expect={"value.final": {"result_a": "reply a", "result_b": "reply b", "result_c": "reply c"}},
    ),
)
async def test_distinct_keys(obs: Observer) -> None:
    turns = Turns(["c", "b", "a"])
    children = [fake_llm_agent(n, f"reply {n}", turns=turns, output_key=f"result_{n}") for n in ("a", "b", "c")]
    with obs.framework():
        events, state = await run_once(ParallelAgent(name="fanout", sub_agents=children))
    obs.require_in_flight(turns)
    writers = [e.author for e in events if e.actions and e.actions.state_delta]
    kept = {key: state.get(key) for key in ("result_a", "result_b", "result_c")}
    count = sum(v is not None for v in kept.values())
    obs.record(
        {"output_key_events": writers, "final": kept},
        label=f"{count} of 3 replies kept",
        detail=f"{len(writers)} output_key events in the order {','.join(writers)}; {count} of 3 replies are in state",
        hazard="safe" if count == 3 else "silent",
    )
