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
SDK's way for a tool call to end the run with its output as the final output, no further model turn. With
`runs`, the one agent runs again on a fresh context object; with `thread`, every run on one `SQLiteSession` (the
SDK's stored conversation, an in-memory sqlite3 database), whose items the SDK puts before the run's input. A
branch that pauses (`pause`) is a call that needs approval (`needs_approval`), and the stopped run is resumed from
its serialized `RunState`, the call approved (`resume`; oa_resume.py, which also says why a failed run cannot be).

Run as a program: `PYTHONPATH=suites:. python suites/openai_agents/scenario_adapter.py`.
"""

import dataclasses
import pathlib
from importlib.metadata import version
from typing import Any

import oa_kit
import oa_resume
import scenario_kit
from agents import ModelSettings, RunContextWrapper, function_tool


def capabilities() -> dict[str, Any]:
    return scenario_kit.declare(
        "openai_agents",
        version("openai-agents"),
        {
            "then": "a branch is one tool call: there is no node after it within the branch",
            "select": "the fan-out is the model's tool calls: the next turn waits for no tool the model did not call",
            **_no_session(),
            "together": _no_stored_state(),
            **oa_resume.cannot(),
        },
        also=("escalate", "runs", "thread", "stall", "pause", "resume"),
    )


def _no_session() -> dict[str, str]:
    """Why this release cannot put two runs on one stored conversation, read from it (none where it can)."""
    import inspect

    from agents import Runner

    if "session" not in inspect.signature(Runner.run).parameters:
        return {"thread": "Runner.run takes no session: the SDK stores no conversation between runs"}
    try:
        from agents import SQLiteSession  # noqa: F401
    except ImportError:
        return {"thread": "agents has no SQLiteSession: no session store ships with the SDK"}
    return {}


def _no_stored_state() -> str:
    """Why two runs on one stored session share no key to read-modify-write, read from this release's session."""
    reason = _no_session().get("thread")
    if reason:
        return reason
    from agents import SQLiteSession

    methods = sorted(m for m, v in vars(SQLiteSession).items() if callable(v) and not m.startswith("_"))
    return (
        f"a session stores conversation items only (SQLiteSession's methods: {', '.join(methods)}): a branch's keys"
        " are the context object the caller passes to Runner.run, which no session stores, so two workers on one"
        " session share no key"
    )


def _session() -> Any:
    """An in-memory SQLite session (`SQLiteSession`, a real sqlite3 database): the runs' stored conversation."""
    from agents import SQLiteSession

    return SQLiteSession("scenario")


def _stop_at(names: list[str]) -> Any:
    """`StopAtTools(names)`: a call of one of these tools ends the run with its output (no further model turn)."""
    try:
        from agents import StopAtTools
    except ImportError as exc:  # a release without tool_use_behavior's stop: no tool call can end the run
        raise scenario_kit.NotExpressible(f"agents has no StopAtTools ({type(exc).__name__})") from exc
    return StopAtTools(stop_at_tool_names=names)


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    script = scenario_kit.Script(scenario, order)
    if script.resumes and not oa_resume.pauses(script):  # `resume` after a failure
        raise scenario_kit.NotExpressible(oa_resume.no_failed_resume())
    context: dict[str, Any] = script.state
    keys = list(context)

    async def steps(ctx: RunContextWrapper[Any], name: str, pause: scenario_kit.Pauser) -> Any:
        """A branch's steps on the run context's keys."""
        return await script.branch(name, read=lambda k: ctx.context[k], write=ctx.context.__setitem__, pause=pause)

    async def branch(ctx: RunContextWrapper[Any], name: str, run: int) -> str:
        """Run one scenario branch (`run`: which run of the agent calls it, so each run's call ids are its own)."""
        returned = await steps(ctx, name, oa_resume.answer)
        return name if returned is None else returned

    # `pause`: a pausing branch's call needs approval (oa_resume), asked before the SDK runs its tool.
    approval = {"needs_approval": oa_resume.approval(script, steps)} if oa_resume.pauses(script) else {}
    tools = [function_tool(branch, **approval)]
    def calls(run: int) -> list[Any]:
        """The model's parallel calls of run `run`, one per branch (a real model's call ids differ per run)."""
        return [("stop_branch" if script.escalates(n) else "branch", {"name": n, "run": run}) for n in script.branches]

    model = oa_kit.Scripted([calls(1), "done"])
    if any(script.escalates(name) for name in script.branches):
        tools.append(function_tool(branch, name_override="stop_branch"))
    agent = oa_kit.agent(model, tools, ModelSettings(parallel_tool_calls=True))
    if len(tools) > 1:
        agent = dataclasses.replace(agent, tool_use_behavior=_stop_at(["stop_branch"]))
    session = _session() if script.same_thread else None  # `thread`: every run on one stored conversation
    for number in range(script.runs):  # `runs`: the one agent run again, a fresh context object
        if number:
            await script.again()
            context = script.state
            model.turns, model.inputs = [calls(number + 1), "done"], []  # the fake model's script again, per run
        raises, error = None, None
        try:
            result = await script.run(oa_kit.run(agent, context, session=session))
            if script.resumes:  # `resume`: the paused run resumed once from its serialized RunState
                with script.store_dir() as store:
                    result = await oa_resume.resume(script, agent, result, pathlib.Path(store))
                context = result.context_wrapper.context  # the state's context, deserialized
        except Exception as exc:
            raises, error = type(exc).__name__, exc
    script.join_runs = max(len(model.inputs) - 1, 0)
    saw = [output for _, output in oa_kit.outputs_in_history(model.inputs[1])] if len(model.inputs) > 1 else None
    final = lambda: {k: context.get(k) for k in keys}  # noqa: E731
    return await script.answer(raises=raises, final=final, saw=saw, error=error)


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
