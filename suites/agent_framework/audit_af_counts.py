"""A raise that guards a count of fanned-out messages: it fires only when the sender fanned out nothing.

The Agent Framework inspector's rule for one shape real workflows use (microsoft/agent-framework's
sub_workflow_parallel_requests sample): a sender loops over its message, sends one message per item to the
executors it fans out to, then sends `len(items)` to a collector, whose handler raises when that count is not
positive (`count <= 0`, `count < 1`, `count == 0`, `not count`). The count is 0 only when the loop sent nothing,
so none of the collector's parallel siblings (each fed by that sender alone) runs beside the raise: it is a
guard, not a failing sibling. Read from the executors' source with `ast`; anything else is not ruled out.
Part of suites/agent_framework/audit.py.
"""

import ast
import functools
import inspect as pyinspect
from typing import Any


@functools.lru_cache(maxsize=64)
def _tree(file: str) -> ast.Module | None:
    try:
        with open(file, encoding="utf-8") as handle:
            return ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None


def _functions(file: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = _tree(file)
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] if tree else []


def _enclosing(file: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function of `file` whose lines hold `line`."""
    spans = [f for f in _functions(file) if f.lineno <= line <= (f.end_lineno or f.lineno)]
    return max(spans, key=lambda f: f.lineno) if spans else None


def _not_positive(test: ast.expr, taken: bool, name: str) -> bool:
    """`name <= 0`, `name < 1`, `name == 0` or `not name`, taken: the count is not positive."""
    if not taken:
        return False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance(test.operand, ast.Name) and test.operand.id == name
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
        return False
    right = test.comparators[0]
    if test.left.id != name or not isinstance(right, ast.Constant) or isinstance(right.value, bool):
        return False
    return (type(test.ops[0]), right.value) in {(ast.LtE, 0), (ast.Lt, 1), (ast.Eq, 0)}


def _sends(node: ast.AST) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "send_message"
    ]


def _counts_its_fan_out(executor: Any) -> str | None:
    """`for x in items: send(...)` then `send(len(items))` in one of the executor's handlers: `len(items)`, else None."""
    try:
        file = pyinspect.getsourcefile(type(executor)) or ""
        first = pyinspect.getsourcelines(type(executor))[1]
    except (OSError, TypeError):
        return None
    for function in _functions(file):
        if function.lineno < first:
            continue
        loops = [n for n in ast.walk(function) if isinstance(n, (ast.For, ast.AsyncFor)) and isinstance(n.iter, ast.Name)]
        for call in _sends(function):
            arg = call.args[0] if call.args else None
            if not (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "len"):
                continue
            counted = arg.args[0] if arg.args else None
            if not isinstance(counted, ast.Name):
                continue
            if any(loop.iter.id == counted.id and _sends(loop) for loop in loops):  # type: ignore[attr-defined]
                return f"len({counted.id})"
    return None


def ruled_out(
    name: str,
    line: int,
    file: str,
    guards: tuple[tuple[ast.expr, bool], ...],
    executors: dict[str, Any],
    sources: dict[str, set[str]],
    siblings: set[str],
) -> str | None:
    """Why the raise at `file:line` of executor `name` cannot fire beside a sibling, or None when it may."""
    function = _enclosing(file, line)
    if function is None or len(function.args.args) < 2:
        return None
    message = function.args.args[1].arg  # after self: what the handler is sent
    test = next((t for t, taken in guards if _not_positive(t, taken, message)), None)
    if test is None:
        return None
    for sender in sorted(sources.get(name, set())):
        counted = _counts_its_fan_out(executors.get(sender))
        if counted is None or not siblings or any(sources.get(s, set()) != {sender} for s in siblings):
            continue
        return (
            f"`{ast.unparse(test)}` holds only when {sender} sent {counted} = 0 after one message per item to"
            f" {', '.join(sorted(siblings))}, so none of them runs beside it"
        )
    return None
