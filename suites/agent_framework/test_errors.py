"""A failing parallel branch: its sibling, the superstep's writes, and what a resume sees."""

import asyncio
from typing import Any

from agent_framework import WorkflowBuilder

import af_kit
from af_kit import Node, forward
from fanin.probe import Claim, Observer, probe

SRC = "https://github.com/microsoft/agent-framework/blob/python-1.0.0/python/packages/core/agent_framework/_workflows"
PATIENCE = 5.0  # deadlock breaker only: how long a sibling nobody cancels or releases is held


@probe(
    "agent_framework/errors/failing-sibling",
    title="Two parallel executors: `fail` raises while `sibling`, having set a shared-state key, is still in"
    " flight",
    claim=Claim(
        "The runner delivers a superstep's messages with asyncio.gather: an executor's exception ends the run"
        " (re-raised, with a `failed` event carrying the error's type, text and traceback), and gather does not"
        " cancel the sibling, which keeps running after the run has ended.",
        f"{SRC}/_runner.py#L122-L141",
        expect={"value.run.raises": "RuntimeError", "value.sibling": "ran on after the run ended"},
    ),
    sources=[f"{SRC}/_state.py#L90-L104"],
)
async def test_failing_sibling(obs: Observer) -> None:
    wrote, released, finished = asyncio.Event(), asyncio.Event(), asyncio.Event()
    fate: list[str] = []
    never: list[str] = []

    async def sibling(node_id: str, message: str, ctx: Any) -> None:
        ctx.set_state("sibling", "S")
        wrote.set()
        try:
            # In flight: it goes on only when the probe releases it after the run has ended.
            await asyncio.wait_for(released.wait(), PATIENCE)
            fate.append("ran on after the run ended")
        except asyncio.CancelledError:
            fate.append("cancelled")
            raise
        except asyncio.TimeoutError:
            fate.append("never released")
        finally:
            finished.set()
        await ctx.send_message(node_id)

    async def fail(node_id: str, message: str, ctx: Any) -> None:
        try:
            await asyncio.wait_for(wrote.wait(), PATIENCE)
        except asyncio.TimeoutError:
            never.append("the sibling was never in flight while the failing executor waited")
        raise RuntimeError("branch failed")

    start, failing, sib = Node("start", forward), Node("fail", fail), Node("sibling", sibling)
    workflow = WorkflowBuilder(start_executor=start).add_fan_out_edges(start, [failing, sib]).build()
    trace = await af_kit.run(workflow, catch=True)
    if never:
        obs.vacuous(never[0])
    obs.require_same_step({n: trace["steps"][n][0] for n in ("fail", "sibling")}, expected=2, what="branches")
    released.set()
    await asyncio.wait_for(finished.wait(), PATIENCE)
    sibling_fate = fate[0] if fate else "never finished"
    failures = [{k: v for k, v in f.items() if k != "event"} for f in trace["failures"] if f["event"] == "failed"]
    failed = failures[0] if failures else None
    message = (failed or {}).get("message")
    run = {"raises": trace["raises"]} if "raises" in trace else {"returned": trace["outputs"]}
    shown = "the exception's text" if message == "branch failed" else f"{message!r} (not the text)"
    obs.record(
        {"run": run, "sibling": sibling_fate, "failed_event": failed, "last_state": trace["last_state"]},
        label=f"{run.get('raises', 'returned')}; sibling {sibling_fate.split(' after')[0]}",
        detail=f"run {run.get('raises', 'returned')}; the in-flight sibling {sibling_fate}; the `failed` event"
        f" carries {shown}" + (", with a traceback" if failed and failed["traceback"] else ", no traceback"),
        hazard="loud" if "raises" in trace else "silent",
    )


@probe(
    "agent_framework/errors/resume-after-failure",
    title="`fail` raises in the superstep where `sibling` set `sibling@attempt 1`; the run is resumed from its"
    " latest checkpoint (in-memory storage) and this time both succeed, `sibling` setting `sibling@attempt 2`",
    claim=Claim(
        "Shared state is committed only at a superstep boundary after successful execution, and checkpoints"
        " hold committed state only: a run resumed from the last checkpoint before a failed superstep sees none"
        " of that superstep's writes.",
        f"{SRC}/_state.py#L90-L112",
        expect={"value.resumed_sees": ["sibling@attempt 2"], "hazard": "safe"},
    ),
    sources=[f"{SRC}/_runner.py#L122-L146"],
)
async def test_resume_after_failure(obs: Observer) -> None:
    InMemoryCheckpointStorage = obs.need("agent_framework", "InMemoryCheckpointStorage")
    attempt = [1]
    wrote = asyncio.Event()
    keys = ["sibling@attempt 1", "sibling@attempt 2"]

    async def sibling(node_id: str, message: str, ctx: Any) -> None:
        ctx.set_state(f"sibling@attempt {attempt[0]}", "S")
        wrote.set()
        await ctx.send_message(node_id)

    async def fail(node_id: str, message: str, ctx: Any) -> None:
        await asyncio.wait_for(wrote.wait(), PATIENCE)
        if attempt[0] == 1:
            raise RuntimeError("branch failed")
        await ctx.send_message(node_id)

    async def join(node_id: str, messages: list[str], ctx: Any) -> None:
        await ctx.yield_output([key for key in keys if ctx.get_state(key) is not None])

    start, failing, sib, joiner = Node("start", forward), Node("fail", fail), Node("sibling", sibling), Node("join", join)
    storage = InMemoryCheckpointStorage()
    workflow = (
        WorkflowBuilder(start_executor=start, checkpoint_storage=storage)
        .add_fan_out_edges(start, [failing, sib])
        .add_fan_in_edges([failing, sib], joiner)
        .build()
    )
    first = await af_kit.run(workflow, catch=True)
    if "raises" not in first:
        obs.vacuous(f"the first run did not fail: {first['outputs']}")
    with obs.framework():
        latest = await storage.get_latest(workflow_name=workflow.name)
        attempt[0] = 2
        wrote.clear()
        resumed = await af_kit.run(workflow, start={"checkpoint_id": latest.checkpoint_id})
    sees = resumed["outputs"][0] if resumed["outputs"] else None
    stale = [key for key in (sees or []) if key.endswith("attempt 1")]
    obs.record(
        {"first_run": first["raises"], "resumed_sees": sees, "stale": stale, "resumed_last_state": resumed["last_state"]},
        label="failed step's write leaks into resume" if stale else "resume sees only its own writes",
        detail=f"first run raised {first['raises']}; resumed from the latest checkpoint, the join sees {sees}",
        hazard="silent" if stale or sees is None else "safe",
    )
