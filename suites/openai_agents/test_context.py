"""Parallel tool calls of one model turn on the shared run context: a read-modify-write across an await."""

from typing import Any

from agents import ModelSettings, RunContextWrapper, function_tool

import oa_kit
from fanin.probe import Claim, Observer, probe
from gates import IdleTurns

SRC = "https://github.com/openai/openai-agents-python/blob/v0.0.7/src/agents"
NEW = "https://github.com/openai/openai-agents-python/blob/v0.2.11/src/agents"


async def _two_calls(obs: Observer, settings: ModelSettings, required: bool) -> dict[str, Any]:
    """Both finishing orders of `record(a)`, `record(b)` asked for in one model turn; what each run kept.

    The gate learns from the event loop (IdleTurns, no wall time) when the calls never are in flight
    together; `required`: that makes the probe vacuous, otherwise it is part of the answer."""
    runs: dict[str, Any] = {}
    for order in (["a", "b"], ["b", "a"]):
        turns = IdleTurns(order)

        @function_tool
        async def record(ctx: RunContextWrapper[Any], branch: str) -> str:
            """Add this branch's name to the applied list."""
            seen = list(ctx.context["applied"])
            await turns.wait(branch)
            ctx.context["applied"] = [*seen, branch]
            turns.done(branch)
            return f"{branch} applied after {seen}"

        context: dict[str, Any] = {"applied": []}
        model = oa_kit.Scripted([[("record", {"branch": "a"}), ("record", {"branch": "b"})], "done"])
        with obs.framework():
            await oa_kit.run(oa_kit.agent(model, [record], settings), context)
        runs[" then ".join(order)] = {
            "finished": turns.acted,
            "applied": context["applied"],
            "calls per response": [len(c) for c in model.calls],
            "parallel_tool_calls sent": model.settings[0],
            "together": not turns.vacuous,
        }
        if required:
            obs.require_in_flight(turns)
    return runs


def _lost(runs: dict[str, Any]) -> list[str]:
    return sorted({f"{run}: {b}" for run, seen in runs.items() for b in ("a", "b") if b not in seen["applied"]})


@probe(
    "openai_agents/context/lost-update",
    title="A model turn that asks for parallel calls (`parallel_tool_calls=True`) calls the tool `record` twice"
    " (`a`, `b`); each call reads `context['applied']`, awaits its turn, and writes what it read plus its own"
    " name; both finishing orders",
    claim=Claim(
        "The SDK starts every function tool call of one model response together (asyncio.gather over the"
        " tool runs), each on the same RunContextWrapper, whose `context` is the one object the caller"
        " passed: a tool that reads it, awaits and writes it back overwrites its sibling's write. Precondition:"
        " the model makes both calls in one response, which parallel_tool_calls=True allows.",
        f"{SRC}/_run_impl.py#L472-L477",
        expect={"hazard": "silent"},
    ),
    sources=(f"{SRC}/run_context.py#L11-L22",),
)
async def test_lost_update(obs: Observer) -> None:
    runs = await _two_calls(obs, ModelSettings(parallel_tool_calls=True), required=True)
    lost = _lost(runs)
    obs.record(
        {"runs": runs, "lost": lost},
        label=f"lost {len(lost)} of 4 updates" if lost else "every update kept",
        detail=f"context['applied'] after each order: {[r['applied'] for r in runs.values()]}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "openai_agents/context/lost-update-default",
    title="lost-update with the agent's default ModelSettings, on a model that honours `parallel_tool_calls`"
    " as the Responses API does (False: one call a response, the next in the next turn)",
    claim=Claim(
        "ModelSettings.parallel_tool_calls defaults to None, the provider's default, which for OpenAI allows"
        " parallel calls; False restricts the model to at most one tool call per turn. Precondition: a model"
        " that makes both calls in one response unless the setting is False.",
        f"{NEW}/model_settings.py#L84-L91",
        expect={"hazard": "silent"},
    ),
    sources=(
        f"{SRC}/model_settings.py#L33-L34",
        "https://github.com/openai/openai-agents-python/blob/v0.0.8/src/agents/model_settings.py#L35-L37",
        "https://github.com/openai/openai-agents-python/blob/v0.0.8/src/agents/models/openai_responses.py#L210-L216",
    ),
)
async def test_lost_update_default(obs: Observer) -> None:
    runs = await _two_calls(obs, ModelSettings(), required=False)
    lost = _lost(runs)
    sent = sorted({str(r["parallel_tool_calls sent"]) for r in runs.values()})
    obs.record(
        {"runs": runs, "lost": lost},
        label=f"lost {len(lost)} of 4 updates" if lost else "one at a time, every update kept",
        detail=f"parallel_tool_calls sent: {sent}; context['applied'] after each order:"
        f" {[r['applied'] for r in runs.values()]}",
        hazard="silent" if lost else "safe",
    )
