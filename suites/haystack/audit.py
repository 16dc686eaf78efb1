"""What `fanin audit` sees in a Haystack pipeline: its connections, and which fan-ins can be sent two values at once.

Runs in the environment with the user's pipeline and haystack-ai installed (never in the harness). It reads
the pipeline as `connect` built it: `pipeline.graph`, a networkx MultiDiGraph whose nodes hold the
component (`instance`) and whose edges hold the sockets (`from_socket`, `to_socket`), by class name and
public attributes, so every 2.x and 3.x release reads the same. Haystack has no shared state: values move
only along connections, so there are no writers to read; what matters is which senders of a join can both
produce a value in one run. Two senders are alternatives when a router (a component whose class name ends
in Router) reaches one only through one output and the other only through another, or when one is fed back
from the join itself (a loop) while the other is not; every other pair can both run (two senders both inside a
loop's body run in the same pass). Each finding names the probes it rests on and
states their precondition as it holds in this pipeline; the harness adds what they observed at the
installed version.
"""

from __future__ import annotations

from typing import Any

# Joiners that order what they hand on themselves (by score, by default), so their arrival order does not show.
_SORTING = ("DocumentJoiner", "AnswerJoiner")


def _pipeline(target: Any) -> Any:
    """`target` when it is a Haystack pipeline (its class or a base is PipelineBase/Pipeline), else None."""
    names = [base.__name__ for base in type(target).__mro__]
    module = getattr(type(target), "__module__", "") or ""
    graph = getattr(target, "graph", None)
    if module.startswith("haystack") and {"PipelineBase", "Pipeline", "AsyncPipeline"} & set(names) and graph is not None:
        return target
    return None


def _reach(graph: Any, start: str, forward: bool = True) -> set[str]:
    """Every component reachable from `start` along connections (or against them), `start` included."""
    seen, todo = {start}, [start]
    while todo:
        step = graph.successors(todo.pop()) if forward else graph.predecessors(todo.pop())
        for name in step:
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def _routes(graph: Any, router: str, node: str) -> set[str]:
    """The router's output sockets through which `node` can be reached (a path that starts with that output)."""
    found = set()
    for _, receiver, data in graph.out_edges(router, data=True):
        if node in _reach(graph, receiver):
            found.add(getattr(data.get("from_socket"), "name", "?"))
    return found


def _alternatives(graph: Any, join: str, one: str, other: str) -> bool:
    """Whether `one` and `other` never both send to `join` in one pass: a loop back from the join, or a router's
    separate outputs."""
    if len({one, other} & _reach(graph, join)) == 1:
        return True  # one fed back from the join, the other not: the loop's entry and its retry, in different passes
    # Both downstream of the join (both inside a loop's body) run in the same pass unless a router splits them.
    common = _reach(graph, one, forward=False) & _reach(graph, other, forward=False)
    for router in common:
        if not type(graph.nodes[router]["instance"]).__name__.endswith("Router"):
            continue
        a, b = _routes(graph, router, one), _routes(graph, router, other)
        if a and b and not a & b:
            return True
    return False


def _joins(graph: Any) -> list[tuple[str, str, list[str], Any]]:
    """Every variadic input socket with two or more senders: (component, socket, senders, socket object)."""
    senders: dict[tuple[str, str], list[str]] = {}
    sockets: dict[tuple[str, str], Any] = {}
    for sender, receiver, data in graph.edges(data=True):
        socket = data.get("to_socket")
        if socket is None or not getattr(socket, "is_variadic", False):
            continue
        key = (receiver, socket.name)
        senders.setdefault(key, []).append(sender)
        sockets[key] = socket
    return [(c, s, sorted(set(names)), sockets[(c, s)]) for (c, s), names in sorted(senders.items()) if len(set(names)) > 1]


def _live(graph: Any, join: str, senders: list[str]) -> list[tuple[str, str]]:
    return [
        (a, b) for i, a in enumerate(senders) for b in senders[i + 1 :] if not _alternatives(graph, join, a, b)
    ]


def _findings(graph: Any) -> list[dict[str, Any]]:
    findings = []
    for join, socket, senders, spec in _joins(graph):
        kind = type(graph.nodes[join]["instance"]).__name__
        live = _live(graph, join, senders)
        if not live:
            continue
        pairs = ", ".join(f"{a} and {b}" for a, b in live)
        where = [f"{join} ({kind}).{socket}", f"senders: {', '.join(senders)}"]
        if getattr(spec, "is_greedy", False):
            findings.append(
                {
                    "pattern": "BranchJoiner fed by branches that can both run",
                    "where": where,
                    "probes": ["haystack/branch-joiner/two-live-branches"],
                    "certainty": "static",
                    "how": f"read from the pipeline's connections: {pairs} both send to {join}.{socket} with no router"
                    " choosing between them",
                    "precondition": f"in one run {pairs} both produce a value for {join}: its greedy input keeps one"
                    " of them or the run raises, as the cited probe observed at this version",
                }
            )
        elif kind not in _SORTING or not getattr(graph.nodes[join]["instance"], "sort_by_score", True):
            findings.append(
                {
                    "pattern": "variadic join's order follows how the pipeline is run",
                    "where": where,
                    "probes": ["haystack/sync-async/join-order"],
                    "certainty": "static",
                    "how": f"read from the pipeline's connections: {pairs} both send to {join}.{socket}",
                    "precondition": f"what consumes {join}'s output depends on the order of its values: sync"
                    " Pipeline.run delivers them by sender name, run_async by finishing order",
                }
            )
    return findings


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for a Haystack Pipeline or AsyncPipeline; None when `target` is neither."""
    pipeline = _pipeline(target)
    if pipeline is None:
        return None
    graph = pipeline.graph
    return {
        "framework": "haystack",
        "kind": type(target).__name__,
        "connections": sorted(
            f"{s}.{getattr(d.get('from_socket'), 'name', '?')} -> {r}.{getattr(d.get('to_socket'), 'name', '?')}"
            for s, r, d in graph.edges(data=True)
        ),
        "joins": [{"component": c, "socket": s, "senders": names} for c, s, names, _ in _joins(graph)],
        "writes": {},
        "unknown_writers": [],
        "no_dry_run": "the Haystack audit reads the pipeline's connections (no shared state to follow); it has no dry run",
        "findings": _findings(graph),
    }
