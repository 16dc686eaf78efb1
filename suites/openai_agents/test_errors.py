"""A failing tool call in one model turn: what happens to its sibling call, and what the caller sees."""

import asyncio
from typing import Any

from agents import ModelSettings, RunContextWrapper, function_tool

import oa_kit
from fanin.probe import Claim, Observer, probe
from gates import Turns, settle

SRC = "https://github.com/openai/openai-agents-python/blob/v0.0.7/src/agents"


@probe(
    "openai_agents/errors/failing-tool-sibling",
    title="One model turn calls `fail` and `slow` (tools with `failure_error_function=None`, so an error is"
    " raised, not handed to the model); `fail` raises once both are in flight; `slow` writes"
    " `context['slow']` when its turn comes, after the SDK has reacted to the failure",
    claim=Claim(
        "Tool runs are gathered with asyncio.gather, which propagates the first exception and leaves the other"
        " awaitables running: the caller sees the error while the sibling call goes on writing to the context."
        " Precondition: the tools are made with failure_error_function=None (by default an error becomes the"
        " tool's output for the model and nothing is raised).",
        f"{SRC}/_run_impl.py#L457-L477",
        expect={"value.slow at return": ["unfinished"], "value.slow after settle": ["done"]},
    ),
    sources=(
        "https://github.com/openai/openai-agents-python/blob/v0.10.4/src/agents/run_internal/tool_execution.py#L266-L269",
    ),
)
async def test_failing_tool_sibling(obs: Observer) -> None:
    turns = Turns(["fail", "slow"])
    ends = {"slow": "unfinished"}
    releases: list[asyncio.Task[None]] = []

    async def hand_on() -> None:
        await settle()  # the SDK reacts to the failure first: a sibling it cancels is cancelled at its gate
        turns.done("fail")

    async def fail(ctx: RunContextWrapper[Any]) -> str:
        """Fail."""
        try:
            await turns.wait("fail")
            raise RuntimeError("fail failed")
        finally:
            releases.append(asyncio.get_running_loop().create_task(hand_on()))

    async def slow(ctx: RunContextWrapper[Any]) -> str:
        """Write once its turn comes."""
        try:
            await turns.wait("slow")
            ctx.context["slow"] = "written"
            ends["slow"] = "done"
        except asyncio.CancelledError:
            ends["slow"] = "cancelled"
            raise
        return "slow"

    tools = [function_tool(f, failure_error_function=None) for f in (fail, slow)]
    context: dict[str, Any] = {"slow": None}
    model = oa_kit.Scripted([[("fail", {}), ("slow", {})], "done"])
    raised = await obs.attempt_async(
        lambda: oa_kit.run(oa_kit.agent(model, tools, ModelSettings(parallel_tool_calls=True)), context)
    )
    at_return = ends["slow"]
    while releases:
        await releases.pop()
    await settle()
    obs.require_in_flight(turns)
    value = {
        "raises": raised.get("raises"),
        "slow at return": at_return,
        "slow after settle": ends["slow"],
        "context['slow']": context["slow"],
        "model turns": len(model.inputs),
    }
    label = f"{value['raises'] or 'no error'}; sibling {at_return}" + (
        f", then {ends['slow']}" if ends["slow"] != at_return else ""
    )
    obs.record(
        value,
        label=label,
        detail=f"the caller saw {value['raises']}; the sibling was {at_return} as the run returned and"
        f" {ends['slow']} once the loop settled; context['slow'] = {context['slow']!r}",
        hazard="loud" if value["raises"] else "silent",
    )
