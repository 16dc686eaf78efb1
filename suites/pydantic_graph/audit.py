"""What `fanin audit` sees in a pydantic-graph graph: parallel steps on one shared state, joins, and the end node.

Runs in the environment with the user's graph and pydantic-graph installed (never in the harness). It
reads the graph as the framework built it (`GraphBuilder.build()`: `nodes`, `edges_by_source`,
`parent_forks`), by class name and public attributes, so the beta API of 1.x (`pydantic_graph.beta`)
and the top-level one of 2.x read the same. A fork (a broadcast, a map, or a step with several
outgoing edges, which the builder turns into a broadcast fork) starts tasks that run at once until the
join whose parent fork it is; what each step does to `ctx.state` is read from its source
(suites/audit_reading.py). Every finding names the probes it rests on and states their precondition as
it holds in this graph; the harness adds what those probes observed at the installed version.
"""

from __future__ import annotations

import ast
import inspect as pyinspect
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import audit_reading
from audit_reading import Reading
from audit_state import AttributeStateReader

_IN_PLACE_REDUCERS = ("reduce_list_append", "reduce_list_extend", "reduce_dict_update")
_ORDERED_REDUCERS = ("reduce_list_append", "reduce_list_extend")
_IMMUTABLE = (int, float, complex, str, bytes, bool, tuple, frozenset, type(None))
_END = "__end__"


def _mro(obj: Any) -> list[str]:
    return [base.__name__ for base in type(obj).__mro__]


def _is(obj: Any, name: str) -> bool:
    return name in _mro(obj)


def _ours(obj: Any) -> bool:
    return (getattr(type(obj), "__module__", "") or "").startswith("pydantic_graph")


def _graph(target: Any) -> Any:
    """The built graph: `target` itself, or a GraphBuilder built; None when `target` is neither."""
    if _ours(target) and all(hasattr(target, a) for a in ("nodes", "edges_by_source", "parent_forks")):
        return target
    if _ours(target) and _is(target, "GraphBuilder") and callable(getattr(target, "build", None)):
        return target.build()
    return None


def _is_sequential_graph(target: Any) -> bool:
    """The BaseNode graph (`Graph(nodes=[...])`): it runs one node at a time, so it has no fan-in."""
    return _ours(target) and _is(target, "Graph") and hasattr(target, "node_defs")


# --- reading a step's source -------------------------------------------------------------------


class _StateReader(AttributeStateReader):
    """`ctx.state.f`, `ctx.state["k"]` and `ctx.state.f["k"]` (with `s = ctx.state` followed)."""


def _code(node: Any) -> Any:
    """The user's function behind a step: its `call`, a stream step's wrapped function, a BaseNode's `run`."""
    node_type = getattr(node, "node_type", None)
    if node_type is not None:
        return node_type
    call = getattr(node, "call", None)
    if call is not None and (getattr(call, "__module__", "") or "").startswith("pydantic_graph"):
        try:
            inner = pyinspect.getclosurevars(call).nonlocals.get("call")
        except (TypeError, ValueError):
            inner = None
        return inner if callable(inner) else call
    return call


# --- the graph ----------------------------------------------------------------------------------


def _destinations(path: Any) -> list[str]:
    return [str(item.destination_id) for item in getattr(path, "items", []) if hasattr(item, "destination_id")]


@dataclass
class _Shape:
    nodes: dict[str, Any]
    successors: dict[str, list[list[str]]]  # per outgoing path (a broadcast fork's branches), its destinations
    parent_fork: dict[str, str]
    intermediate: dict[str, set[str]]
    predecessors: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def after(self, name: str) -> list[str]:
        return [t for path in self.successors.get(name, []) for t in path]


def _shape(graph: Any) -> _Shape:
    nodes = {str(k): v for k, v in graph.nodes.items()}
    successors: dict[str, list[list[str]]] = {}
    for name, node in nodes.items():
        if _is(node, "Decision"):
            successors[name] = [_destinations(getattr(b, "path", None)) for b in getattr(node, "branches", [])]
        else:
            successors[name] = [_destinations(p) for p in graph.edges_by_source.get(name, [])]
    parents = {str(j): str(p.fork_id) for j, p in graph.parent_forks.items()}
    intermediate = {str(j): {str(n) for n in p.intermediate_nodes} for j, p in graph.parent_forks.items()}
    shape = _Shape(nodes, successors, parents, intermediate)
    for name in nodes:
        for target in shape.after(name):
            shape.predecessors[target].add(name)
    return shape


def _closes(shape: _Shape, join: str, fork: str) -> bool:
    """Whether `join` waits for the tasks `fork` started (it is the join of that fork or of one around it)."""
    return shape.parent_fork.get(join) == fork or fork in shape.intermediate.get(join, set())


def _region(shape: _Shape, fork: str, heads: list[str]) -> set[str]:
    """The nodes one branch of `fork` runs, from `heads` up to the join that waits for it (the end included)."""
    seen: set[str] = set()
    todo = list(heads)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        node = shape.nodes.get(name)
        if name == _END or (node is not None and _is(node, "Join") and _closes(shape, name, fork)):
            continue
        todo += shape.after(name)
    return seen


@dataclass
class _Fork:
    name: str
    source: str  # the step (or the start) the fork follows, as the user wrote it
    is_map: bool
    branches: list[set[str]]
    together: set[tuple[str, str]]
    ends: list[int]  # indexes of the branches that can reach the end node without the fork's join


def _forks(shape: _Shape) -> list[_Fork]:
    found = []
    for name, node in shape.nodes.items():
        if not _is(node, "Fork"):
            continue
        is_map = bool(getattr(node, "is_map", False))
        branches = [_region(shape, name, path) for path in shape.successors.get(name, []) if path]
        steps = [{n for n in b if _is_step(shape.nodes.get(n))} for b in branches]
        together: set[tuple[str, str]] = set()
        if is_map:
            every = sorted(set().union(*steps)) if steps else []
            together |= {(a, b) for i, a in enumerate(every) for b in every[i:]}
        for i, a_steps in enumerate(steps):
            for b_steps in steps[i + 1 :]:
                together |= {tuple(sorted((a, b))) for a in a_steps for b in b_steps}  # type: ignore[misc]
        source = ", ".join(_named(shape, name))
        ends = [i for i, b in enumerate(branches) if _END in b]
        found.append(_Fork(name, source, is_map, branches, together, ends))
    return found


def _is_step(node: Any) -> bool:
    return node is not None and _is(node, "Step")


# --- joins ------------------------------------------------------------------------------------


def _reducer_name(join: Any) -> str:
    reducer = getattr(join, "reducer", None)
    return str(getattr(reducer, "__name__", None) or type(reducer).__name__)


def _mutates_first_value(reducer: Any) -> bool | None:
    """Whether a user reducer changes `current` in place (append, update, `+=`, `[k] = v`); None when unreadable."""
    tree = audit_reading.tree_of(reducer)
    names = audit_reading.parameters(tree)
    if tree is None or len(names) < 2:
        return None
    current = names[-2]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in audit_reading.MUTATORS and isinstance(node.func.value, ast.Name):
                if node.func.value.id == current:
                    return True
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == current:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == current:
                return True
    return False


def _shared_initial(join: Any) -> tuple[str, str] | None:
    """(certainty, how) when every run of the graph starts this join from one mutable object it changes in place."""
    factory = getattr(join, "initial_factory", None)
    if factory is None:
        return None
    if getattr(factory, "__name__", "") == "<lambda>" and (getattr(factory, "__module__", "") or "").startswith(
        "pydantic_graph"
    ):
        try:
            initial = pyinspect.getclosurevars(factory).nonlocals.get("initial")
        except (TypeError, ValueError):
            return None
        if isinstance(initial, _IMMUTABLE):
            return None
        given = f"initial={initial!r}"
    else:
        try:
            first, second = factory(), factory()
        except Exception:
            return None
        if first is not second or isinstance(first, _IMMUTABLE):
            return None
        given = f"initial_factory={getattr(factory, '__name__', factory)!r} returning one object on every call"
    reducer = _reducer_name(join)
    if reducer in _IN_PLACE_REDUCERS:
        return (
            "static",
            f"read from the graph: join {join.id} has {given} and the reducer {reducer}, which changes it in place",
        )
    mutates = _mutates_first_value(getattr(join, "reducer", None))
    if mutates is None:
        return "possible", f"join {join.id} has {given}; the source of its reducer {reducer} could not be read"
    if mutates:
        return "source", f"join {join.id} has {given}; its reducer {reducer} changes `current` in place (its source)"
    return None


# --- findings -----------------------------------------------------------------------------------


def _readings(shape: _Shape) -> dict[str, list[Reading]]:
    return {name: audit_reading.read(_code(node), _StateReader) for name, node in shape.nodes.items() if _is_step(node)}


def _in_branches(fork: _Fork, steps: set[str]) -> str:
    named = [sorted(s for s in b if s in steps) for b in fork.branches]
    return "; ".join(f"branch {i + 1}: {', '.join(b)}" for i, b in enumerate(named) if b)


def _write_findings(forks: list[_Fork], writes: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    findings = []
    for fork in forks:
        how_run = (
            f"the map fork after {fork.source} runs them once per item, all at once"
            if fork.is_map
            else f"the broadcast after {fork.source} runs its branches at once"
        )
        for conflict in audit_reading.conflicts(writes, fork.together):
            steps = {s for s, _ in conflict.writers}
            listed = ", ".join(f"{s} ({how})" for s, how in conflict.writers)
            where = [fork.source, f"state field {conflict.name!r}: {listed}"]
            if conflict.kind == "read-modify-write":
                findings.append(
                    {
                        "pattern": "parallel steps read, await and write one state field",
                        "where": where,
                        "probes": ["pydantic_graph/same-key/read-modify-write"],
                        "certainty": "source",
                        "how": f"read from the steps' source: {listed}",
                        "precondition": f"{how_run} ({_in_branches(fork, steps) or ', '.join(sorted(steps))}); a step reads"
                        f" ctx.state.{conflict.name}, awaits, then writes it back, so a sibling's write in between is lost",
                    }
                )
            elif conflict.kind == "last-writer":
                findings.append(
                    {
                        "pattern": "parallel steps write one state field",
                        "where": where,
                        "probes": ["pydantic_graph/same-key/last-writer"],
                        "certainty": "source",
                        "how": f"read from the steps' source: {listed}",
                        "precondition": f"{how_run} ({_in_branches(fork, steps) or ', '.join(sorted(steps))}) and each"
                        f" sets ctx.state.{conflict.name} on the one shared state object: the last to write it wins",
                    }
                )
            else:
                findings.append(
                    {
                        "pattern": "parallel steps change one state value in place",
                        "where": where,
                        "probes": ["pydantic_graph/fold-order/start-order"],
                        "certainty": "source",
                        "how": f"read from the steps' source: {listed}",
                        "precondition": f"{how_run}; each changes ctx.state.{conflict.name} in place, so every change is"
                        " kept, in the order the steps happen to run",
                    }
                )
    return findings


def _end_findings(shape: _Shape, forks: list[_Fork]) -> list[dict[str, Any]]:
    findings = []
    for fork in forks:
        running = len(fork.branches) >= 2 or fork.is_map
        if not fork.ends or not running:
            continue
        ending = [", ".join(sorted(n for n in fork.branches[i] if n != _END)) or "(straight)" for i in fork.ends]
        runs = "once per item" if fork.is_map else f"{len(fork.branches)} branches"
        findings.append(
            {
                "pattern": "parallel paths reach the end node without a join",
                "where": [fork.source, "end node", f"paths: {'; '.join(ending)}"],
                "probes": ["pydantic_graph/end/first-end-wins"],
                "certainty": "static",
                "how": f"read from the graph: the fork after {fork.source} runs {runs}, and a path from it reaches the"
                " end node with no join that waits for the fork",
                "precondition": f"the fork after {fork.source} starts {runs} at once and a path reaches the end node"
                " without a join: the first to arrive ends the run, its siblings are cancelled and their outputs lost",
            }
        )
    return findings


def _named(shape: _Shape, name: str) -> list[str]:
    """The user's node for `name`: a fork the builder made (a node with several edges, a map) is its source."""
    if _is(shape.nodes.get(name), "Fork"):
        return sorted({n for p in shape.predecessors.get(name, set()) for n in _named(shape, p)}) or [name]
    return ["the start node" if name == "__start__" else name]


def _join_findings(shape: _Shape) -> list[dict[str, Any]]:
    findings = []
    for name, node in sorted(shape.nodes.items()):
        if not _is(node, "Join"):
            continue
        feeding = sorted({n for p in shape.predecessors.get(name, set()) for n in _named(shape, p)})
        shared = _shared_initial(node)
        if shared is not None:
            certainty, how = shared
            findings.append(
                {
                    "pattern": "join's initial value shared by every run",
                    "where": [name, f"reducer {_reducer_name(node)}", f"fed by {', '.join(feeding)}"],
                    "probes": ["pydantic_graph/join/shared-initial"],
                    "certainty": certainty,
                    "how": how,
                    "precondition": f"the graph object is run more than once in one process (built once, e.g. at module"
                    f" level): join {name} starts every run from the same object and its reducer adds to it, so a run"
                    " returns the earlier runs' items too",
                }
            )
        if _reducer_name(node) in _ORDERED_REDUCERS:
            findings.append(
                {
                    "pattern": "join folds in completion order",
                    "where": [name, f"reducer {_reducer_name(node)}", f"fed by {', '.join(feeding)}"],
                    "probes": ["pydantic_graph/fold-order/completion-time"],
                    "certainty": "static",
                    "how": f"read from the graph: join {name} uses {_reducer_name(node)}",
                    "precondition": f"join {name} appends each branch's output as it arrives: the list is in the order"
                    " the branches finished, not the order they were declared",
                }
            )
    return findings


def _raise_findings(forks: list[_Fork], readings: dict[str, list[Reading]]) -> list[dict[str, Any]]:
    findings = []
    for fork in forks:
        steps = {s for pair in fork.together for s in pair}
        raising = {
            s: [
                f"{file}:{line}"
                for file, line in sorted(
                    {(audit_reading.shown_file(r.file), n) for r in readings.get(s, []) for n in r.raises}
                )
            ]
            for s in sorted(steps)
        }
        raising = {s: lines for s, lines in raising.items() if lines}
        if not raising:
            continue
        siblings = sorted(steps - set(raising)) or sorted(steps)
        listed = "; ".join(f"{s} ({', '.join(lines)})" for s, lines in raising.items())
        findings.append(
            {
                "pattern": "a parallel step can raise",
                "where": [fork.source, f"raising: {listed}", f"siblings: {', '.join(siblings)}"],
                "probes": ["pydantic_graph/errors/failing-sibling"],
                "certainty": "source",
                "how": f"read from the steps' source: {listed} raise",
                "precondition": f"a step started by the fork after {fork.source} raises while {', '.join(siblings)} are"
                " in flight: the run ends with that exception, the siblings are cancelled, and what they already wrote"
                " to ctx.state stays there",
            }
        )
    return findings


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for a pydantic-graph graph (built or a GraphBuilder); None when `target` is neither."""
    if _is_sequential_graph(target):
        return {
            "framework": "pydantic_graph",
            "kind": type(target).__name__,
            "sequential": "a BaseNode graph runs one node at a time: no fan-out, no fan-in",
            "writes": {},
            "unknown_writers": [],
            "findings": [],
        }
    graph = _graph(target)
    if graph is None:
        return None
    shape = _shape(graph)
    forks = _forks(shape)
    readings = _readings(shape)
    writes = {name: audit_reading.writes_of(r) for name, r in readings.items()}
    parallel = {s for fork in forks for pair in fork.together for s in pair}
    unknown = sorted(
        name
        for name in parallel
        if not all(r.readable for r in readings.get(name, [])) or any(r.dynamic for r in readings.get(name, []))
    )
    findings = _write_findings(forks, writes) + _end_findings(shape, forks) + _join_findings(shape)
    findings += _raise_findings(forks, readings)
    return {
        "framework": "pydantic_graph",
        "kind": type(target).__name__,
        "forks": [{"after": f.source, "map": f.is_map, "branches": [sorted(b) for b in f.branches]} for f in forks],
        "parallel": [sorted({s for pair in f.together for s in pair}) for f in forks if f.together],
        "joins": {
            name: {"reducer": _reducer_name(node), "parent_fork": shape.parent_fork.get(name)}
            for name, node in sorted(shape.nodes.items())
            if _is(node, "Join")
        },
        "writes": {
            name: {
                "keys": sorted(writes[name]),
                "how": "source" if all(r.readable and not r.dynamic for r in readings[name]) else "unknown",
            }
            for name in sorted(readings)
        },
        "unknown_writers": unknown,
        "no_dry_run": "the pydantic-graph audit reads the graph and each step's source; it has no dry run",
        "findings": findings,
    }
