"""ADK 2.x Workflow: a route that matches no edge, reported upstream as looking like success.

A Router node beside a plain branch emits a route no edge carries; the JoinNode waiting on both never
fires. What the run says about it is the question: an error, a log line, or nothing. `n/a` before 2.0
(no google.adk.workflow). Nodes are async functions (a sync node may run in a worker thread).
"""

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from adk_kit import run_workflow

from fanin.probe import Claim, Observer, probe

JS_ISSUE = "https://github.com/google/adk-js/issues/736"  # the same stop in ADK JS: "deliberate and matches adk-python"
JS_PR = "https://github.com/google/adk-js/pull/650"  # ADK JS: say when a route goes nowhere


@contextlib.contextmanager
def warnings_logged() -> Iterator[list[logging.LogRecord]]:
    """The log records at WARNING or above that reach the root logger while the block runs."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield records
    finally:
        root.removeHandler(handler)


@probe(
    "adk/workflow/route-matches-no-edge",
    title="START fans out to A and Router; Router emits route `nope`, its only edge is `yes` -> B; Join waits on A and B",
    claim=Claim(
        "A route that matches no edge ends that branch: the JoinNode waiting on it never fires, and the run"
        " returns as if it succeeded; at most a warning is logged (reported on google-adk 2.5.0; ADK JS #736"
        " says the silent stop is deliberate and matches adk-python).",
        JS_ISSUE,
        expect={"value.run": "returned", "value.join_fired": False},
    ),
    sources=[JS_PR],
)
async def test_route_matches_no_edge(obs: Observer) -> None:
    Workflow, JoinNode, Edge, START, node = obs.need("google.adk.workflow", "Workflow", "JoinNode", "Edge", "START", "node")
    from google.adk.events import Event

    ran: list[str] = []

    async def run_a(node_input: Any) -> str:
        ran.append("A")
        return "a"

    async def route(node_input: Any):  # type: ignore[no-untyped-def]  # a node: ADK reads a return hint as its output schema
        ran.append("Router")
        yield Event(route="nope", output="routed")

    async def run_b(node_input: Any) -> str:
        ran.append("B")
        return "b"

    async def collect(node_input: Any) -> str:
        ran.append("Collect")
        return "collected"

    a, router, b = node(run_a, name="A"), node(route, name="Router"), node(run_b, name="B")
    join, after = JoinNode(name="Join"), node(collect, name="Collect")
    workflow = Workflow(
        name="wf",
        edges=[
            Edge(from_node=START, to_node=a),
            Edge(from_node=START, to_node=router),
            Edge(from_node=router, to_node=b, route="yes"),
            Edge(from_node=a, to_node=join),
            Edge(from_node=b, to_node=join),
            Edge(from_node=join, to_node=after),
        ],
    )
    with warnings_logged() as records, obs.framework(value=lambda: {"ran": sorted(ran)}):
        result = await obs.attempt_async(lambda: run_workflow(workflow))
    if "Router" not in ran:
        obs.vacuous("the Router node never ran")
    logged = sorted({r.levelname for r in records if "nope" in r.getMessage()})
    run = "returned" if "returned" in result else result
    joined = "Collect" in ran
    obs.record(
        {"run": run, "ran": sorted(ran), "join_fired": joined, "logged": logged},
        label="raises" if run != "returned" else "join fires" if joined else
        ("join never fires; a log line only" if logged else "join never fires; nothing logged"),
        detail=f"run {run}; nodes run {sorted(ran)}; log: {[r.getMessage() for r in records if 'nope' in r.getMessage()]}",
        hazard="loud" if run != "returned" else "safe" if joined else "silent",
    )
