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
# The inspector is split by job: audit_lg_source (reading functions), audit_lg_graph (the graph and which
# nodes meet), audit_lg_dry_run, audit_lg_findings; this file is the entry points the harness calls.

from collections import defaultdict
from typing import Any

from audit_lg_graph import _builder, _channels, _graph, _walk
from audit_lg_dry_run import _dry_run
from audit_lg_findings import _command_findings, _dry_run_findings, _Findings, _join_findings, _names, _order_probes, _pairs, _structure_findings, _writers_findings


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
