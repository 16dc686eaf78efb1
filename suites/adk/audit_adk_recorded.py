"""`fanin record` on an ADK agent tree: the state writes a test suite's runs made, crossed with which agents can
run together (branches of one ParallelAgent). A lower bound: only the invocations the tests made. Part of
suites/adk/audit.py.

ADK merges nothing: two branches of a ParallelAgent that write one key leave whichever event arrived last
(adk/parallel-agent/same-key). Two writers seen in one invocation ran in that ParallelAgent's one run:
"recorded". Writers seen only in different invocations, but in branches the tree lets run together:
"recorded-static".

A Workflow (ADK 2.x) merges nothing either (adk/workflow/same-key): two of its nodes that write one key and
that its graph lets run together (neither reaches the other, not two routes of one node) are crossed the same
way, a run being one invocation of the Workflow.
"""

from collections import defaultdict
from typing import Any

from audit_adk_agents import _walk
from audit_adk_source import _START, _is_workflow, _mro
from audit_adk_workflow import _Structure

POLICY = "state_delta (no merge: the last event's value is kept)"


def _concurrent(paths: dict[str, tuple[str, ...]], kinds: dict[tuple[str, ...], bool], a: str, b: str) -> str | None:
    """The ParallelAgent whose branches hold agents a and b, where neither runs the other; else None."""
    pa, pb = paths.get(a), paths.get(b)
    if pa is None or pb is None:
        return None
    common = 0
    while common < min(len(pa), len(pb)) and pa[common] == pb[common]:
        common += 1
    if common in (len(pa), len(pb)):
        return None  # one is the other's ancestor: it runs it, in order
    return "/".join(pa[:common]) if kinds.get(pa[:common]) else None


def _together(root: Any) -> tuple[Any, list[str], dict[str, Any], list[list[str]]]:
    """Where two named nodes run together (a function of a, b: the place's name or None), the leaves, the
    output keys, and the groups that run in parallel: of an agent tree by its ParallelAgents, of a Workflow
    by its graph."""
    if root is not None and _is_workflow(root):
        graph = _Structure(root)
        name = f"Workflow {getattr(root, 'name', '?')}"
        names = sorted(n for n in graph.nodes if n not in _START)
        pairs = sorted({tuple(sorted((a, b))) for a in names for b in names if graph.concurrent(a, b)})
        return (lambda a, b: name if graph.concurrent(a, b) else None), names, {}, [list(p) for p in pairs]
    nodes = _walk(root) if root is not None else []
    paths = {path[-1]: path for path, _ in nodes}
    parallel = {path: "ParallelAgent" in _mro(agent) for path, agent in nodes}
    output_keys = {path[-1]: getattr(agent, "output_key", None) for path, agent in nodes}
    leaves = sorted({path[-1] for path, agent in nodes if not (getattr(agent, "sub_agents", None) or [])})
    groups = sorted(
        sorted(str(getattr(child, "name", "?")) for child in getattr(agent, "sub_agents", None) or [])
        for path, agent in nodes
        if parallel[path]
    )
    return (lambda a, b: _concurrent(paths, parallel, a, b)), leaves, output_keys, groups


def recorded(root: Any, runs: list[dict[str, Any]]) -> dict[str, Any]:
    together, leaves, output_keys, groups = _together(root)
    workflow = root is not None and _is_workflow(root)
    writers: dict[str, set[str]] = defaultdict(set)
    seen_nodes: set[str] = set()
    met: dict[tuple[str, frozenset[str]], tuple[str, list[str]]] = {}  # (key, pair) -> (test, events)
    for run in runs:
        by_key: dict[str, dict[str, int]] = defaultdict(dict)
        for write in run["writes"]:
            seen_nodes.add(write["node"])
            for key in write["keys"]:
                writers[key].add(write["node"])
                by_key[key].setdefault(write["node"], write["step"])
        for key, steps in by_key.items():
            names = sorted(steps)
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    if together(a, b):
                        events = [f"{n} at event {steps[n]}" for n in (a, b)]
                        met.setdefault((key, frozenset((a, b))), (run["test"] or "(outside a test)", events))
    findings: dict[tuple[str, str], dict[str, Any]] = {}
    for key, authors in sorted(writers.items()):
        ordered = sorted(authors)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                where = together(a, b)
                if where is None or (where, key) in findings:
                    continue
                output_key = output_keys.get(a) == key and output_keys.get(b) == key
                pattern = "parallel children share an output_key" if output_key else "parallel branches write the same state key"
                probes = ["adk/output-key/same-key", "adk/parallel-agent/same-key"] if output_key else ["adk/parallel-agent/same-key"]
                runs_in = f"branches of ParallelAgent {where}"
                if workflow:
                    pattern, probes = "parallel workflow nodes write the same state key", ["adk/workflow/same-key"]
                    runs_in = f"parallel in {where} (neither reaches the other)"
                seen = met.get((key, frozenset((a, b))))
                if seen is not None:
                    certainty = "recorded"
                    how = f"your test {seen[0]}: {' and '.join(seen[1])} each wrote {key!r} in one invocation"
                    precondition = (
                        f"{a} and {b} run {runs_in} and each writes {key!r}, as your tests"
                        " saw in one run; nothing merges their writes, the last to arrive is kept"
                    )
                else:
                    certainty = "recorded-static"
                    how = f"your tests saw {a} and {b} write {key!r}; the {'graph' if workflow else 'tree'} runs them {runs_in}"
                    precondition = (
                        f"{a} and {b} run {runs_in} and each writes {key!r}, as your tests"
                        " saw; never seen in one invocation by them"
                    )
                findings[(where, key)] = {
                    "pattern": pattern,
                    "where": [where, f"state key {key!r}: {a}, {b}"],
                    "probes": probes,
                    "certainty": certainty,
                    "how": how,
                    "precondition": precondition,
                }
    return {
        "framework": "adk",
        "kind": "recorded",
        "name": str(getattr(root, "name", "") or "an agent tree"),
        "channels": [{"key": key, "policy": POLICY, "channel": "LastValue"} for key in sorted(writers)],
        "parallel": groups,
        "writes": {
            node: {"keys": sorted(k for k, ns in writers.items() if node in ns), "how": "recorded"}
            for node in sorted(seen_nodes)
        },
        "findings": list(findings.values()),
        "recorded": {
            "runs": len(runs),
            "tests": sorted({run["test"] for run in runs if run["test"]}),
            "outside_tests": sum(1 for run in runs if not run["test"]),
            "never_ran": sorted(set(leaves) - {author for run in runs for author in run.get("authors", [])}),
            "seen_together": sorted({tuple(sorted(pair)) for (_, pair) in met}),
            "met_by_key": {k: sorted(sorted(p) for (key, p) in met if key == k) for k in sorted({key for key, _ in met})},
            "unit": "invocation",
            "writers": {key: sorted(nodes) for key, nodes in sorted(writers.items())},
        },
    }
