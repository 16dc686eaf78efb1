"""Support code shared by the ADK probes.

Real ADK classes only (BaseAgent, LlmAgent, Event, EventActions, Runner,
InMemorySessionService, BaseLlm); nothing of the framework is replaced. The
one stand-in is `FakeModel`, a model class that answers through ADK's own
model interface (`BaseLlm.generate_content_async` yielding `LlmResponse`s), so
everything downstream of the model (output_key, function calls, AgentTool) runs
ADK's code path.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, AsyncGenerator

from google.adk.agents import BaseAgent, LlmAgent, ParallelAgent, SequentialAgent
from google.adk.events import Event, EventActions
from google.adk.models import BaseLlm, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from pydantic import Field

from gates import Turns

APP = "fanin"
USER = "probe"


class GatedWriter(BaseAgent):
    """Waits for its turn, then emits one event whose state_delta is `delta`."""

    turns: Any
    delta: dict[str, Any]

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        await self.turns.wait(self.name)
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta=dict(self.delta)),
        )
        self.turns.done(self.name)


class Step(BaseAgent):
    """A model-free branch that notes what happened to it in `log`.

    Waits for its turn (if `turns`; the turn is `gate`, default its own name), then
    either raises (`fail`) or emits one event with `delta` as state_delta (and
    `escalate`), and marks its turn done when ADK resumes it after taking the event
    (`mark_done=False` leaves that to someone else, e.g. the callback of an
    enclosing agent that may never resume it). The log gets `(name, "acted")`,
    `(name, "raised")` or `(name, "cancelled")` (CancelledError while it waited for
    its turn), so a probe can tell which siblings ADK cancelled and which ran on.
    """

    turns: Any = None
    gate: str = ""
    mark_done: bool = True
    delta: dict[str, Any] = Field(default_factory=dict)
    escalate: bool = False
    fail: bool = False
    log: Any = Field(default_factory=list)  # Any: pydantic would copy a list, and the probe keeps the original

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        turn = self.gate or self.name
        try:
            if self.turns is not None:
                await self.turns.wait(turn)
        except asyncio.CancelledError:
            self.log.append((self.name, "cancelled"))
            raise
        if self.fail:
            self.log.append((self.name, "raised"))
            raise RuntimeError(f"{self.name} failed")
        self.log.append((self.name, "acted"))
        actions = EventActions(state_delta=dict(self.delta), escalate=True if self.escalate else None)
        yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch, actions=actions)
        if self.turns is not None and self.mark_done:
            self.turns.done(turn)


class Reader(BaseAgent):
    """Waits for its turn, notes what it reads at `key` in the session state, writes `result_<name>`."""

    turns: Any
    key: str
    seen: Any

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        await self.turns.wait(self.name)
        self.seen[self.key] = ctx.session.state.get(self.key)
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={f"result_{self.name}": "done"}),
        )
        self.turns.done(self.name)


def callback_gate(turns: Turns, name: str) -> dict[str, Any]:
    """An LlmAgent's gate through ADK's own agent callbacks: it starts on its turn and ends it when done."""

    async def before(callback_context: Any) -> None:
        await turns.wait(name)

    def after(callback_context: Any) -> None:
        turns.done(name)

    return {"before_agent_callback": before, "after_agent_callback": after}


def two_agent_tools(agent_tool: Any, turns: Any) -> Any:
    """The AgentTool scenario: a root LlmAgent whose first reply calls two AgentTools in one turn, "roll" (replies
    "6", output_key result_roll) and "prime" ("yes", result_prime), each sub-agent's model gated by `turns`."""
    roll = LlmAgent(name="roll", model=FakeModel(replies=["6"], turns=turns, gate="roll"), output_key="result_roll")
    prime = LlmAgent(name="prime", model=FakeModel(replies=["yes"], turns=turns, gate="prime"), output_key="result_prime")
    calls = [("roll", {"request": "roll a die"}), ("prime", {"request": "is 2 prime?"})]
    return LlmAgent(
        name="root",
        model=FakeModel(replies=[calls, "both answered"]),
        tools=[agent_tool(agent=roll), agent_tool(agent=prime)],
    )


def request_texts(llm_request: Any) -> list[str]:
    """The text parts of a model request, in order (what the model would see)."""
    texts = []
    for content in llm_request.contents or []:
        for part in content.parts or []:
            if part.text:
                texts.append(part.text)
    return texts


class FakeModel(BaseLlm):
    """Canned replies through ADK's real model interface; no network.

    `replies[i]` answers the i-th call (the last one repeats): a str is a text
    reply, a list of `(name, args)` pairs is one response holding those function
    calls. With `turns`, the reply waits for the turn named `gate` and marks it
    done once ADK has taken the response (the generator is resumed), i.e. after
    the event carrying it was processed. `requests` keeps the text of every request.
    """

    model: str = "fake-model"
    replies: list = Field(default_factory=lambda: ["ok"])
    turns: Any = None
    gate: str = ""
    requests: list = Field(default_factory=list)

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
        self.requests.append(request_texts(llm_request))
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if isinstance(reply, str):
            parts = [types.Part(text=reply)]
        else:
            parts = [types.Part(function_call=types.FunctionCall(name=name, args=args)) for name, args in reply]
        if self.turns is not None:
            await self.turns.wait(self.gate)
        yield LlmResponse(content=types.Content(role="model", parts=parts))
        if self.turns is not None:
            self.turns.done(self.gate)


def fake_llm_agent(name: str, reply: Any, *, turns: Any = None, **kwargs: Any) -> Any:
    """An LlmAgent whose model is a FakeModel answering `reply` (gated on its own name)."""
    from google.adk.agents import LlmAgent

    return LlmAgent(name=name, model=FakeModel(replies=[reply], turns=turns, gate=name), **kwargs)


def user_message(text: str = "go") -> Any:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run_turn(
    root: BaseAgent, service: InMemorySessionService, session_id: str, text: str = "go", events: list | None = None
) -> list:
    """One `Runner.run_async` turn on an existing session; returns the events it yielded.

    Pass `events` to keep the events that arrived before an exception ended the run.
    """
    events = [] if events is None else events
    runner = Runner(app_name=APP, agent=root, session_service=service)
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=user_message(text)):
        events.append(event)
    return events


async def stored_state(service: InMemorySessionService, session_id: str, user_id: str = USER) -> dict:
    """The session state as the session service has it now (never an agent's in-memory copy)."""
    stored = await service.get_session(app_name=APP, user_id=user_id, session_id=session_id)
    return dict(stored.state)


async def run_once(
    root: BaseAgent, service: InMemorySessionService | None = None, session_id: str = "s1"
) -> tuple[list[Event], dict[str, Any]]:
    """Run `root` once on a fresh session; return (events, state re-read from the session service)."""
    service = service or InMemorySessionService()
    session = await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    events = await run_turn(root, service, session.id)
    return events, await stored_state(service, session.id)


async def fan_out_then(
    obs: Any,
    branches: list[BaseAgent],
    after: list[BaseAgent],
    *,
    before: list[BaseAgent] | None = None,
    turns: Turns | None = None,
    service: InMemorySessionService | None = None,
    session_id: str = "s1",
) -> tuple[list[Event], dict[str, Any]]:
    """The mitigations' scenario: `before`, a ParallelAgent "fanout" of `branches`, then `after`, as one
    SequentialAgent "pipeline", run once under `obs.framework()` on `service`'s existing session (a fresh one when
    none is given); a gate of `turns` the run left vacuous is recorded. Returns (events, state re-read)."""
    root = SequentialAgent(
        name="pipeline", sub_agents=[*(before or []), ParallelAgent(name="fanout", sub_agents=branches), *after]
    )
    with obs.framework():
        if service is None:
            events, state = await run_once(root, session_id=session_id)
        else:
            events = await run_turn(root, service, session_id)
    if service is not None:
        state = await stored_state(service, session_id)
    if turns is not None and turns.vacuous:
        obs.vacuous(turns.vacuous)
    return events, state


async def run_workflow(
    workflow: Any, service: InMemorySessionService | None = None, session_id: str = "s1"
) -> tuple[list[Event], list[Event]]:
    """Run a 2.x `Workflow` through `Runner(node=...)`; return (events, events re-read from the service)."""
    service = service or InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    runner = Runner(app_name=APP, node=workflow, session_service=service)
    events = [e async for e in runner.run_async(user_id=USER, session_id=session_id, new_message=user_message())]
    stored = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    return events, list(stored.events)


FAN_IN_SAMPLE = (
    "https://github.com/google/adk-python/blob/main/contributing/samples/workflows/fan_out_fan_in/README.md"
)


def sorted_dict(value: Any) -> Any:
    """Dict key order of a join's output comes from a set (hash order): sort it before recording."""
    return {k: value[k] for k in sorted(value)} if isinstance(value, dict) else value


def gated(turns: Turns, name: str, output: Any, mark_done: bool = True) -> Callable[[Any], Awaitable[Any]]:
    """An async function node named `name` that waits for its turn, then returns `output`.

    It marks its turn done as it returns, which lets the next branch go before the workflow has
    processed this node's completion; `mark_done=False` leaves that to a later node.
    """

    async def branch(node_input: Any) -> Any:
        await turns.wait(name)
        if mark_done:
            turns.done(name)
        return output

    branch.__name__ = name
    return branch


class FanOut:
    """A `ParallelAgent("fanout")` turn over `children` on session "s1" of its own in-memory service, keeping
    what a failing run leaves: `events`, those that reached the runner before the exception, and `caught`,
    the exception itself (to name what an exception group holds, or where a child's own exception went).

    `fan = await FanOut.on_new_session(children)`, then `await obs.attempt_async(fan.run)` (the exception
    recorded as the run's outcome) or `await fan.run_keeping_exception()` (the probe reads `fan.caught`).
    """

    def __init__(self, children: list[Any]) -> None:
        self.children = children
        self.service = InMemorySessionService()
        self.events: list[Event] = []
        self.caught: list[Exception] = []

    @classmethod
    async def on_new_session(cls, children: list[Any]) -> FanOut:
        fan = cls(children)
        await fan.service.create_session(app_name=APP, user_id=USER, session_id="s1")
        return fan

    async def run(self) -> list[Event]:
        """The turn; an exception is kept in `caught` and raised on."""
        try:
            return await run_turn(
                ParallelAgent(name="fanout", sub_agents=self.children), self.service, "s1", events=self.events
            )
        except Exception as exc:
            self.caught.append(exc)
            raise

    async def run_keeping_exception(self) -> None:
        """The turn; an exception is kept in `caught` only (the framework's answer, which the probe records)."""
        with contextlib.suppress(Exception):
            await self.run()

    async def state(self) -> dict[str, Any]:
        """The session state as the service stored it."""
        return await stored_state(self.service, "s1")


async def settle(max_rounds: int = 10_000) -> None:
    """Let every runnable task run until none is left (loop iterations, never wall time).

    Returns once the event loop has nothing ready but this coroutine: every other task is then
    blocked on something only the probe (or a timer) can complete. This is how a probe observes
    "would hang", "has the join fired yet" or "how many are in flight" without waiting on a clock.
    """
    loop = asyncio.get_running_loop()
    for _ in range(max_rounds):
        await asyncio.sleep(0)
        if not loop._ready:  # type: ignore[attr-defined]  # CPython's queue of ready callbacks: no public API has it
            return
    raise RuntimeError(f"the event loop still had work after {max_rounds} rounds")
