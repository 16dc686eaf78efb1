"""`fanin record` on an Agent Framework workflow: the shared-state writes a test suite's runs made, crossed with
which executors can run in one superstep (the inspector's walk). A lower bound: only the runs the tests made.
Part of suites/agent_framework/audit.py, which hands it the walk.

Agent Framework buffers every `set_state` of a superstep and commits the buffer at the superstep's end: two
executors that set one key in one superstep leave the last to finish (agent_framework/same-key/last-writer).
Two writers seen in one superstep of one run: "recorded". Writers seen only apart, which the workflow's edges
let run in one superstep: "recorded-static".
"""

from collections import defaultdict
from typing import Any

POLICY = "set_state (one buffer per superstep: the last set is kept)"
PROBES = ["agent_framework/same-key/last-writer"]


def _name(workflow: Any) -> str:
    """The workflow's own name, else where it starts (a builder names it WorkflowBuilder-<uuid>, new every build)."""
    name = str(getattr(workflow, "name", "") or "")
    if name and not name.startswith("WorkflowBuilder-"):
        return name
    start = getattr(workflow, "start_executor_id", None)
    return f"workflow from {start}" if start else "a workflow"


def recorded(workflow: Any, together: set[tuple[str, str]] | None, runs: list[dict[str, Any]]) -> dict[str, Any]:
    meet = {frozenset(pair) for pair in together or set()}
    writers: dict[str, set[str]] = defaultdict(set)
    met: dict[tuple[str, frozenset[str]], str] = {}  # (key, pair) -> where it was seen
    seen_steps: set[frozenset[str]] = set()
    for run in runs:
        by_step: dict[tuple[int, str], set[str]] = defaultdict(set)
        nodes_in_step: dict[int, set[str]] = defaultdict(set)
        for write in run["writes"]:
            nodes_in_step[write["step"]].add(write["node"])
            for key in write["keys"]:
                writers[key].add(write["node"])
                by_step[(write["step"], key)].add(write["node"])
        seen_steps |= {frozenset(n) for n in nodes_in_step.values() if len(n) > 1}
        for (step, key), names in by_step.items():
            ordered = sorted(names)
            for i, a in enumerate(ordered):
                for b in ordered[i + 1 :]:
                    met.setdefault((key, frozenset((a, b))), f"your test {run['test'] or '(outside a test)'}, superstep {step}")
    findings: dict[tuple[str, str], dict[str, Any]] = {}
    for key, authors in sorted(writers.items()):
        ordered = sorted(authors)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                pair = frozenset((a, b))
                seen = met.get((key, pair))
                if seen is None and pair not in meet:
                    continue  # never together, and the edges never put them in one superstep
                if (key, "recorded") in findings:
                    continue
                where = [f"{a}, {b}", f"shared-state key {key!r}: {a} (set_state), {b} (set_state)"]
                if seen is not None:
                    finding = {
                        "certainty": "recorded",
                        "how": f"{seen}: {a} and {b} each set {key!r}",
                        "precondition": f"{a} and {b} run in one superstep and each sets {key!r}, as your tests saw:"
                        " the writes go to one buffer committed at the superstep's end, and the last to finish wins",
                    }
                elif (key, "recorded-static") in findings:
                    continue
                else:
                    finding = {
                        "certainty": "recorded-static",
                        "how": f"your tests saw {a} and {b} set {key!r}; the workflow's edges run them in one superstep",
                        "precondition": f"{a} and {b} run in one superstep and each sets {key!r}, as your tests saw;"
                        " never seen in one superstep by them",
                    }
                findings[(key, finding["certainty"])] = {
                    "pattern": "parallel executors set one shared-state key",
                    "where": where,
                    "probes": PROBES,
                    **finding,
                }
    for key in [k for k, c in findings if c == "recorded"]:
        findings.pop((key, "recorded-static"), None)  # seen together is the stronger evidence
    executors = sorted(str(name) for name in getattr(workflow, "executors", {}) or {})
    ran = {w["node"] for run in runs for w in run["writes"]}
    return {
        "framework": "agent_framework",
        "kind": "recorded",
        "name": _name(workflow),
        "channels": [{"key": key, "policy": POLICY, "channel": "LastValue"} for key in sorted(writers)],
        "parallel": sorted(sorted(pair) for pair in meet),
        "writes": {
            node: {"keys": sorted(k for k, ns in writers.items() if node in ns), "how": "recorded"} for node in sorted(ran)
        },
        "findings": list(findings.values()),
        "recorded": {
            "runs": len(runs),
            "tests": sorted({run["test"] for run in runs if run["test"]}),
            "outside_tests": sum(1 for run in runs if not run["test"]),
            "never_wrote": sorted(set(executors) - ran),
            "seen_together": sorted(sorted(group) for group in seen_steps),
            "met_by_key": {k: sorted(sorted(p) for (key, p) in met if key == k) for k in sorted({key for key, _ in met})},
            "unit": "superstep",
            "writers": {key: sorted(nodes) for key, nodes in sorted(writers.items())},
        },
    }
