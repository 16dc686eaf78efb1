"""A live flow across releases: one interpreter leaves a `@persist`ed flow stopped mid-fan-out in a SQLite store,
another resumes it.

The writer runs as `python cw_live.py write MODE FOLDER` with an earlier release's interpreter (the contract's
EARLIER_PYTHON), or with the probe's own for the same-release control; it writes one JSON line to
FOLDER/written.json (and prints it). The flow is `s`
(start) -> `a`, `b` (each listens to `s`) -> the join, the class `@persist`ed to a SQLiteFlowPersistence on
FOLDER/flows.db (the state saved after every method completes). `a` writes `state["a"]` and returns; `b` waits
until the store holds the state `a`'s completion saved (a gate on the store's own save, never a clock), then stops
the run one of two ways (MODE):

- `paused` (1.8 on): `b` raises `HumanFeedbackPending`, the signal a `HumanFeedbackProvider` raises for async human
  feedback; `kickoff_async` saves the state and the `PendingFeedbackContext` to the store (`save_pending_feedback`)
  and returns the signal. The resume is the documented one: `Flow.from_pending(flow_id, persistence)` on a new
  flow object and `resume_async(answer)`, which never runs `b` again (it is marked completed) but triggers its
  listener `b_answered` with the feedback; the join is `and_(a, b_answered)`.
- `failed` (every release): `b` raises; the run fails with `a`'s write stored. The resume is CrewAI's way to go on
  from a persisted state: a new flow object kicked off with the state's id (`kickoff_async(inputs={"id": ...})`),
  which restores the stored state and runs the flow from its start again (`s` seeds nothing); the join is
  `and_(a, b)`, and `b` does not fail on the resume.

Both sides count their own method runs. The state is CrewAI's unstructured dict (no model class of this module's is
named in the store). Plain data only: the writer's side imports nothing of fanin's (cw_kit is the suite's,
framework only, and switches telemetry off before crewai imports; the cell's pytest environment, inherited by the
writer, already has). A release that cannot pause says why (`cannot`) instead of writing.
"""

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

import cw_kit
from cw_kit import Flow, and_, listen, start

STORE = "flows.db"
WRITTEN = "written.json"  # what the writer saw, as plain data (also its last stdout line, but panels may follow)
A_WRITE = "a-done"
ANSWER = "approved"
B_DONE = "b-done"  # b's write where it runs to its end (the failed mode's resume)
MODES = ("paused", "failed")
GATE_SECONDS = 10.0  # only a hang guard: b is released by the store's save of a's state


def cannot(mode: str) -> dict[str, str]:
    """Why this release cannot stop the flow in `mode`, read from the package (empty: it can).

    scenario_resume.cannot()'s test and words for the pause, repeated here: the writer runs in the earlier release's
    interpreter, where the suite's scenario kit (and fanin) is not importable. Both modes need `@persist` and
    SQLiteFlowPersistence (every cell's release has them)."""
    found: dict[str, str] = {}
    try:
        from crewai.flow.persistence import SQLiteFlowPersistence, persist  # noqa: F401
    except ImportError as exc:
        found["persist"] = f"no crewai.flow.persistence's persist and SQLiteFlowPersistence: {exc}"
    if mode != "paused":
        return found
    try:
        from crewai.flow.async_feedback import HumanFeedbackPending, PendingFeedbackContext  # noqa: F401
    except ImportError as exc:
        reason = "no HumanFeedbackPending, a flow method's signal that stops the run for human input to resume it with"
        found["pause"] = f"{reason}: {exc}"
        return found
    missing = [name for name in ("from_pending", "resume_async") if not hasattr(Flow, name)]
    if missing:
        found["pause"] = f"Flow has no {' or '.join(missing)}: a paused flow cannot be resumed with the feedback"
    return found


def store(folder: str, saved: threading.Event | None = None) -> Any:
    """A SQLiteFlowPersistence on FOLDER/flows.db; `saved` (the writer's) is set once it has saved a's state."""
    from crewai.flow.persistence import SQLiteFlowPersistence

    path = str(Path(folder, STORE))
    if saved is None:
        return SQLiteFlowPersistence(path)
    signal = saved

    class Gated(SQLiteFlowPersistence):
        """The store itself: it says when the state a's completion saved is in the file."""

        def save_state(self, flow_uuid: str, method_name: str, state_data: Any) -> None:
            super().save_state(flow_uuid, method_name, state_data)
            if method_name == "a":
                signal.set()

    return Gated(path)


def build(mode: str, persistence: Any, runs: dict[str, int], saved: threading.Event | None, stuck: list[str]) -> Any:
    """The flow class both sides build, `@persist`ed to `persistence`; `saved` (the writer's: its `b` stops the run)
    is set by the store once a's state is saved, and `b` stops only then (`stuck` says when the guard ran out)."""
    from crewai.flow.persistence import persist

    async def s(self: Any) -> str:
        runs["s"] += 1
        return "s"

    async def a(self: Any, *_trigger: Any) -> str:
        runs["a"] += 1
        self.state["a"] = A_WRITE
        return "a"

    async def b(self: Any, *_trigger: Any) -> str:
        runs["b"] += 1
        if saved is not None:
            if not await asyncio.to_thread(saved.wait, GATE_SECONDS):
                stuck.append(f"a's state was not saved within {GATE_SECONDS:.0f} s while b waited")
            if mode == "paused":
                _pause(self)
            raise RuntimeError("b failed")
        self.state["b"] = B_DONE
        return "b"

    async def b_answered(self: Any, *_trigger: Any) -> str:
        runs["b answered"] += 1
        self.state["b"] = f"b:{self.last_human_feedback.feedback}"
        return "b answered"

    async def join(self: Any, *_trigger: Any) -> str:
        runs["join"] += 1
        self.state["joined"] = f"{self.state.get('a')}+{self.state.get('b')}"
        return "joined"

    body: dict[str, Any] = {"__module__": __name__, "s": start()(s), "a": listen("s")(a), "b": listen("s")(b)}
    last = "b"
    if mode == "paused":
        body["b_answered"] = listen("b")(b_answered)
        last = "b_answered"
    body["join"] = listen(and_("a", last))(join)
    return persist(persistence)(type("LiveFlow", (Flow,), body))


def _pause(flow: Any) -> None:
    """b's pause: HumanFeedbackPending for method `b`, as a feedback provider raises it."""
    from crewai.flow.async_feedback import HumanFeedbackPending, PendingFeedbackContext

    context = PendingFeedbackContext(
        flow_id=flow.flow_id,
        flow_class=f"{type(flow).__module__}.{type(flow).__name__}",
        method_name="b",
        method_output=None,
        message="b asks for input",
    )
    raise HumanFeedbackPending(context=context)


def _counts() -> dict[str, int]:
    return {"s": 0, "a": 0, "b": 0, "b answered": 0, "join": 0}


def _state(flow: Any) -> dict[str, Any]:
    """The flow's state without its id (a new uuid each write)."""
    state = flow.state
    return {key: state[key] for key in state.keys() if key != "id"}


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


async def write(mode: str, folder: str) -> dict[str, Any]:
    """Run until `b` stops the flow with a's state saved; the flow id, what ran and what the store holds."""
    found = cannot(mode)
    if found:
        return {"crewai": _version(), "cannot": found}
    runs = _counts()
    stuck: list[str] = []
    saved = threading.Event()
    persistence = store(folder, saved)
    flow = build(mode, persistence, runs, saved, stuck)()
    raised = returned = None
    try:
        returned = type(await cw_kit.kickoff(flow)).__name__
    except Exception as exc:  # noqa: BLE001 - what the framework did: the probe reads it
        raised = _failure(exc)
    flow_id = flow.state["id"]
    stored = persistence.load_state(flow_id) or {}
    pending = None
    if mode == "paused":
        loaded = persistence.load_pending_feedback(flow_id)
        pending = None if loaded is None else loaded[1].method_name
    return {
        "crewai": _version(),
        "cannot": {},
        "flow_id": flow_id,
        "raises": raised,
        "returned": returned,
        "runs": runs,
        "state": _state(flow),
        "stored": {key: value for key, value in stored.items() if key != "id"},
        "pending": pending,
        "stuck": stuck,
    }


async def resume(mode: str, folder: str, flow_id: str) -> dict[str, Any]:
    """Resume the flow stored in FOLDER on a new flow object of a class built anew: from_pending and resume_async
    (paused), a kickoff on the state's id (failed). What ran here, the state after, what the store holds."""
    runs = _counts()
    persistence = store(folder)
    cls = build(mode, persistence, runs, None, [])
    read = raised = flow = None
    try:  # a release that cannot read the stored flow says so here: that is its answer, not a defect
        flow = cls.from_pending(flow_id, persistence) if mode == "paused" else cls()
    except Exception as exc:  # noqa: BLE001 - what the framework did: the probe grades it
        read = _failure(exc)
    if flow is not None:
        try:
            if mode == "paused":
                await flow.resume_async(ANSWER)
            else:
                await cw_kit.kickoff(flow, {"id": flow_id})
        except Exception as exc:  # noqa: BLE001
            raised = _failure(exc)
    stored = persistence.load_state(flow_id) or {}
    pending = None
    if mode == "paused":
        loaded = persistence.load_pending_feedback(flow_id)
        pending = None if loaded is None else loaded[1].method_name
    return {
        "read_raises": read,
        "raises": raised,
        "runs_on_resume": runs,
        "state": None if flow is None else _state(flow),
        "stored": {key: value for key, value in stored.items() if key != "id"},
        "pending_after": pending,
    }


def _version() -> str:
    from importlib.metadata import version

    return version("crewai")


if __name__ == "__main__":
    command, how, folder_given = sys.argv[1:4]
    if command != "write" or how not in MODES:
        raise SystemExit(f"cw_live.py: unknown command {command!r} or mode {how!r}")
    import cw_live  # the flow class as `cw_live.LiveFlow`, not `__main__.LiveFlow`: the pending context names it

    # CrewAI prints its flow panels (rich) to stdout, some from its event bus's threads after the run has returned
    # (1.9.0: after this line): the probe reads the file, the line is for a person running the script.
    line = json.dumps(asyncio.run(cw_live.write(how, folder_given)))
    Path(folder_given, WRITTEN).write_text(line)
    print(line)
