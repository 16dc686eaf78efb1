"""Helpers shared by the Microsoft Agent Framework (agent-framework-core) probes.

Kept small on purpose: a probe's own function is its reproducer in the report, so anything that
decides what a probe observes stays in the probe. No model is replaced here because none is used:
the workflows are plain executors, so everything is the real framework's builder, runner, edge
runners and shared state.

- `Node`: one executor whose behaviour is an `async def act(node_id, message, ctx)` the probe
  gives it. It takes a `str` (a plain edge, a fan-out) or a `list[str]` (a fan-in group's
  aggregated messages), sends `str` messages and yields any output.
- `run`: one workflow run, streamed, as plain data: which superstep each executor ran in, what
  it yielded, the last run state, and the exception class if the run raised.
"""

import asyncio
from typing import Any

from agent_framework import Executor, WorkflowContext, handler


class Node(Executor):
    """A plain executor; `act(node_id, message, ctx)` is what it does with each message."""

    def __init__(self, id: str, act: Any) -> None:
        super().__init__(id=id)
        self._act = act

    @handler
    async def one(self, message: str, ctx: WorkflowContext[str, Any]) -> None:
        await self._act(self.id, message, ctx)

    @handler
    async def many(self, messages: list[str], ctx: WorkflowContext[str, Any]) -> None:
        await self._act(self.id, messages, ctx)


async def forward(node_id: str, message: Any, ctx: Any) -> None:
    """The plainest step: pass on its own id."""
    await ctx.send_message(node_id)


async def run(
    workflow: Any,
    message: Any = "go",
    *,
    catch: bool = False,
    bound: float = 10.0,
    start: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Stream one run to its end (at most `bound` seconds, a deadlock breaker that is recorded as such).

    An exception the run raises propagates (call it inside `obs.framework()`), unless `catch`: then it
    is part of the returned trace, for probes where a failing run is the scenario. `start` replaces the
    message with other arguments of `workflow.run` (e.g. `{"checkpoint_id": ...}` to resume).

    Returns plain data:
    - "steps": {executor_id: [superstep, ...]}, the runner's own `superstep_started` numbers (an
      executor invoked before the first of them, as the start executor was in early 1.x, is step 0);
    - "outputs": what was yielded; "states": the run-state events, "last_state" the last of them;
    - "failures": the `executor_failed` / `failed` events' error details
      ({"event", "error_type", "message", "traceback": bool});
    - "raises" / "message": the exception class and text (with `catch`, when the run raised);
    - "hung": True, only when the bound was reached.
    """
    trace: dict[str, Any] = {"steps": {}, "outputs": [], "states": [], "failures": []}
    step = 0

    async def consume() -> None:
        nonlocal step
        stream = workflow.run(message, stream=True) if start is None else workflow.run(stream=True, **start)
        async for event in stream:
            kind = event.type
            if kind == "superstep_started":
                step = event.iteration
            elif kind == "executor_invoked":
                trace["steps"].setdefault(event.executor_id, []).append(step)
            elif kind == "output":
                trace["outputs"].append(event.data)
            elif kind in ("executor_failed", "failed"):
                details = getattr(event, "details", None) or event.data
                trace["failures"].append(
                    {
                        "event": kind,
                        "error_type": getattr(details, "error_type", None),
                        "message": getattr(details, "message", None),
                        "traceback": bool(getattr(details, "traceback", None)),
                    }
                )
            elif kind == "status":
                trace["states"].append(getattr(event.state, "value", str(event.state)))

    try:
        await asyncio.wait_for(consume(), bound)
    except asyncio.TimeoutError:
        trace["hung"] = True
    except Exception as exc:
        if not catch:
            raise
        trace["raises"] = type(exc).__name__
        trace["message"] = str(exc)
    trace["last_state"] = trace["states"][-1] if trace["states"] else None
    return trace
