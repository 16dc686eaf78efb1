"""Microsoft Agent Framework's scenario adapter (docs/ADAPTERS.md): a scenario as a workflow of executors.

A `start` executor seeds the shared state (`ctx.set_state`, one key each) and fans out to one executor
per branch (`add_fan_out_edges`; a branch of several parts, split by `then`, is a chain of executors joined by
`add_edge`, `b -> b.2`); every branch's last executor fans in to one `join` executor (`add_fan_in_edges`, in
the branches' declaration order), which receives the list of their messages: `join.saw`, all its runs'
messages in the order it received them; `join.runs` counts its runs. A conditional fan-out (`select`) is
`add_multi_selection_edge_group`, whose selection names the selected branches. A branch's
`read` and `write` are `ctx.get_state` and `ctx.set_state`; its `return` value is the message it sends
(a branch without one sends its name). The caller of `workflow.run` gets no state object back, so
`final` is the state as the join reads it (`ctx.get_state`, what the next step sees), null when the
join never ran (a run that raised). With `runs`, the one built workflow is run again (`workflow.run`, a new
message): the start executor seeds the state again, as a fresh input.

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
    return scenario_kit.declare(
        "agent_framework",
        version("agent-framework-core"),
        {
            "escalate": "an executor has no way to stop the workflow: its WorkflowContext sends messages, yields"
            " outputs, adds events, requests info and keeps state, and a run ends only once no message is pending",
            "thread": _no_thread(),
        },
        also=("runs", "thread", "stall"),
    )


def _no_thread() -> str:
    """Why two runs cannot go on one stored thread, read from the installed Workflow.run's own rule."""
    import inspect

    from agent_framework import Workflow

    try:
        Workflow._validate_run_params("input", None, "checkpoint")
    except ValueError as exc:
        return (
            "a Workflow has no stored thread to give a new input to: run(message) starts afresh and"
            f" run(checkpoint_id) only resumes a stored run; with both, run raises ValueError: {exc}"
        )
    except AttributeError:
        pass
    taken = ", ".join(name for name in inspect.signature(Workflow.run).parameters if name != "self")
    return f"Workflow.run takes ({taken}): no thread or session, only checkpoints of a run in progress"


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    script = scenario_kit.Script(scenario, order)
    initial = script.state
    joined: dict[str, Any] = {}

    async def seed(node_id: str, message: Any, ctx: Any) -> None:
        for key, value in initial.items():
            ctx.set_state(key, value)
        await ctx.send_message(node_id)

    def part_of(name: str, part: int) -> Any:
        async def branch(node_id: str, message: Any, ctx: Any) -> None:
            returned = await script.branch(name, read=ctx.get_state, write=ctx.set_state, part=part)
            await ctx.send_message(name if returned is None else returned)

        return branch

    async def join(node_id: str, messages: Any, ctx: Any) -> None:
        script.join_runs += 1
        joined.setdefault("saw", []).extend(messages if isinstance(messages, list) else [messages])
        joined["state"] = {key: ctx.get_state(key) for key in initial}

    start, joiner = Node("start", seed), Node("join", join)
    chains = [
        [Node(script.node(name, part), part_of(name, part)) for part in range(script.parts(name))]
        for name in script.branches
    ]
    workflow = WorkflowBuilder(start_executor=start)
    firsts = [chain[0] for chain in chains]
    if script.selected == script.branches:
        workflow = workflow.add_fan_out_edges(start, firsts)
    else:  # a conditional fan-out: a multi-selection edge group sends to the selected branches only
        if not hasattr(workflow, "add_multi_selection_edge_group"):
            raise scenario_kit.NotExpressible("WorkflowBuilder has no add_multi_selection_edge_group")
        chosen = list(script.selected)
        workflow = workflow.add_multi_selection_edge_group(start, firsts, lambda message, targets: chosen)
    for chain in chains:
        for one, two in zip(chain, chain[1:]):
            workflow = workflow.add_edge(one, two)
    built = workflow.add_fan_in_edges([chain[-1] for chain in chains], joiner).build()
    for number in range(script.runs):  # `runs`: the workflow instance built once, run again with a new message
        if number:
            await script.again()
            joined.clear()  # the adapter's own record of the join, per run; what the framework keeps is the question
        error = None
        try:
            trace = await script.run(af_kit.run(built)) or {}
        except Exception as exc:
            trace, error = {}, exc
        if trace.get("hung"):
            return {"error": "the run did not end within af_kit's bound"}
    return await script.answer(
        raises=None if error is None else type(error).__name__,
        final=lambda: joined.get("state"),
        saw=joined.get("saw"),
        error=error,
    )


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
