"""The source reader the pydantic-graph and Agent Framework inspectors share (suites/audit_reading.py).

Framework-free, so tested here: the order of a read, an await and a write of one key decides a lost
update, a read and a write with no await between are serialised by the event loop, and a finding
that depends on the version shows only where the cited probe saw the hazard.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from types import ModuleType
from typing import Any

import pytest

from fanin.model import matrix
from fanin.model.source import SUITES
from fanin.project import audit
from fanin.run.identity import load_reference


def _kit(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"fanin_test_{name}", SUITES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


reading = _kit("audit_reading")


class Attributes(reading.StateReader):  # type: ignore[name-defined]
    """`ctx.state.f` names f, as the pydantic-graph inspector reads it."""

    def key(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "state":
            return node.attr
        return None


async def model(*_: Any) -> int:
    return 1


async def read_await_write(ctx: Any) -> None:
    seen = ctx.state.count
    extra = await model()
    ctx.state.count = seen + extra


async def augmented_across_await(ctx: Any) -> None:
    ctx.state.count += await model()


async def augmented_no_await(ctx: Any) -> None:
    await model()
    ctx.state.count += 1


async def read_inside_the_await(ctx: Any) -> None:
    ctx.state.count = await model(ctx.state.count)


async def awaited_first(ctx: Any) -> None:
    value = await model()
    ctx.state.count = ctx.state.count + value


async def sets_and_appends(ctx: Any) -> None:
    ctx.state.verdict = await model()
    ctx.state.log.append("done")


async def sets_when_found(ctx: Any) -> None:
    if await model():
        ctx.state.answer = "found"
    ctx.state.always = 1


@pytest.mark.parametrize(
    ("function", "writes"),
    [
        (read_await_write, {"count": "update-across-await"}),
        (augmented_across_await, {"count": "update-across-await"}),
        (augmented_no_await, {"count": "update"}),
        (read_inside_the_await, {"count": "update-across-await"}),
        (awaited_first, {"count": "update"}),
        (sets_and_appends, {"verdict": "set", "log": "mutate"}),
    ],
)
def test_a_read_and_a_write_are_ordered_against_the_awaits(function: Any, writes: dict[str, str]) -> None:
    assert reading.writes_of(reading.read(function, Attributes)) == writes


def test_writes_under_a_condition_and_raises_are_seen_with_the_files_line_numbers() -> None:
    (found,) = reading.read(sets_when_found, Attributes)
    assert found.guarded_writes() == {"answer"}
    source_line = sets_when_found.__code__.co_firstlineno
    assert {a.line for a in found.accesses} == {source_line + 2, source_line + 3}


class Checker:
    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError("a negative limit")  # building the object, not running it
        self.limit = limit

    async def handle(self, ctx: Any) -> None:
        ctx.state.checked = await model()


async def prints_a_key(ctx: Any) -> None:
    print("count", ctx.state.count)


def test_a_key_handed_to_a_builtin_leaves_the_writes_known() -> None:
    # print is a builtin: before it was looked up among the builtins the call made every write unknown (dynamic)
    (found,) = reading.read(prints_a_key, Attributes)
    assert found.dynamic == [] and found.reads() == {"count"}


def test_a_class_is_read_method_by_method_without_its_constructor() -> None:
    readings = reading.read(Checker, Attributes)
    assert [r.raises for r in readings] == [[]]
    assert reading.writes_of(readings) == {"checked": "set"}


def test_unreadable_code_is_said_to_be_unreadable() -> None:
    assert [r.readable for r in reading.read(len, Attributes)] == [False]


@pytest.mark.parametrize(
    ("selection", "every"),
    [
        (lambda message, targets: list(targets), True),
        (lambda message, targets: targets[:], True),
        (lambda message, targets: [*targets], True),
        (lambda message, targets: targets[:1], False),
        (lambda message, targets: [t for t in targets if message], False),
    ],
)
def test_a_selection_function_that_returns_every_target_is_told_apart(selection: Any, every: bool) -> None:
    assert reading.returns_second_parameter(selection) is every


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("set", "set", "last-writer"),
        ("set", "update", "last-writer"),
        ("update-across-await", "update", "read-modify-write"),
        ("mutate", "mutate", "shared-mutation"),
        ("update", "update", None),
        ("update", "mutate", None),
    ],
)
def test_conflicts_between_two_steps_that_run_at_once(a: str, b: str, kind: str | None) -> None:
    found = reading.conflicts({"x": {"k": a}, "y": {"k": b}}, [("x", "y")])
    assert [c.kind for c in found] == ([kind] if kind else [])
    assert reading.conflicts({"x": {"k": "set"}, "y": {"k": "set"}}, []) == []  # never at once: no conflict
    assert [c.kind for c in reading.conflicts({"x": {"k": "set"}}, [("x", "x")])] == ["last-writer"]  # a map


def test_a_version_dependent_finding_shows_only_where_its_probe_saw_the_hazard() -> None:
    """Agent Framework keeps shared state across runs from 1.2.2 on (bisected; agent_framework/runs/stale-from-previous-run)."""
    grid = matrix.load()
    raw = {"probes": ["agent_framework/runs/stale-from-previous-run"], "only_if": {"value_has": '"stale": ["'}}
    shown = {}
    for version in ("1.0.0", "1.23.0"):
        cell = grid.cell(f"agent_framework-{version}")
        shown[version] = audit._condition(raw, load_reference(cell.reference_path, cell))
    assert shown == {"1.0.0": False, "1.23.0": True}
