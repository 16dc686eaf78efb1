"""Microsoft Agent Framework's scenario adapter (docs/ADAPTERS.md): a scenario as a workflow of executors.

A `start` executor seeds the shared state (`ctx.set_state`, one key each) and fans out to one executor
per branch (`add_fan_out_edges`); every branch fans in to one `join` executor (`add_fan_in_edges`, in
the branches' declaration order), which receives the list of their messages: `join.saw`. A branch's
`read` and `write` are `ctx.get_state` and `ctx.set_state`; its `return` value is the message it sends
(a branch without one sends its name). The caller of `workflow.run` gets no state object back, so
`final` is the state as the join reads it (`ctx.get_state`, what the next step sees), null when the
join never ran (a run that raised).

Run as a program: `PYTHONPATH=suites:. python suites/agent_framework/scenario_adapter.py`.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import af_kit
import scenario_kit
from af_kit import Node
from agent_framework import WorkflowBuilder


def capabilities() -> dict[str, Any]:
    return scenario_kit.declare("agent_framework", version("agent-framework-core"))


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    script = scenario_kit.Script(scenario, order)
    initial = script.state
    joined: dict[str, Any] = {}

    async def seed(node_id: str, message: Any, ctx: Any) -> None:
        for key, value in initial.items():
            ctx.set_state(key, value)
        await ctx.send_message(node_id)

    async def branch(node_id: str, message: Any, ctx: Any) -> None:
        returned = await script.branch(node_id, read=ctx.get_state, write=ctx.set_state)
        await ctx.send_message(node_id if returned is None else returned)

    async def join(node_id: str, messages: list[Any], ctx: Any) -> None:
        joined["saw"] = list(messages)
        joined["state"] = {key: ctx.get_state(key) for key in initial}

    start, joiner = Node("start", seed), Node("join", join)
    nodes = [Node(name, branch) for name in script.branches]
    workflow = WorkflowBuilder(start_executor=start).add_fan_out_edges(start, nodes).add_fan_in_edges(nodes, joiner)
    trace = await af_kit.run(workflow.build(), catch=True)
    if trace.get("hung"):
        return {"error": "the run did not end within af_kit's bound"}
    return await script.answer(raises=trace.get("raises"), final=lambda: joined.get("state"), saw=joined.get("saw"))


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
