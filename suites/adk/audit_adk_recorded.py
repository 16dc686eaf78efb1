"""`fanin record` on an ADK agent tree: the state writes a test suite's runs made, crossed with which agents can
run together (branches of one ParallelAgent). A lower bound: only the invocations the tests made. Part of
suites/adk/audit.py.

ADK merges nothing: two branches of a ParallelAgent that write one key leave whichever event arrived last
(adk/parallel-agent/same-key). Two writers seen in one invocation ran in that ParallelAgent's one run:
"recorded". Writers seen only in different invocations, but in branches the tree lets run together:
"recorded-static".
"""

from collections import defaultdict
from typing import Any

from audit_adk_agents import _walk
from audit_adk_source import _mro

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


def recorded(root: Any, runs: list[dict[str, Any]]) -> dict[str, Any]:
    nodes = _walk(root) if root is not None else []
    paths = {path[-1]: path for path, _ in nodes}
    parallel = {path: "ParallelAgent" in _mro(agent) for path, agent in nodes}
    output_keys = {path[-1]: getattr(agent, "output_key", None) for path, agent in nodes}
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
                    if _concurrent(paths, parallel, a, b):
                        events = [f"{n} at event {steps[n]}" for n in (a, b)]
                        met.setdefault((key, frozenset((a, b))), (run["test"] or "(outside a test)", events))
    findings: dict[tuple[str, str], dict[str, Any]] = {}
    for key, authors in sorted(writers.items()):
        ordered = sorted(authors)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                where = _concurrent(paths, parallel, a, b)
                if where is None or (where, key) in findings:
                    continue
                output_key = output_keys.get(a) == key and output_keys.get(b) == key
                pattern = "parallel children share an output_key" if output_key else "parallel branches write the same state key"
                probes = ["adk/output-key/same-key", "adk/parallel-agent/same-key"] if output_key else ["adk/parallel-agent/same-key"]
                seen = met.get((key, frozenset((a, b))))
                if seen is not None:
                    certainty = "recorded"
                    how = f"your test {seen[0]}: {' and '.join(seen[1])} each wrote {key!r} in one invocation"
                    precondition = (
                        f"{a} and {b} run in branches of ParallelAgent {where} and each writes {key!r}, as your tests"
                        " saw in one run; nothing merges their writes, the last to arrive is kept"
                    )
                else:
                    certainty = "recorded-static"
                    how = f"your tests saw {a} and {b} write {key!r}; the tree runs them in branches of ParallelAgent {where}"
                    precondition = (
                        f"{a} and {b} run in branches of ParallelAgent {where} and each writes {key!r}, as your tests"
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
    leaves = {path[-1] for path, agent in nodes if not (getattr(agent, "sub_agents", None) or [])}
    return {
        "framework": "adk",
        "kind": "recorded",
        "name": str(getattr(root, "name", "") or "an agent tree"),
        "channels": [{"key": key, "policy": POLICY, "channel": "LastValue"} for key in sorted(writers)],
        "parallel": sorted(
            sorted(str(getattr(child, "name", "?")) for child in getattr(agent, "sub_agents", None) or [])
            for path, agent in nodes
            if parallel[path]
        ),
        "writes": {
            node: {"keys": sorted(k for k, ns in writers.items() if node in ns), "how": "recorded"}
            for node in sorted(seen_nodes)
        },
        "findings": list(findings.values()),
        "recorded": {
            "runs": len(runs),
            "tests": sorted({run["test"] for run in runs if run["test"]}),
            "outside_tests": sum(1 for run in runs if not run["test"]),
            "never_ran": sorted(leaves - {author for run in runs for author in run.get("authors", [])}),
            "seen_together": sorted({tuple(sorted(pair)) for (_, pair) in met}),
            "met_by_key": {k: sorted(sorted(p) for (key, p) in met if key == k) for k in sorted({key for key, _ in met})},
            "unit": "invocation",
            "writers": {key: sorted(nodes) for key, nodes in sorted(writers.items())},
        },
    }
