"""What a user's step does to shared state, read from its source with `ast`: shared by the audit inspectors.

Framework-free, like gates.py: suites/pydantic_graph/audit.py and suites/agent_framework/audit.py each
say how their framework names a state key (a `StateReader` subclass), and this module orders the reads
and writes of each key against the function's awaits. That order is what decides a lost update under
asyncio: a read and a write of one key with no await between cannot interleave with a sibling step,
while a read, an await and a write can (the read-modify-write probes). Nothing here imports a framework.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import os
import sysconfig
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

# A method call on a state value that changes it in place (a list, dict or set in the state).
MUTATORS = frozenset(
    {"append", "extend", "insert", "update", "add", "setdefault", "pop", "popitem", "remove", "clear", "discard"}
)
# How one function writes a key, strongest first: the order `strongest` ranks by.
WRITE_KINDS = ("update-across-await", "set", "update", "mutate")
_GUARDS = (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Match, ast.IfExp)

Position = tuple[int, int]
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Access:
    name: str  # the state key (or `field[key]`)
    kind: str  # "read", "set" or "mutate"
    at: Position  # where it takes effect: a read where it is, a write at the end of its statement
    line: int
    guarded: bool  # under an if, a loop, a try or a with: it may not happen in every call


@dataclass(frozen=True)
class Helper:
    """A call that hands the state (or the context holding it) to another function: its writes are that function's."""

    func: ast.expr
    arguments: tuple[tuple[str | int, ast.expr, str | None], ...]  # (position or keyword, expression, its key)
    at: Position
    line: int
    guarded: bool


@dataclass
class Reading:
    """The state accesses, awaits and raises of one piece of code; `readable` False when its source is not."""

    readable: bool = True
    accesses: list[Access] = field(default_factory=list)
    awaits: list[Position] = field(default_factory=list)
    raises: list[int] = field(default_factory=list)
    dynamic: list[int] = field(default_factory=list)  # lines writing a key that is not a literal
    file: str = ""  # the source file, for a finding that names a line
    # each raise's line -> the `if` tests around it, innermost last, with the branch taken (True: the body)
    raise_guards: dict[int, tuple[tuple[ast.expr, bool], ...]] = field(default_factory=dict)
    helpers: list[Helper] = field(default_factory=list)  # calls that pass the state on (followed by `read`)

    def writes(self) -> dict[str, str]:
        """{key: how this code writes it}, one of WRITE_KINDS.

        `update-across-await`: the key is read, then an await, then written (a sibling can write it between);
        `update`: read and written with no await between; `set`: written without being read first;
        `mutate`: changed in place (`.append`, `[k] = v` with a key that is not a literal).
        """
        found: dict[str, str] = {}
        for write in (a for a in self.accesses if a.kind != "read"):
            reads = [r.at for r in self.accesses if r.kind == "read" and r.name == write.name and r.at < write.at]
            if reads and any(min(reads) < wait <= write.at for wait in self.awaits):
                kind = "update-across-await"
            elif reads and write.kind == "set":
                kind = "update"
            else:
                kind = write.kind
            found[write.name] = strongest([found.get(write.name, kind), kind])
        return found

    def guarded_writes(self) -> set[str]:
        """Keys every write of which is under a condition: a call may leave them as they were."""
        written = [a for a in self.accesses if a.kind != "read"]
        return {a.name for a in written if all(b.guarded for b in written if b.name == a.name)}

    def reads(self) -> set[str]:
        return {a.name for a in self.accesses if a.kind == "read"}


def strongest(kinds: Iterable[str]) -> str:
    return min(kinds, key=WRITE_KINDS.index)


def _start(node: ast.AST) -> Position:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _end(node: ast.AST) -> Position:
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


class StateReader(ast.NodeVisitor):
    """Collects a function's state accesses; a framework's subclass says which expressions name a key.

    `key(node)` returns the key an expression denotes (`ctx.state.results` is `results`) or None; a
    subclass may also override `visit_Call` for keys written through method calls (`set_state("k", v)`),
    recording them with `record`. Assignments, augmented assignments, in-place mutators, awaits, raises
    and the guards around each are handled here, the same for every framework.
    """

    def __init__(self) -> None:
        self.found = Reading()
        self._guards = 0
        self._statement: ast.AST | None = None
        self._stored: set[int] = set()  # key expressions written, not read
        self._conditions: list[tuple[ast.expr, bool]] = []  # the `if` tests around the node being visited
        self.contexts: set[str] = set()  # parameter names that hold the context (ctx, context, a *Context annotation)
        self.key_aliases: dict[str, str] = {}  # a helper's parameter -> the caller's key whose value it was given

    # --- what a framework says --------------------------------------------------------------
    def key(self, node: ast.AST) -> str | None:
        return None

    def carries_state(self, node: ast.AST) -> bool:
        """Is `node` the state, or the context that holds it (so a function it is passed to can write keys)?"""
        return isinstance(node, ast.Name) and node.id in self.contexts

    def receives(self, parameter: str, argument: ast.AST, key: str | None) -> None:
        """A helper's reader: its `parameter` is given `argument` (the state, its context, or the value of `key`)."""
        if key is not None:
            self.key_aliases[parameter] = key  # helper(ctx.state.docs): changing `docs` in place changes the key
        else:
            self.contexts.add(parameter)

    def _key_or_alias(self, node: ast.AST) -> str | None:
        name = self.key(node)
        if name is None and isinstance(node, ast.Name):
            return self.key_aliases.get(node.id)
        return name

    # --- recording --------------------------------------------------------------------------
    def record(self, name: str, kind: str, node: ast.AST) -> None:
        at = _start(node) if kind == "read" else _end(self._statement or node)
        self.found.accesses.append(Access(name, kind, at, getattr(node, "lineno", 0), self._guards > 0))

    def _write(self, target: ast.AST) -> None:
        name = self.key(target)
        if name is not None:
            self._stored.add(id(target))
            self.record(name, "set", target)
            return
        if isinstance(target, ast.Subscript):  # state[...][dynamic] = v: in place
            inner = self._key_or_alias(target.value)
            if inner is not None:
                self._stored.add(id(target.value))
                self.record(inner, "mutate", target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._write(element)
        elif isinstance(target, ast.Starred):
            self._write(target.value)

    # --- statements -------------------------------------------------------------------------
    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.stmt):
            outer, self._statement = self._statement, node
            try:
                return super().visit(node)
            finally:
                self._statement = outer
        return super().visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        guarded = isinstance(node, _GUARDS)
        self._guards += guarded
        try:
            super().generic_visit(node)
        finally:
            self._guards -= guarded

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._write(target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._write(node.target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        name = self.key(node.target)
        if name is not None:  # `x += v` reads x before it evaluates v
            self.found.accesses.append(Access(name, "read", _start(node), node.lineno, self._guards > 0))
        self._write(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._write(target)
        self.generic_visit(node)

    def _parameters(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            annotation = ast.unparse(arg.annotation) if getattr(arg, "annotation", None) is not None else ""
            if arg.arg in ("ctx", "context") or "Context" in annotation:
                self.contexts.add(arg.arg)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._parameters(node)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._parameters(node)
        self.generic_visit(node)

    def _passes_state(self, node: ast.Call) -> None:
        given = [(i, a) for i, a in enumerate(node.args)] + [(k.arg, k.value) for k in node.keywords if k.arg]
        passed: list[tuple[str | int, ast.expr, str | None]] = []
        for where, argument in given:
            key = self._key_or_alias(argument)
            if key is not None or self.carries_state(argument):
                passed.append((where, argument, key))
        if passed:
            self.found.helpers.append(Helper(node.func, tuple(passed), _start(node), node.lineno, self._guards > 0))

    def visit_Call(self, node: ast.Call) -> None:
        self._passes_state(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in MUTATORS:
            name = self._key_or_alias(func.value)
            if name is not None:
                self._stored.add(id(func.value))
                self.record(name, "mutate", node)
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
            self.found.dynamic.append(node.lineno)  # setattr(ctx.state, name, v): a key we cannot name
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._load(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._load(node)

    def _load(self, node: ast.Attribute | ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load) and id(node) not in self._stored:
            name = self.key(node)
            if name is not None:
                self.record(name, "read", node)
                return  # `ctx.state.f` is one read, not also a read of `ctx.state`
        self.generic_visit(node)

    def visit_Await(self, node: ast.Await) -> None:
        self.generic_visit(node)
        self.found.awaits.append(_end(node))  # the task yields once the awaited expression has been evaluated

    def visit_AsyncFor(self, node: ast.AsyncFor) -> None:
        self.found.awaits.append(_start(node))
        self.generic_visit(node)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> None:
        self.found.awaits.append(_start(node))
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        self._guards += 1
        try:
            self.visit(node.test)
            for branch, taken in ((node.body, True), (node.orelse, False)):
                self._conditions.append((node.test, taken))
                try:
                    for statement in branch:
                        self.visit(statement)
                finally:
                    self._conditions.pop()
        finally:
            self._guards -= 1

    def visit_Raise(self, node: ast.Raise) -> None:
        self.found.raises.append(node.lineno)
        self.found.raise_guards[node.lineno] = tuple(self._conditions)
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._parameters(node)
        self.generic_visit(node)


def code_of(obj: Any) -> Any:
    """The function or class whose source says what `obj` does (partials, bound methods, wrappers undone)."""
    while True:
        if isinstance(obj, functools.partial):
            obj = obj.func
        elif inspect.ismethod(obj):
            obj = obj.__func__
        elif getattr(obj, "__wrapped__", None) is not None and obj is not obj.__wrapped__:
            obj = obj.__wrapped__
        else:
            break
    if inspect.isfunction(obj) or inspect.isclass(obj):
        return obj
    if callable(obj):
        return type(obj)
    return None


@functools.lru_cache(maxsize=None)
def _tree_of(code: Any) -> ast.AST | None:
    try:
        lines, first = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return None
    text = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(text)
        ast.increment_lineno(tree, max(first, 1) - 1)  # lines as in the user's file
    except SyntaxError:
        tree = None
    if getattr(code, "__name__", "") != "<lambda>":
        if (
            tree is not None
            and tree.body
            and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        ):
            return tree.body[0]
        return tree
    # A lambda in the middle of an expression: getsource gives its whole line(s). Parse the lambda alone.
    start = text.find("lambda")
    for end in range(len(text), start, -1):
        if start < 0:
            break
        try:
            expression = ast.parse(text[start:end].strip(), mode="eval")  # the longest prefix that parses
        except SyntaxError:
            continue
        if isinstance(expression.body, ast.Lambda):
            ast.increment_lineno(expression, max(first, 1) - 1 + text[:start].count("\n"))
            return expression.body
    return None


def tree_of(obj: Any) -> ast.AST | None:
    """The `ast` of `obj`'s function (a def, a lambda) or class; None when its source cannot be read."""
    code = code_of(obj)
    if code is None:
        return None
    try:
        return _tree_of(code)
    except TypeError:  # unhashable
        return None


def shown_file(path: str) -> str:
    """A source file as a finding names it: relative to the working directory when it is under it."""
    try:
        relative = os.path.relpath(path) if path else ""
    except ValueError:
        return path or "?"
    return relative if relative and not relative.startswith("..") else path or "?"


def tree_file(obj: Any) -> str:
    """The file `obj`'s source is in, or "" when it has none."""
    try:
        return inspect.getsourcefile(code_of(obj)) or ""
    except TypeError:
        return ""


_HELPER_DEPTH = 4  # helpers followed through helpers; deeper, the writes are unknown


def _library(code: Any) -> bool:
    """Code of the standard library, an installed package or the builtins: it writes none of the user's keys."""
    file = tree_file(code)
    if not file:
        return True
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(file.startswith(root) for root in roots)


def _resolve(func: ast.expr, owner: Any, instance: Any = None) -> Any:
    """The object a call's function names, seen from the code `owner` (its globals, closure, `self`: `instance`
    when given, else the class)."""
    code = code_of(owner)
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            if instance is not None:
                return getattr(instance, func.attr, None)
            return inspect.getattr_static(code, func.attr, None) if inspect.isclass(code) else None
        base = _resolve(func.value, owner)
        return getattr(base, func.attr, None) if base is not None else None
    if not isinstance(func, ast.Name):
        return None
    scopes: list[dict[str, Any]] = []
    if inspect.isfunction(code):
        try:
            names = inspect.getclosurevars(code)
            scopes += [dict(names.nonlocals), dict(code.__globals__)]
        except (TypeError, ValueError):
            scopes.append(dict(getattr(code, "__globals__", {})))
    module = inspect.getmodule(code)
    if module is not None:
        scopes.append(vars(module))
    scopes.append(vars(builtins))  # print(state.x) hands a value to a builtin: it writes no key
    for scope in scopes:
        if func.id in scope:
            return scope[func.id]
    return None


def _follow(
    reading: Reading, owner: Any, make: Callable[[], StateReader], seen: tuple[Any, ...], instance: Any = None
) -> None:
    """Fold into `reading` what the helpers it passes the state to do, at each call's place; unknown when unread."""
    for helper in reading.helpers:
        callee = _resolve(helper.func, owner, instance)
        if callee is not None and code_of(callee) is not None and _library(code_of(callee)):
            continue
        tree = tree_of(callee) if callee is not None else None
        if tree is None or not isinstance(tree, (*_FUNCTIONS, ast.Lambda)) or len(seen) >= _HELPER_DEPTH:
            reading.dynamic.append(helper.line)  # a helper we cannot read may write any key
            continue
        if code_of(callee) in seen:
            continue
        names = parameters(tree)
        if inspect.ismethod(callee) or (isinstance(helper.func, ast.Attribute) and names[:1] in (["self"], ["cls"])):
            names = names[1:]
        reader = make()
        for where, argument, key in helper.arguments:
            name = names[where] if isinstance(where, int) and where < len(names) else where
            if isinstance(name, str):
                reader.receives(name, argument, key)
        reader.visit(tree)
        inner = reader.found
        _follow(inner, callee, make, (*seen, code_of(callee)))
        _fold(reading, inner, helper)


def _fold(reading: Reading, inner: Reading, helper: Helper) -> None:
    line, column = helper.at
    guarded = inner.guarded_writes()
    for key in inner.reads():
        reading.accesses.append(Access(key, "read", (line, column), line, helper.guarded))
    for key, kind in inner.writes().items():
        first = min(a.at for a in inner.accesses if a.name == key and a.kind != "read")
        if kind == "update-across-await" or any(wait < first for wait in inner.awaits):
            reading.awaits.append((line, column + 1))
        written = "mutate" if kind == "mutate" else "set"
        reading.accesses.append(Access(key, written, (line, column + 2), line, helper.guarded or key in guarded))
    reading.dynamic += [helper.line for _ in inner.dynamic[:1]]


def read(obj: Any, make: Callable[[], StateReader], instance: Any = None) -> list[Reading]:
    """What `obj`'s source does, one Reading per function: a def or lambda alone, a class method by method.

    Per function, because the order of a read, an await and a write means something only inside one call.
    A helper the function hands the state (or its context) to is read too, its writes placed at the call;
    one whose source cannot be read makes the function's writes unknown (`dynamic`), never nothing. `instance`
    (the object whose class `obj` is) resolves `self.helper(...)`.
    """
    tree = tree_of(obj)
    if tree is None:
        return [Reading(readable=False)]
    bodies: list[ast.AST] = [tree]
    if isinstance(tree, ast.ClassDef):  # its methods; __init__ builds the object, it is not part of a run
        bodies = [n for n in tree.body if isinstance(n, _FUNCTIONS) and n.name != "__init__"]
    file = tree_file(obj)
    found = []
    for body in bodies:
        reader = make()
        reader.visit(body)
        reader.found.file = file
        _follow(reader.found, obj, make, (code_of(obj),), instance)
        found.append(reader.found)
    return found


def writes_of(readings: Iterable[Reading]) -> dict[str, str]:
    """{key: the strongest way any of these functions writes it}."""
    merged: dict[str, str] = {}
    for reading in readings:
        for name, kind in reading.writes().items():
            merged[name] = strongest([merged.get(name, kind), kind])
    return merged


def parameters(tree: ast.AST | None) -> list[str]:
    """The positional parameter names of a def or lambda (`self` included), else []."""
    if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return [a.arg for a in tree.args.posonlyargs + tree.args.args]
    return []


def returns_second_parameter(obj: Any) -> bool | None:
    """Whether a `(message, targets)` selection function returns all of `targets` unchanged; None when unreadable.

    `lambda message, targets: targets`, `list(targets)`, `targets[:]` and `[*targets]` all select every target.
    """
    tree = tree_of(obj)
    names = parameters(tree)
    if tree is None or len(names) < 2:
        return None
    targets = names[-1]
    if isinstance(tree, ast.Lambda):
        returned = [tree.body]
    else:
        returned = [n.value for n in ast.walk(tree) if isinstance(n, ast.Return) and n.value is not None]

    def whole(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id == targets
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple"):
            return len(node.args) == 1 and whole(node.args[0])
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            s = node.slice
            return s.lower is None and s.upper is None and s.step is None and whole(node.value)
        if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) == 1 and isinstance(node.elts[0], ast.Starred):
            return whole(node.elts[0].value)
        return False

    return bool(returned) and all(whole(node) for node in returned)


@dataclass(frozen=True)
class Conflict:
    """Steps that can run at the same time and write one key, and what that does."""

    name: str
    kind: str  # "read-modify-write" | "last-writer" | "shared-mutation"
    writers: tuple[tuple[str, str], ...]  # (step, how it writes) sorted


def conflicts(writes: dict[str, dict[str, str]], together: Iterable[tuple[str, str]]) -> list[Conflict]:
    """Keys written by steps that can run concurrently; `together` holds pairs (a step with itself: run twice at once).

    A pair where one side reads, awaits and writes the key is a read-modify-write; where one side sets it
    (without reading it first), the last writer's value is kept; where both change it in place
    (`.append`), every write is kept in the order the steps ran. Two reads-then-writes with no await
    between are serialised by the event loop: no conflict.
    """
    involved: dict[str, set[str]] = {}
    for a, b in together:
        for name in set(writes.get(a, {})) & set(writes.get(b, {})):
            pair = {writes[a][name], writes[b][name]}
            if pair <= {"update"} or pair == {"update", "mutate"}:
                continue
            involved.setdefault(name, set()).update((a, b))
    found = []
    for name, steps in sorted(involved.items()):
        kinds = {writes[s][name] for s in steps}
        if "update-across-await" in kinds:
            kind = "read-modify-write"
        elif "set" in kinds:
            kind = "last-writer"
        else:
            kind = "shared-mutation"
        found.append(Conflict(name, kind, tuple(sorted((s, writes[s][name]) for s in steps))))
    return found
