"""Parallel tool calls of one model turn: the order their outputs enter history vs the order their effects happen."""

from typing import Any

from agents import ModelSettings, RunContextWrapper, function_tool

import oa_kit
from fanin.probe import Claim, Observer, probe
from gates import IdleTurns

SRC = "https://github.com/openai/openai-agents-python/blob/v0.0.7/src/agents"
CALLS = ["a", "b", "c"]


def _which(seen: list[str], run: dict[str, Any]) -> str:
    """Which order a list followed in one run: the model's call order, the tools' finishing order, or another."""
    return "call order" if seen == CALLS else "finish order" if seen == run["finished"] else "another order"


def _short(kind: str | list[str]) -> str:
    """A kind for the label (at most 40 characters in all): one order in every run, or `varies`."""
    return {"call order": "by call", "finish order": "by finish"}.get(kind, "other") if isinstance(kind, str) else "varies"


@probe(
    "openai_agents/history/output-order",
    title="One model turn calls `step` three times (`a`, `b`, `c`); each appends its name to"
    " `context['effects']` when its turn comes and returns it; they finish c, b, a and b, c, a; the next"
    " model turn reads the tool outputs from its input",
    claim=Claim(
        "The SDK gathers the tool runs (asyncio.gather keeps the argument order) and adds their outputs to the"
        " turn's items in the order the model made the calls, whatever order they finished in; effects on shared"
        " objects happen as each tool runs. Precondition: the three calls come in one model response.",
        f"{SRC}/_run_impl.py#L477-L490",
        expect={"value.history": ["call order"], "value.effects": ["finish order"]},
    ),
)
async def test_output_order(obs: Observer) -> None:
    runs: dict[str, Any] = {}
    for order in (["c", "b", "a"], ["b", "c", "a"]):
        turns = IdleTurns(order)

        @function_tool
        async def step(ctx: RunContextWrapper[Any], branch: str) -> str:
            """Record this branch's effect."""
            await turns.wait(branch)
            ctx.context["effects"].append(branch)
            turns.done(branch)
            return branch

        context: dict[str, Any] = {"effects": []}
        model = oa_kit.Scripted([[("step", {"branch": name}) for name in CALLS], "done"])
        with obs.framework():
            await oa_kit.run(oa_kit.agent(model, [step], ModelSettings(parallel_tool_calls=True)), context)
        obs.require_in_flight(turns)
        history = [output for _, output in oa_kit.outputs_in_history(model.inputs[1])]
        runs[",".join(order)] = {"finished": turns.acted, "effects": context["effects"], "history": history}
    kinds = {what: sorted({_which(run[what], run) for run in runs.values()}) for what in ("history", "effects")}
    value: dict[str, Any] = {"runs": runs, **{what: kind[0] if len(kind) == 1 else kind for what, kind in kinds.items()}}
    coupled = any(len({tuple(run[what]) for run in runs.values()}) > 1 for what in ("history", "effects"))
    obs.record(
        value,
        label=f"history {_short(value['history'])}, effects {_short(value['effects'])}",
        detail=f"per finishing order, history and effects: {[(k, r['history'], r['effects']) for k, r in runs.items()]}",
        hazard="order-coupled" if coupled else "safe",
    )
