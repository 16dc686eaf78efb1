"""What `fanin audit` sees in a Strands Agents graph: its edges, and which joins are reached by paths of unequal depth.

Runs in the environment with the user's graph and strands-agents installed (never in the harness). It reads the
graph as GraphBuilder built it, by class name and public attributes: `nodes` (id -> GraphNode), `edges`
(GraphEdge: `from_node`, `to_node`, `condition`) and `entry_points`, the same in every 1.x release. A node is
ready as soon as any incoming edge's source has completed, so a join whose sources sit at different depths
from the entry points starts before the deeper one has written (strands/join/unequal-depth). An incoming edge
with a condition may be the documented 'wait for all dependencies' fix, which the audit cannot read: a join
whose every incoming edge has a condition is left alone. Each finding names the probe it rests on and states
its precondition as it holds in this graph; the harness adds what the probe observed at the installed version.
"""

from __future__ import annotations

from typing import Any


def _graph(target: Any) -> Any:
    """`target` when it is a Strands multi-agent Graph, else None."""
    names = {base.__name__ for base in type(target).__mro__}
    module = getattr(type(target), "__module__", "") or ""
    if module.startswith("strands") and "Graph" in names and hasattr(target, "edges") and hasattr(target, "nodes"):
        return target
    return None


def _edges(graph: Any) -> list[tuple[str, str, bool]]:
    """(source id, target id, has a condition), sorted: the edge set's own order is its hash order."""
    return sorted((e.from_node.node_id, e.to_node.node_id, e.condition is not None) for e in graph.edges)


def _depths(graph: Any, edges: list[tuple[str, str, bool]]) -> dict[str, int]:
    """Each node's longest distance from an entry point (entry points 0), over the graph's acyclic part."""
    entries = sorted(node.node_id for node in graph.entry_points)
    depth = dict.fromkeys(entries, 0)
    for _ in range(len(graph.nodes)):  # relax at most |nodes| times: a cycle cannot push a depth past that
        changed = False
        for source, target, _conditioned in edges:
            if source in depth and depth[source] + 1 > depth.get(target, -1) and depth[source] + 1 < len(graph.nodes):
                depth[target] = depth[source] + 1
                changed = True
        if not changed:
            break
    return depth


def _findings(graph: Any) -> list[dict[str, Any]]:
    edges = _edges(graph)
    depth = _depths(graph, edges)
    findings = []
    for join in sorted({target for _, target, _ in edges}):
        incoming = [(source, conditioned) for source, target, conditioned in edges if target == join]
        if len(incoming) < 2 or all(conditioned for _, conditioned in incoming):
            continue
        levels = {source: depth[source] for source, _ in incoming if source in depth}
        if len(set(levels.values())) < 2:
            continue
        shallow = sorted(s for s, d in levels.items() if d == min(levels.values()))
        deep = sorted(s for s, d in levels.items() if d == max(levels.values()))
        findings.append(
            {
                "pattern": "join reached by paths of unequal depth",
                "where": [f"{join} (join)", "sources: " + ", ".join(f"{s} (depth {d})" for s, d in sorted(levels.items()))],
                "probes": ["strands/join/unequal-depth"],
                "certainty": "static",
                "how": f"read from the graph's edges: {', '.join(shallow)} reach(es) {join} in fewer steps than"
                f" {', '.join(deep)}",
                "precondition": f"{join} is ready once any source completed: it starts after {', '.join(shallow)},"
                f" before {', '.join(deep)} has written (and, from 1.10, runs again after), unless every edge"
                f" into {join} has a condition that waits for all of them",
            }
        )
    return findings


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for a Strands Graph; None when `target` is none."""
    graph = _graph(target)
    if graph is None:
        return None
    return {
        "framework": "strands",
        "kind": type(target).__name__,
        "edges": [f"{s} -> {t}" + (" (conditional)" if c else "") for s, t, c in _edges(graph)],
        "entry_points": sorted(node.node_id for node in graph.entry_points),
        "writes": {},
        "unknown_writers": [],
        "no_dry_run": "the Strands audit reads the graph's edges (nodes are agents or custom executors); it has no dry run",
        "findings": _findings(graph),
    }
