"""The OpenAI Agents SDK's scenario adapter (docs/ADAPTERS.md): a scenario as parallel tool calls of one model turn.

The branches are the calls of one model response: the scripted model (oa_kit.Scripted, asked for parallel
calls with `parallel_tool_calls=True`) calls the function tool `branch` once per scenario branch, in the
branches' declaration order, and the SDK runs them together. A branch's `read` and `write` are the run
context's keys (`ctx.context[key]`, the one object the caller passed to `Runner.run`); its `return` value is
the tool's output (a branch without one returns its name). The join is the next model turn: `join.saw` is
the tool outputs its input holds, in the order the SDK put them there. `final` is the context object the
caller still holds after the run (null when the run raised before any turn). A `raise` step raises in the
tool; with the SDK's default `failure_error_function` the error becomes the tool's output for the model.
`join.runs` counts the model turns after the tool calls. A branch that asks to stop the run (`escalate`) is a
call of a second tool, `stop_branch`, which the agent names in `tool_use_behavior=StopAtTools(...)`: the
SDK's way for a tool call to end the run with its output as the final output, no further model turn.

Run as a program: `PYTHONPATH=suites:. python suites/openai_agents/scenario_adapter.py`.
"""

import dataclasses
from importlib.metadata import version
from typing import Any

import oa_kit
import scenario_kit
from agents import ModelSettings, RunContextWrapper, function_tool


def capabilities() -> dict[str, Any]:
    return scenario_kit.declare(
        "openai_agents",
        version("openai-agents"),
        {
            "then": "a branch is one tool call: there is no node after it within the branch",
            "select": "the fan-out is the model's tool calls: the next turn waits for no tool the model did not call",
        },
        also=("escalate", "stall"),
    )


def _stop_at(names: list[str]) -> Any:
    """`StopAtTools(names)`: a call of one of these tools ends the run with its output (no further model turn)."""
    try:
        from agents import StopAtTools
    except ImportError as exc:  # a release without tool_use_behavior's stop: no tool call can end the run
        raise scenario_kit.NotExpressible(f"agents has no StopAtTools ({type(exc).__name__})") from exc
    return StopAtTools(stop_at_tool_names=names)


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    script = scenario_kit.Script(scenario, order)
    context: dict[str, Any] = script.state
    keys = list(context)

    async def branch(ctx: RunContextWrapper[Any], name: str) -> str:
        """Run one scenario branch."""
        returned = await script.branch(name, read=lambda k: ctx.context[k], write=ctx.context.__setitem__)
        return name if returned is None else returned

    tools = [function_tool(branch)]
    calls = [("stop_branch" if script.escalates(name) else "branch", {"name": name}) for name in script.branches]
    model = oa_kit.Scripted([calls, "done"])
    if any(script.escalates(name) for name in script.branches):
        tools.append(function_tool(branch, name_override="stop_branch"))
    agent = oa_kit.agent(model, tools, ModelSettings(parallel_tool_calls=True))
    if len(tools) > 1:
        agent = dataclasses.replace(agent, tool_use_behavior=_stop_at(["stop_branch"]))
    raises, error = None, None
    try:
        await script.run(oa_kit.run(agent, context))
    except Exception as exc:
        raises, error = type(exc).__name__, exc
    script.join_runs = max(len(model.inputs) - 1, 0)
    saw = [output for _, output in oa_kit.outputs_in_history(model.inputs[1])] if len(model.inputs) > 1 else None
    final = lambda: {k: context.get(k) for k in keys}  # noqa: E731
    return await script.answer(raises=raises, final=final, saw=saw, error=error)


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
