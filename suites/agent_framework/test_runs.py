"""One workflow instance run twice: what the second run sees of the first."""

from typing import Any

from agent_framework import WorkflowBuilder

import af_kit
from af_kit import Node, forward
from fanin.probe import Claim, Observer, probe

SRC = "https://github.com/microsoft/agent-framework/blob/python-1.0.0/python/packages/core/agent_framework/_workflows"


@probe(
    "agent_framework/runs/stale-from-previous-run",
    title="One workflow instance run twice: `start` fans out to `a` and `b`; in run 1 `a` sets `answer`, in"
    " run 2 it finds nothing and sets no key; the fan-in target yields `answer`",
    claim=Claim(
        "A new run (a message, not a checkpoint or responses) starts from a clean shared state: the workflow"
        " clears its state before a fresh run, so a key not written in run 2 reads as absent there.",
        f"{SRC}/_workflow.py#L345-L349",
        expect={"value.run 2": [None], "hazard": "safe"},
    ),
)
async def test_stale_from_previous_run(obs: Observer) -> None:
    async def a(node_id: str, message: str, ctx: Any) -> None:
        if message == "run 1":
            ctx.set_state("answer", "found in run 1")
        await ctx.send_message(node_id)

    async def join(node_id: str, messages: list[str], ctx: Any) -> None:
        await ctx.yield_output(ctx.get_state("answer"))

    async def relay(node_id: str, message: str, ctx: Any) -> None:
        await ctx.send_message(message)

    start, first, second, joiner = Node("start", relay), Node("a", a), Node("b", forward), Node("join", join)
    workflow = (
        WorkflowBuilder(start_executor=start)
        .add_fan_out_edges(start, [first, second])
        .add_fan_in_edges([first, second], joiner)
        .build()
    )
    with obs.framework():
        runs = {name: (await af_kit.run(workflow, name))["outputs"] for name in ("run 1", "run 2")}
    stale = [value for value in runs["run 2"] if value is not None]
    obs.record(
        {**runs, "stale": stale},
        label="run 2 sees run 1's answer" if stale else "run 2 starts clean",
        detail=f"outputs per run: {runs}",
        hazard="silent" if stale else "safe",
    )
