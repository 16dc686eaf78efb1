"""The ADK inspector's reading of agents and their code: kinds by class name, the state keys a tool, callback or
custom agent writes and whether it escalates, read with `ast` where the source is found (else unknown, never
absent). Part of suites/adk/audit.py.
"""

import ast
import functools
import inspect as pyinspect
import textwrap
from dataclasses import dataclass, field
from typing import Any


_AGENT_CLASSES = ("ParallelAgent", "SequentialAgent", "LoopAgent", "LlmAgent", "Agent", "BaseAgent")
_ESCALATING_TOOLS = ("exit_loop",)
_CALLBACKS = (
    "before_agent_callback",
    "after_agent_callback",
    "before_model_callback",
    "after_model_callback",
    "before_tool_callback",
    "after_tool_callback",
    "on_tool_error_callback",
    "on_model_error_callback",
)
_RANK = {"static": 0, "source": 1, "possible": 2}  # how firmly we know, strongest first
_START = ("__START__", "START")


def _kind(obj: Any) -> str:
    return type(obj).__name__


def _mro(obj: Any) -> list[str]:
    return [base.__name__ for base in type(obj).__mro__]


def _is_agent(obj: Any) -> bool:
    return any(name in _AGENT_CLASSES for name in _mro(obj)) and hasattr(obj, "sub_agents")


def _is_workflow(obj: Any) -> bool:
    return "Workflow" in _mro(obj) and hasattr(obj, "edges")


def _is_adk_own(obj: Any) -> bool:
    """A class ADK itself defines (its code is known: nothing to read), as opposed to the user's."""
    return (getattr(type(obj), "__module__", "") or "").startswith("google.adk")


def _name(obj: Any) -> str:
    return str(getattr(obj, "name", None) or getattr(obj, "__name__", None) or _kind(obj))


# --- reading a function's or a class's source ---------------------------------------------------


@dataclass
class Source:
    """What a piece of user code does to state, read with ast: keys written, escalation."""

    readable: bool = True
    keys: set[str] = field(default_factory=set)
    dynamic: bool = False  # writes a key that is not a literal (f-string, variable)
    escalates: bool = False
    builds_parallel: bool = False  # constructs a ParallelAgent at run time (a fan-out the tree does not show)

    def merge(self, other: "Source") -> None:
        self.readable &= other.readable
        self.keys |= other.keys
        self.dynamic |= other.dynamic
        self.escalates |= other.escalates
        self.builds_parallel |= other.builds_parallel


def _literal_false(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in (False, None)


class _StateWrites(ast.NodeVisitor):
    """`x.state["k"] = v`, `x.state.update({...})`, `state_delta={...}`, `x.escalate = True`, `escalate=True`."""

    def __init__(self) -> None:
        self.found = Source()
        self.aliases: set[str] = set()  # names bound to some `.state` / `.state_delta`

    def _is_state(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and node.attr in ("state", "state_delta"):
            return True
        return isinstance(node, ast.Name) and node.id in self.aliases

    def _key(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.found.keys.add(node.value)
        else:
            self.found.dynamic = True

    def _dict_keys(self, node: ast.AST | None) -> None:
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if key is None:  # {**other}
                    self.found.dynamic = True
                else:
                    self._key(key)
        elif node is not None and not _literal_false(node):
            self.found.dynamic = True

    def _target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Subscript) and self._is_state(target.value):
            self._key(target.slice)
        elif isinstance(target, ast.Attribute) and target.attr == "escalate":
            pass  # decided by the value, in visit_Assign
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target)
            if isinstance(target, ast.Attribute) and target.attr == "escalate" and not _literal_false(node.value):
                self.found.escalates = True
            if isinstance(target, ast.Name) and self._is_state(node.value):
                self.aliases.add(target.id)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target)
        if isinstance(node.target, ast.Name) and node.value is not None and self._is_state(node.value):
            self.aliases.add(node.target.id)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if _name_of(func) == "ParallelAgent":
            self.found.builds_parallel = True
        if isinstance(func, ast.Attribute) and self._is_state(func.value):
            if func.attr == "update":
                for arg in node.args:
                    self._dict_keys(arg)
                for keyword in node.keywords:
                    if keyword.arg is None:
                        self.found.dynamic = True
                    else:
                        self.found.keys.add(keyword.arg)
            elif func.attr in ("setdefault", "__setitem__") and node.args:
                self._key(node.args[0])
        for keyword in node.keywords:
            if keyword.arg == "escalate" and not _literal_false(keyword.value):
                self.found.escalates = True
            if keyword.arg == "state_delta":
                self._dict_keys(keyword.value)
        self.generic_visit(node)


def _name_of(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _code_of(obj: Any) -> Any:
    """The function (or class) whose source says what `obj` does."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    if pyinspect.ismethod(obj):
        obj = obj.__func__
    if pyinspect.isfunction(obj) or pyinspect.isclass(obj):
        return obj
    if callable(obj):
        return type(obj)  # a callable object: its class holds __call__
    return None


@functools.lru_cache(maxsize=None)
def _read_code(code: Any) -> Source:
    try:
        text = textwrap.dedent(pyinspect.getsource(code))
    except (OSError, TypeError):
        return Source(readable=False)
    tree: ast.Module | None
    try:
        tree = ast.parse(text)
    except SyntaxError:
        # A lambda in the middle of an expression: getsource gives its whole line. Parse the lambda alone.
        start = text.find("lambda")
        tree = None
        for end in range(len(text), start, -1):
            try:
                tree = ast.parse(text[start:end].strip().rstrip(",)]}"))
                break
            except SyntaxError:
                continue
        if start < 0 or tree is None:
            return Source(readable=False)
    visitor = _StateWrites()
    visitor.visit(tree)
    return visitor.found


def _read(obj: Any) -> Source:
    code = _code_of(obj)
    if code is None:
        return Source(readable=False)
    try:
        return _read_code(code)
    except TypeError:  # unhashable
        return Source(readable=False)


# --- the tree ---------------------------------------------------------------------------------


@dataclass
class Write:
    key: str
    agent: str  # the agent path
    how: str  # "output_key", "tool t", "callback c", "custom agent code", "AgentTool a"
    certainty: str  # static | source


@dataclass
class Escalation:
    agent: str
    how: str
    certainty: str  # static | source | possible


@dataclass
class Own:
    """What one agent itself does (its output_key, tools, callbacks, custom code), not its sub-agents."""

    writes: list[Write] = field(default_factory=list)
    escalations: list[Escalation] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # why its writes cannot be known
    builds_parallel: list[str] = field(default_factory=list)  # code that makes a ParallelAgent at run time
