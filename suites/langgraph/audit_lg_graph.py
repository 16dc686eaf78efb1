"""The LangGraph inspector's graph as LangGraph draws it: channels and their merge algebra, nodes, edges, and
which nodes can be active in one superstep (explored from START). Part of suites/langgraph/audit.py.
"""

import ast
import copy
import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from audit_lg_source import END, FRAMEWORK_MODULES, MAX_COMBOS, MAX_STATES, MAX_STEPS, module_of, node_routes, node_writes, reader, Routes, START


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
