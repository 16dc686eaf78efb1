"""What `fanin audit` sees in a Google ADK agent tree or Workflow: shared keys, escalation, loops, joins.

Runs in the environment with the user's agents and ADK installed (never in the harness). It
walks the tree by class name and public attributes (`sub_agents`, `output_key`, `tools`,
`edges`), so it works across ADK versions without importing their private modules; the
harness adds what the cited probes observed at the installed version.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

_AGENT_CLASSES = ("ParallelAgent", "SequentialAgent", "LoopAgent", "LlmAgent", "Agent", "BaseAgent")
_ESCALATING_TOOLS = ("exit_loop",)


def _kind(obj: Any) -> str:
    return type(obj).__name__


def _is_agent(obj: Any) -> bool:
    return any(base.__name__ in _AGENT_CLASSES for base in type(obj).__mro__) and hasattr(obj, "sub_agents")


def _is_workflow(obj: Any) -> bool:
    return any(base.__name__ == "Workflow" for base in type(obj).__mro__) and hasattr(obj, "edges")


def _tool_names(agent: Any) -> list[str]:
    names = []
    for tool in getattr(agent, "tools", None) or []:
        names.append(getattr(tool, "name", None) or getattr(tool, "__name__", None) or type(tool).__name__)
    return names


def _escalates(agent: Any) -> bool:
    """Statically: an agent that holds ADK's exit_loop tool (or a custom agent we cannot see into: unknown)."""
    return any(name in _ESCALATING_TOOLS for name in _tool_names(agent))


def _walk(agent: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    here = (*path, getattr(agent, "name", _kind(agent)))
    found = [(here, agent)]
    for child in getattr(agent, "sub_agents", None) or []:
        found += _walk(child, here)
    return found


def _agent_findings(root: Any) -> list[dict[str, Any]]:
    findings: list[dict[str, Any]] = []
    nodes = _walk(root)
    for path, agent in nodes:
        kind = _kind(agent)
        children = list(getattr(agent, "sub_agents", None) or [])
        where = "/".join(path)
        if kind == "ParallelAgent":
            by_key: dict[str, list[str]] = defaultdict(list)
            for child in children:
                key = getattr(child, "output_key", None)
                if key:
                    by_key[key].append(child.name)
            for key, owners in sorted(by_key.items()):
                if len(owners) > 1:
                    findings.append({
                        "pattern": "parallel children share an output_key",
                        "where": [where, f"output_key {key!r} of {owners}"],
                        "probes": ["adk/output-key/same-key", "adk/parallel-agent/same-key"],
                        "certainty": "static: the same output_key on children of one ParallelAgent",
                    })
            escalating = [c.name for c in children if _escalates(c)]
            if escalating:
                findings.append({
                    "pattern": "escalation from a direct child of a ParallelAgent",
                    "where": [where, f"children holding exit_loop: {escalating}"],
                    "probes": ["adk/escalate/direct-child", "adk/escalate/nested-child"],
                    "certainty": "static: the child carries ADK's exit_loop tool",
                })
            if any(_kind(a) == "LoopAgent" for p, a in nodes if p == path[: len(p)] and len(p) < len(path)):
                findings.append({
                    "pattern": "ParallelAgent inside a LoopAgent",
                    "where": [where],
                    "probes": ["adk/parallel-agent/in-loop"],
                    "certainty": "static: an enclosing LoopAgent",
                })
            findings.append({
                "pattern": "deprecated class in the installed version",
                "where": [where, "ParallelAgent"],
                "probes": ["adk/deprecation/parallel-agent"],
                "certainty": "applies where the cited probe observed a DeprecationWarning",
                "only_if": {"outcome": "ok", "value_has": "DeprecationWarning"},
            })
    return findings


def _workflow_findings(workflow: Any) -> list[dict[str, Any]]:
    findings: list[dict[str, Any]] = []
    predecessors: dict[str, set[str]] = defaultdict(set)
    for edge in getattr(workflow, "edges", None) or []:
        chain = list(edge) if isinstance(edge, (list, tuple)) else [edge]
        names = [getattr(n, "name", None) or getattr(n, "__name__", None) or str(n) for n in chain]
        for before, after in zip(names, names[1:]):
            predecessors[after].add(before)
    for node, sources in sorted(predecessors.items()):
        if len(sources) > 1:
            findings.append({
                "pattern": "workflow fan-in",
                "where": [node, f"predecessors {sorted(sources)}"],
                "probes": ["adk/workflow/plain-fan-in", "adk/workflow/join-inputs", "adk/workflow/join-none-output"],
                "certainty": "static: several edges end at this node",
            })
            if "START" in sources:
                findings.append({
                    "pattern": "join with START as a predecessor",
                    "where": [node],
                    "probes": ["adk/workflow/join-start-predecessor"],
                    "certainty": "static: START is one of its predecessors",
                })
    return findings


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for an ADK agent tree or Workflow; None when `target` is neither."""
    if _is_workflow(target):
        return {"framework": "adk", "kind": _kind(target), "findings": _workflow_findings(target)}
    if not _is_agent(target):
        return None
    tree = [{"path": "/".join(path), "class": _kind(agent), "output_key": getattr(agent, "output_key", None),
             "tools": _tool_names(agent)} for path, agent in _walk(target)]
    return {"framework": "adk", "kind": _kind(target), "tree": tree, "findings": _agent_findings(target)}
