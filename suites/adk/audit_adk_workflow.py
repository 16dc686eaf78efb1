"""The ADK inspector on a Workflow graph (ADK 2.x): its edges as ADK normalised them, joins, and the findings
of nodes that can run in parallel. Part of suites/adk/audit.py.
"""

import ast
import inspect as pyinspect
import textwrap
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from audit_adk_source import _code_of, _mro, _name, _START


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


class _Structure:
    """A Workflow's graph as the findings read it: back edges (a loop's way back), what each node reaches over
    the rest, the routes that must all be taken to reach a node, and so which two nodes can run together."""

    def __init__(self, workflow: Any) -> None:
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

        self.edges, self.nodes, self.start, self.forward, self.back = edges, nodes, start, forward, back
        self.reachable, self.exclusive, self.in_loop = reachable, exclusive, in_loop

    def concurrent(self, a: str, b: str) -> bool:
        """Whether nodes a and b can run together: both in the graph, neither START, neither reaching the other
        over forward edges, and not on two routes of one node."""
        if a == b or a not in self.nodes or b not in self.nodes or a in _START or b in _START:
            return False
        return a not in self.reachable(b) and b not in self.reachable(a) and not self.exclusive(a, b)


def _workflow_facts(workflow: Any) -> dict[str, Any]:
    graph_of = _Structure(workflow)
    edges, nodes, forward, back = graph_of.edges, graph_of.nodes, graph_of.forward, graph_of.back
    in_loop = graph_of.in_loop
    findings: list[dict[str, Any]] = []
    for name, node in sorted(nodes.items()):
        preds = sorted({e.source for e in forward if e.target == name})
        if len(preds) < 2:
            continue
        concurrent = sorted({p for p in preds for q in preds if graph_of.concurrent(p, q)})
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
