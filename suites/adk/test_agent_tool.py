"""AgentTools called in parallel (two function calls in one model turn), each sub-agent with an output_key."""

from typing import Any

from gates import IdleTurns
from adk_kit import run_once, two_agent_tools

from fanin.probe import Claim, Observer, probe


@probe(
    "adk/agent-tool/parallel-state-delta",
    title="A root agent calls two AgentTools in one turn, each sub-agent with its own output_key",
    claim=Claim(
        "When a root agent invokes several AgentTools in parallel, the merged function-response event "
        "does not aggregate their state_delta: the session keeps only one sub-agent's output_key.",
        "https://github.com/google/adk-python/issues/1153",
        expect={"hazard": "silent"},
    ),
)
async def test_parallel_state_delta(obs: Observer) -> None:
    AgentTool = obs.need("google.adk.tools.agent_tool", "AgentTool")
    # prime is released before roll; if ADK runs the two calls one after the other, the gate sees the
    # event loop go idle with only one call in flight and lets it go: recorded as sequential, not hidden.
    turns = IdleTurns(["prime", "roll"])
    root = two_agent_tools(AgentTool, turns)
    with obs.framework():
        events, state = await run_once(root)
    responses = [e for e in events if e.get_function_responses()]
    value: dict[str, Any] = {
        "tool_calls_ran": "one after the other" if turns.vacuous else "concurrently",
        "function_response_events": len(responses),
        "responses_per_event": [len(e.get_function_responses()) for e in responses],
        "state_delta_keys": [sorted(e.actions.state_delta or {}) for e in responses],
        "final": {k: state.get(k) for k in ("result_roll", "result_prime")},
    }
    kept = [k for k, v in value["final"].items() if v is not None]
    obs.record(
        value,
        label=f"{len(kept)} of 2 output keys kept",
        detail=f"the two AgentTool calls ran {value['tool_calls_ran']}; {len(responses)} function-response event(s) "
        f"carry state keys {value['state_delta_keys']}; state keeps {', '.join(kept) or 'neither'}",
        hazard="safe" if len(kept) == 2 else "silent",
    )
