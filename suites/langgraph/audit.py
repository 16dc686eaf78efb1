"""What `fanin audit` sees in a LangGraph graph: merge policies, who writes what, which nodes meet, joins.

Runs in the environment that has the user's graph and LangGraph installed (never in the
harness). It reports facts and the probes each fact rests on; the harness adds what those
probes observed at the installed version. The technique:

1. The graph as LangGraph draws it: static edges, conditional edges (their path_map or declared
   ends, else the strings and `Send(...)` calls the router returns, read from its source),
   `Command` routing (the node's declared ends, `Command[Literal[...]]`, else the `goto=` values
   in its source), `Send` fan-out (several tasks of one node in one superstep when the router
   returns a list or comprehension of Sends), list-edge (waiting) joins and deferred nodes.
2. Which nodes can share a superstep: the sets of nodes that can be active together, explored
   superstep by superstep from START (a router that returns one target picks one; one that
   returns a list may pick several).
3. Which keys each node writes, read from its source with `ast` (dict literals, `Command(update=...)`,
   `dict(...)`); a subgraph node writes its output channels. What cannot be read is listed in
   `unknown_writers`, never guessed.
4. Findings only where the precondition of the probe they cite holds in this graph, each with
   its precondition and how it is known (`certainty`: observed, source, static, possible).
5. Given an input, a dry run (`stream_mode="debug"`) with chat models faked, recording which
   task wrote which key in which superstep; its failure is a fact (`dry_run.error`), never an
   all clear, and the static findings stay.
"""

# No `from __future__ import annotations`: audit_inspect loads this file without registering it in
# sys.modules, where dataclasses would look string annotations up.
import ast
import contextlib
import copy
import functools
import inspect as pyinspect
import itertools
import linecache
import os
import textwrap
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

START, END = "__start__", "__end__"
MAX_STEPS = 25  # supersteps explored; loops are cut here
# Builtins that read a dict and never change it: passing the node's update to one leaves its keys as read.
_READ_ONLY_BUILTINS = frozenset(
    {"len", "print", "repr", "str", "bool", "list", "tuple", "sorted", "dict", "isinstance", "id"}
)
MAX_STATES = 4000  # sets of active nodes explored
MAX_COMBOS = 64  # routing choices combined per superstep before falling back to "all or one"
FRAMEWORK_MODULES = ("langgraph.", "langchain.", "langchain_core.", "deepagents.")
APPENDING = "appending"


# ---------------------------------------------------------------------------------------------
# Reading node and router functions
# ---------------------------------------------------------------------------------------------


@dataclass
class Writes:
    keys: set[str] = field(default_factory=set)
    complete: bool = True  # every return was read
    full_state: bool = False  # returns the state it was given (`return state`, `{**state, ...}`)
    whole_lists: set[str] = field(default_factory=set)  # keys returned as `state["k"] + [...]` (the whole list)
    why: str = ""  # when not complete: what could not be read

    def merge(self, other: "Writes") -> None:
        self.keys |= other.keys
        self.whole_lists |= other.whole_lists
        self.full_state = self.full_state or other.full_state
        if not other.complete:
            self.complete = False
            self.why = self.why or other.why


@dataclass
class Routes:
    targets: set[str] = field(default_factory=set)
    sends: dict[str, bool] = field(default_factory=dict)  # Send target -> several tasks at once
    multi: bool = False  # may select several targets at once (returns a list)
    complete: bool = True
    stays: bool = False  # some return routes nowhere (a plain dict, None): the static edges alone decide

    def merge(self, other: "Routes") -> None:
        self.targets |= other.targets
        for target, many in other.sends.items():
            self.sends[target] = self.sends.get(target, False) or many
        self.multi = self.multi or other.multi
        self.complete = self.complete and other.complete
        self.stays = self.stays or other.stays


def unwrap(obj: Any) -> Any | None:
    """The Python function behind a node or router (RunnableCallable, partial, bound method, callable object)."""
    for _ in range(8):
        if obj is None:
            return None
        if isinstance(obj, functools.partial):
            obj = obj.func
            continue
        if pyinspect.ismethod(obj):
            obj = obj.__func__
            continue
        if pyinspect.isfunction(obj):
            return pyinspect.unwrap(obj)
        func = getattr(obj, "func", None) or getattr(obj, "afunc", None)
        if func is not None and func is not obj:
            obj = func
            continue
        call = getattr(type(obj), "__call__", None)
        if call is not None and pyinspect.isfunction(call) and type(obj).__module__ not in ("builtins",):
            return call
        return None
    return None


@functools.lru_cache(maxsize=256)
def _module_tree(filename: str) -> ast.Module | None:
    lines = linecache.getlines(filename)
    if not lines:
        return None
    try:
        return ast.parse("".join(lines))
    except SyntaxError:
        return None


@functools.lru_cache(maxsize=256)
def _definitions(filename: str) -> dict[int, list[Any]] | None:
    """Every `def` (by its line and its decorators' lines) and `lambda` (by its line) of a module, walked once.

    A graph of N nodes in one file asks for N functions: one walk of the file, not N (the audit of a
    generated 200-node graph spent most of its time walking the same tree again).
    """
    tree = _module_tree(filename)
    if tree is None:
        return None
    index: dict[int, list[Any]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for line in {node.lineno, *(d.lineno for d in node.decorator_list)}:
                index.setdefault(line, []).append(node)
        elif isinstance(node, ast.Lambda):
            index.setdefault(node.lineno, []).append(node)
    return index


def function_ast(fn: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None:
    """The `def` or `lambda` node of `fn` in its module's source; None when it cannot be found unambiguously."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    try:
        filename = pyinspect.getsourcefile(fn) or code.co_filename
    except TypeError:
        return None
    index = _definitions(filename) if filename else None
    if index is None:
        return None
    first = code.co_firstlineno
    found: list[Any] = [
        node
        for node in index.get(first, ())
        if (isinstance(node, ast.Lambda) and code.co_name == "<lambda>")
        or (not isinstance(node, ast.Lambda) and node.name == code.co_name)
    ]
    if len(found) > 1 and hasattr(code, "co_positions"):
        columns = [p[2] for p in code.co_positions() if p[2] is not None and p[0] == first]
        if columns:
            found = [
                n
                for n in found
                if isinstance(n, ast.Lambda) and n.body.col_offset <= min(columns) <= (n.body.end_col_offset or 0)
            ]
            found = [n for n in found if not any(o is not n and o.body.col_offset > n.body.col_offset for o in found)][
                :1
            ] or found
    return found[0] if len(found) == 1 else None


def _own_nodes(fn: ast.AST) -> list[ast.AST]:
    """The nodes of a function body, not descending into nested functions, lambdas or classes."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(ast.iter_child_nodes(fn)) if not isinstance(fn, ast.Lambda) else [fn.body]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


class _Reader:
    def __init__(self, fn: Any, tree: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, schemas: set[str]) -> None:
        self.fn, self.tree, self.schemas = fn, tree, schemas
        self.nodes = _own_nodes(tree)
        args = tree.args.posonlyargs + tree.args.args
        self.state = args[0].arg if args else None
        if self.state in ("self", "cls") and len(args) > 1:
            self.state = args[1].arg
        names = getattr(fn.__code__, "co_freevars", ())
        cells = getattr(fn, "__closure__", None) or ()
        self.closure: dict[str, Any] = {}
        for name, cell in zip(names, cells):
            try:
                self.closure[name] = cell.cell_contents
            except ValueError:
                continue

    # -- values -------------------------------------------------------------------------------
    def constant(self, expr: ast.AST) -> Any:
        """A string (or list of strings) an expression stands for, or None."""
        if isinstance(expr, ast.Constant):
            return expr.value
        if isinstance(expr, ast.Name):
            if expr.id in self.closure:
                return self.closure[expr.id]
            if expr.id in self.fn.__globals__:
                return self.fn.__globals__[expr.id]
            if expr.id == "END":
                return END
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            owner = self.constant(expr.value)
            value = getattr(owner, expr.attr, None)
            return value if isinstance(value, str) else None
        return None

    def key(self, expr: ast.AST) -> str | None:
        value = self.constant(expr)
        return value if isinstance(value, str) else None

    def assignments(self, name: str) -> list[ast.AST]:
        out: list[ast.AST] = []
        for node in self.nodes:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                out.append(node.value)
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == name
                and node.value
            ):
                out.append(node.value)
        return out

    def _call_name(self, call: ast.Call) -> str:
        func = call.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""

    def _kw(self, call: ast.Call, name: str) -> ast.AST | None:
        return next((k.value for k in call.keywords if k.arg == name), None)

    def _to_parent(self, call: ast.Call) -> bool:
        graph = self._kw(call, "graph")
        return graph is not None and "PARENT" in ast.unparse(graph)

    # -- writes -------------------------------------------------------------------------------
    def writes(self, expr: ast.AST | None, depth: int = 0) -> Writes:
        if expr is None or depth > 6:
            return Writes() if expr is None else Writes(complete=False, why="too deep")
        if isinstance(expr, ast.Constant) and expr.value is None:
            return Writes()
        if isinstance(expr, ast.Dict):
            out = Writes()
            for k, v in zip(expr.keys, expr.values):
                if k is None:
                    if isinstance(v, ast.Name) and v.id == self.state:
                        out.full_state = True
                    else:
                        out.merge(self.writes(v, depth + 1))
                    continue
                key = self.key(k)
                if key is None:
                    out.merge(Writes(complete=False, why=f"a key computed at run time ({ast.unparse(k)[:40]})"))
                    continue
                out.keys.add(key)
                if self._whole_list(v, key):
                    out.whole_lists.add(key)
            return out
        if isinstance(expr, ast.DictComp):
            return Writes(complete=False, why="keys from a comprehension")
        if isinstance(expr, ast.IfExp):
            out = self.writes(expr.body, depth + 1)
            out.merge(self.writes(expr.orelse, depth + 1))
            return out
        if isinstance(expr, ast.BoolOp):
            out = Writes()
            for value in expr.values:
                out.merge(self.writes(value, depth + 1))
            return out
        if isinstance(expr, ast.Await):
            return self.writes(expr.value, depth + 1)
        if isinstance(expr, (ast.List, ast.Tuple)):  # a list of Commands (or updates)
            out = Writes()
            for element in expr.elts:
                out.merge(self.writes(element, depth + 1))
            return out
        if isinstance(expr, ast.Call):
            name = self._call_name(expr)
            if name == "Command":
                if self._to_parent(expr):
                    return Writes()  # updates the parent graph, not this one
                return self.writes(self._kw(expr, "update"), depth + 1)
            if name == "dict" or name in self.schemas:
                out = Writes()
                for arg in expr.args[:1]:
                    out.merge(self.writes(arg, depth + 1))
                for kw in expr.keywords:
                    if kw.arg is None:
                        out.merge(self.writes(kw.value, depth + 1))
                    else:
                        out.keys.add(kw.arg)
                return out
            return Writes(complete=False, why=f"returns what {ast.unparse(expr.func)[:40]}() returns")
        if isinstance(expr, ast.Name):
            if expr.id == self.state:
                return Writes(full_state=True)
            values = self.assignments(expr.id)
            if not values:
                return Writes(complete=False, why=f"returns {expr.id}, not assigned here")
            out = Writes()
            for assigned in values:
                out.merge(self.writes(assigned, depth + 1))
            out.merge(self._built_up(expr.id))
            return out
        return Writes(complete=False, why=f"returns {ast.unparse(expr)[:40]}")

    def _whole_list(self, value: ast.AST, key: str) -> bool:
        """`state["k"] + [...]` (or `state.k + ...`): the whole list returned, not a delta."""
        if not isinstance(value, ast.BinOp) or not isinstance(value.op, ast.Add):
            return False
        left = value.left
        if isinstance(left, ast.Subscript) and isinstance(left.value, ast.Name) and left.value.id == self.state:
            return self.key(left.slice) == key
        if isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name) and left.value.id == self.state:
            return left.attr == key
        return False

    def _built_up(self, name: str) -> Writes:
        out = Writes()
        for node in self.nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == name
                    ):
                        key = self.key(target.slice)
                        if key is None:
                            out.merge(Writes(complete=False, why=f"{name}[...] with a key computed at run time"))
                        else:
                            out.keys.add(key)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update":
                if isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                    for arg in node.args:
                        out.merge(self.writes(arg))
                    out.keys |= {kw.arg for kw in node.keywords if kw.arg}
            if isinstance(node, ast.Call) and self._hands_on(node, name):
                # fill(update): the helper may set any key of the update; unknown, never "nothing"
                out.merge(
                    Writes(
                        complete=False, why=f"{name} is passed to {ast.unparse(node.func)[:40]}(), which may fill it"
                    )
                )
        return out

    def _hands_on(self, call: ast.Call, name: str) -> bool:
        """Does `call` pass the dict `name` to a function that could change it (not a read-only builtin)?"""
        if isinstance(call.func, ast.Name) and call.func.id in _READ_ONLY_BUILTINS:
            return False
        given = list(call.args) + [k.value for k in call.keywords]
        return any(isinstance(a, ast.Name) and a.id == name for a in given)

    # -- routes -------------------------------------------------------------------------------
    def routes(self, expr: ast.AST | None, depth: int = 0, many: bool = False) -> Routes:
        if expr is None:
            return Routes(stays=True)
        if depth > 6:
            return Routes(complete=False)
        value = self.constant(expr)
        if isinstance(value, str):
            return Routes(targets={value})
        if (
            isinstance(value, (list, tuple))
            and all(isinstance(v, str) for v in value)
            and not isinstance(expr, ast.Constant)
        ):
            return Routes(targets=set(value), multi=len(value) > 1)
        if isinstance(expr, ast.Constant) and expr.value is None:
            return Routes(stays=True)
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            out = Routes()
            counts: dict[str, int] = {}
            for element in expr.elts:
                part = self.routes(element, depth + 1, many)
                for target in part.sends:
                    counts[target] = counts.get(target, 0) + 1
                out.merge(part)
            for target, count in counts.items():
                if count > 1:
                    out.sends[target] = True
            out.multi = out.multi or len(out.targets) > 1 or not out.complete  # several targets at once
            return out
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            out = self.routes(expr.elt, depth + 1, True)
            out.multi = len(out.targets) > 1 or not out.sends  # Sends to one node: several tasks, one target
            return out
        if isinstance(expr, ast.IfExp):
            out = self.routes(expr.body, depth + 1, many)
            out.merge(self.routes(expr.orelse, depth + 1, many))
            return out
        if isinstance(expr, ast.BoolOp):
            out = Routes()
            for v in expr.values:
                out.merge(self.routes(v, depth + 1, many))
            return out
        if isinstance(expr, ast.Call):
            name = self._call_name(expr)
            if name == "Send" and expr.args:
                sent = self.key(expr.args[0])
                if sent is None:
                    return Routes(complete=False)
                return Routes(sends={sent: many}, targets={sent})
            if name == "Command":
                if self._to_parent(expr):
                    return Routes(stays=True)
                goto = self._kw(expr, "goto")
                return self.routes(goto, depth + 1, many) if goto is not None else Routes(stays=True)
            if name in ("dict",) or name in self.schemas:
                return Routes(stays=True)
            return Routes(complete=False)
        if isinstance(expr, ast.Dict):
            return Routes(stays=True)  # a node returning an update routes by its edges alone
        if isinstance(expr, ast.Name):
            values = self.assignments(expr.id)
            if not values:
                return Routes(complete=False)
            out = Routes()
            for value in values:
                out.merge(self.routes(value, depth + 1, many))
            for node in self.nodes:  # sends.append(Send(...)) in a loop: several tasks
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("append", "extend")
                ):
                    if isinstance(node.func.value, ast.Name) and node.func.value.id == expr.id:
                        for arg in node.args:
                            part = self.routes(arg, depth + 1, True)
                            out.merge(part)
                        out.multi = out.multi or len(out.targets) > 1 or not out.sends
            return out
        return Routes(complete=False)

    def returns(self) -> list[ast.AST | None]:
        if isinstance(self.tree, ast.Lambda):
            return [self.tree.body]
        values: list[ast.AST | None] = [n.value for n in self.nodes if isinstance(n, ast.Return)]
        return values or [None]


def reader(obj: Any, schemas: set[str]) -> _Reader | None:
    fn = unwrap(obj)
    if fn is None:
        return None
    tree = function_ast(fn)
    if tree is None:
        try:
            source = textwrap.dedent(pyinspect.getsource(fn))
            parsed = ast.parse(source)
            tree = next((n for n in parsed.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        except (OSError, TypeError, SyntaxError):
            tree = None
    if tree is None:
        return None
    return _Reader(fn, tree, schemas)


def node_writes(obj: Any, schemas: set[str]) -> Writes | None:
    """The keys a node function writes, read from its returns; None when its source cannot be read."""
    read = reader(obj, schemas)
    if read is None:
        return None
    out = Writes()
    for value in read.returns():
        out.merge(read.writes(value))
    return out


def node_routes(obj: Any, schemas: set[str]) -> Routes | None:
    """Where a router (or a node returning Command) sends control, read from its returns."""
    read = reader(obj, schemas)
    if read is None:
        return None
    out = Routes()
    for value in read.returns():
        out.merge(read.routes(value))
    return out


def module_of(obj: Any) -> str:
    fn = unwrap(obj)
    return getattr(fn, "__module__", "") or ""


# ---------------------------------------------------------------------------------------------
# The graph: channels, nodes, edges as LangGraph draws them
# ---------------------------------------------------------------------------------------------


def _builder(target: Any) -> Any | None:
    builder = getattr(target, "builder", target)
    needed = ("channels", "nodes", "edges", "branches")
    return (
        builder if all(hasattr(builder, name) for name in needed) and type(builder).__name__ == "StateGraph" else None
    )


def _samples(kind: str) -> list[Any] | None:
    samples: dict[str, list[Any]] = {
        "list": [["x"], ["y"], ["z"]],
        "dict": [{"x": 1}, {"y": 2}, {"x": 3}],
        "int": [1, 2, 3],
        "float": [1.0, 2.0, 3.0],
        "str": ["x", "y", "z"],
        "set": [{"x"}, {"y"}, {"z"}],
    }
    return samples.get(kind)


def _by_id(name: str) -> bool:
    """Reducers that merge messages by id (add_messages and its wrappers): order carries no meaning there."""
    return "add_messages" in name or "messages" in name.rsplit(".", 1)[-1]


def _algebra(operator: Any, typ: Any) -> dict[str, Any]:
    """Commutative / associative / duplicating on sample values of its type; 'unknown' when it cannot be tried."""
    kind = getattr(typ, "__origin__", typ)
    name = getattr(kind, "__name__", str(kind))
    samples = _samples(name)
    if samples is None:
        return {"commutative": "unknown", "associative": "unknown", "tried_on": f"no sample values for {name}"}
    x, y, z = (copy.deepcopy(s) for s in samples)
    try:
        commutative = operator(copy.deepcopy(x), copy.deepcopy(y)) == operator(copy.deepcopy(y), copy.deepcopy(x))
        associative = operator(operator(copy.deepcopy(x), copy.deepcopy(y)), copy.deepcopy(z)) == operator(
            copy.deepcopy(x), operator(copy.deepcopy(y), copy.deepcopy(z))
        )
        duplicating = (
            operator(copy.deepcopy(x), copy.deepcopy(x)) != x
        )  # f(a, a) != a: a value folded in twice shows twice
    except Exception as exc:  # noqa: BLE001 - the reducer refuses sample values: say so
        return {
            "commutative": "unknown",
            "associative": "unknown",
            "tried_on": f"{name} samples raised {type(exc).__name__}",
        }
    return {
        "commutative": commutative,
        "associative": associative,
        "duplicating": duplicating,
        "tried_on": f"{name} samples",
    }


def _channels(builder: Any) -> list[dict[str, Any]]:
    rows = []
    for key, channel in sorted(builder.channels.items()):
        kind = type(channel).__name__
        row: dict[str, Any] = {"key": key, "channel": kind}
        if kind == "LastValue":
            row["policy"] = "LastValue (one write per superstep; no reducer)"
        elif kind in ("BinaryOperatorAggregate", "DeltaChannel"):
            operator = getattr(channel, "operator", None) or getattr(channel, "reducer", None)
            name = getattr(operator, "__qualname__", getattr(operator, "__name__", repr(operator)))
            module = getattr(operator, "__module__", "") or ""
            row["policy"] = f"reducer {module + '.' if module and module != 'builtins' else ''}{name}"
            if _by_id(name):
                row.update({"commutative": "unknown", "associative": "unknown", "tried_on": "merges messages by id"})
                row["by_id"] = True
            elif kind == "DeltaChannel":
                row.update(
                    {"commutative": "unknown", "associative": "unknown", "tried_on": "a batch reducer (DeltaChannel)"}
                )
            else:
                row.update(_algebra(operator, getattr(channel, "typ", None)))
        elif kind in ("Topic", "EphemeralValue", "NamedBarrierValue", "AnyValue", "UntrackedValue"):
            row["policy"] = kind
        else:
            row["policy"] = f"{kind} (not classified)"
        rows.append(row)
    return rows


def _schema_keys(builder: Any, which: str) -> set[str]:
    """The keys of a builder's input or output schema (all its channels when it declares none)."""
    schema = getattr(builder, f"{which}_schema", None) or getattr(builder, which, None)
    schemas = getattr(builder, "schemas", {}) or {}
    keys = schemas.get(schema) if schema is not None else None
    return set(keys) if keys else set(builder.channels)


def _schema_names(builder: Any) -> set[str]:
    names = {getattr(s, "__name__", "") for s in (getattr(builder, "schemas", {}) or {})}
    return {n for n in names if n}


def _subgraph(runnable: Any) -> Any | None:
    """The compiled subgraph a node runs directly, or None."""
    return runnable if _builder(runnable) is not None and hasattr(runnable, "stream") else None


def _subgraph_io(sub: Any) -> tuple[set[str], set[str]]:
    """(input keys, output keys) of a compiled subgraph."""
    inner: Any = _builder(sub)  # a subgraph's builder: not None
    outputs = getattr(sub, "output_channels", None)
    if isinstance(outputs, str):
        outputs = [outputs] if outputs in inner.channels else None
    out = set(outputs) if outputs else _schema_keys(inner, "output")
    return _schema_keys(inner, "input"), {k for k in out if not k.startswith("__")}


@dataclass
class Node:
    name: str
    writes: set[str] = field(default_factory=set)
    how: str = "unknown"  # source | subgraph | framework | unknown
    complete: bool = False
    why: str = ""
    full_state: bool = False
    whole_lists: set[str] = field(default_factory=set)
    subgraph_inputs: set[str] | None = None  # the parent keys a subgraph node takes in
    command: Routes | None = None  # where its Command(goto=...) goes
    defer: bool = False


@dataclass
class Graph:
    builder: Any
    nodes: dict[str, Node]
    static: dict[str, set[str]]  # source -> targets of add_edge
    choices: dict[str, list[tuple[str, Routes]]]  # source -> [(what, routes)] one routing decision each
    waiting: list[tuple[tuple[str, ...], str]]
    unknown_routes: list[str]


def _tool_writes(runnable: Any, schemas: set[str]) -> tuple[set[str], bool, str]:
    """A ToolNode writes its messages key and what its tools' Command(update=...) returns say."""
    keys = {getattr(runnable, "messages_key", "messages") or "messages"}
    complete, why = True, ""
    for tool in (getattr(runnable, "tools_by_name", None) or {}).values():
        fn = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
        if fn is None or module_of(fn).startswith(FRAMEWORK_MODULES):
            continue  # framework tools (deepagents, langchain middleware) are the framework's own inspectors' matter
        read = reader(fn, schemas)
        if read is None:
            continue
        for value in read.returns():
            if isinstance(value, ast.Call) and read._call_name(value) == "Command":
                got = read.writes(value)
                keys |= got.keys
                if not got.complete:
                    complete, why = False, f"tool {getattr(tool, 'name', '?')}: {got.why}"
    return keys, complete, why


def _read_node(name: str, spec: Any, schemas: set[str], channels: set[str]) -> Node:
    runnable = getattr(spec, "runnable", None)
    node = Node(name, defer=bool(getattr(spec, "defer", False)))
    sub = _subgraph(runnable)
    if sub is not None:
        inputs, outputs = _subgraph_io(sub)
        node.writes, node.how, node.complete = outputs & channels, "subgraph", True
        node.subgraph_inputs = inputs & channels
        return node
    if type(runnable).__name__ == "ToolNode":
        node.writes, node.complete, node.why = _tool_writes(runnable, schemas)
        node.how = "source" if node.complete else "unknown"
        node.writes &= channels
        return node
    got = node_writes(runnable, schemas)
    node.command = node_routes(runnable, schemas)
    if got is None:
        framework = module_of(runnable).startswith(FRAMEWORK_MODULES)
        node.how = "framework" if framework else "unknown"
        node.complete = framework
        node.why = "its source cannot be read" if not framework else "a framework node"
        return node
    node.writes = (got.keys | (channels if got.full_state else set())) & channels
    node.full_state, node.whole_lists = got.full_state, got.whole_lists
    node.complete, node.why = got.complete, got.why
    node.how = "source" if got.complete else "unknown"
    if not got.complete and module_of(runnable).startswith(FRAMEWORK_MODULES):
        node.how, node.complete = "framework", True
    return node


def _graph(builder: Any) -> Graph:
    channels = {k for k in builder.channels if not k.startswith("__")}
    schemas = _schema_names(builder)
    nodes = {name: _read_node(name, spec, schemas, channels) for name, spec in builder.nodes.items()}
    static: dict[str, set[str]] = defaultdict(set)
    for start, end in builder.edges:
        static[start].add(end)
    choices: dict[str, list[tuple[str, Routes]]] = defaultdict(list)
    unknown: list[str] = []
    for source, branches in builder.branches.items():
        for name, branch in branches.items():
            read = node_routes(getattr(branch, "path", None), schemas) or Routes(complete=False)
            ends = getattr(branch, "ends", None)
            routes = Routes(sends=dict(read.sends), multi=read.multi)
            if ends:
                routes.targets = set(ends.values())
            elif read.complete and (read.targets or read.sends):
                routes.targets = set(read.targets)
            else:
                unknown.append(f"{source}: conditional edge {name!r} declares no targets and its router cannot be read")
                continue
            choices[source].append((f"conditional edge {name!r}", routes))
    for name, spec in builder.nodes.items():
        ends = getattr(spec, "ends", None)
        command = nodes[name].command
        if ends:
            targets = set(ends.values()) if isinstance(ends, dict) else set(ends)
            routes = Routes(targets=targets, stays=True)
            if command is not None:
                routes.sends, routes.multi = dict(command.sends), command.multi
                routes.stays = command.stays or not command.complete
            choices[name].append(("Command", routes))
        elif command is not None and (command.targets or command.sends):
            if not command.complete:
                unknown.append(
                    f"{name}: returns Command(goto=...) it does not declare (Command[Literal[...]] or destinations=)"
                )
            routes = Routes(targets=set(command.targets), sends=dict(command.sends), multi=command.multi, stays=True)
            choices[name].append(("Command", routes))
    waiting = sorted(
        ((tuple(sorted(s)), t) for s, t in getattr(builder, "waiting_edges", set())), key=lambda e: (e[1], e[0])
    )
    return Graph(builder, nodes, static, choices, waiting, unknown)


def _options(routes: Routes) -> list[frozenset[tuple[str, bool]]]:
    """The sets of (target, several tasks) one routing decision can start."""
    targets = sorted(t for t in routes.targets if t != END)
    picks = [frozenset({(t, routes.sends.get(t, False))}) for t in targets]
    everything = frozenset((t, routes.sends.get(t, False)) for t in targets)
    out = list(picks)
    if routes.multi and len(targets) > 1:
        out.append(everything)
        if len(targets) <= 4:
            out += [frozenset(c) for r in range(2, len(targets)) for c in itertools.combinations(sorted(everything), r)]
    if routes.stays or END in routes.targets or not out:
        out.append(frozenset())
    return list(dict.fromkeys(out))


@dataclass
class Walk:
    steps: dict[str, set[int]]
    together: set[frozenset[str]]  # sets of nodes active in one superstep (size >= 2)
    several: dict[str, set[str]]  # node -> routers whose Send starts several of its tasks at once
    starved: dict[int, set[frozenset[str]]]  # waiting edge -> the partial sets a run can end with
    truncated: bool


def _walk(g: Graph) -> Walk:
    """Every set of nodes that can be active in one superstep, superstep by superstep from START."""
    steps: dict[str, set[int]] = defaultdict(set)
    together: set[frozenset[str]] = set()
    several: dict[str, set[str]] = defaultdict(set)
    starved: dict[int, set[frozenset[str]]] = defaultdict(set)
    Active = frozenset[tuple[str, bool]]
    start: tuple[Active, frozenset[tuple[int, str]], frozenset[str]] = (
        frozenset({(START, False)}),
        frozenset(),
        frozenset(),
    )
    frontier = [(start, 0)]
    seen = {start}
    truncated = False
    while frontier:
        (active, barrier, pending), step = frontier.pop(0)
        names = {n for n, _ in active}
        if step > 0:
            for n in names:
                steps[n].add(step)
            if len(names) > 1:
                together.add(frozenset(names))
        per_node: list[list[tuple[Active, str]]] = []
        arrived: set[tuple[int, str]] = set()
        for name in sorted(names):
            fixed = frozenset((t, False) for t in g.static.get(name, ()) if t != END)
            groups = [[(o, what) for o in _options(r)] for what, r in g.choices.get(name, [])]
            combos: list[tuple[Active, str]] = []
            for pick in itertools.product(*groups) if groups else [()]:
                combos.append((fixed.union(*(o for o, _ in pick)) if pick else fixed, name))
                if len(combos) > MAX_COMBOS:
                    truncated = True
                    break
            per_node.append(combos)
            arrived |= {(i, name) for i, (sources, _) in enumerate(g.waiting) if name in sources}
        count = 0
        for pick in itertools.product(*per_node):
            count += 1
            if count > MAX_COMBOS:
                truncated = True
                break
            nxt: dict[str, bool] = {}
            for targets, router in pick:
                for target, many in targets:
                    nxt[target] = nxt.get(target, False) or many
                    if many:
                        several[target].add(router)
            progress = set(barrier | arrived)
            for i, (sources, target) in enumerate(g.waiting):
                if all((i, s) in progress for s in sources):
                    nxt[target] = nxt.get(target, False)
                    progress -= {(i, s) for s in sources}
            waiting_deferred = set(pending)
            for name in [n for n in nxt if g.nodes.get(n) and g.nodes[n].defer]:
                if any(not (g.nodes.get(m) and g.nodes[m].defer) for m in nxt):
                    waiting_deferred.add(name)
                    del nxt[name]
            if not nxt and waiting_deferred:
                nxt = {n: False for n in waiting_deferred}
                waiting_deferred = set()
            if not nxt:
                for i, (sources, _) in enumerate(g.waiting):
                    partial = frozenset(s for s in sources if (i, s) in progress)
                    if partial:
                        starved[i].add(partial)
                continue
            state = (frozenset(nxt.items()), frozenset(progress), frozenset(waiting_deferred))
            if state in seen or step + 1 > MAX_STEPS:
                truncated = truncated or step + 1 > MAX_STEPS
                continue
            if len(seen) > MAX_STATES:
                truncated = True
                continue
            seen.add(state)
            frontier.append((state, step + 1))
    return Walk(steps, together, several, starved, truncated)


def _successors(g: Graph) -> dict[str, set[str]]:
    nexts: dict[str, set[str]] = defaultdict(set)
    for source, targets in g.static.items():
        nexts[source] |= targets
    for source, decisions in g.choices.items():
        for _, routes in decisions:
            nexts[source] |= routes.targets | set(routes.sends)
    return nexts


def _reachable(g: Graph) -> set[str]:
    nexts = _successors(g)
    seen, todo = {START}, [START]
    while todo:
        node = todo.pop()
        targets = set(nexts.get(node, ()))
        targets |= {t for sources, t in g.waiting if set(sources) <= seen}
        for target in targets - seen:
            seen.add(target)
            todo.append(target)
    return seen


def _reaches_avoiding(g: Graph, start: str, avoid: str) -> set[str]:
    nexts = _successors(g)
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        for target in nexts.get(node, ()):
            if target not in seen and target != avoid:
                seen.add(target)
                todo.append(target)
    return seen


# ---------------------------------------------------------------------------------------------
# The dry run
# ---------------------------------------------------------------------------------------------

FAKE_REPLY = "fanin audit dry run: a fixed reply from a fake chat model"


@contextlib.contextmanager
def _fake_chat_models() -> Iterator[bool]:
    """Every langchain_core chat model answers with one fixed AIMessage while the dry run lasts."""
    try:
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.messages import AIMessage, AIMessageChunk
        from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    except ImportError:
        yield False
        return

    def result(*args: Any, **kwargs: Any) -> Any:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=FAKE_REPLY))])

    async def aresult(*args: Any, **kwargs: Any) -> Any:
        return result()

    def stream(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        yield AIMessageChunk(content=FAKE_REPLY)

    async def astream(self: Any, *args: Any, **kwargs: Any) -> Any:
        yield AIMessageChunk(content=FAKE_REPLY)

    def chunks(*args: Any, **kwargs: Any) -> Iterator[Any]:
        yield ChatGenerationChunk(message=AIMessageChunk(content=FAKE_REPLY))

    async def achunks(*args: Any, **kwargs: Any) -> Any:
        yield ChatGenerationChunk(message=AIMessageChunk(content=FAKE_REPLY))

    patches = {
        "_generate_with_cache": result,
        "_agenerate_with_cache": aresult,
        "_generate": result,
        "_agenerate": aresult,
        "_stream": chunks,
        "_astream": achunks,
        "stream": stream,
        "astream": astream,
    }
    saved = {name: BaseChatModel.__dict__.get(name) for name in patches}
    # Subclasses override _generate/_stream: patch the base's entry points, which every subclass inherits.
    for name, fake in patches.items():
        setattr(BaseChatModel, name, fake)
    subclass_saved: list[tuple[type, str, Any]] = []
    todo = list(BaseChatModel.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        for name in (
            "_generate",
            "_agenerate",
            "_stream",
            "_astream",
            "_generate_with_cache",
            "_agenerate_with_cache",
            "stream",
            "astream",
        ):
            if name in cls.__dict__:
                subclass_saved.append((cls, name, cls.__dict__[name]))
                setattr(cls, name, patches[name])
    try:
        yield True
    finally:
        for cls, name, original in subclass_saved:
            setattr(cls, name, original)
        for name, original in saved.items():
            if original is None:
                delattr(BaseChatModel, name)
            else:
                setattr(BaseChatModel, name, original)


def _has_async_nodes(builder: Any) -> bool:
    """A node with only an async function (`async def`), which the synchronous `stream` cannot run."""
    for spec in (getattr(builder, "nodes", None) or {}).values():
        runnable = getattr(spec, "runnable", spec)
        func, afunc = getattr(runnable, "func", None), getattr(runnable, "afunc", None)
        if func is None and afunc is not None:
            return True
        if pyinspect.iscoroutinefunction(func) or pyinspect.iscoroutinefunction(unwrap(runnable)):
            return True
    return False


SYNC_REFUSED = "No synchronous function provided"  # LangGraph's error when `stream` meets an async-only node


def _dry_run(target: Any, builder: Any, given: Any) -> dict[str, Any]:
    """Which task wrote which key in which superstep, observed by running the graph once on `given`.

    A graph with async nodes runs with `astream` (in `asyncio.run`): up front when a node of the
    graph is async, else when the synchronous run says a node has no synchronous function (an
    async node inside a subgraph), starting over.
    """
    graph = target if hasattr(target, "stream") and not hasattr(target, "add_node") else builder.compile()
    writes: list[dict[str, Any]] = []
    error = None
    limit = int(os.environ.get("FANIN_AUDIT_RECURSION_LIMIT") or MAX_STEPS)  # --recursion-limit
    config = {"configurable": {"thread_id": "fanin-audit-dry-run"}, "recursion_limit": limit}

    def collect(event: Any) -> None:
        if not isinstance(event, dict) or event.get("type") != "task_result":
            return
        payload = event.get("payload", {})
        channels = [item[0] if isinstance(item, (list, tuple)) else item for item in payload.get("result", [])]
        keys = sorted({str(c) for c in channels if not str(c).startswith(("__", "branch:"))})
        writes.append({"step": event.get("step"), "node": payload.get("name"), "task": payload.get("id"), "keys": keys})

    async def run_async() -> None:
        async for event in graph.astream(
            given, {**config, "configurable": {"thread_id": "fanin-audit-dry-run-async"}}, stream_mode="debug"
        ):
            collect(event)

    mode = "async" if _has_async_nodes(builder) else "sync"
    with _fake_chat_models() as faked:
        try:
            if mode == "sync":
                try:
                    for event in graph.stream(given, config, stream_mode="debug"):
                        collect(event)
                except Exception as exc:  # noqa: BLE001
                    if SYNC_REFUSED not in str(exc):
                        raise
                    writes.clear()
                    mode = "async"
            if mode == "async":
                import asyncio

                asyncio.run(run_async())
        except Exception as exc:  # noqa: BLE001 - the dry run's failure is itself a fact (e.g. InvalidUpdateError)
            first = str(exc).splitlines()[0][:200] if str(exc) else "(no message)"
            frames = pyinspect.getinnerframes(exc.__traceback__, context=0) if exc.__traceback__ else []
            at = f" (raised at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].function})" if frames else ""
            error = f"{type(exc).__name__}: {first}{at}"
    by_step: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for write in writes:
        by_step[str(write["step"])].setdefault(write["node"], [])
        by_step[str(write["step"])][write["node"]] = sorted(
            set(by_step[str(write["step"])][write["node"]]) | set(write["keys"])
        )
    note = (
        "ran the graph once on the given input with a fake chat model: every langchain_core BaseChatModel answered one fixed AIMessage;"
        " tools and other calls ran as written"
        if faked
        else "ran the graph once on the given input; langchain_core is not installed, so nothing was faked"
    )
    if mode == "async":
        note += "; run with astream (the graph has async nodes)"
    return {
        "writes": writes,
        "by_step": dict(by_step),
        "error": error,
        "fake_model": faked,
        "note": note,
        "mode": mode,
    }


# ---------------------------------------------------------------------------------------------
# Findings
# ---------------------------------------------------------------------------------------------


def _pairs(walk: Walk) -> dict[frozenset[str], None]:
    out: dict[frozenset[str], None] = {}
    for group in sorted(walk.together, key=sorted):
        for a, b in itertools.combinations(sorted(group), 2):
            out[frozenset({a, b})] = None
    return out


def _names(nodes: list[str]) -> str:
    return " and ".join(", ".join(nodes[:-1]).split(", ") + [nodes[-1]]) if len(nodes) > 1 else nodes[0]


def _order_probes(via_send: bool) -> list[str]:
    return [
        "langgraph/reducers/commutativity",
        "langgraph/send/order" if via_send else "langgraph/fold-order/node-names",
    ]


class _Findings:
    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}

    def add(self, key: tuple[str, str], finding: dict[str, Any]) -> None:
        if key not in self.items:
            self.items[key] = finding
            return
        held = self.items[key]  # another pair writes the same key: name every writer once
        if key[0] in ("plain key written in parallel", "order-sensitive reducer"):
            writers = list(dict.fromkeys([*held["where"][:-1], *finding["where"][:-1]]))
            held["where"] = [*writers, held["where"][-1]]

    def observe(self, key: tuple[str, str], finding: dict[str, Any], how: str, certainty: str = "observed") -> None:
        """A dry-run (or recorded) observation: upgrades the static finding of the same pattern and key, or adds one."""
        if key in self.items:
            if self.items[key]["certainty"] != certainty:
                self.items[key]["certainty"] = certainty
                self.items[key]["how"] = f"{how}; {self.items[key].get('how', '')}".rstrip("; ")
        else:
            self.items[key] = {**finding, "certainty": certainty, "how": how}


def _writers_findings(g: Graph, walk: Walk, policies: dict[str, dict[str, Any]], out: _Findings) -> None:
    """Keys written by two nodes that can share a superstep, or by several Send tasks of one node."""
    nodes = g.nodes
    certainty = {"source": "source", "subgraph": "static", "framework": "static"}
    meets: list[tuple[list[str], bool]] = [(sorted(p), False) for p in _pairs(walk)]
    meets += [([n], True) for n in sorted(walk.several)]
    for group, via_send in meets:
        if any(n not in nodes for n in group):
            continue
        shared = set.intersection(*(nodes[n].writes for n in group)) if not via_send else set(nodes[group[0]].writes)
        how_of = [nodes[n].how for n in group]
        sure = "source" if all(h == "source" for h in how_of) else "static"
        sure = certainty.get(sure, sure)
        routers = sorted(walk.several.get(group[0], ())) if via_send else []
        meet = (
            f"the Send fan-out from {_names(routers)} starts several {group[0]} tasks in one superstep"
            if via_send
            else f"{_names(group)} can run in one superstep"
        )
        subgraphs = [n for n in group if nodes[n].how == "subgraph"]
        for key in sorted(shared):
            row = policies.get(key, {})
            channel = row.get("channel")
            where_nodes = [f"{group[0]} (Send tasks)"] if via_send else group
            how = f"read from the graph: {meet}; " + ", ".join(
                f"{n} writes {key!r} ({'its output schema' if nodes[n].how == 'subgraph' else 'its source'})"
                for n in group
            )
            if channel == "LastValue":
                if len(subgraphs) == len(group) and not via_send:
                    keys = sorted(k for k in shared if policies.get(k, {}).get("channel") == "LastValue")
                    out.add(
                        ("parallel subgraphs sharing state keys", " ".join(group)),
                        {
                            "pattern": "parallel subgraphs sharing state keys",
                            "where": [*group, "keys " + ", ".join(repr(k) for k in keys)],
                            "probes": ["langgraph/subgraph/shared-keys"],
                            "certainty": "static",
                            "how": how,
                            "precondition": f"{meet}, and both return the parent's plain keys {keys} (in their output schema), which have no reducer",
                        },
                    )
                    continue
                full = [n for n in group if nodes[n].full_state]
                probes = (
                    ["langgraph/send/reducer-required"]
                    if via_send
                    else ["langgraph/same-key/full-state-return"]
                    if full
                    else ["langgraph/same-key/no-reducer"]
                )
                out.add(
                    ("plain key written in parallel", key),
                    {
                        "pattern": "plain key written in parallel",
                        "where": [*where_nodes, f"key {key!r}"],
                        "probes": probes,
                        "certainty": sure,
                        "how": how,
                        "precondition": f"{meet}, and {'each writes' if via_send else 'both write'} the plain key {key!r} (LastValue, no reducer)"
                        + (
                            f"; {_names(full)} return{'s' if len(full) == 1 else ''} the whole state"
                            if full and not via_send
                            else ""
                        ),
                    },
                )
            elif channel == "BinaryOperatorAggregate":
                duplicated = [n for n in subgraphs if key in (nodes[n].subgraph_inputs or set())]
                if len(subgraphs) == len(group) and not via_send and row.get("duplicating") is True and duplicated:
                    out.add(
                        ("parallel subgraphs sharing state keys", key),
                        {
                            "pattern": "parallel subgraphs sharing state keys",
                            "where": [*group, f"key {key!r}"],
                            "probes": ["langgraph/subgraph/operator-add-duplication"],
                            "certainty": "static",
                            "how": how,
                            "precondition": f"{meet}; {_names(duplicated)} take{'s' if len(duplicated) == 1 else ''} {key!r} in and return"
                            f" it whole (output schema), and the parent folds it with {row['policy']}, which keeps a value folded in twice twice",
                        },
                    )
                whole = [n for n in group if key in nodes[n].whole_lists]
                if whole and row.get("duplicating") is True:
                    out.add(
                        ("parallel nodes return the whole list", key),
                        {
                            "pattern": "parallel nodes return the whole list",
                            "where": [*whole, f"key {key!r}"],
                            "probes": ["langgraph/reducers/full-state-not-delta"],
                            "certainty": sure,
                            "how": f"{how}; {_names(whole)} return state[{key!r}] + [...]",
                            "precondition": f"{meet}, and {_names(whole)} return the whole list {key!r} plus an item into {row['policy']}",
                        },
                    )
                if row.get("commutative") is False and not row.get("by_id"):
                    out.add(
                        ("order-sensitive reducer", key),
                        {
                            "pattern": "order-sensitive reducer",
                            "where": [*where_nodes, f"key {key!r} ({row['policy']})"],
                            "probes": _order_probes(via_send),
                            "certainty": sure,
                            "how": how,
                            "precondition": f"{meet}, and {'each writes' if via_send else 'both write'} {key!r}, whose reducer"
                            f" ({row['policy']}) gives a different result in the other order on sample values",
                        },
                    )


def _join_findings(g: Graph, walk: Walk, out: _Findings) -> None:
    depth = {n: min(s) for n, s in walk.steps.items() if s}
    incoming: dict[str, set[str]] = defaultdict(set)
    for source, targets in g.static.items():
        for target in targets:
            if source != START:
                incoming[target].add(source)
    for node, sources in sorted(incoming.items()):
        if len(sources) < 2 or node == END or g.nodes.get(node, Node(node)).defer:
            continue
        again = []
        for group in walk.together:
            if node not in group:
                continue
            for other in sorted(group - {node}):
                reach = _reaches_avoiding(g, other, node)
                hit = sorted(s for s in sources if s in reach)
                if hit:
                    again.append((other, hit))
        if again:
            other, hit = again[0]
            depths = {s: depth.get(s) for s in sorted(sources)}
            out.add(
                ("join by separate edges from paths of unequal depth", node),
                {
                    "pattern": "join by separate edges from paths of unequal depth",
                    "where": [node, f"sources {depths}"],
                    "probes": ["langgraph/join/separate-edges", "langgraph/join/unequal-depth-docs-example"],
                    "certainty": "static",
                    "how": f"read from the graph: {node} has separate edges from {sorted(sources)}; it can run in the superstep"
                    f" of {other}, which "
                    + ("is itself one of them" if other in hit else f"still leads to {_names(hit)}"),
                    "precondition": f"{node} joins by separate add_edge calls (not a list edge, not defer=True) branches that"
                    f" reach it in different supersteps, so it runs once per arriving branch",
                },
            )
    for i, partials in sorted(walk.starved.items()):
        waited, node = g.waiting[i]
        partial = min(partials, key=lambda p: (len(p), sorted(p)))
        missing = [s for s in waited if s not in partial]
        out.add(
            ("list-edge join fed by a router", node),
            {
                "pattern": "list-edge join fed by a router",
                "where": [
                    node,
                    f"waits for {list(waited)}; a route can run {_names(sorted(partial))} without {missing}",
                ],
                "probes": ["langgraph/join/unselected-branch", "langgraph/join/list-edge"],
                "certainty": "static",
                "how": "read from the graph: the routers' declared targets and the list edge",
                "precondition": f"add_edge({list(waited)}, {node!r}) waits for all of them, and a router can select"
                f" {sorted(partial)} without {missing}: the run then ends without {node}",
            },
        )


def _command_findings(g: Graph, out: _Findings) -> None:
    for name, decisions in sorted(g.choices.items()):
        commands = [r for what, r in decisions if what == "Command"]
        extra = sorted(t for t in g.static.get(name, ()) if t != END)
        if not commands or not extra:
            continue
        goto = sorted(commands[0].targets - {END})
        out.add(
            ("Command routing beside a static edge", name),
            {
                "pattern": "Command routing beside a static edge",
                "where": [name, f"Command(goto={goto}) and add_edge to {extra}"],
                "probes": ["langgraph/command/static-edge-still-runs"],
                "certainty": "static",
                "how": f"read from the graph: {name} routes with Command and also has static edges to {extra}",
                "precondition": f"{name} returns Command(goto=...) and has add_edge({name!r}, ...): the static edge runs as well",
            },
        )


def _structure_findings(g: Graph, out: _Findings) -> None:
    if g.unknown_routes:
        return  # a route nobody can read may reach any node: no node is provably dead
    reachable = _reachable(g)
    targets = set().union(*g.static.values()) if g.static else set()
    for decisions in g.choices.values():
        for _, routes in decisions:
            targets |= routes.targets | set(routes.sends)
    targets |= {t for _, t in g.waiting}
    for node in sorted(set(g.nodes) - reachable):
        if node in targets:
            out.add(
                ("dead join", node),
                {
                    "pattern": "dead join",
                    "where": [node],
                    "probes": [],
                    "certainty": "static",
                    "how": "read from the graph: edges, conditional edges, Command ends and Send targets; none from START reaches it",
                    "precondition": f"{node} has incoming edges, but no path from START leads to all of them",
                },
            )


def _dry_run_findings(
    run: dict[str, Any],
    g: Graph,
    policies: dict[str, dict[str, Any]],
    out: _Findings,
    seen: str = "dry run",
    certainty: str = "observed",
) -> None:
    """Findings from writes a run made: `seen` says which run (the dry run, or a test of the user's suite)."""
    observed: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for write in run.get("writes", []):
        for key in write["keys"]:
            observed[write["step"]][key].append(write["node"])  # one entry per task: Send workers share a name
    for step, keys in sorted(observed.items()):
        for key, writers in sorted(keys.items()):
            if len(writers) < 2:
                continue
            row = policies.get(key, {})
            via_send = len(set(writers)) < len(writers)
            names = sorted(set(writers))
            how = f"{seen}, superstep {step}: {len(writers)} tasks of {names} wrote {key!r}"
            meet = f"{len(writers)} tasks of {names} ran in one superstep of the {seen}"
            covered = next(
                (
                    k
                    for k, f in out.items.items()
                    if f["pattern"] == "parallel subgraphs sharing state keys"
                    and set(names) <= set(f["where"])
                    and repr(key) in f["where"][-1]
                ),
                None,
            )
            if covered is not None:
                out.observe(covered, {}, how, certainty)
            elif row.get("channel") == "LastValue":
                out.observe(
                    ("plain key written in parallel", key),
                    {
                        "pattern": "plain key written in parallel",
                        "where": [f"{len(writers)} tasks of {names}", f"key {key!r}"],
                        "probes": ["langgraph/send/reducer-required"]
                        if via_send
                        else ["langgraph/same-key/no-reducer"],
                        "precondition": f"{meet} and each wrote the plain key {key!r} (LastValue, no reducer)",
                    },
                    how,
                    certainty,
                )
            elif row.get("commutative") is False and not row.get("by_id"):
                out.observe(
                    ("order-sensitive reducer", key),
                    {
                        "pattern": "order-sensitive reducer",
                        "where": [*names, f"key {key!r} ({row['policy']})"],
                        "probes": _order_probes(via_send),
                        "precondition": f"{meet} and each wrote {key!r}, whose reducer ({row['policy']}) is not commutative on sample values",
                    },
                    how,
                    certainty,
                )
    error = run.get("error") or ""
    if "InvalidUpdateError" in error and not any(
        k[0] in ("plain key written in parallel", "parallel subgraphs sharing state keys") for k in out.items
    ):
        out.add(
            ("plain key written in parallel", "?"),
            {
                "pattern": "plain key written in parallel",
                "where": ["the dry run"],
                "probes": ["langgraph/same-key/no-reducer", "langgraph/send/reducer-required"],
                "certainty": "observed",
                "how": f"the dry run raised {error}",
                "precondition": "the dry run raised InvalidUpdateError: several tasks of one superstep wrote a key without a reducer",
            },
        )


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for a StateGraph or compiled graph; None when `target` is neither."""
    builder = _builder(target)
    if builder is None:
        return None
    channels = _channels(builder)
    policies = {row["key"]: row for row in channels}
    g = _graph(builder)
    walk = _walk(g)
    out = _Findings()
    _writers_findings(g, walk, policies, out)
    _join_findings(g, walk, out)
    _command_findings(g, out)
    _structure_findings(g, out)
    run = _dry_run(target, builder, given) if given is not None else None
    if run is not None:
        _dry_run_findings(run, g, policies, out)
    unknown = sorted(n for n, node in g.nodes.items() if not node.complete)
    findings = list(out.items.values())
    meeting = {n for group in walk.together for n in group} | set(walk.several)
    if unknown and not (run and not run.get("error")):
        for finding in findings:  # a finding among nodes whose writes are partly unknown may be incomplete, not wrong
            if finding["certainty"] == "source" and any(n in unknown for n in finding["where"]):
                finding["certainty"] = "possible"
    groups = sorted({tuple(sorted(nodes)) for nodes in walk.together})
    return {
        "framework": "langgraph",
        "kind": type(target).__name__,
        "channels": channels,
        "graph": {
            "edges": sorted([s, t] for s, ts in g.static.items() for t in ts),
            "routes": {
                s: [
                    {"by": what, "targets": sorted(r.targets), "send": r.sends, "several_at_once": r.multi}
                    for what, r in d
                ]
                for s, d in sorted(g.choices.items())
            },
            "waiting_edges": [[list(s), t] for s, t in g.waiting],
            "deferred": sorted(n for n, node in g.nodes.items() if node.defer),
            "unknown_routes": g.unknown_routes,
            "explored": "cut at the exploration limit" if walk.truncated else "every reachable superstep",
        },
        "supersteps": {node: sorted(at)[:5] for node, at in sorted(walk.steps.items())},
        "parallel": [list(group) for group in groups],
        "send_fanout": {node: sorted(routers) for node, routers in sorted(walk.several.items())},
        "writes": {
            n: {
                "keys": sorted(node.writes),
                "how": node.how if node.complete else "unknown",
                **({"why": node.why} if node.why and not node.complete else {}),
            }
            for n, node in sorted(g.nodes.items())
        },
        "unknown_writers": [n for n in unknown if n in meeting],
        "dry_run": run,
        "findings": findings,
    }


def _risky(row: dict[str, Any]) -> bool:
    """A merge whose result depends on who wrote last or in which order: no reducer, or one not commutative."""
    return row.get("channel") == "LastValue" or (row.get("commutative") is False and not row.get("by_id"))


def recorded(graph: Any, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """`fanin record`: the writes a test suite's runs of one graph made, crossed with its merge policies and
    which of its nodes can run in one superstep. A lower bound: only the paths the tests took."""
    builder = _builder(graph) if graph is not None else None
    channels = _channels(builder) if builder is not None else []
    policies = {row["key"]: row for row in channels}
    g = _graph(builder) if builder is not None else None
    walk = _walk(g) if g is not None else None
    out = _Findings()
    writers: dict[str, set[str]] = defaultdict(set)
    seen_nodes: set[str] = set()
    met: set[frozenset[str]] = set()
    state_keys = set(policies)
    for run in runs:
        if g is not None:  # the graph's own nodes and state keys: not its start task, barriers or routing channels
            run = {
                **run,
                "writes": [
                    {**w, "keys": [k for k in w["keys"] if k in state_keys]}
                    for w in run["writes"]
                    if w["node"] in g.nodes
                ],
            }
        by_step: dict[Any, list[str]] = defaultdict(list)
        for write in run["writes"]:
            seen_nodes.add(write["node"])
            by_step[write["step"]].append(write["node"])
            for key in write["keys"]:
                writers[key].add(write["node"])
        met |= {frozenset(names) for names in by_step.values() if len(names) > 1}
        if g is not None:
            _dry_run_findings(
                run,
                g,
                policies,
                out,
                seen=f"run in your test {run['test'] or '(outside a test)'}",
                certainty="recorded",
            )
    if g is not None and walk is not None:
        meets = [(sorted(pair), False) for pair in _pairs(walk)] + [([n], True) for n in sorted(walk.several)]
        for key, nodes in sorted(writers.items()):
            row = policies.get(key, {})
            if not _risky(row):
                continue
            for group, via_send in meets:
                if not set(group) <= nodes or (via_send and len(group) != 1):
                    continue
                pattern = (
                    "plain key written in parallel" if row.get("channel") == "LastValue" else "order-sensitive reducer"
                )
                if (pattern, key) in out.items:
                    continue  # already seen written in one superstep: the stronger evidence
                together = (
                    f"the Send fan-out starts several {group[0]} tasks at once"
                    if via_send
                    else f"{_names(group)} can run in one superstep"
                )
                probes = (
                    (["langgraph/send/reducer-required"] if via_send else ["langgraph/same-key/no-reducer"])
                    if pattern == "plain key written in parallel"
                    else _order_probes(via_send)
                )
                out.add(
                    (pattern, key),
                    {
                        "pattern": pattern,
                        "where": [*group, f"key {key!r} ({row.get('policy', '?')})"],
                        "probes": probes,
                        "certainty": "recorded-static",
                        "how": f"your tests saw {_names(sorted(nodes))} write {key!r}; the graph's structure says {together}",
                        "precondition": f"{together} and each writes {key!r}, as your tests saw; never seen in one superstep by them",
                    },
                )
    ran = {run["test"] for run in runs}
    return {
        "framework": "langgraph",
        "kind": "recorded",
        "name": str(getattr(graph, "name", "") or "a graph"),
        "channels": channels,
        "parallel": sorted(sorted(group) for group in walk.together) if walk is not None else [],
        "writes": {
            node: {"keys": sorted(k for k, ns in writers.items() if node in ns), "how": "recorded"}
            for node in sorted(seen_nodes)
        },
        "findings": list(out.items.values()),
        "recorded": {
            "runs": len(runs),
            "tests": sorted(t for t in ran if t),
            "outside_tests": sum(1 for run in runs if not run["test"]),
            "never_ran": sorted(set(g.nodes) - seen_nodes) if g is not None else [],
            "seen_together": sorted(sorted(group) for group in met),
            "writers": {key: sorted(nodes) for key, nodes in sorted(writers.items())},
        },
    }
