"""Joins the upstream tests pin: list edges in a loop and beside a single edge, Send to a deferred node, defer beside an unrelated branch."""

import operator
from collections.abc import Callable
from typing import Annotated, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

import lg_modes
from fanin.probe import Claim, Observer, probe


UPSTREAM_TESTS = "https://github.com/langchain-ai/langgraph/blob/f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f/libs/langgraph/tests"


@probe(
    "langgraph/join/list-edge-in-loop",
    title="A loop through `plan`, `a` and `b -> b2` into add_edge([\"a\", \"b2\"], \"join\"): three rounds;"
    " then a round without `a` followed by a round without `b`",
    claim=Claim(
        "A list edge is a barrier that resets when the join runs, so in a loop the join runs once per round,"
        " after both branches of that round (LangGraph's own test loops twice through such a barrier). The"
        " barrier knows nothing of rounds: an arrival from a round that never joined still counts in the next.",
        f"{UPSTREAM_TESTS}/test_pregel.py#L2808",
        expect={"value.every round.join_rounds": [1, 2, 3], "value.round 1 without a, round 2 without b.join_rounds": [2]},
    ),
    sources=["https://github.com/langchain-ai/langgraph/issues/3249"],
    modes=("sync", "async"),
)
def test_list_edge_in_loop(obs: Observer) -> None:
    class State(TypedDict):
        round: int
        items: Annotated[list, operator.add]

    def run(branches_by_round: dict[int, list[str]]) -> dict:
        steps: dict[str, list[int]] = {}
        join_runs: list[dict] = []

        def plan(state: State, config: RunnableConfig) -> dict:
            steps.setdefault("plan", []).append(config["metadata"]["langgraph_step"])
            return {"round": state["round"] + 1}

        def writer(name: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps.setdefault(name, []).append(config["metadata"]["langgraph_step"])
                return {"items": [f"{name}@{state['round']}"]}

            return node

        def join(state: State, config: RunnableConfig) -> dict:
            join_runs.append(
                {"step": config["metadata"]["langgraph_step"], "round": state["round"], "saw": list(state["items"])}
            )
            return {}

        last_round = max(branches_by_round)

        def skipped_a(state: State) -> bool:
            return "a" not in branches_by_round[state["round"]]

        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, plan))
        for name in ["a", "b", "b2"]:
            builder.add_node(name, lg_modes.node(obs, writer(name)))
        builder.add_node("join", lg_modes.node(obs, join))
        builder.add_edge(START, "plan")
        builder.add_conditional_edges("plan", lambda state: branches_by_round[state["round"]], ["a", "b"])
        builder.add_edge("b", "b2")
        # a round without `a` cannot reach the join, so it loops back to `plan` from the end of its b branch
        builder.add_conditional_edges("b2", lambda state: ["plan"] if skipped_a(state) else [], ["plan"])
        builder.add_edge(["a", "b2"], "join")
        builder.add_conditional_edges("join", lambda state: "plan" if state["round"] < last_round else END, ["plan", END])
        final = lg_modes.invoke(obs, builder.compile(), {"round": 0, "items": []})
        join_rounds = [r["round"] for r in join_runs]
        return {"node_steps": steps, "join_runs": join_runs, "join_rounds": join_rounds, "final": final}

    with obs.framework():
        runs = {
            "every round": run({1: ["a", "b"], 2: ["a", "b"], 3: ["a", "b"]}),
            "round 1 without a, round 2 without b": run({1: ["b"], 2: ["a"]}),
        }

    def complete(join_run: dict) -> bool:
        return all(f"{name}@{join_run['round']}" in join_run["saw"] for name in ["a", "b2"])

    every, skipped = runs["every round"], runs["round 1 without a, round 2 without b"]
    per_round = every["join_rounds"] == [1, 2, 3] and all(map(complete, every["join_runs"]))
    stale = [r for r in skipped["join_runs"] if not complete(r)]
    first = "once per round" if per_round else f"rounds {every['join_rounds']}"
    second = "stale arrival joins" if stale else f"skips: join ×{len(skipped['join_runs'])}"
    obs.record(
        runs,
        label=f"{first}; {second}",
        detail=f"every round: join ran in rounds {every['join_rounds']}; a round without a, then one without b:"
        f" join ran in rounds {skipped['join_rounds']} seeing {[r['saw'] for r in skipped['join_runs']]}",
        hazard="silent" if stale or not per_round else "safe",
    )


@probe(
    "langgraph/join/list-edge-plus-single-edge",
    title="`join` waits on add_edge([\"a2\", \"b\"], \"join\") and also has a plain edge (from the fan-out node;"
    " from `b`)",
    claim=Claim(
        "Edges into a node are alternatives, not a combined barrier: a plain edge into a join that also has a"
        " list edge runs it as soon as that one predecessor finishes, on partial state, and again when the"
        " barrier completes (LangGraph's own test expects an early run with an empty answer).",
        f"{UPSTREAM_TESTS}/test_pregel.py#L2710",
        expect={"value.plain edge from the fan-out node.runs": 2, "hazard": "silent"},
    ),
    modes=("sync", "async"),
)
def test_list_edge_plus_single_edge(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    def run(plain_edge_from: str) -> dict:
        steps: dict[str, list[int]] = {}
        join_runs: list[dict] = []

        def writer(name: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps.setdefault(name, []).append(config["metadata"]["langgraph_step"])
                return {"items": [name]}

            return node

        def join(state: State, config: RunnableConfig) -> dict:
            join_runs.append({"step": config["metadata"]["langgraph_step"], "saw": list(state["items"])})
            return {}

        builder = StateGraph(State)
        for name in ["fan", "a1", "a2", "b"]:
            builder.add_node(name, lg_modes.node(obs, writer(name)))
        builder.add_node("join", lg_modes.node(obs, join))
        builder.add_edge(START, "fan")
        builder.add_edge("fan", "a1")
        builder.add_edge("a1", "a2")
        builder.add_edge("fan", "b")
        builder.add_edge(["a2", "b"], "join")
        builder.add_edge(plain_edge_from, "join")
        final = lg_modes.invoke(obs, builder.compile(), {"items": []})
        return {"node_steps": steps, "join_runs": join_runs, "runs": len(join_runs), "final": final}

    with obs.framework():
        runs = {
            "plain edge from the fan-out node": run("fan"),
            "plain edge from b": run("b"),
        }
    partial = {
        case: [r["saw"] for r in result["join_runs"] if not {"a2", "b"} <= set(r["saw"])] for case, result in runs.items()
    }
    counts = ", ".join(f"×{result['runs']}" for result in runs.values())
    early = any(partial.values())
    obs.record(
        runs,
        label=f"join {counts}" + (", early on partial state" if early else ""),
        detail=f"join runs per wiring (from fan, from b): {counts}; runs on partial state: {partial}",
        hazard="silent" if early or any(r["runs"] != 1 for r in runs.values()) else "safe",
    )


@probe(
    "langgraph/join/send-to-deferred",
    title="Send straight to a node added with defer=True while a longer branch is still running",
    claim=Claim(
        "A node added with defer=True runs only when the run is about to end; the docs do not make an exception"
        " for Send, which schedules the node as a push task rather than through its trigger channel.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api-control-flow#defer-node-execution",
        expect={"value.Send only.join_steps": [5]},
    ),
    sources=["https://docs.langchain.com/oss/python/langgraph/graph-api#send"],
    modes=("sync", "async"),
)
def test_send_to_deferred(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    def run(edge_from_long_branch: bool) -> dict:
        steps: dict[str, list[int]] = {}

        def writer(name: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps.setdefault(name, []).append(config["metadata"]["langgraph_step"])
                return {"items": [name]}

            return node

        def join(payload: dict, config: RunnableConfig) -> dict:
            steps.setdefault("join", []).append(config["metadata"]["langgraph_step"])
            return {"items": ["join"]}

        builder = StateGraph(State)
        obs.need_parameter(builder.add_node, "defer", "StateGraph.add_node")
        for name in ["plan", "a", "a2", "a3"]:
            builder.add_node(name, lg_modes.node(obs, writer(name)))
        builder.add_node("join", lg_modes.node(obs, join), defer=True)
        builder.add_edge(START, "plan")
        builder.add_edge("plan", "a")
        builder.add_edge("a", "a2")
        builder.add_edge("a2", "a3")
        builder.add_conditional_edges("plan", lambda state: [Send("join", {"from": "plan"})], ["join"])
        if edge_from_long_branch:
            builder.add_edge("a3", "join")
        final = lg_modes.invoke(obs, builder.compile(), {"items": []})
        return {"node_steps": steps, "join_steps": steps.get("join", []), "final": final}

    with obs.framework():
        runs = {"Send only": run(False), "Send and an edge from a3": run(True)}
    early = {
        case: [s for s in r["join_steps"] if s <= max(r["node_steps"]["a3"])] for case, r in runs.items()
    }
    counts = ", ".join(f"×{len(r['join_steps'])}" for r in runs.values())
    ran_early = any(early.values())
    obs.record(
        runs,
        label=f"join {counts}" + ("; Send runs it early" if ran_early else " at the end"),
        detail=f"join steps per case: {[r['join_steps'] for r in runs.values()]}; long branch ends at step"
        f" {max(runs['Send only']['node_steps']['a3'])}",
        hazard="silent" if ran_early or any(len(r["join_steps"]) != 1 for r in runs.values()) else "safe",
    )


@probe(
    "langgraph/join/defer-unrelated-branch",
    title="A deferred join of `a` and `b` next to an unrelated longer branch, then next to an unrelated loop",
    claim=Claim(
        "A node added with defer=True runs when the run is about to end, i.e. when nothing else is pending:"
        " it waits for branches and loops that do not lead to it.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api-control-flow#defer-node-execution",
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_defer_unrelated_branch(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]
        laps: Annotated[int, operator.add]

    def run(unrelated: str) -> dict:
        steps: dict[str, list[int]] = {}
        join_runs: list[dict] = []

        def writer(name: str) -> Callable[..., dict]:
            def node(state: State, config: RunnableConfig) -> dict:
                steps.setdefault(name, []).append(config["metadata"]["langgraph_step"])
                return {"items": [name], "laps": 1 if name == "loop" else 0}

            return node

        def join(state: State, config: RunnableConfig) -> dict:
            join_runs.append({"step": config["metadata"]["langgraph_step"], "saw": list(state["items"])})
            return {}

        builder = StateGraph(State)
        obs.need_parameter(builder.add_node, "defer", "StateGraph.add_node")
        for name in ["a", "b"]:
            builder.add_node(name, lg_modes.node(obs, writer(name)))
            builder.add_edge(START, name)
            builder.add_edge(name, "join")
        builder.add_node("join", lg_modes.node(obs, join), defer=True)
        if unrelated == "branch":
            for name, after in [("c", START), ("c2", "c"), ("c3", "c2"), ("c4", "c3")]:
                builder.add_node(name, lg_modes.node(obs, writer(name)))
                builder.add_edge(after, name)
        else:
            builder.add_node("loop", lg_modes.node(obs, writer("loop")))
            builder.add_edge(START, "loop")
            builder.add_conditional_edges("loop", lambda state: "loop" if state["laps"] < 4 else END, ["loop", END])
        final = lg_modes.invoke(obs, builder.compile(), {"items": [], "laps": 0})
        others = [s for name, node_steps in steps.items() for s in node_steps]
        return {"node_steps": steps, "join_runs": join_runs, "last_other_step": max(others), "final": final}

    with obs.framework():
        runs = {"unrelated branch c..c4": run("branch"), "unrelated loop, 4 laps": run("loop")}
    early = {
        case: [j["step"] for j in r["join_runs"] if j["step"] <= r["last_other_step"]] for case, r in runs.items()
    }
    waited = not any(early.values()) and all(len(r["join_runs"]) == 1 for r in runs.values())
    obs.record(
        runs,
        label="waits for branch and loop"
        if waited
        else "; ".join(f"×{len(r['join_runs'])}" + (" early" if early[c] else "") for c, r in runs.items()),
        detail=f"join steps per case: {[[j['step'] for j in r['join_runs']] for r in runs.values()]};"
        f" the unrelated work ended at steps {[r['last_other_step'] for r in runs.values()]}",
        hazard="safe" if waited else "silent",
    )
