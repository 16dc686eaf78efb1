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
With `pause` and `resume` (scenario_resume.py), a branch asks for input with `ctx.request_info` and is answered in
its executor's `@response_handler`; the workflow saves its checkpoints in a `FileCheckpointStorage` folder, and
the stopped run is resumed from the latest one on a workflow built anew on that folder (a restarted worker):
`run(checkpoint_id=..., responses=...)` after a pause, `run(checkpoint_id=...)` after a failure. Built anew, not
on the same instance: the instance keeps the fan-in's buffered messages in memory, which only releases whose
FanInEdgeRunner has `snapshot_state` put in a checkpoint (before that, a sibling's message to the join is lost on
a resume from the store: the join never runs; on the same instance it runs). A checkpoint is saved only after a
superstep that succeeded, so after a failure every branch of the failed superstep runs again, a finished one too.
Two runs at once on one folder (`together`) cannot: a run from a checkpoint takes no new input (`thread`).

Run as a program: `PYTHONPATH=suites:. python suites/agent_framework/scenario_adapter.py`.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import af_kit
import scenario_kit
import scenario_resume
from af_kit import Node
from agent_framework import WorkflowBuilder


def capabilities() -> dict[str, Any]:
    thread = _no_thread()
    return scenario_kit.declare(
        "agent_framework",
        version("agent-framework-core"),
        {
            "escalate": "an executor has no way to stop the workflow: its WorkflowContext sends messages, yields"
            " outputs, adds events, requests info and keeps state, and a run ends only once no message is pending",
            "thread": thread,
            "together": scenario_resume.together(),
            **scenario_resume.cannot(),
        },
        also=("runs", "thread", "stall", "together", "pause", "resume"),
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
    if not script.resumes:
        return await _run(script, None)
    with script.store_dir() as folder:  # `resume`: the checkpoints' folder, removed once the answer is made
        return await _run(script, folder)


def _storage(folder: Any) -> Any:
    """A FileCheckpointStorage on `folder` (imported here: `capabilities` names a release without it in `cannot`)."""
    from agent_framework import FileCheckpointStorage

    return FileCheckpointStorage(folder)


async def _run(script: scenario_kit.Script, folder: Any) -> dict[str, Any]:
    initial = script.state
    joined: dict[str, Any] = {}

    async def seed(node_id: str, message: Any, ctx: Any) -> None:
        for key, value in initial.items():
            ctx.set_state(key, value)
        await ctx.send_message(node_id)

    async def walk(name: str, part: int, ctx: Any, pause: Any) -> None:
        try:
            returned = await script.branch(name, read=ctx.get_state, write=ctx.set_state, part=part, pause=pause)
        except scenario_resume.Paused:
            return  # the branch asked for input: it sends nothing until its response handler runs
        await ctx.send_message(name if returned is None else returned)

    def part_of(name: str, part: int) -> Any:
        async def branch(node_id: str, message: Any, ctx: Any) -> None:
            await walk(name, part, ctx, scenario_resume.pause(ctx))

        return branch

    def answered_of(name: str, part: int) -> scenario_resume.Answered:
        async def answered(node_id: str, answer: Any, ctx: Any) -> None:
            await walk(name, part, ctx, lambda _: answer)  # the branch goes on past its pause with the answer

        return answered

    async def join(node_id: str, messages: Any, ctx: Any) -> None:
        script.join_runs += 1
        joined.setdefault("saw", []).extend(messages if isinstance(messages, list) else [messages])
        joined["state"] = {key: ctx.get_state(key) for key in initial}

    def build(storage: Any) -> Any:
        """The scenario's workflow, built anew each call: with a checkpoint storage (`resume`), named, so a
        workflow built again on the same folder finds the stopped run's checkpoints."""
        start, joiner = Node("start", seed), Node("join", join)
        chains = [
            [
                scenario_resume.Asking(script.node(name, part), part_of(name, part), answered_of(name, part))
                for part in range(script.parts(name))
            ]
            for name in script.branches
        ]
        workflow = (
            WorkflowBuilder(start_executor=start)
            if storage is None
            else WorkflowBuilder(name="scenario", start_executor=start, checkpoint_storage=storage)
        )
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
        return workflow.add_fan_in_edges([chain[-1] for chain in chains], joiner).build()

    built = build(None if folder is None else _storage(folder))
    error = None
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
    if folder is not None:  # `resume`: the stopped run resumed from its checkpoints, on a workflow built anew
        await script.resume()
        storage = _storage(folder)  # another storage object on the folder, as a restarted worker's
        again = build(storage)
        start = await scenario_resume.resume_start(script, storage, again)
        error = None
        try:
            trace = await script.run(af_kit.run(again, start=start)) or {}
        except Exception as exc:
            trace, error = {}, exc
        if trace.get("hung"):
            return {"error": "the resumed run did not end within af_kit's bound"}
    return await script.answer(
        raises=None if error is None else type(error).__name__,
        final=lambda: joined.get("state"),
        saw=joined.get("saw"),
        error=error,
    )


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
