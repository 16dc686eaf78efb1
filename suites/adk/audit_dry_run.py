"""`fanin audit --input` on an ADK agent tree: run it once with every model replaced by a fake, record who wrote what.

Runs where the user's agents and google-adk are installed (imported by suites/adk/audit.py only for a dry
run). Every LlmAgent of the tree (sub-agents, and the agents of its AgentTools) gets a `BaseLlm` that
answers each request with one line of text and never calls a tool, so the run needs no network and no key;
the tree's own code runs as written (callbacks, custom agents, output_key). The run goes through ADK's
`Runner` on an `InMemorySessionService`, and every event's `state_delta` is a write: which agent (the event's
author) wrote which keys, event by event. Model calls are capped (RunConfig.max_llm_calls, the recursion
limit): a LoopAgent whose exit is a model's tool call never ends otherwise. The models are put back after.

The input is the user's message: a JSON string, or an object {"message": "...", "state": {...}} with the
session's initial state.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Iterator
from typing import Any

from google.adk.agents import RunConfig
from google.adk.models import BaseLlm, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

APP, USER, SESSION = "fanin-audit", "fanin", "fanin-audit-dry-run"
DEFAULT_CALLS = 25  # FANIN_AUDIT_RECURSION_LIMIT's default, as for LangGraph's dry run


class _FakeModel(BaseLlm):
    """One line of text per request, naming the agent: no function call, no network."""

    model: str = "fanin-fake-model"
    agent: str = ""

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
        text = f"fanin dry run: {self.agent}"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def _agents(root: Any) -> Iterator[Any]:
    """Every agent of the tree: sub-agents and the agents behind AgentTools, each once."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        agent = todo.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        todo += list(getattr(agent, "sub_agents", None) or [])
        for tool in getattr(agent, "tools", None) or []:
            inner = getattr(tool, "agent", None)
            if inner is not None:
                todo.append(inner)


def _message(given: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(given, dict):
        return str(given.get("message", "")), dict(given.get("state") or {})
    return str(given), {}


def dry_run(root: Any, given: Any) -> dict[str, Any]:
    """Run `root` once on `given` with fake models; the writes event by event, or the error that ended the run."""
    replaced: list[tuple[Any, Any]] = []
    for agent in _agents(root):
        if "LlmAgent" in [c.__name__ for c in type(agent).__mro__] and hasattr(agent, "model"):
            replaced.append((agent, agent.model))
            object.__setattr__(agent, "model", _FakeModel(agent=str(agent.name)))
    writes: list[dict[str, Any]] = []
    error = None
    text, state = _message(given)
    calls = int(os.environ.get("FANIN_AUDIT_RECURSION_LIMIT") or DEFAULT_CALLS)

    async def run() -> None:
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id=SESSION, state=state)
        runner = Runner(app_name=APP, agent=root, session_service=service)
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = runner.run_async(
            user_id=USER, session_id=SESSION, new_message=message, run_config=RunConfig(max_llm_calls=calls)
        )
        async for event in events:
            delta = getattr(getattr(event, "actions", None), "state_delta", None) or {}
            keys = sorted(str(k) for k in delta if not str(k).startswith("temp:"))
            if keys:
                writes.append({"step": len(writes) + 1, "node": str(event.author), "keys": keys})

    try:
        asyncio.run(run())
    except Exception as exc:  # noqa: BLE001 - the run's failure is itself a fact
        first = str(exc).splitlines()[0][:200] if str(exc) else "(no message)"
        error = f"{type(exc).__name__}: {first}"
    finally:
        for agent, model in replaced:
            object.__setattr__(agent, "model", model)
    by_step: dict[str, dict[str, list[str]]] = {}
    for write in writes:
        by_step.setdefault(str(write["step"]), {})[write["node"]] = write["keys"]
    return {
        "writes": writes,
        "by_step": by_step,
        "error": error,
        "fake_model": f"every LlmAgent's model answers one line of text and calls no tool; at most {calls} model calls",
        "mode": "async",
        "unit": "event",
    }
