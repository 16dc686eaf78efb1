"""The LangGraph inspector's reading of node and router functions with `ast`: the keys a node writes, where a
router or a `Command` sends, never guessed (what cannot be read is said so). Part of suites/langgraph/audit.py.
"""

import ast
import functools
import inspect as pyinspect
import linecache
import textwrap
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
