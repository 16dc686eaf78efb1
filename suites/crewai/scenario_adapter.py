"""CrewAI Flows' scenario adapter (docs/ADAPTERS.md): a scenario as a Flow of plain async methods.

A `@start()` method puts the scenario's state into the flow's unstructured `self.state` (one dict every
method shares: `read` and `write` are on it). Each branch is a method listening to the start; a branch
with `then` is a chain of methods, each listening to the one before (`b`, then `b.2`). The join is one
method on `and_(last node of every branch)`, CrewAI's "after all of them": it runs when every one has
completed. Its argument is only the output of the method whose completion triggered it (the last to
finish; crewai/and-listener/two-branches records that), so what the join sees of the branches is the
flow's own record of method outputs, `Flow.method_outputs` (completion order), as it stands when the
join runs: `join.saw` is the branches' values in it (a branch without a return step returns its name),
once per time the join ran; `final` is `flow.state` after the run, as the caller reads it.
The run is `kickoff_async` on the adapter's loop; a conditional fan-out (a router) is not built here. With
`runs`, the one flow object is kicked off again (its start method writes the scenario's state afresh); with
`thread`, the flow class is `@persist`ed to a SQLite file (SQLiteFlowPersistence) and the second kickoff is
given the first run's state id (`inputs={"id": ...}`), CrewAI's way to run on a stored state.
With `pause`, `resume` and `together` (scenario_resume.py), the flow is `@persist`ed to a SQLite file: a branch
pauses by raising `HumanFeedbackPending` (1.8.0 on; the older cells name the missing module in `cannot`), resumed on
a new flow object by `Flow.from_pending(id, persistence)` and `resume_async(answer)`, which triggers the paused
method's listeners, never the method again: a paused branch's steps once answered are such a listener, the join's
input; a failed run is resumed on a new flow object by `kickoff_async(inputs={"id": ...})`, which restores the
stored state and runs the flow from its start (the start method seeds nothing then). `together` is two flow
classes, each `@persist`ed to its own SQLiteFlowPersistence on one file, kicked off at once on one state id.

From the releases whose failed run signals `FlowFailedEvent` before it re-raises (`Flow._emit_flow_failed`,
1.15.13 on), that signal awaits worker threads (`asyncio.to_thread` of the event bus's flush, then the event's
handlers) while the loop goes on running the branches still alive: whether a sibling had finished when kickoff
raises was a race against those threads (8 runs on 1.15.30: "finished" 5, "left running" 3). The adapter forces
one order of it, as a slow failure handler would: a `FlowFailedEvent` handler of its own (in the bus's thread,
never the loop's) holds the signal until every branch has ended; a branch that never ends makes it vacuous.

Run as a program: `PYTHONPATH=suites:. python suites/crewai/scenario_adapter.py`.
"""

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any

import cw_kit  # telemetry off before crewai imports
import scenario_kit
import scenario_resume
from cw_kit import Flow, and_, listen, start

_BRANCH = "fanin_branch"  # marks a branch's value among the flow's method outputs


def capabilities() -> dict[str, Any]:
    return scenario_kit.declare(
        "crewai",
        version("crewai"),
        {
            "select": "not built by this adapter yet: a @router that starts only some branches",
            "escalate": "a flow method has no way to stop the flow: it returns a value its listeners receive, and the"
            " flow ends once no listener is left to run (a method's path ends as every path does)",
            **_no_persistence(),
            **scenario_resume.cannot(),
        },
        also=("runs", "thread", "stall", "together", "pause", "resume"),
    )


def _no_persistence() -> dict[str, str]:
    """Why this release cannot put two runs on one stored state, read from it (none where it can)."""
    try:
        from crewai.flow.persistence import SQLiteFlowPersistence, persist  # noqa: F401
    except ImportError as exc:
        reason = f"no crewai.flow.persistence's persist and SQLiteFlowPersistence: {exc}"
        return {"thread": reason, "together": reason, "resume": reason}
    return {}


def _node(script: scenario_kit.Script, name: str, part: int, answered: bool = False) -> Any:
    """One node of branch `name`: its steps on the flow's shared state; its last node returns the branch's value.
    A part that pauses raises CrewAI's pending-feedback signal; its `answered` twin, a listener of it, walks the
    part again once the resumed run hands it the feedback (scenario_resume)."""
    pauses = "pause" in script.steps[name][part]
    method = script.node(name, part).replace(".", "_")

    async def node(self: Any, *_trigger: Any) -> Any:
        pause = None
        if pauses:
            pause = scenario_resume.answered(self) if answered else scenario_resume.pauser(self, method)
        try:
            returned = await script.branch(
                name, read=self.state.__getitem__, write=self.state.__setitem__, part=part, pause=pause
            )
        finally:
            if all(end != "unfinished" for end in script.ends.values()):
                _ENDED.set()
        if part < script.parts(name) - 1 or (pauses and not answered):
            return None
        return {_BRANCH: name, "value": name if returned is None else returned}

    node.__name__ = node.__qualname__ = method + (scenario_resume.ANSWERED if answered else "")
    return node


def flow_class(script: scenario_kit.Script, saw: list[Any], seed: bool = True) -> Any:
    """start -> every branch's nodes in sequence -> one and_ join over every branch's last node. The start method
    writes the scenario's state unless the run goes on from a stored one (`seed` false: `together`; a resumed run)."""
    initial = script.state

    async def begin(self: Any) -> str:
        if seed and not script.resuming:
            for key, value in initial.items():
                self.state[key] = value
        return "start"

    body: dict[str, Any] = {"begin": start()(begin)}
    last = []
    for name in script.branches:
        before = "begin"
        for part in range(script.parts(name)):
            node = _node(script, name, part)
            body[node.__name__] = listen(before)(node)
            before = node.__name__
            if "pause" in script.steps[name][part]:  # the part's steps once answered: a listener of the paused one
                node = _node(script, name, part, answered=True)
                body[node.__name__] = listen(before)(node)
                before = node.__name__
        last.append(before)

    async def join(self: Any, *_trigger: Any) -> None:
        script.join_runs += 1
        saw.extend(out["value"] for out in self.method_outputs if isinstance(out, dict) and _BRANCH in out)

    body["join"] = listen(and_(*last))(join)
    return type("ScenarioFlow", (Flow,), body)


def _final(flow: Any) -> dict[str, Any]:
    state = flow.state
    return {key: state[key] for key in state.keys() if key != "id"}


_ENDED = threading.Event()  # every branch of the running scenario has ended (set from the loop's thread)
_HOLD_SECONDS = 30.0  # a branch that never ends: the hold gives up and the run is vacuous, never graded


@contextlib.contextmanager
def _failure_held_until_branches_end(script: scenario_kit.Script, flow: Any) -> Iterator[None]:
    """The FlowFailedEvent handler that holds a failed run's re-raise until every branch has ended, where the
    release signals the failure before re-raising (see the module's docstring); elsewhere nothing is held."""
    _ENDED.clear()
    if not hasattr(flow, "_emit_flow_failed"):
        yield
        return
    from crewai.events.event_bus import crewai_event_bus
    from crewai.events.types.flow_events import FlowFailedEvent

    with crewai_event_bus.scoped_handlers():

        @crewai_event_bus.on(FlowFailedEvent)
        def hold(_source: Any, _event: Any) -> None:
            if not _ENDED.wait(_HOLD_SECONDS):
                script.turns.vacuous = f"a branch had not ended {_HOLD_SECONDS:.0f} s after the run failed"

        yield


async def _kickoff(script: scenario_kit.Script, flow: Any, run: Any) -> tuple[str | None, BaseException | None]:
    """One run awaited (its failure held where the release needs it): the class name of what it raised, and it."""
    with _failure_held_until_branches_end(script, flow):
        try:
            await run
        except Exception as exc:
            return type(exc).__name__, exc
    return None, None


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    script = scenario_kit.Script(scenario, order)
    saw: list[Any] = []
    if script.together:  # two runs at once, each flow on its own SQLiteFlowPersistence on one file
        return await scenario_resume.together(script, flow_class)
    with tempfile.TemporaryDirectory(prefix="fanin-crewai-") as storage:
        cls = flow_class(script, saw)
        store = None
        if script.same_thread or script.resumes:  # the flow's state persisted (@persist) to a SQLite file
            store = scenario_resume.store(os.path.join(storage, "flows.db"))
            cls = scenario_resume.persisted(cls, store)
        flow = cls()
        for number in range(script.runs):  # `runs`: the one flow object kicked off again
            inputs = None
            if number:
                await script.again()
                saw.clear()  # the adapter's own record of the join, per run
                if script.same_thread:
                    inputs = {"id": flow.state["id"]}  # CrewAI's way to run on a persisted state: its id
            raises, error = await _kickoff(script, flow, script.run(cw_kit.kickoff(flow, inputs)))
        if script.resumes:  # `resume`: the stopped run resumed once from the store, on a new flow object
            await script.resume()
            flow, resumed = scenario_resume.resumed(script, cls, flow, store)
            raises, error = await _kickoff(script, flow, script.run(resumed))
    return await script.answer(raises=raises, final=lambda: _final(flow), saw=saw or None, error=error)


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    # The protocol owns stdout: CrewAI prints its flow panels (rich) and "Flow started" lines there, so
    # everything but the answers goes to stderr, as docs/ADAPTERS.md asks of logs.
    answers, sys.stdout = sys.stdout, sys.stderr
    scenario_kit.serve(ADAPTER, sink=answers)
