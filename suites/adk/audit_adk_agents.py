"""The ADK inspector on an agent tree: what each agent owns (output_key, state writes, escalation), and the
findings of every ParallelAgent and loop in the tree. Part of suites/adk/audit.py.
"""

import functools
import inspect as pyinspect
from collections import defaultdict
from typing import Any

from audit_adk_source import _CALLBACKS, _ESCALATING_TOOLS, _is_adk_own, _kind, _mro, _name, _RANK, _read, Escalation, Own, Source, Write


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
