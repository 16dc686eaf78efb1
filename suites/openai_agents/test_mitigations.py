"""The mitigations, proved: every context update kept, effects in one order, whatever order the tools finish in."""

import asyncio
from typing import Any

import agents
from agents import ModelSettings, RunContextWrapper, function_tool

import oa_kit
from fanin.probe import Claim, Observer, probe
from gates import IdleTurns, Turns, settle
from mitigation import judge, words

SRC = "https://github.com/openai/openai-agents-python/blob/v0.0.7/src/agents"
NEW = "https://github.com/openai/openai-agents-python/blob/v0.20.0/src/agents"
PARALLEL = ModelSettings(parallel_tool_calls=True)


def _variants() -> dict[str, tuple[ModelSettings, Any, type[Turns]]]:
    """The fixes the SDK offers: model settings, run config (None: this version has no such option), the gate."""
    one_at_a_time = None
    if hasattr(agents, "ToolExecutionConfig"):
        one_at_a_time = agents.RunConfig(tool_execution=agents.ToolExecutionConfig(max_function_tool_concurrency=1))
    return {
        "parallel_tool_calls=False": (ModelSettings(parallel_tool_calls=False), agents.RunConfig(), IdleTurns),
        "max_function_tool_concurrency=1": (PARALLEL, one_at_a_time, IdleTurns),
    }


NO_LIMIT = "agents has no ToolExecutionConfig (max_function_tool_concurrency) in this version"


@probe(
    "openai_agents/context/lost-update-mitigated",
    title="lost-update, mitigated: an asyncio.Lock in the context around each call's read-modify-write; the"
    " model told parallel_tool_calls=False; the SDK told max_function_tool_concurrency=1; both orders",
    claim=Claim(
        "A lock held across the read, the await and the write serialises the calls' updates to the shared"
        " context; with parallel_tool_calls=False the model makes one call a turn (precondition: a provider"
        " that honours the setting, as the Responses API does), and a function-tool"
        " concurrency of 1 makes the SDK run a turn's calls one after another: every update kept.",
        f"{NEW}/run_config.py#L107-L116",
        expect={"hazard": "safe"},
    ),
    sources=(f"{SRC}/model_settings.py#L33-L34",),
)
async def test_lost_update_mitigated(obs: Observer) -> None:
    variants: dict[str, dict[str, Any]] = {}
    chosen = {"asyncio.Lock in the context": (PARALLEL, agents.RunConfig(), Turns), **_variants()}
    for variant, (settings, config, gate) in chosen.items():
        if config is None:
            variants[variant] = {"n/a": NO_LIMIT}
            continue
        variants[variant] = {}
        for order in (["a", "b"], ["b", "a"]):
            turns, locked = gate(order), variant.startswith("asyncio.Lock")

            @function_tool
            async def record(ctx: RunContextWrapper[Any], branch: str) -> str:
                """Add this branch's name to the applied list."""
                if locked:
                    await turns.wait(branch)
                    async with ctx.context["lock"]:
                        turns.done(branch)  # the sibling goes on to the lock while this call holds it
                        seen = list(ctx.context["applied"])
                        await settle()
                        ctx.context["applied"] = [*seen, branch]
                    return branch
                seen = list(ctx.context["applied"])
                await turns.wait(branch)
                ctx.context["applied"] = [*seen, branch]
                turns.done(branch)
                return branch

            context: dict[str, Any] = {"applied": [], "lock": asyncio.Lock()}
            model = oa_kit.Scripted([[("record", {"branch": "a"}), ("record", {"branch": "b"})], "done"])
            with obs.framework():
                await oa_kit.run(oa_kit.agent(model, [record], settings), context, config)
            if locked:
                obs.require_in_flight(turns)
            applied = context["applied"]
            variants[variant][" then ".join(order)] = {
                "made": ["a", "b"],
                "kept": [b for b in ("a", "b") if b in applied],
                "result": sorted(applied),
                "observed": {"applied": applied, "calls per response": [len(c) for c in model.calls]},
            }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "openai_agents/history/output-order-mitigated",
    title="output-order, mitigated: each call writes its effect under its own name, read back in call order;"
    " parallel_tool_calls=False; max_function_tool_concurrency=1; finishing orders c, b, a and b, c, a",
    claim=Claim(
        "Effects keyed by the call, read in the model's call order (the order history keeps), or calls run one"
        " at a time in call order (one call a turn, or a concurrency of 1), give one order whatever order the"
        " tools would finish in.",
        f"{SRC}/_run_impl.py#L477-L490",
        expect={"hazard": "safe"},
    ),
    sources=(f"{NEW}/run_config.py#L107-L116",),
)
async def test_output_order_mitigated(obs: Observer) -> None:
    calls = ["a", "b", "c"]
    variants: dict[str, dict[str, Any]] = {}
    chosen = {"keyed by call": (PARALLEL, agents.RunConfig(), Turns), **_variants()}
    for variant, (settings, config, gate) in chosen.items():
        if config is None:
            variants[variant] = {"n/a": NO_LIMIT}
            continue
        variants[variant] = {}
        for order in (["c", "b", "a"], ["b", "c", "a"]):
            turns, keyed = gate(order), variant == "keyed by call"

            @function_tool
            async def step(ctx: RunContextWrapper[Any], branch: str) -> str:
                """Record this branch's effect."""
                await turns.wait(branch)
                if keyed:
                    ctx.context["by call"][branch] = branch
                else:
                    ctx.context["effects"].append(branch)
                turns.done(branch)
                return branch

            context: dict[str, Any] = {"effects": [], "by call": {}}
            model = oa_kit.Scripted([[("step", {"branch": name}) for name in calls], "done"])
            with obs.framework():
                await oa_kit.run(oa_kit.agent(model, [step], settings), context, config)
            if keyed:
                obs.require_in_flight(turns)
            effects = [context["by call"][n] for n in calls if n in context["by call"]] if keyed else context["effects"]
            variants[variant][",".join(order)] = {"made": calls, "kept": effects, "result": effects}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)
