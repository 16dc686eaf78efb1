"""The Agent Framework inspector's preconditions (issue 35 §2), on graphs the corpus holds and on the shape
of the parallel-requests sample (a collector told how many responses to expect over its own edge).

- A failing-parallel-sibling finding needs a raise the inspector cannot rule out, and names it (file:line);
  a raise whose condition is false on the executor as built, or that guards against more messages than a
  collector expects, is listed as ruled out, never the finding.
- A collector that counts what arrived and emits once is not a join by separate edges; a handler that takes
  one message as the whole join still is.
- Executor attributes a run changes and no run resets are a finding of their own, citing the probe that
  observes them kept (agent_framework/runs/executor-state-kept) in the installed version's reference cell.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

from fanin.model import matrix
from fanin.model.source import REPO_ROOT, SUITES
from fanin.project import audit

MATRIX = matrix.load()
CORPUS = REPO_ROOT / "examples" / "corpus"
KEPT = "agent_framework/runs/executor-state-kept"

# The parallel-requests sample's shape: its count guard reads the message, the count of what the distributor fanned
# out (`len(jobs)` after one message per job): 0 only when no worker runs beside it.
COUNTED = """
from typing import Never
from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

class Distributor(Executor):
    @handler
    async def go(self, jobs: list[str], ctx: WorkflowContext[str | int]) -> None:
        for job in jobs:
            await ctx.send_message(job)
        await ctx.send_message(len(jobs))

class Worker(Executor):
    @handler
    async def run(self, job: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(job + " done")

class Collector(Executor):
    def __init__(self, id: str) -> None:
        super().__init__(id)
        self.count = 0
        self.got: list[str] = []

    @handler
    async def set_count(self, count: int, ctx: WorkflowContext) -> None:
        if count <= 0:
            raise ValueError("the count must be positive")
        self.count = count

    @handler
    async def collect(self, result: str, ctx: WorkflowContext[Never, str]) -> None:
        self.got.append(result)
        if len(self.got) == self.count:
            await ctx.yield_output("all done")
        elif len(self.got) > self.count:
            raise ValueError("more results than jobs")

d, a, b, c = Distributor("d"), Worker("a"), Worker("b"), Collector("c")
workflow = (
    WorkflowBuilder(start_executor=d)
    .add_edge(d, a).add_edge(d, b).add_edge(a, c).add_edge(b, c).add_edge(d, c)
    .build()
)
"""


def _audit(target: str) -> audit.Audit:
    python = audit.python_of(MATRIX.newest("agent_framework"))
    (result,) = audit.evaluate(target, MATRIX, python, None)
    return result


def _patterns(result: audit.Audit) -> list[str]:
    return sorted(f.pattern for f in result.findings)


# The same workflow with a worker that refuses an empty job: a raise on the message that nothing rules out.
REACHABLE = COUNTED.replace(
    'await ctx.send_message(job + " done")',
    'if not job:\n            raise ValueError("an empty job")\n        await ctx.send_message(job + " done")',
)


def test_a_raise_the_graph_can_reach_is_named_and_the_guards_that_cannot_fire_are_ruled_out(tmp_path: Path) -> None:
    path = tmp_path / "reachable.py"
    path.write_text(textwrap.dedent(REACHABLE), encoding="utf-8")
    result = _audit(f"{path}:workflow")
    (raising,) = [f for f in result.findings if f.pattern == "a parallel executor can raise"]
    lines = {n: i for i, n in enumerate(path.read_text().splitlines(), start=1)}
    reachable = next(i for n, i in lines.items() if "an empty job" in n)
    count = next(i for n, i in lines.items() if "must be positive" in n)
    past_count = next(i for n, i in lines.items() if "more results than jobs" in n)
    assert f"reachable.py:{reachable}" in raising.where[0]
    assert f":{past_count}" not in raising.where[0] and f":{count}" not in raising.where[0]
    assert f"reachable.py:{past_count} (it guards against more messages than the collector expects" in raising.how
    assert f"reachable.py:{count} (`count <= 0` holds only when d sent len(jobs) = 0" in raising.how
    assert "join by separate edges" not in _patterns(result)  # the collector counts
    assert "executor attributes kept between runs" in _patterns(result)


def test_a_count_guard_on_what_the_sender_fanned_out_is_no_failing_sibling(tmp_path: Path) -> None:
    """The parallel-requests sample's false alarm (issue 35 §2): `count <= 0` on `len(jobs)` sent after one
    message per job fires only when no worker runs; the corpus holds the shape (af_request_count_guard)."""
    path = tmp_path / "counted.py"
    path.write_text(textwrap.dedent(COUNTED), encoding="utf-8")
    assert _patterns(_audit(f"{path}:workflow")) == ["executor attributes kept between runs"]
    assert _patterns(_audit(f"{CORPUS / 'af_request_count_guard.py'}:workflow")) == []


def test_a_collector_whose_raises_cannot_fire_has_no_failing_sibling_finding() -> None:
    result = _audit(f"{CORPUS / 'af_request_collector.py'}:workflow")
    assert _patterns(result) == ["executor attributes kept between runs"]
    assert _patterns(_audit(f"{CORPUS / 'af_request_collector_reset.py'}:workflow")) == []


def test_a_handler_that_takes_one_message_as_the_join_is_still_flagged() -> None:
    result = _audit(f"{CORPUS / 'af_separate_edges_join.py'}:workflow")
    assert "join by separate edges" in _patterns(result)


def test_kept_executor_state_cites_the_probe_that_observed_it() -> None:
    result = _audit(f"{CORPUS / 'af_request_collector.py'}:workflow")
    (kept,) = [f for f in result.findings if f.pattern == "executor attributes kept between runs"]
    assert kept.probes == [KEPT] and kept.hazard == "silent" and kept.certainty == "source"
    assert kept.where[:2] == ["collector", "self.quotes"]
    assert [e.probe for e in kept.evidence] == [KEPT] and kept.evidence[0].cite.startswith(f"fanin {KEPT}@")


def _reader() -> ModuleType:
    for name in ("audit_reading", "af_executor_reading"):  # framework-free: read here, without agent_framework
        folder = SUITES if name == "audit_reading" else SUITES / "agent_framework"
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


class _Limited:
    def __init__(self) -> None:
        self.limit = 3
        self.seen: list[str] = []

    async def handle(self, message: str) -> None:
        if self.limit < 1:
            raise ValueError("no limit")
        if len(message) > self.limit:
            raise ValueError("too long")
        self.seen.append(message)
        if len(self.seen) == 2:
            self.seen.clear()


def test_a_condition_on_attributes_fixed_at_build_is_evaluated_on_the_executor() -> None:
    reader = _reader()
    readings = sys.modules["audit_reading"].read(_Limited, sys.modules["audit_reading"].StateReader)
    guards = {line: g for r in readings for line, g in r.raise_guards.items()}
    fixed_line, message_line = sorted(guards)
    executor = _Limited()
    assert "is False on the executor as built" in reader.ruled_out(executor, guards[fixed_line])
    assert reader.ruled_out(executor, guards[message_line]) is None  # the message decides it
    executor.limit = 0
    assert reader.ruled_out(executor, guards[fixed_line]) is None  # built so that it fires
    assert reader.kept(executor) == {}  # seen is emptied by .clear()
