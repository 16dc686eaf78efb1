"""What `fanin audit` sees in a LangGraph graph: merge policies, parallel writers, joins.

Runs in the environment that has the user's graph and LangGraph installed (never in the
harness). It reports facts and the probes each fact rests on; the harness adds what those
probes observed at the installed version. The technique: print every channel's merge policy
(which reducer, LastValue or not, commutative or not on sample values), work out which nodes
can run in the same superstep (static edges, the declared targets of conditional edges,
list-edge joins), and, given an input, record which node wrote which key in which superstep
(a dry run through `stream_mode="debug"`). What cannot be known is marked unknown, never guessed.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

START, END = "__start__", "__end__"
MAX_STEPS = 25  # superstep positions explored per node; loops are cut here


def _builder(target: Any) -> Any | None:
    builder = getattr(target, "builder", target)
    needed = ("channels", "nodes", "edges", "branches")
    return builder if all(hasattr(builder, name) for name in needed) and type(builder).__name__ == "StateGraph" else None


def _samples(kind: str) -> list[Any] | None:
    return {
        "list": [["x"], ["y"], ["z"]],
        "dict": [{"x": 1}, {"y": 2}, {"x": 3}],
        "int": [1, 2, 3],
        "float": [1.0, 2.0, 3.0],
        "str": ["x", "y", "z"],
        "set": [{"x"}, {"y"}, {"z"}],
    }.get(kind)


def _algebra(operator: Any, typ: Any) -> dict[str, Any]:
    """Is the reducer commutative / associative on sample values of its type? 'unknown' when it cannot be tried."""
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
    except Exception as exc:  # noqa: BLE001 - the reducer refuses sample values: say so
        return {"commutative": "unknown", "associative": "unknown", "tried_on": f"{name} samples raised {type(exc).__name__}"}
    return {"commutative": commutative, "associative": associative, "tried_on": f"{name} samples"}


def _channels(builder: Any) -> list[dict[str, Any]]:
    rows = []
    for key, channel in sorted(builder.channels.items()):
        kind = type(channel).__name__
        row: dict[str, Any] = {"key": key, "channel": kind}
        if kind == "LastValue":
            row["policy"] = "LastValue (one write per superstep; no reducer)"
        elif kind == "BinaryOperatorAggregate":
            operator = channel.operator
            name = getattr(operator, "__qualname__", getattr(operator, "__name__", repr(operator)))
            module = getattr(operator, "__module__", "") or ""
            row["policy"] = f"reducer {module + '.' if module and module != 'builtins' else ''}{name}"
            row.update(_algebra(operator, getattr(channel, "typ", None)))
        elif kind in ("Topic", "EphemeralValue", "NamedBarrierValue", "AnyValue", "UntrackedValue"):
            row["policy"] = kind
        else:
            row["policy"] = f"{kind} (not classified)"
        rows.append(row)
    return rows


def _successors(builder: Any) -> tuple[dict[str, set[str]], dict[str, str]]:
    """Where each node can lead, and the nodes whose conditional edges name no targets (unknowable)."""
    nexts: dict[str, set[str]] = defaultdict(set)
    for start, end in builder.edges:
        nexts[start].add(end)
    unknowable: dict[str, str] = {}
    for source, branches in builder.branches.items():
        for name, branch in branches.items():
            ends = getattr(branch, "ends", None)
            if ends:
                nexts[source].update(v for v in ends.values())
            else:
                unknowable[source] = name
    return nexts, unknowable


def _steps(builder: Any) -> dict[str, set[int]]:
    """The supersteps at which each node may run (1 = the first after START), following edges and list edges."""
    nexts, _ = _successors(builder)
    waiting = list(getattr(builder, "waiting_edges", set()))
    steps: dict[str, set[int]] = defaultdict(set)
    frontier = {(START, 0)}
    seen: set[tuple[str, int]] = set()
    while frontier:
        node, step = frontier.pop()
        if (node, step) in seen or step > MAX_STEPS:
            continue
        seen.add((node, step))
        if node != START:
            steps[node].add(step)
        for target in nexts.get(node, ()):
            if target != END:
                frontier.add((target, step + 1))
        for sources, target in waiting:
            if node in sources and all(steps.get(s) for s in sources if s != node):
                ready = max(max(steps[s]) if s != node else step for s in sources)
                frontier.add((target, ready + 1))
    return steps


def _reachable(builder: Any) -> set[str]:
    nexts, _ = _successors(builder)
    waiting = list(getattr(builder, "waiting_edges", set()))
    seen, todo = {START}, [START]
    while todo:
        node = todo.pop()
        targets = set(nexts.get(node, ()))
        targets |= {t for sources, t in waiting if set(sources) <= seen}
        for target in targets - seen:
            seen.add(target)
            todo.append(target)
    return seen


def _depths(builder: Any) -> dict[str, int]:
    """Shortest number of supersteps from START to each node (static edges and declared branch targets)."""
    steps = _steps(builder)
    return {node: min(values) for node, values in steps.items() if values}


def _dry_run(target: Any, builder: Any, given: Any) -> dict[str, Any]:
    """Which node wrote which key in which superstep, observed by running the graph once on `given`."""
    graph = target if hasattr(target, "stream") and not hasattr(target, "add_node") else builder.compile()
    writes: list[dict[str, Any]] = []
    error = None
    try:
        for event in graph.stream(given, stream_mode="debug"):
            if event.get("type") == "task_result":
                payload = event.get("payload", {})
                channels = [item[0] if isinstance(item, (list, tuple)) else item for item in payload.get("result", [])]
                keys = sorted({str(c) for c in channels if not str(c).startswith(("__", "branch:"))})
                writes.append({"step": event.get("step"), "node": payload.get("name"), "task": payload.get("id"), "keys": keys})
    except Exception as exc:  # noqa: BLE001 - the dry run's failure is itself a fact (e.g. InvalidUpdateError)
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    return {"writes": writes, "error": error}


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for a StateGraph or compiled graph; None when `target` is neither."""
    builder = _builder(target)
    if builder is None:
        return None
    channels = _channels(builder)
    steps = _steps(builder)
    nexts, unknowable = _successors(builder)
    findings: list[dict[str, Any]] = []
    together: dict[int, set[str]] = defaultdict(set)
    for node, at in steps.items():
        for step in at:
            together[step].add(node)
    groups = sorted({tuple(sorted(nodes)) for nodes in together.values() if len(nodes) > 1})
    run = _dry_run(target, builder, given) if given is not None else None
    observed: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for write in (run or {}).get("writes", []):
        for key in write["keys"]:
            observed[write["step"]][key].append(write["node"])  # one entry per task: Send workers share a name
    policies = {row["key"]: row for row in channels}
    # 1. A plain (LastValue) key written by several nodes of one superstep.
    for step, keys in sorted(observed.items()):
        for key, writers in sorted(keys.items()):
            if len(writers) > 1 and policies.get(key, {}).get("channel") == "LastValue":
                via_send = len(set(writers)) < len(writers)  # several tasks of one node: Send workers
                findings.append({
                    "pattern": "plain key written in parallel",
                    "where": [f"{len(writers)} tasks of {sorted(set(writers))}", f"key {key!r}"],
                    "probes": ["langgraph/send/reducer-required"] if via_send else ["langgraph/same-key/no-reducer"],
                    "certainty": f"observed in the dry run (superstep {step})",
                })
    already = any(f["pattern"] == "plain key written in parallel" for f in findings)
    if run and not already and "InvalidUpdateError" in (run.get("error") or ""):
        findings.append({
            "pattern": "plain key written in parallel",
            "where": ["the dry run"],
            "probes": ["langgraph/same-key/no-reducer", "langgraph/send/reducer-required"],
            "certainty": f"the dry run raised {run['error']}",
        })
    # 2. Order-sensitive reducers on keys that parallel nodes write.
    parallel_writers: dict[str, set[str]] = defaultdict(set)
    for keys in observed.values():
        for key, writers in keys.items():
            if len(writers) > 1:
                parallel_writers[key] |= set(writers)
    for row in channels:
        if row["channel"] == "BinaryOperatorAggregate" and row.get("commutative") is False:
            writers = sorted(parallel_writers.get(row["key"], set()))
            if writers or run is None:
                findings.append({
                    "pattern": "order-sensitive reducer",
                    "where": [*writers, f"key {row['key']!r} ({row['policy']})"],
                    "probes": ["langgraph/reducers/commutativity", "langgraph/fold-order/node-names"],
                    "certainty": "observed parallel writers in the dry run" if writers else "possible: no dry run (--input) to see the writers",
                })
    # 3. Joins: separate edges from paths of unequal depth, list edges a router may starve, deferred nodes.
    depth = _depths(builder)
    incoming: dict[str, set[str]] = defaultdict(set)
    for start, end in builder.edges:
        if start != START:
            incoming[end].add(start)
    for node, sources in sorted(incoming.items()):
        if len(sources) < 2 or node == END:
            continue
        deferred = bool(getattr(builder.nodes.get(node), "defer", False))
        depths = {s: depth.get(s) for s in sorted(sources)}
        unequal = len({d for d in depths.values() if d is not None}) > 1
        if unequal and not deferred:
            findings.append({
                "pattern": "join by separate edges from paths of unequal depth",
                "where": [node, f"sources {depths}"],
                "probes": ["langgraph/join/separate-edges", "langgraph/join/unequal-depth-docs-example"],
                "certainty": "static: the join runs once per superstep in which any source finished",
            })
    routed = {target for source in builder.branches for branch in builder.branches[source].values()
              for target in (getattr(branch, "ends", None) or {}).values()}
    for sources, node in sorted(getattr(builder, "waiting_edges", set()), key=lambda e: (e[1], sorted(e[0]))):
        starved = sorted(s for s in sources if s in routed)
        if starved:
            findings.append({
                "pattern": "list-edge join fed by a router",
                "where": [node, f"waits for {sorted(sources)}; a router may not select {starved}"],
                "probes": ["langgraph/join/unselected-branch", "langgraph/join/list-edge"],
                "certainty": "static: the router's declared targets",
            })
    reachable = _reachable(builder)
    for node in sorted(set(builder.nodes) - reachable):
        if incoming.get(node) or any(node == t for _, t in getattr(builder, "waiting_edges", set())):
            findings.append({
                "pattern": "dead join",
                "where": [node],
                "probes": [],
                "certainty": "static: no path from START reaches it",
            })
    for source, name in sorted(unknowable.items()):
        findings.append({
            "pattern": "conditional edge with unknowable targets",
            "where": [source, f"branch {name!r} declares no targets (path_map)"],
            "probes": [],
            "certainty": "static: fan-out and joins after it cannot be checked; declare its targets",
        })
    # 4. Subgraphs as parallel nodes sharing keys with the parent.
    for group in groups:
        subgraphs = [n for n in group if _builder(getattr(builder.nodes[n], "runnable", None)) is not None
                     or type(getattr(builder.nodes[n], "runnable", None)).__name__ == "CompiledStateGraph"]
        if len(subgraphs) > 1:
            findings.append({
                "pattern": "parallel subgraphs sharing state keys",
                "where": subgraphs,
                "probes": ["langgraph/subgraph/shared-keys", "langgraph/subgraph/operator-add-duplication"],
                "certainty": "static: subgraph nodes in one superstep",
            })
    return {
        "framework": "langgraph",
        "kind": type(target).__name__,
        "channels": channels,
        "supersteps": {node: sorted(at)[:5] for node, at in sorted(steps.items())},
        "parallel": [list(g) for g in groups],
        "dry_run": run,
        "findings": findings,
    }
