"""The LangGraph inspector's findings: each only where the precondition of the probe it cites holds in this graph,
with how it is known. Part of suites/langgraph/audit.py.
"""

import itertools
from collections import defaultdict
from typing import Any

from audit_lg_source import END, START
from audit_lg_graph import _reachable, _reaches_avoiding, Graph, Node, Walk


def _pairs(walk: Walk) -> dict[frozenset[str], None]:
    out: dict[frozenset[str], None] = {}
    for group in sorted(walk.together, key=sorted):
        for a, b in itertools.combinations(sorted(group), 2):
            out[frozenset({a, b})] = None
    return out


def _names(nodes: list[str]) -> str:
    return " and ".join(", ".join(nodes[:-1]).split(", ") + [nodes[-1]]) if len(nodes) > 1 else nodes[0]


def _order_probes(via_send: bool) -> list[str]:
    return [
        "langgraph/reducers/commutativity",
        "langgraph/send/order" if via_send else "langgraph/fold-order/node-names",
    ]


class _Findings:
    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}

    def add(self, key: tuple[str, str], finding: dict[str, Any]) -> None:
        if key not in self.items:
            self.items[key] = finding
            return
        held = self.items[key]  # another pair writes the same key: name every writer once
        if key[0] in ("plain key written in parallel", "order-sensitive reducer"):
            writers = list(dict.fromkeys([*held["where"][:-1], *finding["where"][:-1]]))
            held["where"] = [*writers, held["where"][-1]]

    def observe(self, key: tuple[str, str], finding: dict[str, Any], how: str, certainty: str = "observed") -> None:
        """A dry-run (or recorded) observation: upgrades the static finding of the same pattern and key, or adds one."""
        if key in self.items:
            if self.items[key]["certainty"] != certainty:
                self.items[key]["certainty"] = certainty
                self.items[key]["how"] = f"{how}; {self.items[key].get('how', '')}".rstrip("; ")
        else:
            self.items[key] = {**finding, "certainty": certainty, "how": how}


def _writers_findings(g: Graph, walk: Walk, policies: dict[str, dict[str, Any]], out: _Findings) -> None:
    """Keys written by two nodes that can share a superstep, or by several Send tasks of one node."""
    nodes = g.nodes
    certainty = {"source": "source", "subgraph": "static", "framework": "static"}
    meets: list[tuple[list[str], bool]] = [(sorted(p), False) for p in _pairs(walk)]
    meets += [([n], True) for n in sorted(walk.several)]
    for group, via_send in meets:
        if any(n not in nodes for n in group):
            continue
        shared = set.intersection(*(nodes[n].writes for n in group)) if not via_send else set(nodes[group[0]].writes)
        how_of = [nodes[n].how for n in group]
        sure = "source" if all(h == "source" for h in how_of) else "static"
        sure = certainty.get(sure, sure)
        routers = sorted(walk.several.get(group[0], ())) if via_send else []
        meet = (
            f"the Send fan-out from {_names(routers)} starts several {group[0]} tasks in one superstep"
            if via_send
            else f"{_names(group)} can run in one superstep"
        )
        subgraphs = [n for n in group if nodes[n].how == "subgraph"]
        for key in sorted(shared):
            row = policies.get(key, {})
            channel = row.get("channel")
            where_nodes = [f"{group[0]} (Send tasks)"] if via_send else group
            how = f"read from the graph: {meet}; " + ", ".join(
                f"{n} writes {key!r} ({'its output schema' if nodes[n].how == 'subgraph' else 'its source'})"
                for n in group
            )
            if channel == "LastValue":
                if len(subgraphs) == len(group) and not via_send:
                    keys = sorted(k for k in shared if policies.get(k, {}).get("channel") == "LastValue")
                    out.add(
                        ("parallel subgraphs sharing state keys", " ".join(group)),
                        {
                            "pattern": "parallel subgraphs sharing state keys",
                            "where": [*group, "keys " + ", ".join(repr(k) for k in keys)],
                            "probes": ["langgraph/subgraph/shared-keys"],
                            "certainty": "static",
                            "how": how,
                            "precondition": f"{meet}, and both return the parent's plain keys {keys} (in their output schema), which have no reducer",
                        },
                    )
                    continue
                full = [n for n in group if nodes[n].full_state]
                probes = (
                    ["langgraph/send/reducer-required"]
                    if via_send
                    else ["langgraph/same-key/full-state-return"]
                    if full
                    else ["langgraph/same-key/no-reducer"]
                )
                out.add(
                    ("plain key written in parallel", key),
                    {
                        "pattern": "plain key written in parallel",
                        "where": [*where_nodes, f"key {key!r}"],
                        "probes": probes,
                        "certainty": sure,
                        "how": how,
                        "precondition": f"{meet}, and {'each writes' if via_send else 'both write'} the plain key {key!r} (LastValue, no reducer)"
                        + (
                            f"; {_names(full)} return{'s' if len(full) == 1 else ''} the whole state"
                            if full and not via_send
                            else ""
                        ),
                    },
                )
            elif channel == "BinaryOperatorAggregate":
                duplicated = [n for n in subgraphs if key in (nodes[n].subgraph_inputs or set())]
                if len(subgraphs) == len(group) and not via_send and row.get("duplicating") is True and duplicated:
                    out.add(
                        ("parallel subgraphs sharing state keys", key),
                        {
                            "pattern": "parallel subgraphs sharing state keys",
                            "where": [*group, f"key {key!r}"],
                            "probes": ["langgraph/subgraph/operator-add-duplication"],
                            "certainty": "static",
                            "how": how,
                            "precondition": f"{meet}; {_names(duplicated)} take{'s' if len(duplicated) == 1 else ''} {key!r} in and return"
                            f" it whole (output schema), and the parent folds it with {row['policy']}, which keeps a value folded in twice twice",
                        },
                    )
                whole = [n for n in group if key in nodes[n].whole_lists]
                if whole and row.get("duplicating") is True:
                    out.add(
                        ("parallel nodes return the whole list", key),
                        {
                            "pattern": "parallel nodes return the whole list",
                            "where": [*whole, f"key {key!r}"],
                            "probes": ["langgraph/reducers/full-state-not-delta"],
                            "certainty": sure,
                            "how": f"{how}; {_names(whole)} return state[{key!r}] + [...]",
                            "precondition": f"{meet}, and {_names(whole)} return the whole list {key!r} plus an item into {row['policy']}",
                        },
                    )
                if row.get("commutative") is False and not row.get("by_id"):
                    out.add(
                        ("order-sensitive reducer", key),
                        {
                            "pattern": "order-sensitive reducer",
                            "where": [*where_nodes, f"key {key!r} ({row['policy']})"],
                            "probes": _order_probes(via_send),
                            "certainty": sure,
                            "how": how,
                            "precondition": f"{meet}, and {'each writes' if via_send else 'both write'} {key!r}, whose reducer"
                            f" ({row['policy']}) gives a different result in the other order on sample values",
                        },
                    )


def _join_findings(g: Graph, walk: Walk, out: _Findings) -> None:
    depth = {n: min(s) for n, s in walk.steps.items() if s}
    incoming: dict[str, set[str]] = defaultdict(set)
    for source, targets in g.static.items():
        for target in targets:
            if source != START:
                incoming[target].add(source)
    for node, sources in sorted(incoming.items()):
        if len(sources) < 2 or node == END or g.nodes.get(node, Node(node)).defer:
            continue
        again = []
        for group in walk.together:
            if node not in group:
                continue
            for other in sorted(group - {node}):
                reach = _reaches_avoiding(g, other, node)
                hit = sorted(s for s in sources if s in reach)
                if hit:
                    again.append((other, hit))
        if again:
            other, hit = again[0]
            depths = {s: depth.get(s) for s in sorted(sources)}
            out.add(
                ("join by separate edges from paths of unequal depth", node),
                {
                    "pattern": "join by separate edges from paths of unequal depth",
                    "where": [node, f"sources {depths}"],
                    "probes": ["langgraph/join/separate-edges", "langgraph/join/unequal-depth-docs-example"],
                    "certainty": "static",
                    "how": f"read from the graph: {node} has separate edges from {sorted(sources)}; it can run in the superstep"
                    f" of {other}, which "
                    + ("is itself one of them" if other in hit else f"still leads to {_names(hit)}"),
                    "precondition": f"{node} joins by separate add_edge calls (not a list edge, not defer=True) branches that"
                    f" reach it in different supersteps, so it runs once per arriving branch",
                },
            )
    for i, partials in sorted(walk.starved.items()):
        waited, node = g.waiting[i]
        partial = min(partials, key=lambda p: (len(p), sorted(p)))
        missing = [s for s in waited if s not in partial]
        out.add(
            ("list-edge join fed by a router", node),
            {
                "pattern": "list-edge join fed by a router",
                "where": [
                    node,
                    f"waits for {list(waited)}; a route can run {_names(sorted(partial))} without {missing}",
                ],
                "probes": ["langgraph/join/unselected-branch", "langgraph/join/list-edge"],
                "certainty": "static",
                "how": "read from the graph: the routers' declared targets and the list edge",
                "precondition": f"add_edge({list(waited)}, {node!r}) waits for all of them, and a router can select"
                f" {sorted(partial)} without {missing}: the run then ends without {node}",
            },
        )


def _command_findings(g: Graph, out: _Findings) -> None:
    for name, decisions in sorted(g.choices.items()):
        commands = [r for what, r in decisions if what == "Command"]
        extra = sorted(t for t in g.static.get(name, ()) if t != END)
        if not commands or not extra:
            continue
        goto = sorted(commands[0].targets - {END})
        out.add(
            ("Command routing beside a static edge", name),
            {
                "pattern": "Command routing beside a static edge",
                "where": [name, f"Command(goto={goto}) and add_edge to {extra}"],
                "probes": ["langgraph/command/static-edge-still-runs"],
                "certainty": "static",
                "how": f"read from the graph: {name} routes with Command and also has static edges to {extra}",
                "precondition": f"{name} returns Command(goto=...) and has add_edge({name!r}, ...): the static edge runs as well",
            },
        )


def _structure_findings(g: Graph, out: _Findings) -> None:
    if g.unknown_routes:
        return  # a route nobody can read may reach any node: no node is provably dead
    reachable = _reachable(g)
    targets = set().union(*g.static.values()) if g.static else set()
    for decisions in g.choices.values():
        for _, routes in decisions:
            targets |= routes.targets | set(routes.sends)
    targets |= {t for _, t in g.waiting}
    for node in sorted(set(g.nodes) - reachable):
        if node in targets:
            out.add(
                ("dead join", node),
                {
                    "pattern": "dead join",
                    "where": [node],
                    "probes": [],
                    "certainty": "static",
                    "how": "read from the graph: edges, conditional edges, Command ends and Send targets; none from START reaches it",
                    "precondition": f"{node} has incoming edges, but no path from START leads to all of them",
                },
            )


def _dry_run_findings(
    run: dict[str, Any],
    g: Graph,
    policies: dict[str, dict[str, Any]],
    out: _Findings,
    seen: str = "dry run",
    certainty: str = "observed",
) -> None:
    """Findings from writes a run made: `seen` says which run (the dry run, or a test of the user's suite)."""
    observed: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for write in run.get("writes", []):
        for key in write["keys"]:
            observed[write["step"]][key].append(write["node"])  # one entry per task: Send workers share a name
    for step, keys in sorted(observed.items()):
        for key, writers in sorted(keys.items()):
            if len(writers) < 2:
                continue
            row = policies.get(key, {})
            via_send = len(set(writers)) < len(writers)
            names = sorted(set(writers))
            how = f"{seen}, superstep {step}: {len(writers)} tasks of {names} wrote {key!r}"
            meet = f"{len(writers)} tasks of {names} ran in one superstep of the {seen}"
            covered = next(
                (
                    k
                    for k, f in out.items.items()
                    if f["pattern"] == "parallel subgraphs sharing state keys"
                    and set(names) <= set(f["where"])
                    and repr(key) in f["where"][-1]
                ),
                None,
            )
            if covered is not None:
                out.observe(covered, {}, how, certainty)
            elif row.get("channel") == "LastValue":
                out.observe(
                    ("plain key written in parallel", key),
                    {
                        "pattern": "plain key written in parallel",
                        "where": [f"{len(writers)} tasks of {names}", f"key {key!r}"],
                        "probes": ["langgraph/send/reducer-required"]
                        if via_send
                        else ["langgraph/same-key/no-reducer"],
                        "precondition": f"{meet} and each wrote the plain key {key!r} (LastValue, no reducer)",
                    },
                    how,
                    certainty,
                )
            elif row.get("commutative") is False and not row.get("by_id"):
                out.observe(
                    ("order-sensitive reducer", key),
                    {
                        "pattern": "order-sensitive reducer",
                        "where": [*names, f"key {key!r} ({row['policy']})"],
                        "probes": _order_probes(via_send),
                        "precondition": f"{meet} and each wrote {key!r}, whose reducer ({row['policy']}) is not commutative on sample values",
                    },
                    how,
                    certainty,
                )
    error = run.get("error") or ""
    if "InvalidUpdateError" in error and not any(
        k[0] in ("plain key written in parallel", "parallel subgraphs sharing state keys") for k in out.items
    ):
        out.add(
            ("plain key written in parallel", "?"),
            {
                "pattern": "plain key written in parallel",
                "where": ["the dry run"],
                "probes": ["langgraph/same-key/no-reducer", "langgraph/send/reducer-required"],
                "certainty": "observed",
                "how": f"the dry run raised {error}",
                "precondition": "the dry run raised InvalidUpdateError: several tasks of one superstep wrote a key without a reducer",
            },
        )
