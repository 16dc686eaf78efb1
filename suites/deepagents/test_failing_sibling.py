"""One of two parallel subagents fails while its sibling is still in flight."""

import asyncio
import threading
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

import da_kit
from gates import settle
from fanin.probe import Claim, Observer, probe

PATIENCE = 5.0  # sync mode, deadlock breaker only: a thread whose sibling never fails is let go after this


async def settle_with_threads() -> None:
    """`settle`, and also wait out the work the loop handed to its default thread pool (`asyncio.to_thread`,
    `run_in_executor(None, ...)`, e.g. langsmith's tracing hooks), which `settle` cannot see.

    A pool thread hands its result to the loop (a ready callback) before it counts itself idle, so once no
    pool thread is busy and then nothing is ready, nothing is left that could still wake a task. Loop
    iterations, never a timer; a thread that never ends is left to the probe's timeout."""
    loop = asyncio.get_running_loop()
    while True:
        await settle()
        pool = getattr(loop, "_default_executor", None)
        # CPython's ThreadPoolExecutor: queued items, and one semaphore count per idle thread.
        if pool is None or (pool._work_queue.empty() and pool._idle_semaphore._value >= len(pool._threads)):
            await settle()
            if not loop._ready:  # type: ignore[attr-defined]  # CPython's queue of ready callbacks, as gates.settle reads it
                return
        await asyncio.sleep(0)


@probe(
    "deepagents/subagents/failing-sibling",
    title="One subagent launched twice in one model message: the `fail` run's model call raises while the"
    " `work` run is still in flight in its own model call (no checkpointer)",
    claim=Claim(
        "When one of several parallel subagents raises, the others still running are cancelled and the"
        " error ends the parent's run.",
        "https://github.com/langchain-ai/deepagents/issues/694",
        expect={"value.run.raises": "RuntimeError", "value.sibling": "cancelled"},
    ),
    modes=("sync", "async"),
)
def test_failing_sibling(obs: Observer) -> None:
    create_deep_agent = obs.need("deepagents", "create_deep_agent")
    create_agent = obs.need("langchain.agents", "create_agent")

    fate: list[str] = []
    never_in_flight: list[str] = []

    if obs.mode == "async":
        # "fail" raises once "work" is in its model call; "work" then waits on a hold that only the probe releases,
        # after it has looked. Only the probe waits for the loop to settle (two settling tasks would keep it busy).
        working: Any = asyncio.Event()  # a threading.Event in sync mode
        failed: Any = asyncio.Event()
        hold = asyncio.Event()

        async def worker(messages: list[BaseMessage]) -> AIMessage:
            if "fail" in da_kit.task_of(messages):
                await working.wait()
                failed.set()
                raise RuntimeError("subagent model call failed")
            working.set()
            try:
                await hold.wait()
            except asyncio.CancelledError:
                fate.append("cancelled")
                raise
            fate.append("ran on")
            return da_kit.say("work done")

    else:
        working = threading.Event()
        failed = threading.Event()

        def worker(messages: list[BaseMessage]) -> AIMessage:  # type: ignore[misc]  # the sync twin of the async worker above
            if "fail" in da_kit.task_of(messages):
                if not working.wait(PATIENCE):
                    never_in_flight.append("the sibling was never in flight while the failing run waited")
                failed.set()
                raise RuntimeError("subagent model call failed")
            # In flight. A thread cannot be cancelled: it goes on the moment its sibling raises.
            working.set()
            fate.append("ran on" if failed.wait(PATIENCE) else "never released")
            return da_kit.say("work done")

    parent = da_kit.ScriptedModel(
        steps=[
            da_kit.calls(
                da_kit.task_call("task-work", "worker", "work"), da_kit.task_call("task-fail", "worker", "fail")
            ),
            da_kit.say("all done"),
        ]
    )
    agent = create_deep_agent(
        model=parent,
        subagents=[
            {"name": "worker", "description": "works", "runnable": create_agent(da_kit.ScriptedModel(respond=worker))}
        ],
    )
    request = {"messages": [HumanMessage("go")]}
    if obs.mode == "async":

        async def observe() -> tuple[dict, str]:
            """Run until the failing run raised and the event loop and its thread pool settled (what the framework
            does to the sibling is done by then: langsmith hands the failure to a pool thread on its way), look,
            then release the hold and let the run end."""
            running = asyncio.ensure_future(agent.ainvoke(request))
            while not (failed.is_set() or running.done()):
                await settle_with_threads()
                if working.is_set() != failed.is_set() and not running.done():
                    # Idle with one run waiting for a sibling that never came: they ran one after the other.
                    never_in_flight.append("the two subagent runs were never in their model calls at once")
                    working.set()
                    hold.set()
            await settle_with_threads()
            if fate:
                seen = fate[0]  # cancelled before the probe released it
            elif running.done():
                seen = "left running"  # the run ended, the sibling still waits: released, it goes on alone
            else:
                seen = "awaited"  # the run waits for the sibling to finish before it ends
            hold.set()
            outcome = await obs.attempt_async(lambda: running)
            await settle_with_threads()
            return outcome, seen

        run, sibling = asyncio.run(observe())
    else:
        run = obs.attempt(lambda: agent.invoke(request))
        sibling = fate[0] if fate else "never reached its reply"
    if never_in_flight:
        obs.vacuous(never_in_flight[0])
    outcome = run.get("raises", "returned")
    seen = sorted(da_kit.replies(run["returned"]["messages"])) if "returned" in run else None
    obs.record(
        {
            "run": {"raises": run["raises"]} if "raises" in run else {"returned_replies": seen},
            "sibling": sibling,
            "parent_model_calls": parent.calls,
        },
        label=f"{outcome}; sibling {sibling}",
        detail=f"run {outcome}; the sibling, in flight in its model call, {sibling}; the parent's model was"
        f" called {parent.calls} time(s)"
        + (
            ", never with a reply; nothing is returned (no checkpointer), the sibling's work included"
            if seen is None
            else f"; replies {seen}"
        ),
        hazard="loud" if "raises" in run else "safe" if seen == ["task-fail", "task-work"] else "silent",
    )
