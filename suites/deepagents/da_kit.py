"""Helpers shared by the deepagents probes.

Kept small on purpose: a probe's own function is its reproducer in the report, so
anything that decides what a probe observes stays in the probe. What lives here is
plumbing that several probes need the same way:

- `ScriptedModel`: the only thing replaced. A `BaseChatModel` that plays a script
  (one step per model call), so the parent's parallel `task` tool calls, the
  subagents' tool calls and their replies are fixed, and everything downstream
  of the model (create_deep_agent, the `task` tool, LangGraph's fan-in) is the
  real deepagents code.
- `task_call`, `tool_call`: tool calls as a model emits them.
- Subagents are ordered with `gates.ThreadTurns` in their scripted model's steps only: LangGraph
  folds the `task` results in the order of the tool calls whatever the finishing order, and its
  per-task stream updates can lag behind a task's end, so they are not used as a signal.
- `task_of`, `answered`: what a subagent run was asked, and how its own tools answered.
- `replies`, `file_texts`: what the parent received, as plain data.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

EXHAUSTED = "(script exhausted)"


class ScriptedModel(BaseChatModel):
    """A chat model that answers each call with the next step of its script.

    A step is an `AIMessage`, or a function of the messages the model was given that
    returns one (an `async def` step for the async path). A step that raises is a
    failing model call, i.e. a failing subagent. Past the end of the script the model
    answers `EXHAUSTED` with no tool call, and `calls` says how often it was asked.

    One subagent type launched several times at once shares its model between runs
    that call it in any order, so it takes `respond` instead of `steps`: one function
    of the messages, asked on every call, whose answer depends only on the
    conversation it is given (e.g. the task description, or whether its tools answered).
    """

    steps: list[Any] = []
    respond: Any = None
    _calls: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "fanin-scripted"

    @property
    def calls(self) -> int:
        return self._calls

    def play(self, steps: list[Any]) -> None:
        """Start over with a new script (one agent, built once, run several times)."""
        with self._lock:
            self.steps = list(steps)
            self._calls = 0

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> ScriptedModel:
        return self

    def _next(self) -> Any:
        with self._lock:
            index = self._calls
            self._calls += 1
        if self.respond is not None:
            return self.respond
        return self.steps[index] if index < len(self.steps) else AIMessage(content=EXHAUSTED)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        step = self._next()
        if inspect.iscoroutinefunction(step):
            raise TypeError("an async step was reached from the sync path: the probe's script is wrong")
        message = step(messages) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        step = self._next()
        if inspect.iscoroutinefunction(step):
            message = await step(messages)
        else:
            message = step(messages) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=message)])


def tool_call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def task_call(call_id: str, subagent_type: str, description: str) -> dict[str, Any]:
    """One `task` tool call, as the parent model emits it."""
    return tool_call("task", {"description": description, "subagent_type": subagent_type}, call_id)


def say(text: str) -> AIMessage:
    return AIMessage(content=text)


def calls(*tool_calls: dict[str, Any]) -> AIMessage:
    """One model message carrying all these tool calls (they run in one superstep)."""
    return AIMessage(content="", tool_calls=list(tool_calls))


def task_of(messages: Sequence[BaseMessage]) -> str:
    """The task description a subagent run was given (its first human message)."""
    return next(m.content for m in messages if getattr(m, "type", None) == "human")


def answered(messages: Sequence[BaseMessage]) -> dict[str, str]:
    """A subagent's own tool results so far, as {tool_call_id: status} ("success" or "error")."""
    return {m.tool_call_id: getattr(m, "status", "success") for m in messages if getattr(m, "type", None) == "tool"}


def replies(messages: Sequence[BaseMessage]) -> dict[str, str]:
    """The parent's tool messages as {tool_call_id: content}."""
    return {m.tool_call_id: m.content for m in messages if getattr(m, "type", None) == "tool"}


def file_texts(files: dict[str, Any] | None) -> dict[str, str]:
    """`files` state as {path: text}: the content only (timestamps vary run to run).

    deepagents kept a file's content as a list of lines in 0.2.x-0.4.x and as one
    string in 0.5.9 and later; both read the same here.
    """
    out: dict[str, str] = {}
    for path, data in (files or {}).items():
        content: Any = data.get("content") if isinstance(data, dict) else data
        out[path] = "\n".join(content) if isinstance(content, list) else content
    return out
