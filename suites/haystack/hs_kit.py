"""Helpers shared by the Haystack (haystack-ai) probes and its scenario adapter.

No model, no document store: the pipelines are plain `@component` classes, so everything observed is
Haystack's own Pipeline / AsyncPipeline scheduling and its joiners. Telemetry is off before the import
(conftest.py does the same for the cell's import check).

- `Step`: one branch, output `out` (its name) and `items` ([its name], what ListJoiner joins). Sync `run` notes its name in `ran` when it runs; async `run_async` waits for its
  turn at a `gates.Turns` gate (when given one), notes its name, hands the turn on and returns it.
- `async_runner`: what runs a pipeline concurrently in this version (2.x: `AsyncPipeline`, 3.x:
  `Pipeline.run_async`), or n/a with the reason the package gives.
- `fan`: start -> one `Step` per name -> one join input, added in the given order (names and add order
  are the two things a sync run's order could follow).
"""

import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

from typing import Any, List  # noqa: E402

from haystack import Pipeline, component  # noqa: E402

DOCS = "https://docs.haystack.deepset.ai/docs"
SRC = "https://github.com/deepset-ai/haystack/blob"


@component
class Start:
    """The fan-out point: one output every branch reads."""

    @component.output_types(out=str)
    def run(self, text: str) -> dict[str, Any]:
        return {"out": text}


@component
class Step:
    """A branch that outputs its own name; `ran` is the order branches ran (shared by a pipeline's steps)."""

    def __init__(self, name: str, ran: list[str], turns: Any = None) -> None:
        self.name, self.ran, self.turns = name, ran, turns

    @component.output_types(out=str, items=List[str])
    def run(self, text: str) -> dict[str, Any]:
        self.ran.append(self.name)
        return {"out": self.name, "items": [self.name]}

    @component.output_types(out=str, items=List[str])
    async def run_async(self, text: str) -> dict[str, Any]:
        if self.turns is not None:
            await self.turns.wait(self.name)
        self.ran.append(self.name)
        if self.turns is not None:
            self.turns.done(self.name)
        return {"out": self.name, "items": [self.name]}


def async_runner(obs: Any) -> Any:
    """The class whose pipelines `await p.run_async(data)` run branches concurrently; n/a where none exists."""
    import haystack

    if hasattr(Pipeline, "run_async"):
        return Pipeline
    if hasattr(haystack, "AsyncPipeline"):
        return haystack.AsyncPipeline
    obs.not_applicable("neither haystack.AsyncPipeline nor Pipeline.run_async exists in this version")


def fan(pipeline: Any, names: list[str], join: Any, into: str, ran: list[str], turns: Any = None, out: str = "out") -> Any:
    """start -> each name (added in this order) -> its output `out` (a str; `items`: [name]) -> `join`'s input `into`
    (one input for all, or `{name}` for one each)."""
    pipeline.add_component("start", Start())
    for name in names:
        pipeline.add_component(name, Step(name, ran, turns))
    pipeline.add_component("join", join)
    for name in names:
        pipeline.connect("start.out", f"{name}.text")
        pipeline.connect(f"{name}.{out}", f"join.{into.format(name=name)}")
    return pipeline


@component
class Sink:
    """After the join: `got` is every value it received, one entry per time the join ran."""

    def __init__(self) -> None:
        self.got: list[Any] = []

    @component.output_types(result=Any)
    def run(self, value: Any) -> dict[str, Any]:
        self.got.append(value)
        return {"result": value}


def explicit_join(names: list[str]) -> Any:
    """The fix the docs' own components suggest: one mandatory input per branch (the pipeline waits for all),
    output `joined`, the inputs in the declared order."""

    @component
    class Join:
        def __init__(self) -> None:
            component.set_input_types(self, **dict.fromkeys(names, str))
            component.set_output_types(self, joined=List[str])

        def run(self, **values: str) -> dict[str, Any]:
            return {"joined": [values[name] for name in names]}

    return Join()
