"""What `fanin audit` sees in a Microsoft Agent Framework workflow: edge groups, supersteps and shared state.

Runs in the environment with the user's workflow and agent-framework-core installed (never in the
harness). It reads the workflow as the builder built it (`edge_groups`, `executors`,
`start_executor_id`; a WorkflowBuilder is built first), by class name and public attributes, so every
1.x release reads the same. The runner delivers messages in supersteps: the walk here follows them
from the start executor, taking each choice a selection function, a switch-case or the conditions on a
source's edges (read as alternatives: one edge or none) can make, and assuming each executor sends on
its outgoing edges; it sees which executors share a
superstep, which fan-in groups can be left waiting when a run ends, and which executors receive
several messages over separate edges in one run. What each executor does to shared state
(`set_state` / `get_state`) is read from its source (suites/audit_reading.py). Every finding names the
probes it rests on and states their precondition as it holds in this workflow; the harness adds what
those probes observed at the installed version.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from typing import Any

import af_executor_reading
import audit_af_counts
import audit_af_recorded
import audit_reading
from audit_reading import Reading, StateReader

_WRITE_METHODS = ("set_state", "set_shared_state")
_READ_METHODS = ("get_state", "get_shared_state")
_MAX_STEPS = 40  # supersteps followed per run (a loop is cut there)
_MAX_WALKS = 256  # alternative runs kept per superstep


def _mro(obj: Any) -> list[str]:
    return [base.__name__ for base in type(obj).__mro__]


def _ours(obj: Any) -> bool:
    return (getattr(type(obj), "__module__", "") or "").startswith("agent_framework")


def _workflow(target: Any) -> Any:
    """The workflow: `target` itself, or a WorkflowBuilder built; None when `target` is neither."""
    if _ours(target) and all(hasattr(target, a) for a in ("edge_groups", "executors", "start_executor_id")):
        return target
    if _ours(target) and "WorkflowBuilder" in _mro(target) and callable(getattr(target, "build", None)):
        return target.build()
    return None


# --- reading an executor's source ---------------------------------------------------------------


class _StateReader(StateReader):
    """`ctx.set_state("k", v)` writes k, `ctx.get_state("k")` reads it; a key that is not a literal is dynamic."""

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _WRITE_METHODS + _READ_METHODS and node.args:
            first = node.args[0]
            literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            if func.attr in _WRITE_METHODS:
                if literal is None:
                    self.found.dynamic.append(node.lineno)
                else:
                    self.record(literal, "set", node)
            elif literal is not None:
                self.record(literal, "read", node)
        super().visit_Call(node)


def _code(executor: Any) -> list[Any]:
    """The user's code behind an executor: a function executor's function, else its class and its callables."""
    original = getattr(executor, "_original_func", None)
    if original is not None:
        return [original]
    if _ours(executor):
        return []  # the framework's own executors (agents, sub-workflows) write no shared state of the user's
    found: list[Any] = [type(executor)]
    for value in vars(executor).values():  # a behaviour given to the instance (a function it calls)
        if callable(value) and audit_reading.code_of(value) is not None and not isinstance(value, type):
            module = getattr(audit_reading.code_of(value), "__module__", "") or ""
            if not module.startswith(("agent_framework", "builtins")):
                found.append(value)
    return found


def _readings(workflow: Any) -> dict[str, list[Reading]]:
    return {
        str(name): [r for code in _code(executor) for r in audit_reading.read(code, _StateReader, executor)]
        for name, executor in workflow.executors.items()
    }


# --- the walk over supersteps -------------------------------------------------------------------


@dataclass(frozen=True)
class _Group:
    id: str
    kind: str  # single | fan-out | fan-in | switch
    sources: tuple[str, ...]
    targets: tuple[str, ...]
    choices: tuple[frozenset[str], ...]  # the target sets one message can reach
    why: str  # how the choice is known, for a finding's `how`
    certainty: str


def _selection(group: Any, targets: tuple[str, ...]) -> tuple[tuple[frozenset[str], ...], str, str]:
    func = getattr(group, "selection_func", None)
    every = frozenset(targets)
    if func is None:
        return (every,), "", "static"
    picks_all = audit_reading.returns_second_parameter(func)
    name = getattr(func, "__name__", "selection function")
    if picks_all:
        return (every,), f"its selection function {name} returns every target", "source"
    subsets = tuple(frozenset(c) for size in range(len(targets), 0, -1) for c in itertools.combinations(targets, size))
    if picks_all is None:
        return subsets, f"the source of its selection function {name} could not be read", "possible"
    return subsets, f"its selection function {name} can return fewer than all of {list(targets)}", "source"


def _groups(workflow: Any) -> list[_Group]:
    found = []
    conditional: dict[str, list[str]] = {}  # source -> targets of its conditional edges, in order
    for group in workflow.edge_groups:
        kinds = _mro(group)
        edges = list(getattr(group, "edges", []))
        sources = tuple(dict.fromkeys(str(e.source_id) for e in edges))
        targets = tuple(dict.fromkeys(str(e.target_id) for e in edges))
        gid = str(getattr(group, "id", id(group)))
        if "InternalEdgeGroup" in kinds:
            continue
        if "FanInEdgeGroup" in kinds:
            found.append(_Group(gid, "fan-in", sources, targets, (frozenset(targets),), "", "static"))
        elif "SwitchCaseEdgeGroup" in kinds:
            choices = tuple(frozenset({t}) for t in targets)
            why = f"the switch-case from {sources[0]} sends each message to one of {list(targets)}"
            found.append(_Group(gid, "switch", sources, targets, choices, why, "static"))
        elif "FanOutEdgeGroup" in kinds:
            choices, why, certainty = _selection(group, targets)
            found.append(_Group(gid, "fan-out", sources, targets, choices, why, certainty))
        else:
            for edge in edges:
                source, target = str(edge.source_id), str(edge.target_id)
                if getattr(edge, "_condition", None) is not None or getattr(edge, "has_condition", False):
                    conditional.setdefault(source, []).append(target)
                else:
                    found.append(
                        _Group(f"{gid}:{target}", "single", (source,), (target,), (frozenset({target}),), "", "static")
                    )
    # A source's conditional edges are taken as alternatives, one of them or none (the samples' complementary
    # conditions): their targets do not share a superstep through them, and none may be taken.
    for source, guarded in conditional.items():
        alternatives = (*(frozenset({t}) for t in guarded), frozenset())
        why = f"the edges from {source} to {guarded} have conditions"
        found.append(
            _Group(f"conditional:{source}", "single", (source,), tuple(guarded), alternatives, why, "possible")
        )
    return found


@dataclass
class _Walk:
    """What the supersteps of every explored run showed."""

    together: set[tuple[str, str]] = field(default_factory=set)
    received: dict[str, set[frozenset[str]]] = field(default_factory=dict)  # target -> senders over one run
    waiting: dict[str, list[tuple[frozenset[str], tuple[str, ...]]]] = field(default_factory=dict)
    truncated: bool = False


def _walk(start: str, groups: list[_Group]) -> _Walk:
    """Every run the routing allows: (invoked executors, fan-in buffers, senders per target, choices made)."""
    out: dict[str, list[_Group]] = {}
    for group in groups:
        for source in group.sources:
            out.setdefault(source, []).append(group)
    result = _Walk()
    Run = tuple[frozenset[str], frozenset[tuple[str, frozenset[str]]], frozenset[tuple[str, str]], tuple[str, ...]]
    runs: list[Run] = [(frozenset({start}), frozenset(), frozenset(), ())]
    for _ in range(_MAX_STEPS):
        following: list[Run] = []
        for active, buffers, senders, made in runs:
            if not active:
                _finish(result, buffers, senders, made)
                continue
            ordered = sorted(active)
            result.together |= {(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]}
            options: list[list[tuple[frozenset[tuple[str, str]], str]]] = []
            fan_ins = {}
            for source in ordered:
                for group in out.get(source, []):
                    if group.kind == "fan-in":
                        fan_ins[group.id] = group
                        continue
                    options.append(
                        [
                            (frozenset((source, t) for t in choice), group.why if len(group.choices) > 1 else "")
                            for choice in group.choices
                        ]
                    )
            for picked in itertools.islice(itertools.product(*options), _MAX_WALKS):
                sent = frozenset().union(*(p[0] for p in picked)) if picked else frozenset()
                why = tuple(sorted({p[1] for p in picked if p[1]}))
                buffer = dict(buffers)
                delivered: set[tuple[str, str]] = set(sent)
                for gid, group in fan_ins.items():
                    arrived = buffer.get(gid, frozenset()) | (active & frozenset(group.sources))
                    if arrived >= frozenset(group.sources):
                        delivered |= {("|".join(group.sources), group.targets[0])}
                        buffer.pop(gid, None)
                    else:
                        buffer[gid] = arrived
                following.append(
                    (
                        frozenset(t for _, t in delivered),
                        frozenset(buffer.items()),
                        senders | frozenset(delivered),
                        tuple(sorted(set(made) | set(why))),
                    )
                )
        runs = list(dict.fromkeys(following))[:_MAX_WALKS]
        if len(following) > _MAX_WALKS:
            result.truncated = True
        if not runs:
            break
    else:
        result.truncated = result.truncated or any(active for active, *_ in runs)
    for active, buffers, senders, made in runs:
        if not active:
            _finish(result, buffers, senders, made)
    return result


def _finish(result: _Walk, buffers: frozenset[Any], senders: frozenset[tuple[str, str]], made: tuple[str, ...]) -> None:
    for gid, arrived in buffers:
        if arrived:
            result.waiting.setdefault(gid, []).append((arrived, made))
    by_target: dict[str, set[str]] = {}
    for source, target in senders:
        by_target.setdefault(target, set()).add(source)
    for target, sources in by_target.items():
        result.received.setdefault(target, set()).add(frozenset(sources))


def _reach(groups: list[_Group]) -> dict[str, set[str]]:
    following: dict[str, set[str]] = {}
    for group in groups:
        for source in group.sources:
            following.setdefault(source, set()).update(group.targets)
    reach: dict[str, set[str]] = {}
    for name in following:
        seen: set[str] = set()
        todo = list(following[name])
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += following.get(n, set())
        reach[name] = seen
    return reach


# --- findings ----------------------------------------------------------------------------------


def _fan_in_findings(groups: list[_Group], walk: _Walk) -> list[dict[str, Any]]:
    findings = []
    for group in (g for g in groups if g.kind == "fan-in"):
        left = walk.waiting.get(group.id)
        if left:
            arrived, made = left[0]
            missing = sorted(set(group.sources) - arrived)
            causes = sorted({why for _, m in left for why in m}) or ["a source that is not always reached"]
            deciding = [g for g in groups if g.why and g.why in causes]
            certainty = (
                "static"
                if all(g.certainty == "static" for g in deciding) and deciding
                else (
                    "source" if all(g.certainty in ("static", "source") for g in deciding) and deciding else "possible"
                )
            )
            findings.append(
                {
                    "pattern": "fan-in after a selection that can skip a source",
                    "where": [group.targets[0], f"fan-in of {list(group.sources)}", "; ".join(causes)],
                    "probes": ["agent_framework/join/unselected-branch", "agent_framework/join/stale-arrival-next-run"],
                    "certainty": certainty,
                    "how": f"read from the workflow's edge groups: {'; '.join(causes)}; a run can end with"
                    f" {sorted(arrived)} arrived and {missing} never sent",
                    "precondition": f"{'; '.join(causes)}, and the fan-in into {group.targets[0]} runs only once every one"
                    f" of {list(group.sources)} has sent: when {missing} is not chosen, {group.targets[0]} never runs and"
                    " the run ends idle with no output and no error; the buffered arrival joins the next run of this"
                    " workflow instance",
                }
            )
        findings.append(
            {
                "pattern": "fan-in list in declaration order",
                "where": [group.targets[0], f"fan-in of {list(group.sources)}"],
                "probes": ["agent_framework/fold-order/fan-in-list"],
                "certainty": "static",
                "how": f"read from the workflow's edge groups: add_fan_in_edges({list(group.sources)}, {group.targets[0]})",
                "precondition": f"{group.targets[0]} receives one list in the order {list(group.sources)} were declared,"
                " whatever order they finished in",
            }
        )
    return findings


def _collector(executor: Any) -> list[str]:
    """The handlers of a user's executor class that collect messages (change an attribute, emit only under a test)."""
    if executor is None or _ours(executor) or getattr(executor, "_original_func", None) is not None:
        return []
    return af_executor_reading.attributes(executor).collects


def _separate_edge_findings(groups: list[_Group], walk: _Walk, executors: dict[str, Any]) -> list[dict[str, Any]]:
    findings = []
    reach = _reach(groups)
    fan_in_targets = {g.targets[0]: g for g in groups if g.kind == "fan-in"}
    for target, runs in sorted(walk.received.items()):
        group = fan_in_targets.get(target)
        for senders in runs:
            plain = sorted(s for s in senders if "|" not in s)
            joined = [s for s in senders if "|" in s]
            if group is not None and joined:
                others = [s for s in plain if s not in reach.get(target, set())]  # not a loop back from the target
                if others:
                    findings.append(
                        {
                            "pattern": "fan-in target with another incoming edge",
                            "where": [
                                target,
                                f"fan-in of {list(group.sources)}",
                                f"also an edge from {', '.join(others)}",
                            ],
                            "probes": ["agent_framework/join/fan-in-plus-edge"],
                            "certainty": "static",
                            "how": f"read from the workflow's edge groups: {target} is a fan-in target and also has an edge"
                            f" from {', '.join(others)}, which runs in the same run",
                            "precondition": f"{target} runs once for the edge from {', '.join(others)} (early, on partial"
                            f" input) and again when the fan-in of {list(group.sources)} completes",
                        }
                    )
                    break
                continue
            concurrent = [
                (a, b)
                for i, a in enumerate(plain)
                for b in plain[i + 1 :]
                if b not in reach.get(a, set()) and a not in reach.get(b, set())
            ]
            if concurrent and _collector(executors.get(target)):
                break  # built for per-message delivery: it counts what arrived and emits once it has enough
            if concurrent:
                names = sorted({n for pair in concurrent for n in pair})
                findings.append(
                    {
                        "pattern": "join by separate edges",
                        "where": [target, f"separate edges from {', '.join(names)}"],
                        "probes": ["agent_framework/join/separate-edges"],
                        "certainty": "static",
                        "how": f"read from the workflow's edge groups: {', '.join(names)} each have their own edge to"
                        f" {target} and both run in one run, neither after the other",
                        "precondition": f"{target} is fed by separate edges from {', '.join(names)}: it runs once per"
                        " message, the first time with one branch's result only",
                    }
                )
                break
    return findings


def _kept_findings(workflow: Any) -> list[dict[str, Any]]:
    """Executors whose attributes a run changes, no run resets and a condition reads: run 2 starts from run 1's."""
    findings = []
    for name, executor in sorted(workflow.executors.items()):
        if _ours(executor) or getattr(executor, "_original_func", None) is not None:
            continue
        for attribute, (changed, read) in af_executor_reading.kept(executor).items():
            file = audit_reading.shown_file(audit_reading.tree_file(type(executor)))
            findings.append(
                {
                    "pattern": "executor attributes kept between runs",
                    "where": [str(name), f"self.{attribute}", f"changed at {file}:{changed}, tested at {file}:{read}"],
                    "probes": ["agent_framework/runs/executor-state-kept"],
                    "certainty": "source",
                    "how": f"read from {type(executor).__name__}'s source: a handler changes self.{attribute}"
                    f" ({file}:{changed}), no method resets it, and the condition at {file}:{read} reads it",
                    "precondition": f"the workflow instance is run more than once (built once, e.g. at module level):"
                    f" {name} keeps self.{attribute} from the run before, so the condition at line {read} sees run 1's"
                    " messages in run 2 (a collector that yields at a count never yields again, or raises once it counts past it)",
                    "only_if": {"value_has": '"kept": true'},  # the versions where the cited probe saw it kept
                }
            )
    return findings


def _state_findings(
    walk: _Walk, readings: dict[str, list[Reading]], executors: dict[str, Any], groups: list[_Group]
) -> list[dict[str, Any]]:
    writes = {name: audit_reading.writes_of(r) for name, r in readings.items()}
    findings = []
    for conflict in audit_reading.conflicts(writes, walk.together):
        listed = ", ".join(f"{s} ({how})" for s, how in conflict.writers)
        steps = ", ".join(s for s, _ in conflict.writers)
        where = [steps, f"shared-state key {conflict.name!r}: {listed}"]
        if conflict.kind == "read-modify-write":
            findings.append(
                {
                    "pattern": "parallel executors read, await and set one shared-state key",
                    "where": where,
                    "probes": ["agent_framework/same-key/read-modify-write"],
                    "certainty": "source",
                    "how": f"read from the executors' source: {listed}",
                    "precondition": f"{steps} run in one superstep; one reads {conflict.name!r} with get_state, awaits,"
                    " then sets it from what it read, so a sibling's write in between is lost",
                }
            )
        elif conflict.kind == "last-writer":
            findings.append(
                {
                    "pattern": "parallel executors set one shared-state key",
                    "where": where,
                    "probes": ["agent_framework/same-key/last-writer"],
                    "certainty": "source",
                    "how": f"read from the executors' source: {listed}",
                    "precondition": f"{steps} run in one superstep and each sets {conflict.name!r}: the writes go to"
                    " one buffer committed at the superstep's end, and the last to finish wins",
                }
            )
    parallel = {s for pair in walk.together for s in pair}
    sources: dict[str, set[str]] = {}
    for group in groups:
        for target in group.targets:
            sources.setdefault(target, set()).update(group.sources)
    raising: dict[str, list[str]] = {}
    cleared: list[str] = []
    for name in sorted(parallel):
        for reading in readings.get(name, []):
            for line in sorted(set(reading.raises)):
                at = f"{audit_reading.shown_file(reading.file)}:{line}"
                executor = executors.get(name)
                user_class = executor is not None and not _ours(executor) and not hasattr(executor, "_original_func")
                guards = reading.raise_guards.get(line, ())
                why = af_executor_reading.ruled_out(executor, guards) if user_class else None
                if why is None and user_class:
                    beside = {b for a, b in walk.together if a == name} | {a for a, b in walk.together if b == name}
                    why = audit_af_counts.ruled_out(name, line, reading.file, guards, executors, sources, beside)
                if why is None:
                    raising.setdefault(name, []).append(at)
                else:
                    cleared.append(f"{name} at {at} ({why})")
    if raising:
        listed = "; ".join(f"{s} ({', '.join(lines)})" for s, lines in raising.items())
        siblings = sorted({b for a, b in walk.together if a in raising} | {a for a, b in walk.together if b in raising})
        how = f"read from the executors' source: {listed} can raise"
        if cleared:
            how += f"; ruled out: {'; '.join(cleared)}"
        findings.append(
            {
                "pattern": "a parallel executor can raise",
                "where": [f"raising: {listed}", f"siblings: {', '.join(siblings)}"],
                "probes": ["agent_framework/errors/failing-sibling"],
                "certainty": "source",
                "how": how,
                "precondition": f"an executor of {sorted(raising)} raises in a superstep it shares with"
                f" {', '.join(siblings)}: the run ends with that exception, and what happens to the sibling and to the"
                " superstep's writes depends on the version (below)",
            }
        )
    return findings


def _stale_findings(workflow: Any, readings: dict[str, list[Reading]]) -> list[dict[str, Any]]:
    """A key read somewhere and written only under a condition: a later run of the same instance may read it."""
    read_by: dict[str, list[str]] = {}
    written: dict[str, list[str]] = {}
    always: set[str] = set()
    for name, rs in readings.items():
        for key in {k for r in rs for k in r.reads()}:
            read_by.setdefault(key, []).append(name)
        for r in rs:
            guarded = r.guarded_writes()
            for key in r.writes():
                written.setdefault(key, []).append(name)
                if key not in guarded:
                    always.add(key)
    findings = []
    for key in sorted(set(read_by) & set(written) - always):
        findings.append(
            {
                "pattern": "shared-state key written only in some runs",
                "where": [
                    f"shared-state key {key!r}",
                    f"set under a condition by {', '.join(sorted(set(written[key])))}",
                    f"read by {', '.join(sorted(set(read_by[key])))}",
                ],
                "probes": ["agent_framework/runs/stale-from-previous-run"],
                "certainty": "source",
                "how": f"read from the executors' source: every set_state({key!r}) is under a condition",
                "precondition": f"the workflow instance is run more than once (built once, e.g. at module level) and a"
                f" run does not set {key!r}: it reads the value an earlier run left",
                "only_if": {"value_has": '"stale": ["'},  # where the cited probe saw the earlier run's value
            }
        )
    storage = getattr(getattr(workflow, "_runner_context", None), "_checkpoint_storage", None)
    if storage is not None and any(r.raises for rs in readings.values() for r in rs):
        findings.append(
            {
                "pattern": "resume after a failed superstep",
                "where": ["checkpoint storage", type(storage).__name__],
                "probes": ["agent_framework/errors/resume-after-failure"],
                "certainty": "static",
                "how": "read from the workflow: it has checkpoint storage and an executor that can raise",
                "precondition": "a superstep fails and the run is resumed from the latest checkpoint on the same"
                " workflow instance: the failed superstep's writes are seen",
                "only_if": {"value_has": '"stale": ["'},  # only in the versions where the cited probe saw them
            }
        )
    return findings


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for an Agent Framework Workflow or WorkflowBuilder; None when `target` is neither."""
    workflow = _workflow(target)
    if workflow is None:
        return None
    groups = _groups(workflow)
    walk = _walk(str(workflow.start_executor_id), groups)
    readings = _readings(workflow)
    parallel = {s for pair in walk.together for s in pair}
    unknown = sorted(
        name
        for name in parallel
        if not all(r.readable for r in readings.get(name, [])) or any(r.dynamic for r in readings.get(name, []))
    )
    executors = {str(name): executor for name, executor in workflow.executors.items()}
    findings = _fan_in_findings(groups, walk) + _separate_edge_findings(groups, walk, executors)
    findings += _state_findings(walk, readings, executors, groups) + _stale_findings(workflow, readings)
    findings += _kept_findings(workflow)
    writes = {name: audit_reading.writes_of(r) for name, r in readings.items()}
    return {
        "framework": "agent_framework",
        "kind": type(target).__name__,
        "edge_groups": [
            {"kind": g.kind, "from": list(g.sources), "to": list(g.targets), "choices": len(g.choices)} for g in groups
        ],
        "parallel": sorted({tuple(sorted(p)) for p in walk.together}),
        "explored": "cut at the exploration limit" if walk.truncated else "every run the routing allows",
        "writes": {
            name: {
                "keys": sorted(writes[name]),
                "how": "source" if all(r.readable and not r.dynamic for r in rs) else "unknown",
            }
            for name, rs in sorted(readings.items())
            if rs
        },
        "unknown_writers": unknown,
        "no_dry_run": "the Agent Framework audit reads the graph and each step's source; it has no dry run",
        "findings": findings,
    }


def recorded(target: Any, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """`fanin record`: the writes a test suite's runs of one workflow made (suites/agent_framework/record.py),
    crossed with which executors its edges let run in one superstep."""
    workflow = _workflow(target) if target is not None else None
    together = _walk(str(workflow.start_executor_id), _groups(workflow)).together if workflow is not None else None
    return audit_af_recorded.recorded(workflow, together, runs)
