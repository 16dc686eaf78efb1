"""What `fanin audit` sees in a Google ADK agent tree or Workflow: shared keys, escalation, loops, joins.

Runs in the environment with the user's agents and ADK installed (never in the harness). It walks
the whole tree by class name and public attributes (`sub_agents`, `output_key`, `tools`, the
callbacks, `graph.edges`), so it works across ADK versions without importing their private
modules. The state keys a tool, callback or custom agent writes, and whether it escalates, are
read from its source with `ast` where the source can be found; where it cannot, the writer is
listed as unknown and an escalation is "possible", never assumed absent. Every finding names the
probes it rests on and states their precondition as it holds in this tree; the harness adds what
those probes observed at the installed version.
"""

import ast
import functools
import inspect as pyinspect
import textwrap
from collections import defaultdict
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


def _callables(agent: Any, attr: str) -> list[Any]:
    value = getattr(agent, attr, None)
    if value is None:
        return []
    return [v for v in (value if isinstance(value, (list, tuple)) else [value]) if callable(v)]


def _tool_names(agent: Any) -> list[str]:
    return [_name(tool) for tool in getattr(agent, "tools", None) or []]


def _walk(agent: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    here = (*path, _name(agent))
    found = [(here, agent)]
    for child in getattr(agent, "sub_agents", None) or []:
        found += _walk(child, here)
    return found


def _own(agent: Any, where: str, seen: set[int] | None = None) -> Own:
    seen = seen if seen is not None else set()
    own = Own()
    key = getattr(agent, "output_key", None)
    if isinstance(key, str) and key:
        own.writes.append(Write(key, where, "output_key", "static"))

    def note(source: Source, how: str) -> None:
        if not source.readable:
            own.unknown.append(f"{how}: source not readable")
            own.escalations.append(Escalation(where, f"{how} (source not readable)", "possible"))
            return
        own.writes += [Write(k, where, how, "source") for k in sorted(source.keys)]
        if source.dynamic:
            own.unknown.append(f"{how}: writes a key that is not a literal")
        if source.escalates:
            own.escalations.append(Escalation(where, f"{how} sets escalate", "source"))
        if source.builds_parallel:
            own.builds_parallel.append(how)

    for tool in getattr(agent, "tools", None) or []:
        name = _name(tool)
        if "AgentTool" in _mro(tool) and getattr(tool, "agent", None) is not None:
            inner = tool.agent
            if id(inner) in seen:
                continue
            seen.add(id(inner))
            for path, sub in _walk(inner, (where, f"AgentTool {name}")):
                sub_own = _own(sub, "/".join(path), seen)
                # an AgentTool forwards its agent's state changes to the caller's session
                own.writes += [Write(w.key, where, f"AgentTool {name} ({w.how} of {w.agent})", w.certainty)
                               for w in sub_own.writes]
                own.unknown += sub_own.unknown
            continue
        if name in _ESCALATING_TOOLS:
            own.escalations.append(Escalation(where, f"holds the {name} tool", "static"))
            continue
        func = getattr(tool, "func", None)
        if func is not None:  # FunctionTool
            note(_read(func), f"tool {name}")
        elif pyinspect.isfunction(tool) or pyinspect.ismethod(tool) or isinstance(tool, functools.partial):
            note(_read(tool), f"tool {name}")
        elif _is_adk_own(tool):
            continue  # ADK's own tools and toolsets (search, MCP, OpenAPI...) write no session state
        elif hasattr(tool, "run_async"):
            note(_read(type(tool)), f"tool {name}")
    for attr in _CALLBACKS:
        for callback in _callables(agent, attr):
            note(_read(callback), f"{attr} {_name(callback)}")
    if not _is_adk_own(agent):
        note(_read(type(agent)), f"custom agent class {_kind(agent)}")
    return own


# --- findings of an agent tree ----------------------------------------------------------------


def _strongest(certainties: list[str]) -> str:
    return min(certainties, key=lambda c: _RANK[c]) if certainties else "possible"


def _parallel_findings(
    path: tuple[str, ...], agent: Any, owns: dict[str, Own], loops: list[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    findings: list[dict[str, Any]] = []
    unknown: list[str] = []
    where = "/".join(path)
    branches = list(getattr(agent, "sub_agents", None) or [])
    # Every write and escalation anywhere in each branch's subtree.
    by_key: dict[str, dict[str, list[Write]]] = defaultdict(lambda: defaultdict(list))
    direct: list[tuple[str, Escalation]] = []
    nested: list[tuple[str, Escalation]] = []
    for branch in branches:
        branch_name = _name(branch)
        for sub_path, _sub in _walk(branch, path):
            own = owns["/".join(sub_path)]
            for write in own.writes:
                by_key[write.key][branch_name].append(write)
            for escalation in own.escalations:
                (direct if len(sub_path) == len(path) + 1 else nested).append((branch_name, escalation))
            if own.unknown:
                unknown.append("/".join(sub_path))
    # Keys written in two or more branches, grouped when the same writers write several keys (one tool, two keys).
    groups: dict[tuple[bool, str], list[str]] = defaultdict(list)
    for key, per_branch in sorted(by_key.items()):
        if len(per_branch) < 2:
            continue  # one branch writing a key several times runs in order: no fan-in
        writes = [w for ws in per_branch.values() for w in ws]
        listed = "; ".join(
            f"branch {b}: " + ", ".join(f"{w.agent.removeprefix(where + '/')} ({w.how})" for w in ws)
            for b, ws in per_branch.items()
        )
        groups[(all(w.how == "output_key" for w in writes), listed)].append(key)
    for (output_keys, listed), keys in groups.items():
        writes = [w for key in keys for ws in by_key[key].values() for w in ws]
        writers = len(by_key[keys[0]])
        named = ", ".join(repr(k) for k in keys)
        precondition = (
            f"{writers} branches of ParallelAgent {where} run concurrently and each writes {named}; "
            "nothing merges their writes, the last to arrive is kept"
        )
        if output_keys:
            findings.append({
                "pattern": "parallel children share an output_key",
                "where": [where, f"output_key {named}: {listed}"],
                "probes": ["adk/output-key/same-key", "adk/parallel-agent/same-key"],
                "certainty": "static",
                "how": f"read from the agent tree: output_key {named} is set in {writers} branches",
                "precondition": precondition,
            })
        else:
            findings.append({
                "pattern": "parallel branches write the same state key",
                "where": [where, f"state key {named}: {listed}"],
                "probes": ["adk/parallel-agent/same-key"],
                "certainty": _strongest([w.certainty for w in writes if w.how != "output_key"] or ["source"]),
                "how": f"read from the source of the tools, callbacks or agents that write {named}",
                "precondition": precondition,
            })
    if direct:
        findings.append({
            "pattern": "escalation from a direct child of a ParallelAgent",
            "where": [where, "; ".join(f"{e.agent.removeprefix(where + '/')}: {e.how}" for _, e in direct)],
            "probes": ["adk/escalate/direct-child"],
            "certainty": _strongest([e.certainty for _, e in direct]),
            "how": "read from the agent tree: " + "; ".join(f"{e.agent} {e.how}" for _, e in direct),
            "precondition": f"a direct child of ParallelAgent {where} escalates while its siblings are running",
        })
    if nested and not loops:
        findings.append({
            "pattern": "escalation from inside a ParallelAgent branch",
            "where": [where, "; ".join(f"{e.agent.removeprefix(where + '/')}: {e.how}" for _, e in nested)],
            "probes": ["adk/escalate/nested-child"],
            "certainty": _strongest([e.certainty for _, e in nested]),
            "how": "read from the agent tree: " + "; ".join(f"{e.agent} {e.how}" for _, e in nested),
            "precondition": f"an agent below a direct child of ParallelAgent {where} escalates while the other "
            "branches are running",
        })
    escalations = direct + nested
    if loops and escalations:
        findings.append({
            "pattern": "ParallelAgent inside a LoopAgent",
            "where": [where, f"in LoopAgent {loops[-1]}",
                      "escalating: " + "; ".join(f"{e.agent} ({e.how})" for _, e in escalations)],
            "probes": ["adk/parallel-agent/in-loop"],
            "certainty": _strongest([e.certainty for _, e in escalations]),
            "how": "read from the agent tree: " + "; ".join(f"{e.agent} {e.how}" for _, e in escalations),
            "precondition": f"LoopAgent {loops[-1]} encloses ParallelAgent {where} and an agent in one of its "
            "branches escalates: the escalation ends the loop while sibling branches may still be running",
        })
    findings.append({
        "pattern": "deprecated class in the installed version",
        "where": [where, "ParallelAgent"],
        "probes": ["adk/deprecation/parallel-agent"],
        "certainty": "static",
        "how": "read from the agent tree: a ParallelAgent",
        "precondition": "the tree uses ParallelAgent; applies where the cited probe observed a DeprecationWarning",
        "only_if": {"outcome": "ok", "value_has": "DeprecationWarning"},
    })
    return findings, unknown


def _agent_facts(root: Any) -> dict[str, Any]:
    nodes = _walk(root)
    owns = {"/".join(path): _own(agent, "/".join(path)) for path, agent in nodes}
    findings: list[dict[str, Any]] = []
    unknown: list[str] = []
    # AgentTools called in parallel by one LlmAgent: their agents' state deltas meet in one event.
    for path, agent in nodes:
        where = "/".join(path)
        agent_tools = [t for t in getattr(agent, "tools", None) or [] if "AgentTool" in _mro(t)]
        writing = [t for t in agent_tools if any(w.how.startswith(f"AgentTool {_name(t)} ") for w in owns[where].writes)]
        if len(writing) >= 2:
            findings.append({
                "pattern": "AgentTools that write state, callable in one turn",
                "where": [where, ", ".join(_name(t) for t in writing)],
                "probes": ["adk/agent-tool/parallel-state-delta"],
                "certainty": "static",
                "how": f"read from the agent tree: {where} holds {len(writing)} AgentTools whose agents write state",
                "precondition": f"the model of {where} calls two of these AgentTools in one turn (parallel function "
                "calls); their state deltas then arrive in one merged event",
            })
    for path, agent in nodes:
        if _kind(agent) != "ParallelAgent" and "ParallelAgent" not in _mro(agent):
            continue
        loops = ["/".join(p) for p, a in nodes if len(p) < len(path) and path[: len(p)] == p and "LoopAgent" in _mro(a)]
        more, unseen = _parallel_findings(path, agent, owns, loops)
        findings += more
        unknown += [u for u in unseen if u not in unknown]
    # A custom agent that builds its ParallelAgent at run time hides that fan-out from the tree: say so.
    for where, own in owns.items():
        if own.builds_parallel and where not in unknown:
            unknown.append(where)
    writes: dict[str, dict[str, Any]] = {}
    for where, own in owns.items():
        if own.writes or own.unknown:
            certainties = {w.certainty for w in own.writes}
            writes[where] = {
                "keys": sorted({w.key for w in own.writes}),
                "how": "unknown" if own.unknown else "source" if "source" in certainties else "static",
            }
    tree = [
        {
            "path": "/".join(path),
            "class": _kind(agent),
            "output_key": getattr(agent, "output_key", None),
            "tools": _tool_names(agent),
            "escalates": [e.how for e in owns["/".join(path)].escalations],
            "builds_parallel_at_run_time": owns["/".join(path)].builds_parallel,
        }
        for path, agent in nodes
    ]
    return {"tree": tree, "writes": writes, "unknown_writers": unknown, "findings": findings}


# --- Workflow graphs (ADK 2.x) ------------------------------------------------------------------


@dataclass(frozen=True)
class _Edge:
    source: str
    target: str
    route: Any


def _graph_edges(workflow: Any) -> tuple[list[_Edge], dict[str, Any]]:
    """The workflow's edges as ADK normalised them (`workflow.graph.edges`), else read from `edges`."""
    graph = getattr(workflow, "graph", None)
    edges = getattr(graph, "edges", None) if graph is not None else None
    if not edges:
        try:
            import importlib

            parser = importlib.import_module(type(workflow).__module__.rsplit(".", 1)[0] + ".utils._graph_parser")
            edges = parser.parse_edge_items(list(getattr(workflow, "edges", None) or []))
        except Exception:  # an ADK without the parser: read the chains ourselves
            edges = None
    nodes: dict[str, Any] = {}
    found: list[_Edge] = []
    if edges:
        for edge in edges:
            source, target = getattr(edge, "from_node", None), getattr(edge, "to_node", None)
            if source is None or target is None:
                continue
            nodes.setdefault(_name(source), source)
            nodes.setdefault(_name(target), target)
            route = getattr(edge, "route", None)
            found.append(_Edge(_name(source), _name(target), tuple(route) if isinstance(route, list) else route))
        return found, nodes

    def names(element: Any) -> list[tuple[str, Any]]:
        if isinstance(element, tuple):
            return [pair for item in element for pair in names(item)]
        name = "__START__" if element == "START" else _name(element)
        nodes.setdefault(name, element)
        return [(name, None)]

    for item in getattr(workflow, "edges", None) or []:
        chain = list(item) if isinstance(item, (list, tuple)) else [item]
        for before, after in zip(chain, chain[1:]):
            if isinstance(after, dict):
                for route, target in after.items():
                    for s, _ in names(before):
                        found += [_Edge(s, t, route) for t, _ in names(target)]
            else:
                for s, _ in names(before):
                    found += [_Edge(s, t, None) for t, _ in names(after)]
    return found, nodes


def _is_join(node: Any) -> bool:
    if "JoinNode" in _mro(node):
        return True
    try:
        return getattr(node, "_requires_all_predecessors", False) is True
    except Exception:
        return False


def _may_return_none(node: Any) -> str | None:
    """'source' when a function node's code can end without a value, 'possible' when unreadable, else None."""
    func = getattr(node, "func", None) or getattr(node, "_func", None)
    if func is None and pyinspect.isfunction(node):
        func = node
    if func is None:
        return None
    code = _code_of(func)
    if code is None or pyinspect.isasyncgenfunction(code) or pyinspect.isgeneratorfunction(code):
        return None  # a generator yields events: its output is what it yields, not read here
    try:
        tree = ast.parse(textwrap.dedent(pyinspect.getsource(code)))
    except (OSError, TypeError, SyntaxError):
        return "possible"
    definition = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if definition is None:
        return None
    returns = [n for n in ast.walk(definition) if isinstance(n, ast.Return)]
    if any(r.value is None or (isinstance(r.value, ast.Constant) and r.value.value is None) for r in returns):
        return "source"
    last = definition.body[-1] if definition.body else None
    if not isinstance(last, (ast.Return, ast.Raise)):
        return "source"  # falls off the end: None
    return None


def _workflow_facts(workflow: Any) -> dict[str, Any]:
    edges, nodes = _graph_edges(workflow)
    start = next((s for s in _START if s in nodes), "__START__")
    out: dict[str, list[_Edge]] = defaultdict(list)
    for edge in edges:
        out[edge.source].append(edge)
    # Back edges (a loop's way back) found by a depth-first walk from START; the rest is a DAG.
    back: set[_Edge] = set()
    state: dict[str, int] = {}

    def visit(name: str) -> None:
        state[name] = 1
        for edge in out.get(name, []):
            if state.get(edge.target) == 1:
                back.add(edge)
            elif edge.target not in state:
                visit(edge.target)
        state[name] = 2

    visit(start)
    for name in list(nodes):
        if name not in state:
            visit(name)
    forward = [e for e in edges if e not in back]
    reach: dict[str, set[str]] = {}

    def reachable(name: str) -> set[str]:
        if name not in reach:
            reach[name] = set()
            found = set()
            for edge in forward:
                if edge.source == name:
                    found |= {edge.target} | reachable(edge.target)
            reach[name] = found
        return reach[name]

    # The routes that must all have been taken to reach a node (intersection over its incoming paths).
    order = [n for n in _topological(nodes, forward)]
    needs: dict[str, set[tuple[str, Any]] | None] = {n: None for n in nodes}
    needs[start] = set()
    for name in order:
        incoming = [e for e in forward if e.target == name]
        if name == start or not incoming:
            needs[name] = needs[name] or set()
            continue
        sets = []
        for edge in incoming:
            base = needs.get(edge.source) or set()
            sets.append(base | ({(edge.source, edge.route)} if edge.route is not None else set()))
        needs[name] = set.intersection(*sets) if sets else set()

    def exclusive(a: str, b: str) -> bool:
        routes_a, routes_b = needs.get(a) or set(), needs.get(b) or set()
        return any(ra[0] == rb[0] and ra[1] != rb[1] for ra in routes_a for rb in routes_b)

    def in_loop(name: str) -> bool:
        """On a cycle: some back edge u -> v with `name` at or after v, and u at or after `name`."""
        return any(
            (name == e.target or name in reachable(e.target)) and (e.source == name or e.source in reachable(name))
            for e in back
        )

    findings: list[dict[str, Any]] = []
    for name, node in sorted(nodes.items()):
        preds = sorted({e.source for e in forward if e.target == name})
        if len(preds) < 2:
            continue
        concurrent = sorted({
            p for p in preds for q in preds
            if p != q and p not in _START and q not in _START
            and p not in reachable(q) and q not in reachable(p) and not exclusive(p, q)
        })
        has_start = any(p in _START for p in preds)
        if _is_join(node):
            for pred in preds:
                if pred in _START:
                    continue
                certainty = _may_return_none(nodes.get(pred))
                if certainty:
                    findings.append({
                        "pattern": "join predecessor may output None",
                        "where": [name, f"predecessor {pred}"],
                        "probes": ["adk/workflow/join-none-output"],
                        "certainty": certainty,
                        "how": f"read from the source of {pred}: a path ends without a value"
                        if certainty == "source" else f"the source of {pred} could not be read",
                        "precondition": f"JoinNode {name} waits for {pred}, which can complete with no output",
                    })
            if getattr(node, "input_schema", None) is not None:
                findings.append({
                    "pattern": "join with an input schema",
                    "where": [name, f"input_schema {_name(node.input_schema)}"],
                    "probes": ["adk/workflow/join-input-schema"],
                    "certainty": "static",
                    "how": f"read from the workflow graph: JoinNode {name} has an input_schema",
                    "precondition": f"JoinNode {name} validates each of {preds} against its input_schema",
                })
            if has_start:
                findings.append({
                    "pattern": "join with START as a predecessor",
                    "where": [name, f"predecessors {preds}"],
                    "probes": ["adk/workflow/join-start-predecessor"],
                    "certainty": "static",
                    "how": f"read from the workflow graph: an edge from START ends at JoinNode {name}",
                    "precondition": f"JoinNode {name} is fed by START beside {[p for p in preds if p not in _START]}",
                })
            if in_loop(name):
                findings.append({
                    "pattern": "JoinNode inside a loop",
                    "where": [name, f"predecessors {preds}"],
                    "probes": ["adk/workflow/join-in-loop"],
                    "certainty": "static",
                    "how": f"read from the workflow graph: a route leads back to before JoinNode {name}",
                    "precondition": f"JoinNode {name} runs again each iteration and must wait for every "
                    "predecessor's new output",
                })
        elif len(concurrent) >= 2:
            findings.append({
                "pattern": "workflow fan-in",
                "where": [name, f"predecessors {concurrent}"],
                "probes": ["adk/workflow/plain-fan-in"],
                "certainty": "static",
                "how": f"read from the workflow graph: {', '.join(concurrent)} run in parallel and each has an edge "
                f"to {name}, which is not a JoinNode",
                "precondition": f"{name} is a plain node with parallel predecessors {concurrent}: it runs once per "
                "predecessor, each time with one input",
            })
    graph = [{"from": e.source, "to": e.target, "route": e.route, "back": e in back} for e in edges]
    return {"graph": graph, "joins": sorted(n for n, v in nodes.items() if _is_join(v)), "findings": findings}


def _topological(nodes: dict[str, Any], edges: list[_Edge]) -> list[str]:
    indegree = {n: 0 for n in nodes}
    for edge in edges:
        indegree[edge.target] = indegree.get(edge.target, 0) + 1
    ready = [n for n, d in indegree.items() if d == 0]
    order = []
    while ready:
        name = ready.pop()
        order.append(name)
        for edge in edges:
            if edge.source == name:
                indegree[edge.target] -= 1
                if indegree[edge.target] == 0:
                    ready.append(edge.target)
    return order


NO_DRY_RUN = "the ADK audit reads a Workflow as built and has no dry run for it; agent trees have one"


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for an ADK agent tree or Workflow; None when `target` is neither."""
    if _is_workflow(target):
        return {"framework": "adk", "kind": _kind(target), **_workflow_facts(target), "no_dry_run": NO_DRY_RUN}
    if not _is_agent(target):
        return None
    facts = {"framework": "adk", "kind": _kind(target), **_agent_facts(target)}
    if given is not None:
        import audit_dry_run  # suites/adk/audit_dry_run.py: imports ADK's runner, only for a dry run

        facts["dry_run"] = audit_dry_run.dry_run(target, given)
        _seen_in_dry_run(facts)
    return facts


def _seen_in_dry_run(facts: dict[str, Any]) -> None:
    """A shared-key finding whose key two agents did write in the dry run is seen, not only read from the tree."""
    authors: dict[str, list[str]] = {}
    for write in facts["dry_run"]["writes"]:
        for key in write["keys"]:
            authors.setdefault(key, []).append(write["node"])
    for finding in facts["findings"]:
        where = "; ".join(str(w) for w in finding["where"])
        for key, names in authors.items():
            if f"output_key {key!r}" in where and len(set(names)) > 1:
                finding["certainty"] = "observed"
                finding["how"] = f"dry run: {', '.join(dict.fromkeys(names))} each wrote {key!r}; {finding['how']}"
