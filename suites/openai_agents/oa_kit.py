"""Helpers shared by the OpenAI Agents SDK (openai-agents) probes: a scripted model, offline.

Kept small on purpose: a probe's own function is its reproducer in the report, so anything that
decides what a probe observes stays in the probe. Only the model is replaced: everything else is
the real SDK's Agent, Runner, function tools, run context and history.

- `Scripted`: a `Model` (the SDK's interface: `get_response`, `stream_response`) that answers each
  turn from a script: a list of tool calls (`(tool name, arguments)`, all in one response: the
  "parallel tool calls" of one model turn) or a final text. It keeps the input each turn received
  (`inputs`), the `parallel_tool_calls` setting the SDK handed it (`settings`) and the calls it
  made (`calls`). Like the Responses API, it makes at most one call a response when that setting
  is False (the rest follow in the next turns): what a provider that honours the setting does.
- `run`: one `Runner.run` of an agent on a context object, tracing off (no exporter, no network).
- `outputs_in_history`: the tool outputs a turn's input holds, in the order the SDK put them there.
"""

import json
import os
from dataclasses import fields, replace
from typing import Any

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # before the SDK reads it

from agents import Agent, ModelSettings, RunConfig, Runner, set_tracing_disabled  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

set_tracing_disabled(True)

Turn = list[tuple[str, dict[str, Any]]] | str


def _response(output: list[Any]) -> ModelResponse:
    """A ModelResponse in whichever shape this version declares (`referenceable_id` in 0.0.x, `response_id` later)."""
    names = {f.name for f in fields(ModelResponse)}
    ids = {name: None for name in ("referenceable_id", "response_id") if name in names}
    return ModelResponse(output=output, usage=Usage(), **ids)


def call_id(name: str, arguments: dict[str, Any]) -> str:
    """One id per scripted call: the tool's name and its arguments' values."""
    return "call_" + "_".join([name, *(str(v) for v in arguments.values())])


class Scripted(Model):
    """A model that plays a script of turns; see the module docstring."""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = list(turns)
        self.inputs: list[list[Any]] = []
        self.settings: list[bool | None] = []
        self.calls: list[list[str]] = []  # the call ids of each response (a final text: [])

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, *args: Any, **kw: Any) -> Any:
        self.inputs.append(list(input) if isinstance(input, list) else [input])
        self.settings.append(model_settings.parallel_tool_calls)
        turn = self.turns.pop(0) if self.turns else "done"
        if isinstance(turn, str):
            text = ResponseOutputText(text=turn, type="output_text", annotations=[])
            message = ResponseOutputMessage(
                id="msg", content=[text], role="assistant", status="completed", type="message"
            )
            self.calls.append([])
            return _response([message])
        if model_settings.parallel_tool_calls is False and len(turn) > 1:
            self.turns.insert(0, turn[1:])
            turn = turn[:1]
        calls = [
            ResponseFunctionToolCall(
                id=f"fc_{call_id(name, args)}",
                call_id=call_id(name, args),
                name=name,
                arguments=json.dumps(args),
                type="function_call",
                status="completed",
            )
            for name, args in turn
        ]
        self.calls.append([c.call_id for c in calls])
        return _response(calls)

    async def stream_response(self, *args: Any, **kw: Any) -> Any:  # the probes run Runner.run, never streamed
        raise NotImplementedError("Scripted plays get_response only")
        yield  # an async generator, as the interface declares


def agent(model: Scripted, tools: list[Any], settings: ModelSettings | None = None) -> Any:
    """An agent on the scripted model with these tools (and model settings)."""
    return Agent(name="probe", instructions="probe", model=model, tools=tools, model_settings=settings or ModelSettings())


async def run(agent: Any, context: Any, run_config: Any = None, session: Any = None) -> Any:
    """One `Runner.run` of `agent` on `context` (on `session`, a stored conversation, where given); returns the
    RunResult.

    Tracing is off in the run's own config too, not only process-wide: a standalone reproducer
    (`fanin repro`) inlines this function but not the module's statements, and must never export
    a trace, whatever OPENAI_API_KEY its user has set."""
    config = replace(run_config if run_config is not None else RunConfig(), tracing_disabled=True)
    stored = {} if session is None else {"session": session}
    return await Runner.run(agent, "go", context=context, run_config=config, **stored)


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def outputs_in_history(items: list[Any]) -> list[Any]:
    """The tool outputs in a turn's input, in the SDK's order: `[(call_id, output), ...]` as lists."""
    return [[_field(i, "call_id"), _field(i, "output")] for i in items if _field(i, "type") == "function_call_output"]
