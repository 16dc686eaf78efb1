"""A live run across releases: one interpreter leaves it stopped on an approval as a serialized RunState, another
resumes it.

The writer runs as `python oa_live.py write FOLDER` with an earlier release's interpreter (the contract's
EARLIER_PYTHON), or with the probe's own for the same-release control; it prints one JSON line. One model turn asks
for two tool calls at once: `a` runs and returns its output; `b` needs approval (`needs_approval`, a function the SDK
awaits before it would run the tool). `a` finishes only once b's approval has been asked (a gate, never a clock), so
the stopped turn holds a's output beside b's interruption whatever order the SDK checks and runs calls in. The run
returns with b's interruption; the writer writes `result.to_state().to_string()` to FOLDER/run_state.json. The
resumer builds the same agent (same name, same tools) on a new scripted model, reads the state with
`RunState.from_string(agent, text)`, approves each interruption and runs `Runner.run(agent, state)`, the documented
resume. Both sides count their own tool runs. The context is a plain dict (the SDK records only its class path,
`builtins:dict`), so nothing of this module's is named in the state.

Plain data only: the writer's side imports nothing of fanin's (oa_kit is the suite's, framework only). A release that
cannot pause or serialize a run says why (`cannot`) instead of writing.
"""

import asyncio
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import oa_kit
from agents import ModelSettings, RunConfig, RunContextWrapper, Runner, function_tool

STATE = "run_state.json"
A_OUTPUT = "a: done"
B_OUTPUT = "b: approved and done"
GATE_SECONDS = 10.0  # only a hang guard: a is released by b's approval check


def cannot() -> dict[str, str]:
    """Why this release cannot stop a run on an approval or serialize it, read from the package (empty: it can).

    oa_resume.cannot()'s test and words, repeated here: the writer runs in the earlier release's interpreter, where the suite's
    scenario kit (and fanin) is not importable."""
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


def build(model: oa_kit.Scripted, runs: dict[str, int], gate: asyncio.Event | None, stuck: list[str]) -> Any:
    """The agent both sides build; `gate` (the writer's) is set by b's approval check, and `a` returns only then
    (`stuck` says when the hang guard ran out instead)."""

    async def a(ctx: RunContextWrapper[Any]) -> str:
        """Run at once: no approval."""
        runs["a"] += 1
        if gate is not None:
            try:
                await asyncio.wait_for(gate.wait(), GATE_SECONDS)
            except asyncio.TimeoutError:
                stuck.append(f"b's approval had not been asked within {GATE_SECONDS:.0f} s while a waited")
        ctx.context["ran"].append("a")
        return A_OUTPUT

    async def b(ctx: RunContextWrapper[Any]) -> str:
        """Run once approved."""
        runs["b"] += 1
        ctx.context["ran"].append("b")
        return B_OUTPUT

    async def asks(ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
        runs["b asked"] += 1
        if gate is not None:
            gate.set()
        return True

    tools = [function_tool(a), function_tool(b, needs_approval=asks)]
    return oa_kit.agent(model, tools, ModelSettings(parallel_tool_calls=True))


def _counts() -> dict[str, int]:
    return {"a": 0, "b": 0, "b asked": 0}


def _name(item: Any) -> str:
    """An interruption's tool name (ToolApprovalItem.tool_name, else its raw call's name)."""
    return str(getattr(item, "tool_name", None) or getattr(item.raw_item, "name", None) or item.raw_item.get("name"))


async def write(folder: str) -> dict[str, Any]:
    """Run until b's call waits for approval beside a's output; write the state; what ran, as plain data."""
    found = cannot()
    if found:
        return {"openai_agents": _version(), "cannot": found}
    runs = _counts()
    stuck: list[str] = []
    model = oa_kit.Scripted([[("a", {}), ("b", {})], "done"])
    agent = build(model, runs, asyncio.Event(), stuck)
    context: dict[str, Any] = {"ran": []}
    raised = text = None
    interruptions: list[str] = []
    try:
        result = await oa_kit.run(agent, context)
        interruptions = [_name(item) for item in result.interruptions]
        text = result.to_state().to_string()
        Path(folder, STATE).write_text(text)
    except Exception as exc:  # noqa: BLE001 - what the framework did: the probe reads it
        raised = f"{type(exc).__name__}: {exc}"
    return {
        "openai_agents": _version(),
        "cannot": {},
        "raises": raised,
        "interruptions": interruptions,
        "runs": runs,
        "model_turns": len(model.inputs),
        "context": context,
        "schema_version": None if text is None else json.loads(text).get("$schemaVersion"),
        "stuck": stuck,
    }


async def resume(folder: str) -> dict[str, Any]:
    """Read the state in FOLDER, approve its interruptions and resume on an agent built anew: what ran here, what
    the model's next turn received, the final output and the context."""
    from agents import RunState

    runs = _counts()
    model = oa_kit.Scripted(["done"])
    agent = build(model, runs, None, [])
    read = raised = state = result = None
    approved: list[str] = []
    try:  # a release that cannot read the stored state says so here: that is its answer, not a defect
        state = await RunState.from_string(agent, Path(folder, STATE).read_text())
    except Exception as exc:  # noqa: BLE001 - what the framework did: the probe grades it
        read = f"{type(exc).__name__}: {exc}"
    if state is not None:
        for item in state.get_interruptions():
            approved.append(_name(item))
            state.approve(item)
        try:
            result = await Runner.run(agent, state, run_config=RunConfig(tracing_disabled=True))
        except Exception as exc:  # noqa: BLE001
            raised = f"{type(exc).__name__}: {exc}"
    return {
        "read_raises": read,
        "raises": raised,
        "approved": approved,
        "runs_on_resume": runs,
        "model_turns": len(model.inputs),
        "next_turn_received": oa_kit.outputs_in_history(model.inputs[0]) if model.inputs else None,
        "final_output": None if result is None else result.final_output,
        "interruptions": [] if result is None else [_name(item) for item in result.interruptions],
        "context": None if result is None else result.context_wrapper.context,
    }


def _version() -> str:
    from importlib.metadata import version

    return version("openai-agents")


if __name__ == "__main__":
    command, store = sys.argv[1:3]
    if command != "write":
        raise SystemExit(f"oa_live.py: unknown command {command!r}")
    print(json.dumps(asyncio.run(write(store))))
