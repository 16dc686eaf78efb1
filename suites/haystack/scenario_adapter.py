"""Haystack's scenario adapter (docs/ADAPTERS.md): a scenario as a pipeline of components, run asynchronously.

Haystack has no shared state: data moves only along connections. A `start` component outputs the
scenario's state; each branch is a component that receives it (`read` and `write` are on the dict the
pipeline hands that branch) and outputs `{"state": ..., "returned": ...}` (a branch without a return
step returns its name). Every branch connects to one `join` component whose input is `Variadic`, the
framework's fan-in of same-typed values (ListJoiner's and DocumentJoiner's kind): `join.saw` is the
returned values in the order the join received them, and `final` is the branches' states merged in that
order (each a dict update), what the join hands on; null when the join never ran (a run that raised).
The run is `AsyncPipeline.run_async` (2.x) or `Pipeline.run_async` (3.x), where branches run at once and
the gate can force their order; sync `Pipeline.run` runs them one by one (haystack/sync-async/join-order),
so a version without an async runner answers n/a.

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
            "then": "not built by this adapter yet: a branch of several components in sequence",
            "select": "not built by this adapter yet: a ConditionalRouter that starts only some branches",
        },
    )


@component
class _Seed:
    def __init__(self, state: Dict[str, Any]) -> None:
        self.state = state

    @component.output_types(state=Dict[str, Any])
    def run(self, go: str) -> dict[str, Any]:
        return {"state": self.state}


@component
class _Branch:
    def __init__(self, name: str, script: Any) -> None:
        self.name, self.script = name, script

    @component.output_types(out=Dict[str, Any])
    def run(self, state: Dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError("the adapter runs branches with run_async only")

    @component.output_types(out=Dict[str, Any])
    async def run_async(self, state: Dict[str, Any]) -> dict[str, Any]:
        returned = await self.script.branch(self.name, read=state.__getitem__, write=state.__setitem__)
        return {"out": {"state": dict(state), "returned": self.name if returned is None else returned}}


@component
class _Join:
    def __init__(self) -> None:
        self.got: List[Dict[str, Any]] = []

    @component.output_types(state=Dict[str, Any])
    def run(self, outs: Variadic[Dict[str, Any]]) -> dict[str, Any]:
        self.got = list(outs)
        merged: Dict[str, Any] = {}
        for out in self.got:
            merged.update(out["state"])
        return {"state": merged}


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    runner = hs_kit.async_runner(_Refuse())
    script = scenario_kit.Script(scenario, order)
    pipeline: Any = runner()
    pipeline.add_component("start", _Seed(script.state))
    join = _Join()
    pipeline.add_component("join", join)
    for name in script.branches:
        pipeline.add_component(name, _Branch(name, script))
        pipeline.connect("start.state", f"{name}.state")
        pipeline.connect(f"{name}.out", "join.outs")
    raises, outputs, error = None, None, None
    try:
        outputs = await script.run(pipeline.run_async({"start": {"go": "go"}}))
    except Exception as exc:
        raises, error = type(exc).__name__, exc
    final = outputs["join"]["state"] if outputs and "join" in outputs else None
    saw = [out["returned"] for out in join.got] if join.got else None
    return await script.answer(raises=raises, final=lambda: final, saw=saw, error=error)


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
