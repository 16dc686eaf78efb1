"""The OpenAI Agents SDK's `pause` and `resume` for its scenario adapter (docs/ADAPTERS.md), the SDK's way to ask a person.

A paused branch is a tool call that needs approval: the `branch` tool gets `needs_approval`, a function the SDK
awaits for each call before it runs the tool (concurrently with the other calls of the turn, whose tools run). For a
branch with a `pause` step it runs the branch's steps up to the pause (its turn), and the pause answers that the call
needs approval: the SDK records a `ToolApprovalItem` and the run returns with it in `result.interruptions`, the
sibling calls' outputs kept. The stopped run's state is the SDK's serialized `RunState` (`result.to_state()
.to_string()`, written to a file), read back (`RunState.from_string(agent, text)`), each interruption approved
(`state.approve(item)`), and resumed with `Runner.run(agent, state)`: the SDK runs the approved call's tool, whose
pause answers `scenario_kit.ANSWER` (an approval carries no value of its own). The resumed run's context is the one
the state deserialized, which `final` reads.

A failed run has nothing of the SDK's to resume from: a tool's error is the model's input by default (the run goes
on), and with `failure_error_function=None` Runner.run raises, its `run_data` a `RunErrorDetails` with no `to_state`;
a `RunState` comes from a returned run's `RunResult.to_state()` alone. `cannot` and `no_failed_resume` read this from
the release.
"""

from __future__ import annotations

import dataclasses
import inspect
import pathlib
from collections.abc import Awaitable, Callable
from typing import Any

import scenario_kit

Asks = Callable[[Any, dict[str, Any], str], Awaitable[bool]]  # needs_approval(ctx, params, call_id)
Steps = Callable[[Any, str, scenario_kit.Pauser], Awaitable[Any]]  # a branch's steps in a tool call's context


class AsksApproval(Exception):
    """A branch's pause in its first run: the call needs approval (the SDK's interrupt, raised through the kit)."""


def cannot() -> dict[str, str]:
    """Why this release cannot pause or resume, read from the installed package (empty when it can)."""
    import agents

    found: dict[str, str] = {}
    if "needs_approval" not in inspect.signature(agents.function_tool).parameters:
        found["pause"] = "function_tool takes no needs_approval: a tool call cannot wait for a person's approval"
    if not hasattr(agents, "RunState"):
        found["resume"] = (
            "agents has no RunState: Runner.run takes a new input only (a string or a list of items), nothing a"
            " stopped run is resumed from"
        )
    return found


def no_failed_resume() -> str:
    """Why a failed run cannot be resumed, read from the release (one with RunState: a paused one can be)."""
    from agents import RunResult
    from agents.exceptions import RunErrorDetails

    if hasattr(RunErrorDetails, "to_state"):
        raise RuntimeError("RunErrorDetails has to_state: the adapter does not resume a failed run from it yet")
    names = ", ".join(f.name for f in dataclasses.fields(RunErrorDetails))
    made = "RunResult.to_state()" if hasattr(RunResult, "to_state") else "no RunResult method"
    return (
        "a failed run leaves no RunState: a tool's error is the model's input by default (the run goes on), and with"
        f" failure_error_function=None Runner.run raises, its run_data a RunErrorDetails ({names}) with no to_state;"
        f" a RunState comes from a returned run ({made}) alone"
    )


def pauses(script: scenario_kit.Script) -> bool:
    """Whether any branch of the scenario pauses (its tool call then needs approval)."""
    return any("pause" in steps for parts in script.steps.values() for steps in parts)


def approval(script: scenario_kit.Script, steps: Steps) -> Asks:
    """`needs_approval` for the `branch` tool: a pausing branch's steps (`steps(ctx, name, pause)`) up to its pause, in
    the SDK's check of the call (its first run), which then needs approval; a call the SDK checks again once
    approved (0.14 does, on resume) needs it still, and the SDK runs it."""

    async def asks(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
        name = str(params["name"])
        if not any("pause" in steps for steps in script.steps[name]):
            return False
        if script.resuming:  # approved: the SDK runs the tool, whose pause answers
            return True
        try:
            await steps(ctx, name, ask)
        except AsksApproval:
            return True
        raise RuntimeError(f"branch {name} did not pause in the approval check")

    return asks


def ask(name: str) -> Any:
    """A branch's pause in the first run, inside `needs_approval`: the call needs approval."""
    raise AsksApproval(f"branch {name} asks for approval")


def answer(name: str) -> Any:
    """A paused branch's pause once its call is approved: the SDK runs the tool only then."""
    return scenario_kit.ANSWER


async def resume(script: scenario_kit.Script, agent: Any, result: Any, store: pathlib.Path) -> Any:
    """Resume the stopped run from its serialized RunState (a file in `store`), every interruption approved."""
    from agents import RunConfig, Runner, RunState

    path = store / "run_state.json"
    path.write_text(result.to_state().to_string())
    await script.resume()
    state: Any = await RunState.from_string(agent, path.read_text())
    for item in state.get_interruptions():
        state.approve(item)
    return await script.run(Runner.run(agent, state, run_config=RunConfig(tracing_disabled=True)))
