"""What an Agent Framework executor class does with its own attributes, read from its source (`ast`).

Used by suites/agent_framework/audit.py for three questions the edge groups cannot answer:
- does a handler collect messages (it changes `self.x` and sends or yields only under a condition on the
  executor's attributes), so separate edges into it are a join by design, not one message taken as the whole;
- which attributes a run changes and no run resets (the runner keeps the executor object between runs of
  one workflow: agent_framework/runs/executor-state-kept), and which condition reads them;
- can a `raise` fire in the workflow as built: its condition is false on the executor as the workflow holds
  it (attributes no handler changes), or it guards against more messages than the collector expects (which
  one run does not deliver; a second run of the instance does, the executor-state finding).
Nothing here imports the framework.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import audit_reading

_EMITS = ("send_message", "yield_output")
_SAFE_CALLS: dict[str, Callable[..., Any]] = {"len": len, "isinstance": isinstance, "bool": bool, "int": int, "str": str}


def _self_attribute(node: ast.AST) -> str | None:
    """`self.x` (or `self.x[...]`, `self.x.y`) names the attribute `x`; anything else None."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr
        node = node.value
    return None


def _attributes_in(node: ast.AST) -> set[str]:
    return {a for n in ast.walk(node) if (a := _self_attribute(n)) is not None and isinstance(n, ast.Attribute)}


@dataclass
class Attributes:
    """A class's attributes as its methods (not `__init__`) change them."""

    changed: dict[str, int] = field(default_factory=dict)  # attribute -> first line a method changes it in place
    reset: set[str] = field(default_factory=set)  # assigned afresh in a method (`self.x = []`, `.clear()`)
    conditions: dict[str, int] = field(default_factory=dict)  # attribute -> first line an `if` test reads it
    collects: list[str] = field(default_factory=list)  # methods that change an attribute and emit only under a test


def _methods(tree: ast.AST | None) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    if not isinstance(tree, ast.ClassDef):
        return []
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name != "__init__"]


def _emits_guarded(method: ast.AST) -> bool | None:
    """True when every `ctx.send_message` / `ctx.yield_output` is under an `if` reading `self`; None: it emits nothing."""
    guarded: list[bool] = []

    def walk(node: ast.AST, under: bool) -> None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _EMITS:
            guarded.append(under)
        if isinstance(node, ast.If):
            walk(node.test, under)
            inside = under or bool(_attributes_in(node.test))
            for statement in node.body + node.orelse:
                walk(statement, inside)
            return
        for child in ast.iter_child_nodes(node):
            walk(child, under)

    walk(method, False)
    return all(guarded) if guarded else None


def attributes(executor: Any) -> Attributes:
    """What the executor's class's methods do to `self.*`."""
    found = Attributes()
    for method in _methods(audit_reading.tree_of(type(executor))):
        changed_here: set[str] = set()
        for node in ast.walk(method):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name = _self_attribute(node.func.value)
                if name is not None and node.func.attr == "clear":
                    found.reset.add(name)
                elif name is not None and node.func.attr in audit_reading.MUTATORS:
                    found.changed.setdefault(name, node.lineno)
                    changed_here.add(name)
            elif isinstance(node, ast.AugAssign) and (name := _self_attribute(node.target)) is not None:
                found.changed.setdefault(name, node.lineno)
                changed_here.add(name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    name = _self_attribute(target)
                    if name is None:
                        continue
                    if isinstance(target, ast.Attribute) and name not in _attributes_in(node.value):
                        found.reset.add(name)  # `self.x = []`: a fresh value
                    else:
                        found.changed.setdefault(name, node.lineno)  # `self.x[k] = v`, `self.x = self.x + [m]`
                        changed_here.add(name)
            elif isinstance(node, ast.If):
                for name in _attributes_in(node.test):
                    found.conditions.setdefault(name, node.lineno)
        if changed_here and _emits_guarded(method):
            found.collects.append(method.name)
    return found


def kept(executor: Any) -> dict[str, tuple[int, int]]:
    """Attributes a run changes, never resets, and a condition reads: {attribute: (changed at, read at)}."""
    seen = attributes(executor)
    return {
        name: (line, seen.conditions[name])
        for name, line in sorted(seen.changed.items())
        if name not in seen.reset and name in seen.conditions
    }


def _value(node: ast.AST, executor: Any, fixed: set[str]) -> Any:
    """The value of an `if` test made of literals, builtins and attributes no method changes; KeyError otherwise."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        if node.attr not in fixed or not hasattr(executor, node.attr):
            raise KeyError(node.attr)
        return getattr(executor, node.attr)
    if isinstance(node, ast.BoolOp):
        values = [_value(v, executor, fixed) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _value(node.operand, executor, fixed)
    if isinstance(node, ast.Compare):
        left = _value(node.left, executor, fixed)
        for op, right_node in zip(node.ops, node.comparators):
            right = _value(right_node, executor, fixed)
            check = {
                ast.Eq: lambda a, b: a == b,
                ast.NotEq: lambda a, b: a != b,
                ast.Lt: lambda a, b: a < b,
                ast.LtE: lambda a, b: a <= b,
                ast.Gt: lambda a, b: a > b,
                ast.GtE: lambda a, b: a >= b,
                ast.Is: lambda a, b: a is b,
                ast.IsNot: lambda a, b: a is not b,
                ast.In: lambda a, b: a in b,
                ast.NotIn: lambda a, b: a not in b,
            }.get(type(op))
            if check is None or not check(left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _SAFE_CALLS:
        return _SAFE_CALLS[node.func.id](*(_value(a, executor, fixed) for a in node.args))
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [_value(e, executor, fixed) for e in node.elts]
    raise KeyError(ast.dump(node))


def _counts_past(test: ast.expr, taken: bool, changed: set[str]) -> str | None:
    """`len(self.x) > self.n` (taken): more messages than the collector expects; the attribute's name, else None."""
    if not taken or not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left = test.left
    if not (isinstance(test.ops[0], (ast.Gt, ast.GtE)) and isinstance(left, ast.Call) and len(left.args) == 1):
        return None
    if not (isinstance(left.func, ast.Name) and left.func.id == "len"):
        return None
    name = _self_attribute(left.args[0])
    return name if name in changed else None


def ruled_out(executor: Any, guards: tuple[tuple[ast.expr, bool], ...]) -> str | None:
    """Why a raise under `guards` cannot fire in one run of the workflow as built, or None when it may."""
    seen = attributes(executor)
    fixed = {n for n in vars(executor)} - set(seen.changed) - seen.reset
    for test, taken in guards:
        try:
            holds = bool(_value(test, executor, fixed))
        except Exception:  # not a condition on the executor as built: the message or the run decides it
            holds = None
        if holds is not None and holds != taken:
            return f"its condition `{ast.unparse(test)}` is {holds} on the executor as built"
        name = _counts_past(test, taken, set(seen.changed))
        if name is not None:
            why = f"it guards against more messages than the collector expects (`{ast.unparse(test)}`), which one run"
            if name in seen.reset:
                return f"{why} does not deliver"
            return f"{why} does not deliver; a second run of the instance does (self.{name} is kept between runs)"
    return None
