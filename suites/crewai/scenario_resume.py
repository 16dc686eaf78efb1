"""CrewAI Flows' `pause`, `resume` and `together` for the scenario adapter (docs/ADAPTERS.md), from a SQLite store.

Every store is a `SQLiteFlowPersistence` on a file in the script's store directory; the flow class is `@persist`ed
to it (the decorator saves the state after each method completes).

- `pause`: a branch raises `HumanFeedbackPending` (crewai.flow.async_feedback, 1.8 on), the signal a
  `HumanFeedbackProvider` raises for async human feedback (what `@human_feedback` calls once its method returned).
  `kickoff_async` catches it, saves the state and the `PendingFeedbackContext` to the store
  (`save_pending_feedback`) and returns the exception: the run stops, raising nothing. The resume is the
  documented one: a new flow object `Flow.from_pending(flow_id, persistence)` and `resume_async(answer)`, which
  never runs the paused method again (it is marked completed) but triggers its listeners with the feedback, the
  `HumanFeedbackResult`. So the steps of a branch after its pause are CrewAI's way a listener of the paused method
  (`<node>_answered`): it walks the branch's part again in the resumed run (no turn waits there; the pause returns
  the feedback it was given, `last_human_feedback.feedback`) and is the branch's node the join listens to.
- `resume` after a failure: a new flow object on the store kicked off with the state's id
  (`kickoff_async(inputs={"id": ...})`), CrewAI's way to run on a persisted state: it restores the stored state,
  then runs the flow from its start methods (the start method does not seed the state again).
- `together`: two flow classes, each `@persist`ed to its own `SQLiteFlowPersistence` on one SQLite file, both
  kicked off at once with one state id, seeded first through a third store object (`save_state`); `final` is
  that id's state as a fourth store object loads it once both runs have ended.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

import cw_kit
import scenario_kit

ANSWERED = "_answered"  # the suffix of the listener that runs a paused branch's steps once it is answered


def cannot() -> dict[str, str]:
    """Why this release cannot pause a branch, read from the installed package (empty where it can). Resuming
    after a failure needs only the persisted state every cell's release has (`thread`'s API)."""
    try:
        from crewai.flow.async_feedback import HumanFeedbackPending, PendingFeedbackContext  # noqa: F401
    except ImportError as exc:
        reason = "no HumanFeedbackPending, a flow method's signal that stops the run for human input to resume it with"
        return {"pause": f"{reason}: {exc}"}
    from crewai.flow.flow import Flow

    missing = [name for name in ("from_pending", "resume_async") if not hasattr(Flow, name)]
    if missing:
        return {"pause": f"Flow has no {' or '.join(missing)}: a paused flow cannot be resumed with the feedback"}
    return {}


def store(path: str) -> Any:
    """A store object of its own on the SQLite file `path` (its own connections)."""
    from crewai.flow.persistence import SQLiteFlowPersistence

    return SQLiteFlowPersistence(db_path=path)


def persisted(cls: Any, persistence: Any) -> Any:
    """The flow class `@persist`ed to `persistence`: its state saved there after every method."""
    from crewai.flow.persistence import persist

    return persist(persistence)(cls)


def pauser(flow: Any, node: str) -> Callable[[str], Any]:
    """A branch's pause in the first run: HumanFeedbackPending for method `node`, as a feedback provider raises it."""

    def pause(_name: str) -> Any:
        from crewai.flow.async_feedback import HumanFeedbackPending, PendingFeedbackContext

        context = PendingFeedbackContext(
            flow_id=flow.flow_id,
            flow_class=f"{type(flow).__module__}.{type(flow).__name__}",
            method_name=node,
            method_output=None,
            message=f"branch {_name} asks for input",
        )
        raise HumanFeedbackPending(context=context)

    return pause


def answered(flow: Any) -> Callable[[str], Any]:
    """A paused branch's pause once resumed: the feedback `resume_async` was given."""

    def answer(_name: str) -> Any:
        return flow.last_human_feedback.feedback

    return answer


def resumed(script: scenario_kit.Script, cls: Any, flow: Any, persistence: Any) -> tuple[Any, Awaitable[Any]]:
    """The stopped run's resume from the store, on a new flow object: `from_pending` and `resume_async` after a
    pause, a kickoff on the state's id after a failure. Returns the object and its run, to await."""
    if script.paused:
        again = cls.from_pending(flow.flow_id, persistence)
        return again, again.resume_async(scenario_kit.ANSWER)
    again = cls()
    return again, cw_kit.kickoff(again, {"id": flow.state["id"]})


async def together(script: scenario_kit.Script, flow_class: Callable[..., Any]) -> dict[str, Any]:
    """Both runs at once on one state id (one gate over `<run>.<branch>`), then the stored state read back."""
    state_id = "fanin-together"
    with script.store_dir() as folder:
        path = os.path.join(folder, "flows.db")
        store(path).save_state(flow_uuid=state_id, method_name="seed", state_data={"id": state_id, **script.state})
        views = [script.of_run(number) for number in range(1, script.runs + 1)]
        flows = [persisted(flow_class(view, [], seed=False), store(path))() for view in views]
        ends = await asyncio.gather(
            *(view.run(cw_kit.kickoff(flow, {"id": state_id})) for view, flow in zip(views, flows)),
            return_exceptions=True,
        )
        error = next((end for end in ends if isinstance(end, BaseException)), None)
        stored = store(path).load_state(state_id) or {}
        values = {key: value for key, value in stored.items() if key != "id"}
        return await script.answer(
            raises=None if error is None else type(error).__name__, final=lambda: values or None, error=error
        )
