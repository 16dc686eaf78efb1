"""Haystack's scenario adapter (docs/ADAPTERS.md): a scenario as a pipeline of components, run asynchronously.

Haystack has no shared state: data moves only along connections. A `start` component outputs the
scenario's state (the run's input data); each branch is a component that receives it (`read` and `write` are on the dict the
pipeline hands that branch) and outputs `{"state": ..., "returned": ...}` (a branch without a return
step returns its name). A branch of several parts (`then`) is a chain of components, each handing its
state to the next; a conditional fan-out (`select`) is a component that outputs only the selected
branches' sockets, Haystack's way to route (ConditionalRouter's). Every branch connects to one `join` component whose input is `Variadic`, the
framework's fan-in of same-typed values (ListJoiner's and DocumentJoiner's kind): `join.saw` is the
returned values in the order the join received them, and `final` is the branches' states merged in that
order (each a dict update), what the join hands on; null when the join never ran (a run that raised).
The run is `AsyncPipeline.run_async` (2.x) or `Pipeline.run_async` (3.x), where branches run at once and
the gate can force their order; sync `Pipeline.run` runs them one by one (haystack/sync-async/join-order),
so a version without an async runner answers n/a. With `runs`, the one pipeline runs again on a fresh input; a
pipeline has no stored state to put two runs on (`thread`, `together`: n/a, the reason read from run_async's
signature), and a component no way to pause for input, nor the async runner a snapshot to resume a stopped run
from (`pause`, `resume`: n/a; the sync runner's break points and snapshots run branches one by one).

Run as a program: `PYTHONPATH=suites:. python suites/haystack/scenario_adapter.py`.
"""

from importlib.metadata import version
from typing import Any, Dict, List

import hs_kit  # noqa: F401 (telemetry off before haystack imports)
import scenario_kit
from haystack import component
from haystack.core.component.types import Variadic


class _Refuse:
    """hs_kit.async_runner's `obs`: a version without an async runner cannot force a scenario's order."""

    def not_applicable(self, reason: str) -> None:
        raise scenario_kit.NotExpressible(reason)


def capabilities() -> dict[str, Any]:
    return scenario_kit.declare(
        "haystack",
        version("haystack-ai"),
        {
            "escalate": "a component has no way to stop the pipeline: it only returns its outputs, and the run ends"
            " once no component can run (a break point is the caller's, set before the run, and raises)",
            **_nothing_stored(),
        },
        also=("runs", "thread", "stall", "together", "pause", "resume"),
    )


def _nothing_stored() -> dict[str, str]:
    """Why two runs cannot share a stored state, a branch cannot pause for input, nor a stopped run be resumed,
    read from the installed runners' signatures."""
    import inspect

    from haystack import Pipeline

    try:
        runner = hs_kit.async_runner(_Refuse())
    except scenario_kit.NotExpressible as exc:
        return dict.fromkeys(("thread", "together", "pause", "resume"), str(exc))
    taken = ", ".join(p for p in inspect.signature(runner.run_async).parameters if p != "self")
    unstored = (
        f"{runner.__name__}.run_async takes only ({taken}): a pipeline stores no state or conversation between runs"
        " (a PipelineSnapshot, where one exists, resumes a run stopped at a break point, in the sync runner)"
    )
    return {
        "thread": unstored,
        "together": unstored,
        "pause": "a component cannot ask for input mid-run: it only returns its outputs, and the run ends once no"
        " component can run",
        "resume": f"{runner.__name__}.run_async takes only ({taken}): no snapshot of a stopped run to resume from"
        + (
            " (Pipeline.run's pipeline_snapshot resumes only the sync runner, which runs parallel branches one after"
            " another, so no order can be forced)"
            if "pipeline_snapshot" in inspect.signature(Pipeline.run).parameters
            else ""
        ),
    }


@component
class _Seed:
    """The run's input (the scenario's state, given to `run_async` afresh each run) handed to every branch."""

    @component.output_types(state=Dict[str, Any])
    def run(self, state: Dict[str, Any]) -> dict[str, Any]:
        return {"state": state}


@component
class _Select:
    """A conditional fan-out the way Haystack routes (ConditionalRouter's way): a component that outputs only the
    sockets of the selected branches; a branch whose input never arrives does not run."""

    def __init__(self, branches: List[str], selected: List[str]) -> None:
        self.selected = selected
        component.set_output_types(self, **{name: Dict[str, Any] for name in branches})

    def run(self, state: Dict[str, Any]) -> dict[str, Any]:
        return {name: state for name in self.selected}


@component
class _Part:
    """A part of a branch of several components (`then`) before its last: hands its state to the next part."""

    def __init__(self, name: str, script: Any, part: int) -> None:
        self.name, self.script, self.part = name, script, part

    @component.output_types(state=Dict[str, Any])
    def run(self, state: Dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError("the adapter runs branches with run_async only")

    @component.output_types(state=Dict[str, Any])
    async def run_async(self, state: Dict[str, Any]) -> dict[str, Any]:
        write = state.__setitem__
        await self.script.branch(self.name, read=state.__getitem__, write=write, part=self.part)
        return {"state": dict(state)}


@component
class _Branch:
    def __init__(self, name: str, script: Any, part: int = 0) -> None:
        self.name, self.script, self.part = name, script, part

    @component.output_types(out=Dict[str, Any])
    def run(self, state: Dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError("the adapter runs branches with run_async only")

    @component.output_types(out=Dict[str, Any])
    async def run_async(self, state: Dict[str, Any]) -> dict[str, Any]:
        write = state.__setitem__
        returned = await self.script.branch(self.name, read=state.__getitem__, write=write, part=self.part)
        return {"out": {"state": dict(state), "returned": self.name if returned is None else returned}}


@component
class _Join:
    def __init__(self, script: Any) -> None:
        self.script = script
        self.got: List[Dict[str, Any]] = []

    @component.output_types(state=Dict[str, Any])
    def run(self, outs: Variadic[Dict[str, Any]]) -> dict[str, Any]:
        self.script.join_runs += 1
        self.got = list(outs)
        merged: Dict[str, Any] = {}
        for out in self.got:
            merged.update(out["state"])
        return {"state": merged}


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    runner = hs_kit.async_runner(_Refuse())
    script = scenario_kit.Script(scenario, order)
    pipeline: Any = runner()
    pipeline.add_component("start", _Seed())
    join = _Join(script)
    pipeline.add_component("join", join)
    fan_out = "start.state"
    if script.selected != script.branches:
        pipeline.add_component("select", _Select(script.branches, script.selected))
        pipeline.connect(fan_out, "select.state")
    for name in script.branches:
        # A component's name is an identifier of the pipeline's sockets (`b_2.state`): the parts after the first
        # are `b_2`, `b_3` (the kit's `b.2`).
        nodes = [script.node(name, part).replace(".", "_") for part in range(script.parts(name))]
        for part, node in enumerate(nodes):
            last = part == len(nodes) - 1
            pipeline.add_component(node, (_Branch if last else _Part)(name, script, part))
        pipeline.connect(fan_out if script.selected == script.branches else f"select.{name}", f"{nodes[0]}.state")
        for one, two in zip(nodes, nodes[1:]):
            pipeline.connect(f"{one}.state", f"{two}.state")
        pipeline.connect(f"{nodes[-1]}.out", "join.outs")
    for number in range(script.runs):  # `runs`: the one pipeline run again, a fresh input
        if number:
            await script.again()
            join.got = []  # the adapter's own record of the join, per run
        raises, outputs, error = None, None, None
        try:
            outputs = await script.run(pipeline.run_async({"start": {"state": script.state}}))
        except Exception as exc:
            raises, error = type(exc).__name__, exc
    final = outputs["join"]["state"] if outputs and "join" in outputs else None
    saw = [out["returned"] for out in join.got] if join.got else None
    return await script.answer(raises=raises, final=lambda: final, saw=saw, error=error)


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
