"""Google ADK's scenario adapter (docs/ADAPTERS.md): a scenario as a ParallelAgent of custom agents.

The Python twin of suites/adkjs/scenario_adapter.mjs, making the same choices so both ADKs answer each
scenario the same way. Every branch is a BaseAgent child of one ParallelAgent, followed by a `join`
agent (a SequentialAgent of the two), run through ADK's Runner on an InMemorySessionService. A branch
reads the session state as its InvocationContext shows it (or what it wrote itself) and writes by
yielding an event with a state delta; its `return` value is an event's text, and `join.saw` is those
texts in the order the join finds them in the session's events. A branch hands on its turn once ADK has
taken its last event (`Script.walk` with `later`), so the forced order is the order ADK receives the
branches' results. `final` is the state the session service stores after the run, raised or not. With
`runs`, the one agent tree runs again on a new session seeded with the scenario's state; with `thread`, again on
the first run's session, its input a new user message (ADK gives a run no other). No model: custom agents only.
With `together`, two runs at once on one session, each Runner on its own DatabaseSessionService on one SQLite
file, run 2 started once run 1's branches wait at the gate (suites/adk/scenario_together.py). With `resume`, one
invocation of a resumable App: a branch pauses by a long-running function call, and the stopped invocation is
resumed by its id (suites/adk/scenario_resume.py); in a resumable invocation every custom agent of the tree marks its
end as ADK's LlmAgent does, so the resumed ParallelAgent skips a branch that finished.

Run as a program: `PYTHONPATH=suites:. python suites/adk/scenario_adapter.py`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from importlib.metadata import version
from typing import Any

import scenario_kit
import scenario_resume
import scenario_together
from adk_kit import APP, USER, run_turn, stored_state
from google.adk.agents import BaseAgent, ParallelAgent, SequentialAgent
from google.adk.events import Event, EventActions
from google.adk.sessions import InMemorySessionService
from google.genai import types


class Branch(BaseAgent):
    """A ParallelAgent child that runs the branch's steps: each write is an event with one state delta. A branch
    of several parts (`then`) is a SequentialAgent of these inside the ParallelAgent, one agent per part."""

    script: Any = None
    branch_name: str = ""  # the scenario's branch (the agent's own name is the part's: `b`, then `b_2`)
    part: int = 0

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        name = self.branch_name or self.name
        own: dict[str, Any] = {}

        def read(key: str) -> Any:
            return own[key] if key in own else (ctx.session.state or {}).get(key)

        pause = scenario_resume.pauser(ctx) if self.script.resumes else None
        try:
            async for key, written in self.script.walk(name, read, later=True, part=self.part, pause=pause):
                own[key] = written
                delta = EventActions(state_delta={key: written})
                yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch, actions=delta)
        except scenario_resume.PauseHere:  # the branch asks a person: its long-running call ends its turn
            yield scenario_resume.pause_event(self, ctx, name)
            return
        last = self.part == self.script.parts(name) - 1
        returned = self.script.results[name] if last else None
        if returned is not None:
            content = types.Content(role="model", parts=[types.Part(text=json.dumps(returned))])
            yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch, content=content)
        if last and self.script.escalates(name):  # ask ADK to stop the run: an event whose actions escalate
            stop = EventActions(escalate=True)
            yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch, actions=stop)
        end = scenario_resume.end_of_agent(self, ctx)  # a resumable App: the part marks itself finished
        if end is not None:
            yield end
        # Resumed: ADK has taken the part's last event. The part holding the turn hands it on (or the last part,
        # once the branch is done): as far as ADK can tell, it has finished.
        if last or "turn" in self.script.steps[name][self.part]:
            self.script.hand_on(name)


class Join(BaseAgent):
    """After the ParallelAgent: what the branches handed on, in the order the session's events hold them."""

    branches: list[str] = []
    joined: Any = None
    script: Any = None

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        self.script.join_runs += 1
        texts = [
            json.loads(event.content.parts[0].text)
            for event in ctx.session.events
            if event.author in self.branches and event.content and event.content.parts and event.content.parts[0].text
        ]
        self.joined["saw"] = texts
        end = scenario_resume.end_of_agent(self, ctx)  # a resumable App: the join marks itself finished
        if end is not None:
            yield end


def capabilities() -> dict[str, Any]:
    return scenario_kit.declare(
        "adk",
        version("google-adk"),
        {
            "select": "a ParallelAgent runs every sub-agent: there is no conditional fan-out to leave a branch out",
            **scenario_resume.cannot(),
        },
        also=("escalate", "runs", "thread", "stall", "together", "pause", "resume"),
    )


def build(script: scenario_kit.Script, joined: dict[str, Any]) -> Any:
    """The agent tree: a ParallelAgent of the branches, then the join, which records into `joined`."""
    children: list[Any] = []
    authors: list[str] = []  # the agents whose text is a branch's return: each branch's last part
    for name in script.branches:
        # An agent's name is an identifier: the parts after the first are `b_2`, `b_3` (the kit's `b.2`).
        parts = [
            Branch(name=script.node(name, part).replace(".", "_"), script=script, branch_name=name, part=part)
            for part in range(script.parts(name))
        ]
        authors.append(parts[-1].name)
        children.append(parts[0] if len(parts) == 1 else SequentialAgent(name=f"{name}_parts", sub_agents=parts))
    fanout = ParallelAgent(name="fanout", sub_agents=children)
    return SequentialAgent(name="scenario", sub_agents=[fanout, Join(name="join", branches=authors, joined=joined, script=script)])


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    if scenario.get("together"):  # two runs at once on one session, each through its own DatabaseSessionService
        return await scenario_together.run(scenario, order, lambda view: build(view, {}))
    script = scenario_kit.Script(scenario, order)
    joined: dict[str, Any] = {}
    root = build(script, joined)
    service = InMemorySessionService()
    if script.resumes:  # one invocation of a resumable App, stopped, then resumed once by its id
        await service.create_session(app_name=APP, user_id=USER, session_id="s1", state=script.state)
        error = await scenario_resume.run(script, root, service, "s1")
        raises = None if error is None else type(error).__name__
        final = lambda: stored_state(service, "s1")  # noqa: E731
        return await script.answer(raises=raises, final=final, saw=joined.get("saw"), error=error)
    for number in range(script.runs):  # `runs`: the one agent tree run again, a new session each (`thread`: one)
        session = "s1" if script.same_thread else f"s{number + 1}"
        if number:
            await script.again()
            joined.clear()  # the adapter's own record of the join, per run
        if not number or not script.same_thread:
            await service.create_session(app_name=APP, user_id=USER, session_id=session, state=script.state)
        raises, error = None, None
        try:
            await script.run(run_turn(root, service, session))
        except Exception as exc:
            raises, error = type(exc).__name__, exc
    final = lambda: stored_state(service, session)  # noqa: E731
    return await script.answer(raises=raises, final=final, saw=joined.get("saw"), error=error)


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
