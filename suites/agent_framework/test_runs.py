"""One workflow instance run twice: what the second run sees of the first."""

from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

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


class _Collector(Executor):
    """A collector built for per-message delivery: it keeps what arrived and yields once two have."""

    def __init__(self, id: str) -> None:
        super().__init__(id=id)
        self.seen: list[str] = []

    @handler
    async def collect(self, message: str, ctx: WorkflowContext[str, Any]) -> None:
        self.seen.append(message)
        if len(self.seen) == 2:
            await ctx.yield_output(sorted(self.seen))


@probe(
    "agent_framework/runs/executor-state-kept",
    title="One workflow instance run twice: `start` fans out to `a` and `b`, each with its own edge to a"
    " collector executor that appends each message to an attribute and yields once it holds two",
    claim=Claim(
        "A workflow run starts from fresh state: the workflow resets its runner context and clears its shared"
        " state before a new run; nothing in the run resets an executor object, so what its attributes hold is"
        " whatever the previous run left.",
        f"{SRC}/_workflow.py#L345-L349",
        expect={"value.run 2": [], "hazard": "silent"},
    ),
)
async def test_executor_state_kept(obs: Observer) -> None:
    start, first, second, collector = Node("start", forward), Node("a", forward), Node("b", forward), _Collector("c")
    workflow = (
        WorkflowBuilder(start_executor=start)
        .add_fan_out_edges(start, [first, second])
        .add_edge(first, collector)
        .add_edge(second, collector)
        .build()
    )
    runs: dict[str, Any] = {}
    held: dict[str, int] = {}
    with obs.framework():
        for name in ("run 1", "run 2"):
            runs[name] = (await af_kit.run(workflow, name))["outputs"]
            held[name] = len(collector.seen)
    kept = held["run 2"] > 2
    obs.record(
        {**runs, "held after": held, "kept": kept},
        label=("run 2 yields nothing" if not runs["run 2"] else "collector state kept") if kept else "collector starts empty",
        detail=f"outputs per run: {runs}; messages the collector's attribute held after each run: {held}",
        hazard="silent" if kept else "safe",
    )
