"""Strands Agents kit: GraphBuilder graphs of plain steps (no model, no AWS client, no network), run offline.

A `Step` is a MultiAgentBase node (every release since GraphBuilder accepts one) that runs an async function
instead of an agent: `fn(fed, state)` gets the ids of the nodes whose results the graph handed it (parsed
from the node input the graph builds, "From <id>:" per dependency) and the `invocation_state` the graph passed
it (None where the graph passes none). Both APIs are implemented: `execute_async`/`execute` (0.3.0) and
`invoke_async`/`__call__` (1.x).
"""

import os

# OpenTelemetry off before strands imports: no span processor, no exporter, whatever OTEL_* the caller has.
os.environ["OTEL_SDK_DISABLED"] = "true"
for _key in [k for k in os.environ if k.startswith("OTEL_EXPORTER_") or k == "OTEL_TRACES_EXPORTER"]:
    del os.environ[_key]

import dataclasses  # noqa: E402
import inspect  # noqa: E402
import re  # noqa: E402
import warnings  # noqa: E402
from typing import Any, Awaitable, Callable  # noqa: E402

from strands.multiagent.base import MultiAgentBase, MultiAgentResult, Status  # noqa: E402
from strands.multiagent.graph import GraphBuilder  # noqa: E402

from gates import IdleTurns  # noqa: E402

StepFn = Callable[[list[str], "dict[str, Any] | None"], Awaitable[Any]]
_FROM = re.compile(r"^From (\S+):$", re.MULTILINE)


def fed_by(task: Any) -> list[str]:
    """The dependency ids a node input names, in its order: [] for an entry point (the task alone)."""
    text = task if isinstance(task, str) else "\n".join(str(b.get("text", "")) for b in task if isinstance(b, dict))
    return _FROM.findall(text)


def _result() -> MultiAgentResult:
    """A finished step's result: `status` COMPLETED where the release's result has one (1.x later)."""
    names = {f.name for f in dataclasses.fields(MultiAgentResult)}
    return MultiAgentResult(results={}, **({"status": Status.COMPLETED} if "status" in names else {}))


class Step(MultiAgentBase):
    """A graph node that runs `fn` once per execution and records what each execution was fed."""

    def __init__(self, fn: StepFn) -> None:
        super().__init__()
        self.fn = fn
        self.fed: list[list[str]] = []
        self.states: list[Any] = []

    async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        fed = fed_by(task)
        self.fed.append(fed)
        self.states.append(invocation_state)
        await self.fn(fed, invocation_state)
        return _result()

    async def execute_async(self, task: Any) -> Any:
        return await self.invoke_async(task)

    def __call__(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        raise NotImplementedError("the kit runs graphs asynchronously only")

    def execute(self, task: Any) -> Any:
        raise NotImplementedError("the kit runs graphs asynchronously only")


async def nothing(fed: list[str], state: dict[str, Any] | None) -> None:
    """A step that does nothing (a join or a link whose only job is to be run)."""


def build(
    steps: dict[str, Step],
    edges: list[tuple[str, str]],
    entries: list[str],
    limit: int | None = None,
    conditions: dict[tuple[str, str], Callable[[Any], bool]] | None = None,
    session_manager: Any = None,
    hooks: list[Any] | None = None,
) -> tuple[Any, list[str]]:
    """The graph GraphBuilder builds, and the warnings `build()` gave (the unbounded-graph warning, where any).
    `conditions` gives an edge its condition (`add_edge(..., condition=...)`, called with the graph's state);
    `session_manager` is the store the graph persists its state to between runs (`set_session_manager`); `hooks`
    are hook providers of the graph's events (`set_hook_providers`)."""
    builder = GraphBuilder()
    for name, step in steps.items():
        builder.add_node(step, name)
    for source, target in edges:
        condition = (conditions or {}).get((source, target))
        builder.add_edge(source, target, **({"condition": condition} if condition else {}))
    for name in entries:
        builder.set_entry_point(name)
    if limit is not None and hasattr(builder, "set_max_node_executions"):  # from 1.5.0 or so
        builder.set_max_node_executions(limit)
    if session_manager is not None:
        builder.set_session_manager(session_manager)
    if hooks:
        builder.set_hook_providers(hooks)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graph = builder.build()
    return graph, [f"{w.category.__name__}: {w.message}" for w in caught]


async def run(graph: Any, state: dict[str, Any] | None = None, task: str = "go") -> Any:
    """The graph run as a user runs it: `invoke_async(task, invocation_state=...)` where it takes one,
    `invoke_async(task)` (1.x before invocation_state), `execute_async(task)` (0.3.0)."""
    if not hasattr(graph, "invoke_async"):
        return await graph.execute_async(task)
    if "invocation_state" in inspect.signature(graph.invoke_async).parameters:
        return await graph.invoke_async(task, invocation_state=state if state is not None else {})
    return await graph.invoke_async(task)


async def together() -> str | None:
    """Whether two entry points are in flight together (None) or why not: one graph of two steps, the gate
    learning from the event loop (IdleTurns), no wall time."""
    turns = IdleTurns(["a", "b"])

    def gated(name: str) -> StepFn:
        async def fn(fed: list[str], state: dict[str, Any] | None) -> None:
            await turns.wait(name)
            turns.done(name)

        return fn

    graph, _ = build({"a": Step(gated("a")), "b": Step(gated("b"))}, [], ["a", "b"], limit=10)
    await run(graph)
    return turns.vacuous


async def passes_state() -> bool:
    """Whether a node receives the very invocation_state object the caller passed to the graph."""
    step = Step(nothing)
    graph, _ = build({"only": step}, [], ["only"], limit=10)
    state: dict[str, Any] = {}
    await run(graph, state)
    return bool(step.states) and step.states[0] is state


SEED = "0"  # the hash seed a seeded run fixes (any fixed value would do; 0 is PYTHONHASHSEED's "no randomisation")


def observe_seeded(obs: Any, adapter_path: str) -> None:
    """A scenario probe whose adapter runs as a program under PYTHONHASHSEED=0 (docs/ADAPTERS.md's protocol).

    GraphBuilder keeps a graph's edges and entry points in sets of objects hashed by their node ids, and a
    node's input lists its dependencies in the edge set's iteration order: with str hashing randomised per
    process, the order a join receives its inputs (and a batch's start order) would differ between two runs
    of the same cell. Fixing the seed makes each cell reproduce its reference; the order observed is then the
    one that seed gives, which is no promise of the framework's. The messages are scenario_kit.observe's."""
    import json
    import subprocess
    import sys

    import scenario_kit

    scenario = obs.scenario
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.pathsep.join([here, os.path.dirname(here), os.path.dirname(os.path.dirname(here))])
    env = {**os.environ, "PYTHONHASHSEED": SEED, "PYTHONPATH": path}
    messages = [{"cmd": "start", "protocol": scenario_kit.PROTOCOL}]
    messages += [{"cmd": "run", "scenario": scenario.data, "order": order} for order in scenario.orders]
    script = "".join(json.dumps(m) + "\n" for m in [*messages, {"cmd": "stop"}])
    done = subprocess.run(
        [sys.executable, adapter_path], input=script, capture_output=True, text=True, env=env, timeout=300, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the seeded adapter exited {done.returncode}: {done.stderr.strip()[-500:]}")
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    capable, answers = replies[0], {}
    if isinstance(capable, dict) and set(scenario.primitives()) <= set(capable.get("supports", ())):
        answers = {",".join(order): reply for order, reply in zip(scenario.orders, replies[1:])}
    obs.record_scenario(capable, answers)
