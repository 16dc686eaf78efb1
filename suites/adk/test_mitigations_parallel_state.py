"""Mitigations of the session-state hazards of parallel branches (temp: keys, parallel state deltas).

Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. Each
probe is its hazard probe's scenario (same agents, same gates) with the fix applied, run in two or more
forced completion orders: every write the branches made must be kept (in state, or in the merge
record with the branch it came from), and the outcome must be the same in every order.
"""

import asyncio

from gates import Turns
from adk_kit import (
    fan_out_then,
    Reader,
    two_agent_tools,
    Step,
    run_once,
    settle,
)


from fanin.probe import Claim, Observer, probe
from mitigation import judge, words

STATE_DOC = "https://google.github.io/adk-docs/sessions/state/"


@probe(
    "adk/session/temp-prefix-mitigated",
    title="temp-prefix, mitigated: branch a passes x to its sibling b through a regular key, removed by a cleanup"
    " step after the ParallelAgent; a finishing first (the hazard's order), then b first",
    claim=Claim(
        "A regular key is visible to every later reader in the invocation; a cleanup step removes it from the stored"
        " state once the branches are done.",
        STATE_DOC,
        expect={"value.variants.regular key, cleaned up.runs.a first.result.sibling_reads": "A"},
    ),
)
async def test_temp_prefix_mitigated(obs: Observer) -> None:
    runs = {}
    for order in (["a", "b"], ["b", "a"]):
        turns = Turns(order)
        seen: dict = {}
        branches = [
            Step(name="a", turns=turns, delta={"handoff_x": "A", "result_a": "done"}),
            Reader(name="b", turns=turns, key="handoff_x", seen=seen),
        ]
        events, state = await fan_out_then(obs, branches, [Step(name="cleanup", delta={"handoff_x": None})], turns=turns)
        # The write is kept if it reached the session (an event's state_delta before the cleanup).
        stored = any((e.actions.state_delta or {}).get("handoff_x") == "A" for e in events if e.author == "a")
        runs[f"{order[0]} first"] = {
            "made": ["a: handoff_x=A"],
            "kept": ["a: handoff_x=A"] if stored else [],
            "wrong": [f"handoff_x left in state: {state.get('handoff_x')!r}"] if state.get("handoff_x") is not None else [],
            "result": {"sibling_reads": seen.get("handoff_x"), "after_cleanup": state.get("handoff_x")},
        }
    value, hazard = judge({"regular key, cleaned up": runs})
    label, detail = words(value, hazard, safe="sibling sees it, cleaned up")
    if hazard == "order-coupled":
        label = "b sees x only if a finished first"
    obs.record(value, label=label, detail=detail, hazard=hazard)


class Calls:
    """`Turns` for calls that a version may run concurrently or one by one, told apart without a clock.

    The first call to arrive lets the event loop settle (`adk_kit.settle`: loop iterations, no wall time):
    if the other call has not arrived by then, nothing else is in flight, so the version runs the calls one
    after the other (`sequential`) and every call goes at once; otherwise they are released in `order`.
    """

    def __init__(self, order: list[str]) -> None:
        self.order = list(order)
        self.arrived: list[str] = []
        self.acted: list[str] = []
        self.sequential = False
        self._events = {name: asyncio.Event() for name in self.order}

    async def wait(self, name: str) -> None:
        self.arrived.append(name)
        if set(self.arrived) >= set(self.order):
            self._events[self.order[0]].set()
        elif len(self.arrived) == 1:
            await settle()
            if not set(self.arrived) >= set(self.order):
                self.sequential = True
                for event in self._events.values():
                    event.set()
        await self._events[name].wait()

    def done(self, name: str) -> None:
        self.acted.append(name)
        position = self.order.index(name)
        if position + 1 < len(self.order):
            self._events[self.order[position + 1]].set()


@probe(
    "adk/agent-tool/parallel-state-delta-mitigated",
    title="parallel-state-delta, mitigated: the two AgentTool results read from their function responses, not from"
    " the output_keys; both completion orders",
    claim=Claim(
        "Each AgentTool's result is in its function response, whichever output_key landed in the session state.",
        "https://github.com/google/adk-python/issues/1153",
        expect={"hazard": "safe"},
    ),
)
async def test_parallel_state_delta_mitigated(obs: Observer) -> None:
    AgentTool = obs.need("google.adk.tools.agent_tool", "AgentTool")
    runs = {}
    for order in (["prime", "roll"], ["roll", "prime"]):
        # the hazard probe's gate gives up after `patience` when a version runs the calls one by one; this one
        # tells the two cases apart by letting the event loop settle, so no run waits on a clock
        turns = Calls(order)
        root = two_agent_tools(AgentTool, turns)
        with obs.framework():
            events, state = await run_once(root)
        responses = {r.name: r.response for e in events for r in e.get_function_responses()}
        results = {name: (responses.get(name) or {}).get("result") for name in ("roll", "prime")}
        writes = {"roll": "6", "prime": "yes"}
        runs[f"{order[0]} first"] = {
            "made": [f"{k}: {v}" for k, v in writes.items()],
            "kept": [f"{k}: {v}" for k, v in writes.items() if results.get(k) == v],
            "result": results,
            "observed": {
                "tool_calls_ran": "one after the other" if turns.sequential else "concurrently",
                "finished": turns.acted,
                "output_keys_in_state": sorted(k for k in ("result_roll", "result_prime") if state.get(k) is not None),
            },
        }
    value, hazard = judge({"read from the function responses": runs})
    label, detail = words(value, hazard, safe="both results read, order-independent")
    obs.record(value, label=label, detail=detail, hazard=hazard)
