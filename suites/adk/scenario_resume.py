"""ADK's `pause` and `resume` for its scenario adapter (docs/ADAPTERS.md), the way ADK documents a resumable
invocation (https://google.github.io/adk-docs/runtime/resume/): the App is given
`ResumabilityConfig(is_resumable=True)`, a branch asks a person by a long-running function call (an event calling
`fanin_ask`, its id in the event's `long_running_tool_ids`, as an LlmAgent's call of a LongRunningFunctionTool is),
and the stopped invocation is resumed with `runner.run_async(..., invocation_id=...)`: after a pause, its new
message the matching function response; after a failure, no message at all. A release without
`google.adk.apps.ResumabilityConfig`, or whose `Runner.run_async` takes no `invocation_id`, cannot (the reason read
from the installed package). The Python twin of suites/adkjs/scenario_resume.mjs, which resumes with a new message.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import AsyncGenerator
from typing import Any

import scenario_kit
from adk_kit import APP, USER, user_message
from google.adk.events import Event
from google.adk.runners import Runner
from google.genai import types

ASK = "fanin_ask"  # the long-running call a paused branch makes


def _call_id(name: str) -> str:
    """The call id of branch `name`'s pause, unique in the session."""
    return f"fanin-pause-{name}"


class PauseHere(Exception):
    """Raised by the pause in a branch's first run: the branch yields its long-running call and ends its turn."""


def missing() -> str | None:
    """Why this release cannot run a resumable invocation, read from the installed package (None when it can)."""
    try:
        apps = importlib.import_module("google.adk.apps")
    except ImportError as exc:
        return f"no google.adk.apps ({exc}): no App to make resumable, no ResumabilityConfig"
    if not hasattr(apps, "ResumabilityConfig"):
        return "google.adk.apps has no ResumabilityConfig: an invocation cannot be made resumable"
    if "invocation_id" not in inspect.signature(Runner.run_async).parameters:
        return "Runner.run_async takes no invocation_id: a stopped invocation cannot be resumed"
    return None


def cannot() -> dict[str, str]:
    """`pause` and `resume` with the reason this release cannot, or nothing when it can."""
    reason = missing()
    return {"pause": reason, "resume": reason} if reason else {}


def pauser(ctx: Any) -> scenario_kit.Pauser:
    """The branch's pause inside its agent: the answer the session holds for its call, or PauseHere the first time."""

    def pause(name: str) -> Any:
        for event in ctx.session.events or []:
            for part in (event.content.parts if event.content else None) or []:
                response = part.function_response
                if response is not None and response.id == _call_id(name):
                    return (response.response or {}).get("result")
        raise PauseHere(f"branch {name} asks for input")

    return pause


def pause_event(agent: Any, ctx: Any, name: str) -> Event:
    """The event a paused branch yields: its long-running call, which the user answers on resume."""
    call = types.FunctionCall(id=_call_id(name), name=ASK, args={"branch": name})
    return Event(
        author=agent.name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        long_running_tool_ids={_call_id(name)},
    )


def end_of_agent(agent: Any, ctx: Any) -> Event | None:
    """In a resumable invocation, the event that marks a custom agent finished, so a resumed invocation skips it
    (what ADK's LlmAgent yields as it ends, and what the docs' "Add resume to custom Agents" asks of a custom agent:
    `ctx.set_agent_state(name, end_of_agent=True)`, then `_create_agent_state_event(ctx)`); None otherwise."""
    if not getattr(ctx, "is_resumable", False):
        return None
    ctx.set_agent_state(agent.name, end_of_agent=True)
    event: Event = agent._create_agent_state_event(ctx)
    return event


def resume_message(script: scenario_kit.Script) -> Any:
    """The resumed invocation's new message: the answer to every paused branch's call, or none after a failure."""
    if not script.paused:
        return None
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=_call_id(name), name=ASK, response={"result": scenario_kit.ANSWER}
            )
        )
        for name in sorted(script.paused)
    ]
    return types.Content(role="user", parts=parts)


def runner(root: Any, service: Any) -> Runner:
    """A Runner of a resumable App holding the agent tree."""
    from google.adk.apps import App, ResumabilityConfig

    app = App(name=APP, root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True))
    return Runner(app=app, session_service=service)


async def _drain(events: AsyncGenerator[Event, None]) -> None:
    async for _ in events:
        pass


async def run(script: scenario_kit.Script, root: Any, service: Any, session: str) -> BaseException | None:
    """The first invocation, then (once it has stopped) the same invocation resumed once by its id: what the
    resumed one raised (None: it returned). The invocation's id is the one the session's last event carries."""
    resumable = runner(root, service)
    first = resumable.run_async(user_id=USER, session_id=session, new_message=user_message())
    try:
        await script.run(_drain(first))
    except Exception:
        pass  # the first invocation's failure: what the resumed one does is observed
    stored = await service.get_session(app_name=APP, user_id=USER, session_id=session)
    invocation = stored.events[-1].invocation_id
    await script.resume()
    again = resumable.run_async(
        user_id=USER, session_id=session, invocation_id=invocation, new_message=resume_message(script)
    )
    try:
        await script.run(_drain(again))
    except Exception as exc:
        return exc
    return None
