"""deepagents' scenario adapter (docs/ADAPTERS.md): a scenario as parallel `task` calls to one subagent per branch.

The parent is `create_deep_agent` with a scripted model (da_kit.ScriptedModel, the only stand-in, as in
every deepagents probe): its first reply calls the `task` tool once per branch, all in one message, so
deepagents runs the subagents together; its second call is the join. Each branch is a compiled subagent
(`create_agent` with a scripted model) whose middleware runs the branch's steps before the agent
(`abefore_agent`): it reads the state deepagents hands the subagent (or what it wrote itself) and writes by
returning a state update, which deepagents' `task` tool returns to the parent as its Command update. A
branch hands on its turn once deepagents has taken its result (its subagent run and `task` call ended: the
loop and its thread pool settled), so the forced order is the order deepagents receives the results. The
scenario's keys are state channels of both (a middleware's `state_schema`, deepagents' way to add state).
A branch's `return` value is its subagent's final message, JSON text, which reaches the parent as the
`task` call's ToolMessage; `join.saw` is those, in the order the parent's next model call is given them.
The parent runs with an in-memory checkpointer, so `final` is what `aget_state` shows after the run,
raised or not. A branch of two parts (`then`) runs its first part in the middleware's `abefore_agent` and its
second in `abefore_model`: two nodes of the subagent's graph, one after the other (a branch of more parts than
that is n/a). The parent's second model call, the join, counts its runs (`join.runs`). With `runs`, the one
agent runs again with a fresh input on a thread of its own; with `thread`, on the first run's thread (its input
a new user message and the scenario's keys), the join then given the whole conversation the parent holds. With
`resume` (lg_resume.py), a branch pauses with LangGraph's `interrupt()` in its middleware, and the parent
is resumed on its thread: `Command(resume=...)` after a pause, `None` after a failure.

Run as a program: `PYTHONPATH=suites:. python suites/deepagents/scenario_adapter.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from importlib.metadata import version
from typing import Any

import da_kit
import scenario_kit
import lg_resume

HOOKS = ("abefore_agent", "abefore_model")  # the subagent middleware's nodes a branch's parts run in, in order
NOTHING = ""  # the final message of a branch without a `return` step: nothing handed to the join


def capabilities() -> dict[str, Any]:
    return scenario_kit.declare(
        "deepagents",
        version("deepagents"),
        {
            **lg_resume.cannot(),
            "escalate": "a subagent's run ends only itself: deepagents' `task` tool hands the parent a state update"
            " (a Command without goto), and the parent's next model turn follows every task call",
            "select": "the fan-out is the model's task calls: the parent's next turn waits for no subagent it did not call",
            **_no_shared_store(),
        },
        also=("runs", "thread", "stall", "pause", "resume"),
    )


def _no_shared_store() -> dict[str, str]:
    """Why two runs cannot each open a store object on one database here (none where a SQLite saver imports)."""
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: F401
    except ImportError as exc:
        return {
            "together": "deepagents ships no store of its own (create_deep_agent takes LangGraph's checkpointer) and"
            f" this cell has no SQLite checkpointer to open twice on one file: {exc}"
        }
    return {}


def _api() -> tuple[Any, Any, Any, Any, Any]:
    """deepagents' parent, langchain's agent and middleware (what deepagents builds on), the checkpointer."""
    try:
        from deepagents import create_deep_agent
        from langchain.agents import create_agent
        from langchain.agents.middleware import AgentMiddleware, AgentState
        from langgraph.checkpoint.memory import MemorySaver
    except ImportError as exc:
        raise scenario_kit.NotExpressible(f"{exc}") from None
    return create_deep_agent, create_agent, AgentMiddleware, AgentState, MemorySaver


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    from langchain_core.messages import HumanMessage
    from typing_extensions import NotRequired

    create_deep_agent, create_agent, AgentMiddleware, AgentState, MemorySaver = _api()
    script = scenario_kit.Script(scenario, order)
    deepest = max(script.parts(name) for name in script.branches)
    if deepest > len(HOOKS):
        raise scenario_kit.NotExpressible(
            f"a subagent's middleware has {len(HOOKS)} nodes before its model call ({', '.join(HOOKS)}):"
            f" a branch of {deepest} parts needs more"
        )
    initial = script.state
    # The scenario's keys as state channels: an AgentState with one plain (last-value) field each.
    annotations = {key: NotRequired[Any] for key in initial}
    State = type(AgentState)("ScenarioState", (AgentState,), {"__annotations__": annotations, "__module__": __name__})
    joined: dict[str, Any] = {}
    returned: dict[str, Any] = {}

    handing: list[asyncio.Task[None]] = []

    async def hand_on_when_taken(name: str) -> None:
        """The next branch's turn once deepagents has taken this one's result: its subagent run ended, the `task`
        call returned its update (loop and thread pool settled; the siblings wait at their gates meanwhile)."""
        # One settle at a time (the kit's lock), beside until_idle's: two at once would never see the loop idle.
        await scenario_kit.settle_alone(threads=True)
        script.hand_on(name)

    class Keys(AgentMiddleware):  # type: ignore[misc, valid-type]
        state_schema = State

    def branch_middleware(name: str) -> Any:
        class Branch(AgentMiddleware):  # type: ignore[misc, valid-type]
            state_schema = State

            async def abefore_agent(self, state: dict[str, Any], runtime: Any) -> dict[str, Any]:
                return await self.part(state, 0)

            async def abefore_model(self, state: dict[str, Any], runtime: Any) -> dict[str, Any]:
                return await self.part(state, 1)  # the agent's loop comes back here only after a tool call: never

            async def part(self, state: dict[str, Any], index: int) -> dict[str, Any]:
                """Part `index` of the branch (its steps up to the next `then`): nothing where it has no such part."""
                update: dict[str, Any] = {}
                if index >= script.parts(name):
                    return update
                read = lambda key: update.get(key, state.get(key))  # noqa: E731
                steps = script.walk(name, read=read, later=True, part=index, pause=lg_resume.pause)
                async with contextlib.aclosing(steps):
                    async for key, value in steps:
                        update[key] = value
                if index < script.parts(name) - 1:
                    return update  # a part before the last hands its turn on as it ends (Script.walk)
                returned[name] = script.results[name]
                # The last in the order hands nothing on (and settles nothing), nor does a branch whose first part
                # already handed its turn on (a second settle beside the run's would keep both from ever settling).
                if script.turns.order[-1] != name and name not in script.turns.acted:
                    handing.append(asyncio.get_running_loop().create_task(hand_on_when_taken(name)))
                else:
                    script.hand_on(name)
                return update

        return Branch()

    def subagent(name: str) -> dict[str, Any]:
        def reply(messages: list[Any]) -> Any:
            value = returned.get(name)
            return da_kit.say(NOTHING if value is None else json.dumps(value))

        model = da_kit.ScriptedModel(respond=reply)
        runnable = create_agent(model, middleware=[branch_middleware(name)])
        return {"name": name, "description": f"branch {name}", "runnable": runnable}

    def join(messages: list[Any]) -> Any:
        script.join_runs += 1
        tools = [m for m in messages if getattr(m, "type", None) == "tool"]
        joined["saw"] = [json.loads(m.content) for m in tools if m.content != NOTHING]
        return da_kit.say("joined")

    def fan_out(number: int) -> list[Any]:
        """The parent's script for run `number`: one `task` call per branch (ids of that run), then the join."""
        return [da_kit.calls(*(da_kit.task_call(f"task-{number}-{n}", n, f"run {n}") for n in script.branches)), join]

    parent = da_kit.ScriptedModel(steps=fan_out(1))
    agent = create_deep_agent(
        model=parent,
        subagents=[subagent(name) for name in script.branches],
        middleware=[Keys()],
        checkpointer=MemorySaver(),
    )
    for number in range(script.runs):  # `runs`: the one agent run again, a fresh input on a new thread
        thread = 1 if script.same_thread else number + 1  # `thread`: every run on the first run's thread
        if number:
            await script.again()
            joined.clear()  # the adapter's own records, per run
            returned.clear()
            parent.play(fan_out(number + 1))  # the fake model's script from its start: only the model is scripted
        config = {"configurable": {"thread_id": f"scenario-{thread}"}}
        raises, error = None, None
        try:
            await script.run(agent.ainvoke({"messages": [HumanMessage("go")], **initial}, config))
        except Exception as exc:
            raises, error = type(exc).__name__, exc
    if script.resumes:  # `resume`: the stopped run resumed once on its thread, LangGraph's way
        await script.resume()
        raises, error = None, None
        try:
            await script.run(agent.ainvoke(lg_resume.resume_input(script), config))
        except Exception as exc:
            raises, error = type(exc).__name__, exc
    snapshot: list[Any] = []
    try:
        snapshot.append(await agent.aget_state(config))
    except Exception:
        pass  # the caller can read no state (a checkpoint whose pending writes conflict): final is null

    def final() -> dict[str, Any] | None:
        values = snapshot[0].values if snapshot else {}
        return {key: values[key] for key in initial if key in values} or None

    return await script.answer(raises=raises, final=final, saw=joined.get("saw"), error=error)


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
