"""What `fanin audit` sees in a CrewAI Flow: its listeners, which methods can run at once, what they do to `self.state`.

Runs in the environment with the user's flow and crewai installed (never in the harness). It reads the Flow
class's own source: the `@start`, `@listen` and `@router` decorators and their `or_`/`and_` conditions, the
public DSL every release shares (the class's registries moved between releases: `_listeners` in 1.x, flow
definitions in 1.15), and the string constants each router returns (its routes, as crewai reads them too).

From that: a method waits for every method that dominates it (an `and_` waits for all its sources, an `or_`
for what all its sources wait for); two methods neither of which waits for the other can run at once (the
listeners one method triggers are gathered on one event loop), unless one sits behind one route of a router
and the other behind another. Findings, each citing the probes it rests on (the harness adds what they
observed at the installed version):

- an `or_` listener two of whose sources both complete in one run (crewai/or-listener/two-branches: once per
  source up to 1.8.1, once from 1.9.0 with the second trigger dropped); a source that comes after the listener
  itself (a router's route looping back to it) is a loop, which that probe does not observe, and is left out;
- an `and_` listener that takes the trigger's output: it is handed the last finisher's only
  (crewai/and-listener/two-branches, crewai/scenario/fan-in-order);
- one `self.state` key written by two methods that can run at once: a read, an await and a write loses an
  update (crewai/state/lost-update), two sets keep the last (crewai/scenario/same-key-two-writers), changes in
  place keep every write in finishing order. A read-modify-write inside `async with` a lock (a name with
  "lock" in it) is taken as serialised: the precondition says the lock must be one both methods share.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import audit_reading
from audit_reading import Reading
from audit_state import AttributeStateReader

Condition = tuple[str, tuple[Any, ...]] | str  # ("or"|"and", children) or a leaf: a method name or a route label
_DICT_METHODS = frozenset({"get", "update", "setdefault", "pop", "keys", "values", "items", "copy", "model_dump"})


@dataclass(frozen=True)
class _Method:
    name: str
    kind: str  # "start", "listen" or "router"
    condition: Condition | None  # None: a plain start
    routes: tuple[str, ...]  # a router's returned labels
    takes_output: bool  # has a parameter after self: it reads the output its trigger hands it


def _flow_class(target: Any) -> type | None:
    cls = target if isinstance(target, type) else type(target)
    mro = cls.__mro__
    if "Flow" not in {c.__name__ for c in mro} or not any(str(c.__module__).startswith("crewai") for c in mro):
        return None
    return None if str(cls.__module__).startswith("crewai") else cls


def _user_classes(cls: type) -> list[type]:
    """The classes of `cls`'s MRO above crewai's own, base first (a subclass's method overrides its base's)."""
    found = []
    for c in cls.__mro__:
        if str(c.__module__).startswith("crewai"):
            break
        found.append(c)
    return found[::-1]


def _condition(node: ast.expr) -> Condition | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        op = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if op in ("or_", "and_"):
            children = tuple(_condition(a) for a in node.args)
            if all(c is not None for c in children):
                return (op[:-1], children)
    return None


def _routes(func: ast.AST) -> tuple[str, ...]:
    found = {
        n.value.value
        for n in ast.walk(func)
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
    }
    return tuple(sorted(found))


def _literal_returns(func: ast.AST) -> bool:
    """Every `return` of a router gives a string literal (its routes can be read)."""
    returns = [n for n in ast.walk(func) if isinstance(n, ast.Return)]
    return all(isinstance(n.value, ast.Constant) and isinstance(n.value.value, str) for n in returns)


def _methods(cls: type) -> tuple[dict[str, _Method], list[str]]:
    """Every decorated method, and the methods whose decorator's condition could not be read."""
    methods: dict[str, _Method] = {}
    unread: list[str] = []
    for c in _user_classes(cls):
        tree = audit_reading.tree_of(c)
        if not isinstance(tree, ast.ClassDef):
            unread.append(c.__name__)
            continue
        for func in (n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for deco in func.decorator_list:
                if not isinstance(deco, ast.Call):
                    continue
                kind = deco.func.id if isinstance(deco.func, ast.Name) else getattr(deco.func, "attr", "")
                if kind not in ("start", "listen", "router"):
                    continue
                condition = _condition(deco.args[0]) if deco.args else None
                if deco.args and condition is None:
                    unread.append(func.name)
                    continue
                params = func.args.posonlyargs + func.args.args
                takes = len(params) > 1 or func.args.vararg is not None
                routes = _routes(func) if kind == "router" else ()
                if kind == "router" and not _literal_returns(func):
                    unread.append(f"{func.name} (routes it returns that are not string literals)")
                methods[func.name] = _Method(func.name, kind, condition, routes, takes)
    return methods, unread


class _Shape:
    """Which methods and route labels wait for which: dominators over the trigger graph."""

    def __init__(self, methods: dict[str, _Method]) -> None:
        self.methods = methods
        self.routers_of: dict[str, set[str]] = {}
        for m in methods.values():
            for label in m.routes:
                self.routers_of.setdefault(label, set()).add(m.name)
        self.nodes = set(methods) | set(self.routers_of)
        self.pre = self._dominators()
        self.reached = self._reach()

    def leaf(self, name: str) -> set[str]:
        return self.pre.get(name, self.nodes) | {name}

    def waits(self, condition: Condition, pre: dict[str, set[str]] | None = None) -> set[str]:
        pre = self.pre if pre is None else pre
        if isinstance(condition, str):
            return pre.get(condition, set(self.nodes)) | {condition}
        op, children = condition
        sets = [self.waits(c, pre) for c in children]
        return set.intersection(*sets) if op == "or" else set.union(*sets)

    def _dominators(self) -> dict[str, set[str]]:
        pre = {n: set(self.nodes) for n in self.nodes}
        for method in self.methods.values():
            if method.kind == "start":  # a start runs at kickoff, whatever else (`@start("retry")`) runs it again
                pre[method.name] = set()
        for _ in range(len(self.nodes) + 1):
            changed = False
            for n in sorted(self.nodes):
                m = self.methods.get(n)
                if m is not None and (m.condition is None or m.kind == "start"):
                    continue
                if m is not None and m.condition is not None:
                    new = self.waits(m.condition, pre) - {n}
                else:
                    new = set.intersection(*[pre[r] | {r} for r in self.routers_of[n]]) - {n}
                if new != pre[n]:
                    pre[n], changed = new, True
            if not changed:
                break
        return pre

    def reachable(self, n: str) -> bool:
        return n in self.reached

    def _reach(self) -> set[str]:
        def met(condition: Condition, seen: set[str]) -> bool:
            if isinstance(condition, str):
                return condition in seen
            op, children = condition
            return (any if op == "or" else all)(met(c, seen) for c in children)

        seen = {m.name for m in self.methods.values() if m.kind == "start"}
        for _ in range(len(self.nodes) + 1):
            more = {m.name for m in self.methods.values() if m.condition is not None and met(m.condition, seen)}
            more |= {label for label, routers in self.routers_of.items() if routers & seen}
            if more <= seen:
                break
            seen |= more
        return seen

    def exclusive(self, one: set[str], other: set[str]) -> bool:
        """Behind different routes of one router: never both in one pass."""
        for a in one & set(self.routers_of):
            for b in other & set(self.routers_of):
                if a != b and self.routers_of[a] & self.routers_of[b] and not (a in other or b in one):
                    return True
        return False

    def follows(self, condition: Condition, other: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether, however `condition` is met, `other` has run before or cannot run in that pass (an or_ over
        a router's routes follows what every route follows)."""
        if isinstance(condition, str):
            if condition == other or other in self.pre.get(condition, set()):
                return True
            if self.exclusive(self.leaf(condition), self.leaf(other)):
                return True
            if condition in seen:
                return False
            method = self.methods.get(condition)
            if method is not None and method.kind == "start":
                return False  # it runs at kickoff, before anything else has
            inner = (
                method.condition if method is not None else ("or", tuple(sorted(self.routers_of.get(condition, ()))))
            )
            if inner is None or inner == ("or", ()):
                return False
            return self.follows(inner, other, seen | {condition})
        op, children = condition
        return (all if op == "or" else any)(self.follows(c, other, seen) for c in children)

    def together(self) -> list[tuple[str, str]]:
        names = sorted(n for n in self.methods if self.reachable(n))
        return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if not (self.ordered(a, b))]

    def ordered(self, a: str, b: str) -> bool:
        if a in self.pre[b] or b in self.pre[a] or self.exclusive(self.leaf(a), self.leaf(b)):
            return True
        return any(
            self.methods[x].kind != "start"
            and self.methods[x].condition is not None
            and self.follows(self.methods[x].condition, y)  # type: ignore[arg-type]
            for x, y in ((a, b), (b, a))
        )


# --- reading a method's source ----------------------------------------------------------------


class _StateReader(AttributeStateReader):
    """`self.state["k"]`, `self.state.k` (a structured state), `self.state.get("k")` and `.update({...})`; a
    helper handed `self` (or called as `self.helper()`) is read the same way. Awaits inside `async with` a
    lock are not counted: the read and the write it guards are one step to a sibling holding the same lock."""

    def __init__(self) -> None:
        super().__init__(methods=_DICT_METHODS)
        self.contexts.add("self")
        self.owners = self.contexts  # `self.state`, or the state of a parameter read as a context
        self._locked = 0

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and self._is_state(func.value) and func.attr in _DICT_METHODS:
            literal = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
            if func.attr == "get" and isinstance(literal, str):
                self.record(literal, "read", node)
            elif func.attr in ("setdefault", "pop") and isinstance(literal, str):
                self.record(literal, "mutate", node)
            elif func.attr == "update":
                given = node.args[0] if node.args and isinstance(node.args[0], ast.Dict) else None
                keys = [k.value for k in (given.keys if given else []) if isinstance(k, ast.Constant)]
                keys += [k.arg for k in node.keywords if k.arg]
                for name in keys:
                    self.record(str(name), "set", node)
                if (node.args and given is None) or (given is not None and len(keys) < len(given.keys)):
                    self.found.dynamic.append(node.lineno)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            at = (node.lineno, node.col_offset)
            self.found.helpers.append(audit_reading.Helper(func, (), at, node.lineno, self._guards > 0))
        super().visit_Call(node)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> None:
        locked = any("lock" in ast.unparse(item.context_expr).lower() for item in node.items)
        self.found.awaits.append((node.lineno, node.col_offset))
        self._locked += locked
        try:
            self.generic_visit(node)
        finally:
            self._locked -= locked

    def visit_Await(self, node: ast.Await) -> None:
        if self._locked:
            self.generic_visit(node)
        else:
            super().visit_Await(node)


def _readings(cls: type, methods: dict[str, _Method]) -> dict[str, list[Reading]]:
    import inspect as pyinspect

    return {name: audit_reading.read(pyinspect.getattr_static(cls, name, None), _StateReader, cls) for name in methods}


# --- findings ---------------------------------------------------------------------------------


def _shown(condition: Condition) -> str:
    if isinstance(condition, str):
        return condition
    op, children = condition
    return f"{op}_({', '.join(_shown(c) for c in children)})"


def _listener_findings(shape: _Shape) -> list[dict[str, Any]]:
    findings = []
    for m in sorted(shape.methods.values(), key=lambda m: m.name):
        if not shape.reachable(m.name) or isinstance(m.condition, str) or m.condition is None:
            continue
        op, children = m.condition
        sources = [c for c in children if not isinstance(c, str) or shape.reachable(c)] if op == "or" else []
        both = [
            (a, b)
            for i, a in enumerate(sources)
            for b in sources[i + 1 :]
            if not shape.exclusive(shape.waits(a), shape.waits(b))
            and m.name not in shape.waits(a) | shape.waits(b)  # one fed back from the listener: a loop, not a fan-in
        ]
        where = [f"{m.name} (listens to {_shown(m.condition)})"]
        if op == "or" and both:
            pairs = ", ".join(f"{_shown(a)} and {_shown(b)}" for a, b in both)
            findings.append(
                {
                    "pattern": "or_ listener whose sources both complete",
                    "where": where + [f"sources that both complete in one run: {pairs}"],
                    "probes": ["crewai/or-listener/two-branches"],
                    "certainty": "static",
                    "how": f"read from the flow's decorators: no router's routes keep {pairs} apart",
                    "precondition": f"in one run {pairs} both complete: {m.name} runs once per source up to 1.8.1 and"
                    " once from 1.9.0, the second trigger dropped without a log (one @listen per source sees each)",
                }
            )
        if op == "and" and m.takes_output:
            findings.append(
                {
                    "pattern": "and_ listener handed one source's output",
                    "where": where,
                    "probes": ["crewai/and-listener/two-branches", "crewai/scenario/fan-in-order"],
                    "certainty": "static",
                    "how": f"read from the flow's decorators and {m.name}'s parameters: it takes the trigger's output",
                    "precondition": f"{m.name} runs once after all of {_shown(m.condition)}, handed the output of"
                    " the one that completed last only: which one is the finishing order's",
                }
            )
    return findings


_KINDS = {
    "read-modify-write": (
        "parallel listeners read, await and write one state key",
        ["crewai/state/lost-update", "crewai/scenario/read-await-write"],
        "a listener reads self.state.{key}, awaits, then writes it back, so a sibling's write in between is lost",
    ),
    "last-writer": (
        "parallel listeners write one state key",
        ["crewai/scenario/same-key-two-writers"],
        "each sets self.state.{key} on the flow's one shared state object: the last to write it wins",
    ),
    "shared-mutation": (
        "parallel listeners change one state value in place",
        ["crewai/scenario/fan-in-order"],
        "each changes self.state.{key} in place, so every change is kept, in the order the listeners finish",
    ),
}


def _write_findings(shape: _Shape, writes: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    findings = []
    together = shape.together()
    for conflict in audit_reading.conflicts(writes, together):
        pattern, probes, effect = _KINDS[conflict.kind]
        listed = ", ".join(f"{s} ({how})" for s, how in conflict.writers)
        steps = sorted({s for s, _ in conflict.writers})
        findings.append(
            {
                "pattern": pattern,
                "where": [f"state key {conflict.name!r}: {listed}"],
                "probes": probes,
                "certainty": "source",
                "how": f"read from the methods' source: {listed}",
                "precondition": f"{', '.join(steps)} can run at once (no one of them waits for another, no router"
                f" route keeps them apart; a flow gathers the listeners a method triggers); "
                + effect.format(key=conflict.name)
                + (" (a lock held across it counts only when it is one lock both share)" if "read" in pattern else ""),
            }
        )
    return findings


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for a CrewAI Flow class or instance; None when `target` is neither."""
    cls = _flow_class(target)
    if cls is None:
        return None
    methods, unread = _methods(cls)
    shape = _Shape(methods)
    readings = _readings(cls, methods)
    writes = {name: audit_reading.writes_of(r) for name, r in readings.items()}
    parallel = {s for pair in shape.together() for s in pair}
    unknown = sorted(
        {n for n in parallel if not all(r.readable for r in readings[n]) or any(r.dynamic for r in readings[n])}
        | set(unread)
    )
    return {
        "framework": "crewai",
        "kind": cls.__name__,
        "methods": {
            m.name: {
                "kind": m.kind,
                "listens_to": _shown(m.condition) if m.condition else None,
                "routes": list(m.routes),
            }
            for m in sorted(methods.values(), key=lambda m: m.name)
        },
        "parallel": [list(p) for p in shape.together()],
        "writes": {
            name: {
                "keys": sorted(writes[name]),
                "how": "source" if all(r.readable and not r.dynamic for r in readings[name]) else "unknown",
            }
            for name in sorted(readings)
        },
        "unknown_writers": unknown,
        "no_dry_run": "the CrewAI audit reads the Flow class's decorators and each method's source; it has no dry run",
        "findings": _listener_findings(shape) + _write_findings(shape, writes),
    }
