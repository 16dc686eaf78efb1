"""One of two parallel subagents fails while its sibling is still in flight."""

import asyncio
import threading

from langchain_core.messages import HumanMessage

import da_kit
from fanin.probe import Claim, Observer, probe

PATIENCE = 0.5  # deadlock breaker only: how long a sibling nobody cancels is held before it goes on


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
        working = asyncio.Event()
        never = asyncio.Event()

        async def worker(messages):
            if "fail" in da_kit.task_of(messages):
                try:
                    await asyncio.wait_for(working.wait(), 5)
                except TimeoutError:
                    never_in_flight.append("the sibling was never in flight while the failing run waited")
                raise RuntimeError("subagent model call failed")
            # In flight: it waits for something only a finished run would bring.
            working.set()
            try:
                await asyncio.wait_for(never.wait(), PATIENCE)
            except asyncio.CancelledError:
                fate.append("cancelled")
                raise
            except TimeoutError:
                fate.append("ran on")
            return da_kit.say("work done")

    else:
        working = threading.Event()
        failed = threading.Event()

        def worker(messages):
            if "fail" in da_kit.task_of(messages):
                if not working.wait(5):
                    never_in_flight.append("the sibling was never in flight while the failing run waited")
                failed.set()
                raise RuntimeError("subagent model call failed")
            # In flight. A thread cannot be cancelled: it goes on the moment its sibling raises.
            working.set()
            fate.append("ran on" if failed.wait(5) else "never released")
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
        run = obs.attempt(lambda: asyncio.run(agent.ainvoke(request)))
    else:
        run = obs.attempt(lambda: agent.invoke(request))
    if never_in_flight:
        obs.vacuous(never_in_flight[0])
    sibling = fate[0] if fate else "never reached its reply"
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
