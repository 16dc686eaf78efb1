"""A live session across releases: one interpreter leaves a session mid-fan-out in a DatabaseSessionService store,
another resumes it.

`python adk_live.py write BACKEND TARGET SESSION MODE` runs with an earlier release's interpreter (the contract's
EARLIER_PYTHON), or with this cell's own for the same-release control, and prints one JSON line. The agent tree is
SequentialAgent `pipeline` = ParallelAgent `fanout` (LlmAgents `a` and `b`) -> `join` (a custom agent that writes
what it read of both). Each LlmAgent's model is a canned one (ADK's own BaseLlm interface, no network): `a`
answers with text (its output_key `a_out`); `b` waits until `a`'s event is in the store (a gate on the session
service's append_event, never a clock), then calls the long-running tool `ask_human`, whose function returns None:
the HITL shape ADK documents (the user answers with a FunctionResponse in a later run). MODE `resumable` runs the
tree in an App with ResumabilityConfig and resumes by invocation_id (what scenario_resume.py does), `plain`
without, `auto` whichever this release can. `resume` (called in the probe's process) answers `b`'s call on the
stored session and reads the session back. Both sides count their own agents' runs. Plain data only: nothing of
fanin's is imported here (adk_sessions.py imports none either).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import sys
from collections.abc import AsyncGenerator, Callable
from typing import Any

from adk_sessions import adk_version, close_service, open_service

APP = "fanin"
USER = "probe"
TOOL = "ask_human"
ANSWER = "approved"
GATE_SECONDS = 10.0  # only a hang guard: b is released by a's stored event


def can_resume() -> bool:
    """Whether this release resumes an invocation by id (an App with ResumabilityConfig, run_async's invocation_id)."""
    from google.adk.runners import Runner

    try:
        apps = importlib.import_module("google.adk.apps")
    except ImportError:
        return False
    return hasattr(apps, "ResumabilityConfig") and "invocation_id" in inspect.signature(Runner.run_async).parameters


def ask_human() -> None:
    """The long-running tool: it returns nothing, so ADK writes no response and the user answers later."""
    return None


def tree(runs: dict[str, int], hold_b: Callable[[], Any] | None) -> Any:
    """The agent tree both sides build (same names, same tool); `hold_b` (the writer's) runs before b's call."""
    from google.adk.agents import BaseAgent, LlmAgent, ParallelAgent, SequentialAgent
    from google.adk.events import Event, EventActions
    from google.adk.models import BaseLlm, LlmResponse
    from google.adk.tools import LongRunningFunctionTool
    from google.genai import types

    def count(name: str) -> None:
        runs[name] = runs.get(name, 0) + 1

    class Canned(BaseLlm):
        """`a`: text. `b`: the tool's answer once the request holds it, else (after the gate) the tool call."""

        model: str = "fake-model"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
            who = self.model.removeprefix("fake-")
            count(who)
            if who == "a":
                parts = [types.Part(text="a-done")]
            else:
                answers = [
                    part.function_response.response
                    for content in llm_request.contents or []
                    for part in content.parts or []
                    if part.function_response is not None and part.function_response.name == TOOL
                ]
                if answers:
                    parts = [types.Part(text=f"b:{(answers[-1] or {}).get('result')}")]
                else:
                    if hold_b is not None:
                        await hold_b()
                    parts = [types.Part(function_call=types.FunctionCall(name=TOOL, args={}))]
            yield LlmResponse(content=types.Content(role="model", parts=parts))

    class Join(BaseAgent):
        """The join: writes what it reads of both branches' outputs."""

        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Any, None]:
            count("join")
            state = ctx.session.state
            seen = f"{state.get('a_out')}+{state.get('b_out')}"
            yield Event(
                author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch,
                actions=EventActions(state_delta={"joined": seen}),
            )  # fmt: skip

    a = LlmAgent(name="a", model=Canned(model="fake-a"), output_key="a_out")
    b = LlmAgent(name="b", model=Canned(model="fake-b"), output_key="b_out", tools=[LongRunningFunctionTool(func=ask_human)])
    return SequentialAgent(name="pipeline", sub_agents=[ParallelAgent(name="fanout", sub_agents=[a, b]), Join(name="join")])


def runner(root: Any, service: Any, resumable: bool) -> Any:
    from google.adk.runners import Runner

    if not resumable:
        return Runner(app_name=APP, agent=root, session_service=service)
    from google.adk.apps import App, ResumabilityConfig

    app = App(name=APP, root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True))
    return Runner(app=app, session_service=service)


def pending_calls(events: list) -> list[Any]:
    """The long-running calls of `b` in the session that no later event answers."""
    answered = {
        part.function_response.id
        for event in events
        for part in (event.content.parts if event.content else None) or []
        if part.function_response is not None
    }
    return [
        (event, part.function_call)
        for event in events
        for part in (event.content.parts if event.content else None) or []
        if part.function_call is not None
        and part.function_call.id in (event.long_running_tool_ids or ())
        and part.function_call.id not in answered
    ]


def summary(events: list) -> dict[str, int]:
    """The stored events as counts of (author, kind): ids, times and the branches' interleaving left out."""
    counts: dict[str, int] = {}
    for event in events:
        kinds = []
        for part in (event.content.parts if event.content else None) or []:
            if part.function_call is not None:
                kinds.append(f"call {part.function_call.name}")
            elif part.function_response is not None:
                kinds.append(f"response {part.function_response.name}")
            elif part.text:
                kinds.append(f"text {part.text}")
        delta = sorted((event.actions.state_delta or {}) if event.actions else {})
        if delta:
            kinds.append(f"state {','.join(delta)}")
        if event.actions is not None and (getattr(event.actions, "end_of_agent", None) or getattr(event.actions, "agent_state", None)):
            kinds.append("agent state")
        key = f"{event.author}: {'; '.join(kinds) or 'empty'}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def state_of(session: Any) -> dict[str, Any]:
    return {key: session.state.get(key) for key in ("a_out", "b_out", "joined")}


async def write(backend: str, target: str, session_id: str, mode: str) -> dict[str, Any]:
    """Run until `b` waits for input with `a` done and stored; what the run did and left, as plain data."""
    resumable = can_resume() if mode == "auto" else mode == "resumable"
    runs: dict[str, int] = {}
    a_stored = asyncio.Event()
    stuck: list[str] = []

    async def hold_b() -> None:
        try:
            await asyncio.wait_for(a_stored.wait(), GATE_SECONDS)
        except asyncio.TimeoutError:
            stuck.append(f"a's event was not stored within {GATE_SECONDS:.0f} s while b waited")

    service = open_service(backend, target)
    append = service.append_event

    async def append_event(session: Any, event: Any) -> Any:
        stored = await append(session, event)
        if event.author == "a" and "a_out" in ((event.actions.state_delta or {}) if event.actions else {}):
            a_stored.set()
        return stored

    service.append_event = append_event  # the gate sees each event as the service stores it
    raised = None
    try:
        from google.genai import types

        await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
        message = types.Content(role="user", parts=[types.Part(text="go")])
        try:
            async for _ in runner(tree(runs, hold_b), service, resumable).run_async(
                user_id=USER, session_id=session_id, new_message=message
            ):
                pass
        except Exception as exc:  # noqa: BLE001 - the writer's run failing leaves the session in no useful shape
            raised = f"{type(exc).__name__}: {exc}"
        session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    finally:
        await close_service(service)
    return {
        "adk": adk_version(),
        "resumable": resumable,
        "runs": runs,
        "raised": raised,
        "pending": [call.name for _, call in pending_calls(session.events)],
        "state": state_of(session),
        "stuck": stuck,
    }


async def resume(backend: str, target: str, session_id: str, resumable: bool) -> dict[str, Any]:
    """Answer `b`'s pending call on the stored session (a FunctionResponse in a new run_async, by invocation_id
    where `resumable`); what this process ran and what the store holds after. Exception text goes in `errors`."""
    from google.genai import types

    runs: dict[str, int] = {}
    raised = read = None
    errors: dict[str, str] = {}
    service = open_service(backend, target)
    try:
        try:
            session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
            calls = pending_calls(session.events)
            if not calls:
                raise LookupError("the stored session holds no pending long-running call")
            event, call = calls[-1]
            answer = types.FunctionResponse(id=call.id, name=call.name, response={"result": ANSWER})
            message = types.Content(role="user", parts=[types.Part(function_response=answer)])
            extra = {"invocation_id": event.invocation_id} if resumable else {}
            async for _ in runner(tree(runs, None), service, resumable).run_async(
                user_id=USER, session_id=session_id, new_message=message, **extra
            ):
                pass
        except Exception as exc:  # noqa: BLE001 - what the framework did: the probe grades it
            raised, errors["raises"] = type(exc).__name__, _first_line(exc)
    finally:
        await close_service(service)
    service = open_service(backend, target)  # a fresh service reads what the store holds, not a cached copy
    try:
        stored = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
        final, events, left = state_of(stored), summary(stored.events), len(pending_calls(stored.events))
    except Exception as exc:  # noqa: BLE001 - a service that cannot load the stored session answers so
        final, events, left = None, None, None
        read, errors["read_raises"] = type(exc).__name__, _first_line(exc)
    finally:
        await close_service(service)
    return {
        "raises": raised,
        "read_raises": read,
        "runs_on_resume": {name: runs.get(name, 0) for name in ("a", "b", "join")},
        "final": final,
        "events": events,
        "pending_after": left,
        "errors": errors,
    }


def _first_line(exc: BaseException) -> str:
    """An exception's first line (SQLAlchemy's message goes on with the whole statement)."""
    return (str(exc).strip().splitlines() or ["(no message)"])[0]


if __name__ == "__main__":
    command, backend_name, store, session_name, how = sys.argv[1:6]
    if command != "write":
        raise SystemExit(f"adk_live.py: unknown command {command!r}")
    print(json.dumps(asyncio.run(write(backend_name, store, session_name, how))))
