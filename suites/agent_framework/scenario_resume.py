"""Agent Framework's `pause` and `resume` for its scenario adapter (docs/ADAPTERS.md), and why `together` cannot.

A branch pauses the way an executor asks a person: `ctx.request_info(name, str, request_id=...)` (the workflow
emits a request_info event), and its handler ends there without sending a message, so the fan-in waits. The
branch's executor has a `@response_handler` for that request: once answered it runs the branch's part again with
the answer (`scenario_kit.ANSWER`; the steps before the pause are the turn alone, which does not wait on resume)
and sends the branch's message on. The workflow is built with a `FileCheckpointStorage` on a folder of
`script.store_dir()`, which saves a checkpoint at the end of every superstep that succeeded; the stopped run is
resumed from the latest one, the documented way, on a workflow built anew with another storage object on that
folder (a restarted worker; the adapter says why not the same instance): `run(checkpoint_id=...,
responses={request_id: answer})` after a pause (restore, then send the responses), `run(checkpoint_id=...)` after a
failure (the checkpoint's pending messages are delivered again).

Run as a module of the adapter (`scenario_adapter.py` imports it); the file has no `from __future__ import
annotations` because `@response_handler` reads the request and response types from the handler's annotations.
"""

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import agent_framework
import scenario_kit
from af_kit import Node
from agent_framework import WorkflowContext

# A release without it cannot pause (`cannot`); its Asking executor is then a plain Node with an unused method.
_response_handler: Any = getattr(agent_framework, "response_handler", lambda method: method)

# What the response handler does with an answer: `(node_id, answer, ctx)`, the branch's part run on from there.
Answered = Callable[[str, Any, Any], Awaitable[None]]


class Paused(Exception):
    """A branch's request for input has been made: its handler ends here, and the response handler goes on."""


def cannot() -> dict[str, str]:
    """Why this release cannot pause a branch or resume a stopped run, read from the installed package (empty
    when it can): a branch asks with WorkflowContext.request_info and is answered in a @response_handler; a run
    is resumed by Workflow.run(checkpoint_id=..., responses=...) from a FileCheckpointStorage."""
    from agent_framework import Workflow

    found: dict[str, str] = {}
    asks = [name for name in ("response_handler",) if not hasattr(agent_framework, name)]
    if not hasattr(WorkflowContext, "request_info"):
        asks.insert(0, "WorkflowContext.request_info")
    if asks:
        found["pause"] = f"agent_framework has no {' or '.join(asks)}: an executor cannot ask for input mid-run"
    taken = set(inspect.signature(Workflow.run).parameters)
    lacks = [name for name in ("checkpoint_id", "responses") if name not in taken]
    if not hasattr(agent_framework, "FileCheckpointStorage"):
        lacks.insert(0, "FileCheckpointStorage")
    if lacks:
        found["resume"] = f"agent_framework lacks {', '.join(lacks)} (Workflow.run's parameters or the package's"
        found["resume"] += " exports): a stopped run cannot be resumed from a checkpoint with an answer"
    return found


def together() -> str:
    """Why two runs cannot go at once on one checkpoint folder, read from FileCheckpointStorage's methods (and
    `thread`'s reason, Workflow.run's own rule, which the scenario names first)."""
    if not hasattr(agent_framework, "FileCheckpointStorage"):
        return "agent_framework has no FileCheckpointStorage: no folder of checkpoints for two runs to share"
    from agent_framework import FileCheckpointStorage

    kept = ", ".join(name for name in vars(FileCheckpointStorage) if not name.startswith("_"))
    return (
        f"a FileCheckpointStorage folder keeps checkpoints of runs in progress ({kept}), and a run started from one"
        " takes no new input: two runs on one folder are two resumes, never two runs on one stored thread (see thread)"
    )


class Asking(Node):
    """A branch's executor: the plain Node's handlers, and a response handler for its own request for input."""

    def __init__(self, id: str, act: Any, answered: Answered) -> None:
        super().__init__(id, act)
        self._answered = answered

    @_response_handler
    async def answer(self, request: str, response: str, ctx: WorkflowContext[str, Any]) -> None:
        await self._answered(self.id, response, ctx)


def pause(ctx: Any) -> scenario_kit.Pauser:
    """A branch asks for human input: the request made through its context, then its handler ends (Paused)."""

    async def ask(name: str) -> Any:
        await ctx.request_info(name, str, request_id=request_id(name))
        raise Paused(name)

    return ask


def request_id(name: str) -> str:
    """The id of branch `name`'s request: chosen by the adapter, so the resume answers it by name."""
    return f"fanin-{name}"


async def latest(storage: Any, workflow: Any) -> str:
    """The id of the stopped run's latest checkpoint (saved at the end of each superstep)."""
    checkpoint = await storage.get_latest(workflow_name=workflow.name)
    if checkpoint is None:
        raise RuntimeError("the stopped run left no checkpoint in its FileCheckpointStorage to resume from")
    return str(checkpoint.checkpoint_id)


async def resume_start(script: scenario_kit.Script, storage: Any, workflow: Any) -> dict[str, Any]:
    """`workflow.run`'s arguments that resume the stopped run: its latest checkpoint, and the paused branches'
    answers when it stopped at a request for input."""
    start: dict[str, Any] = {"checkpoint_id": await latest(storage, workflow)}
    if script.paused:
        start["responses"] = {request_id(name): scenario_kit.ANSWER for name in sorted(script.paused)}
    return start
