"""`fanin record` for Agent Framework: which executor set which shared-state key in which superstep, in every
workflow run a test suite makes.

Installed in the user's own test process (fanin.project.record_plugin), it wraps three names and changes
nothing they do: `Workflow.run` (the workflow a runner belongs to, for the audit's static facts), the
runner's `run_until_convergence` (one run; its `superstep_started` events number the supersteps) and
`WorkflowContext.set_state` (the executor and key of every write, made into the superstep's buffer). A run
is one call of the runner's loop. Anything the recording cannot read is left out, never raised into the test.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any


class Recording:
    """Every run seen, by its runner's state; the workflows that ran, by their runner."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: list[dict[str, Any]] = []
        self.current: dict[int, dict[str, Any]] = {}  # id(the runner's State) -> the run under way
        self.graphs: dict[int, Any] = {}  # id(runner) -> its Workflow, held until the end: ids stay unique
        self.test = ""  # the pytest node id running now (set by the plugin)
        self.errors: list[str] = []

    def saw_graph(self, workflow: Any) -> None:
        try:
            with self.lock:
                self.graphs.setdefault(id(workflow._runner), workflow)
        except Exception:  # noqa: BLE001 - not a workflow we can name: its runs are still recorded
            return

    def started(self, runner: Any) -> dict[str, Any]:
        run = {"runner": id(runner), "test": self.test, "step": 0, "writes": []}
        with self.lock:
            self.runs.append(run)
            self.current[id(getattr(runner, "_state", None))] = run
        return run

    def saw_write(self, context: Any, key: Any) -> None:
        try:
            run = self.current.get(id(getattr(context, "_state", None)))
            if run is None:
                return  # a context outside a recorded run (a test driving an executor by hand)
            row = {"step": run["step"], "node": str(getattr(context, "_executor_id", "?")), "keys": [str(key)]}
            with self.lock:
                run["writes"].append(row)
        except Exception as exc:  # noqa: BLE001 - recording never breaks the user's run
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])


def install(recording: Recording) -> list[str]:
    """Wrap Workflow.run, RunnerImpl.run_until_convergence and WorkflowContext.set_state; the names wrapped."""
    wrapped: list[str] = []
    try:
        workflow = importlib.import_module("agent_framework._workflows._workflow")
        runner = importlib.import_module("agent_framework._workflows._runner")
        context = importlib.import_module("agent_framework._workflows._workflow_context")
    except ImportError:
        return wrapped
    run = getattr(getattr(workflow, "Workflow", None), "run", None)
    loop = getattr(getattr(runner, "RunnerImpl", None), "run_until_convergence", None)
    write = getattr(getattr(context, "WorkflowContext", None), "set_state", None)
    if run is None or loop is None or write is None or getattr(run, "fanin_recording", False):
        return wrapped  # another layout than the one read here: nothing is wrapped, the errors say so

    def run_workflow(self: Any, *args: Any, **kwargs: Any) -> Any:
        recording.saw_graph(self)
        return run(self, *args, **kwargs)

    async def run_until_convergence(self: Any, *args: Any, **kwargs: Any) -> Any:
        current = recording.started(self)
        events = loop(self, *args, **kwargs)
        try:
            async for event in events:
                if getattr(event, "type", None) == "superstep_started":
                    current["step"] = int(getattr(event, "iteration", 0) or 0)
                yield event
        finally:
            await events.aclose()
            recording.current.pop(id(getattr(self, "_state", None)), None)

    def set_state(self: Any, key: str, value: Any) -> Any:
        recording.saw_write(self, key)
        return write(self, key, value)

    for owner, name, wrapper, original in (
        (workflow.Workflow, "run", run_workflow, run),
        (runner.RunnerImpl, "run_until_convergence", run_until_convergence, loop),
        (context.WorkflowContext, "set_state", set_state, write),
    ):
        setattr(wrapper, "fanin_recording", True)  # noqa: B010 - three wrappers of three types, one loop
        wrapper.__doc__ = original.__doc__
        setattr(owner, name, wrapper)
        wrapped.append(f"{owner.__name__}.{name}")
    return wrapped


def _shape(workflow: Any) -> Any:
    """What makes two workflows one graph: a factory builds a new one per test, with the same signature."""
    signature = getattr(workflow, "graph_signature_hash", None)
    return signature if signature is not None else tuple(sorted(str(e) for e in getattr(workflow, "executors", {})))


def runs_by_graph(recording: Recording) -> list[tuple[Any, list[dict[str, Any]]]]:
    """Each workflow that ran (None where it could not be named) with its runs, the runs of one shape together."""
    grouped: dict[Any, tuple[Any, list[dict[str, Any]]]] = {}
    for run in recording.runs:
        workflow = recording.graphs.get(run["runner"])
        shape = _shape(workflow) if workflow is not None else ("runner", run["runner"])
        grouped.setdefault(shape, (workflow, []))[1].append(run)
    return list(grouped.values())
