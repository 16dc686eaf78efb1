"""Support code shared by the ADK probes: a model-free agent that writes state when its gate opens.

Real ADK classes only (BaseAgent, Event, EventActions, Runner,
InMemorySessionService); nothing of the framework is replaced.
"""

from typing import Any, AsyncGenerator

from google.adk.agents import BaseAgent
from google.adk.events import Event, EventActions
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

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


async def run_once(root: BaseAgent, service: InMemorySessionService | None = None, session_id: str = "s1"):
    """Run `root` once on a fresh session; return (events, state re-read from the session service)."""
    service = service or InMemorySessionService()
    session = await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    runner = Runner(app_name=APP, agent=root, session_service=service)
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events = [e async for e in runner.run_async(user_id=USER, session_id=session.id, new_message=message)]
    stored = await service.get_session(app_name=APP, user_id=USER, session_id=session.id)
    return events, dict(stored.state)
