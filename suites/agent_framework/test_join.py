"""Joins: when a fan-in executor runs, how often, and what it receives."""

from collections.abc import Callable
from typing import Any

from agent_framework import WorkflowBuilder

import af_kit
from af_kit import Node, forward
from fanin.probe import Claim, Observer, probe

SRC = "https://github.com/microsoft/agent-framework/blob/python-1.0.0/python/packages/core/agent_framework/_workflows"


def _unequal_depth(wire: Callable[[Any, dict[str, Node]], object]) -> tuple[Any, list[list[str]]]:
    """`start` fans out to `a` and `b -> b2`; `wire(builder, nodes)` connects them to `join`."""
    join_runs: list[list[str]] = []

    async def join(node_id: str, messages: str | list[str], ctx: Any) -> None:
        join_runs.append(messages if isinstance(messages, list) else [messages])

    nodes = {name: Node(name, forward) for name in ("start", "a", "b", "b2")}
    nodes["join"] = Node("join", join)
    builder = (
        WorkflowBuilder(start_executor=nodes["start"])
        .add_fan_out_edges(nodes["start"], [nodes["a"], nodes["b"]])
        .add_edge(nodes["b"], nodes["b2"])
    )
    wire(builder, nodes)
    return builder.build(), join_runs


def _record_join(obs: Observer, join_runs: list, trace: dict, complete: set) -> None:
    partial = [saw for saw in join_runs if not complete <= set(saw)]
    obs.record(
        {"join_runs": join_runs, "runs": len(join_runs), "partial": partial, "last_state": trace["last_state"]},
        label=f"join ×{len(join_runs)}" + (", on partial input" if partial else ""),
        detail=f"join ran {len(join_runs)} time(s), receiving {join_runs}; the run ended {trace['last_state']}",
        hazard="safe" if len(join_runs) == 1 and not partial else "silent",
    )


@probe(
    "agent_framework/join/unequal-depth",
    title="`a` and `b -> b2` fan in to `join` with add_fan_in_edges([a, b2], join)",
    claim=Claim(
        "A fan-in edge group is synchronised: the target runs only once all its sources have sent, so after"
        " branches of unequal depth it runs once, a superstep after the longer branch, with both messages.",
        f"{SRC}/_workflow_builder.py#L461-L475",
        expect={"value.runs": 1, "value.join_runs[0]": ["a", "b2"]},
    ),
)
async def test_unequal_depth(obs: Observer) -> None:
    workflow, join_runs = _unequal_depth(lambda builder, n: builder.add_fan_in_edges([n["a"], n["b2"]], n["join"]))
    with obs.framework():
        trace = await af_kit.run(workflow)
    obs.require_same_step({n: trace["steps"][n][0] for n in ("a", "b")}, expected=2, what="branches")
    _record_join(obs, join_runs, trace, {"a", "b2"})


@probe(
    "agent_framework/join/separate-edges",
    title="`a` and `b -> b2` fan in to `join` with two add_edge calls (a -> join, b2 -> join)",
    claim=Claim(
        "A single edge delivers each message on its own: with two separate edges the target runs once per"
        " message, so after branches of unequal depth `join` runs twice, each time with one branch's result.",
        f"{SRC}/_workflow_builder.py#L180-L200",
        expect={"value.runs": 2, "hazard": "silent"},
    ),
)
async def test_separate_edges(obs: Observer) -> None:
    def wire(builder: Any, n: dict[str, Node]) -> None:
        builder.add_edge(n["a"], n["join"]).add_edge(n["b2"], n["join"])

    workflow, join_runs = _unequal_depth(wire)
    with obs.framework():
        trace = await af_kit.run(workflow)
    obs.require_same_step({n: trace["steps"][n][0] for n in ("a", "b")}, expected=2, what="branches")
    _record_join(obs, join_runs, trace, {"a", "b2"})


@probe(
    "agent_framework/join/fan-in-plus-edge",
    title="`join` waits on add_fan_in_edges([a, b2], join) and also has a plain edge from the fan-out node",
    claim=Claim(
        "Edge groups into one executor are independent: a plain edge next to a fan-in group delivers its"
        " message at once, so `join` runs early on partial input and again when the group completes.",
        f"{SRC}/_runner.py#L160-L181",
        expect={"value.runs": 2, "hazard": "silent"},
    ),
)
async def test_fan_in_plus_edge(obs: Observer) -> None:
    def wire(builder: Any, n: dict[str, Node]) -> None:
        builder.add_fan_in_edges([n["a"], n["b2"]], n["join"]).add_edge(n["start"], n["join"])

    workflow, join_runs = _unequal_depth(wire)
    with obs.framework():
        trace = await af_kit.run(workflow)
    obs.require_same_step({n: trace["steps"][n][0] for n in ("a", "b")}, expected=2, what="branches")
    _record_join(obs, join_runs, trace, {"a", "b2"})


@probe(
    "agent_framework/join/unselected-branch",
    title="A multi-selection edge group from `start` to [a, b] selects only `a`; add_fan_in_edges([a, b], join)"
    " yields the workflow's output",
    claim=Claim(
        "A fan-in target runs only once all its sources have sent: when a multi-selection group picks one"
        " branch, the fan-in over both never fires, and the run ends with nothing left to deliver (idle),"
        " with no output and no error.",
        f"{SRC}/_edge_runner.py#L371-L376",
        expect={"value.join_runs": 0, "value.outputs": [], "value.raises": "(absent)"},
    ),
    sources=[f"{SRC}/_workflow_builder.py#L375-L400"],
)
async def test_unselected_branch(obs: Observer) -> None:
    join_runs: list[list[str]] = []

    async def join(node_id: str, messages: list[str], ctx: Any) -> None:
        join_runs.append(messages)
        await ctx.yield_output(messages)

    start, a, b, joiner = Node("start", forward), Node("a", forward), Node("b", forward), Node("join", join)
    workflow = (
        WorkflowBuilder(start_executor=start)
        .add_multi_selection_edge_group(start, [a, b], selection_func=lambda message, targets: targets[:1])
        .add_fan_in_edges([a, b], joiner)
        .build()
    )
    # The run ends by itself when nothing is left to deliver; `bound` only breaks a hang, recorded as one.
    trace = await af_kit.run(workflow, catch=True, bound=10.0)
    ran = sorted(trace["steps"])
    value = {
        "ran": ran,
        "join_runs": len(join_runs),
        "outputs": trace["outputs"],
        "last_state": trace["last_state"],
        **({"raises": trace["raises"]} if "raises" in trace else {}),
        **({"hung": True} if trace.get("hung") else {}),
    }
    if "raises" in trace:
        label, hazard = f"raises {trace['raises']}", "loud"
    elif trace.get("hung"):
        label, hazard = "hangs", "silent"
    else:
        label = "join never runs; ends " + str(trace["last_state"]) if not join_runs else f"join ×{len(join_runs)}"
        hazard = "silent" if not join_runs or not trace["outputs"] else "safe"
    obs.record(
        value,
        label=label,
        detail=f"executors that ran: {ran}; join ran {len(join_runs)} time(s); outputs {trace['outputs']};"
        f" the run ended {trace['last_state']}" + (f", raising {trace['raises']}" if "raises" in trace else ", no error"),
        hazard=hazard,
    )


@probe(
    "agent_framework/join/stale-arrival-next-run",
    title="The same workflow run twice: run 1 selects only `a` (the fan-in over [a, b] never fires), run 2"
    " selects only `b`",
    claim=Claim(
        "A fan-in edge group buffers messages until every source has sent, and the buffer is emptied only when"
        " the target runs; the docs say nothing of runs, so an arrival from a run that never joined still"
        " counts in the next run of the same workflow.",
        f"{SRC}/_edge_runner.py#L278-L330",
        expect={"value.join_runs[0]": ["a@run 1", "b@run 2"]},
    ),
)
async def test_stale_arrival_next_run(obs: Observer) -> None:
    join_runs: list[list[str]] = []
    selected = ["a"]

    async def relay(node_id: str, message: str, ctx: Any) -> None:
        await ctx.send_message(message)

    async def tag(node_id: str, message: str, ctx: Any) -> None:
        await ctx.send_message(f"{node_id}@{message}")

    async def join(node_id: str, messages: list[str], ctx: Any) -> None:
        join_runs.append(list(messages))
        await ctx.yield_output(messages)

    start, a, b, joiner = Node("start", relay), Node("a", tag), Node("b", tag), Node("join", join)
    workflow = (
        WorkflowBuilder(start_executor=start)
        .add_multi_selection_edge_group(start, [a, b], selection_func=lambda message, targets: list(selected))
        .add_fan_in_edges([a, b], joiner)
        .build()
    )
    with obs.framework():
        first = await af_kit.run(workflow, "run 1")
        selected[:] = ["b"]
        second = await af_kit.run(workflow, "run 2")
    stale = [saw for saw in join_runs if any("@run 1" in item for item in saw)]
    obs.record(
        {
            "join_runs": join_runs,
            "outputs": {"run 1": first["outputs"], "run 2": second["outputs"]},
            "stale": stale,
        },
        label="run 1's arrival joins run 2" if stale else f"join ×{len(join_runs)}, no stale arrival",
        detail=f"run 1 outputs {first['outputs']}; run 2 outputs {second['outputs']}; join received {join_runs}",
        hazard="silent" if stale else "safe",
    )
