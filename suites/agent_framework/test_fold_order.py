"""The order of the list a fan-in edge group hands its target."""

from typing import Any

from agent_framework import WorkflowBuilder

import af_kit
from af_kit import Node, forward
from fanin.probe import Claim, Observer, probe
from gates import Turns

SRC = "https://github.com/microsoft/agent-framework/blob/python-1.0.0/python/packages/core/agent_framework/_workflows"


@probe(
    "agent_framework/fold-order/fan-in-list",
    title="Three branches into add_fan_in_edges: fan-out order, fan-in declaration order, finishing order and"
    " name order all differ; two such cases",
    claim=Claim(
        "A fan-in edge group buffers each source's messages and, once every source has sent, hands the target"
        " one list in the order of the group's edges (the sources as declared in add_fan_in_edges), not in the"
        " order the branches finished.",
        f"{SRC}/_edge_runner.py#L325-L330",
        expect={"value.rule": "fan-in declaration order"},
    ),
)
async def test_fan_in_list(obs: Observer) -> None:
    cases = {
        "fan-out b,c,a; fan-in c,a,b; finished b,a,c": (["b", "c", "a"], ["c", "a", "b"], ["b", "a", "c"]),
        "fan-out c,a,b; fan-in b,c,a; finished c,b,a": (["c", "a", "b"], ["b", "c", "a"], ["c", "b", "a"]),
    }
    observed: dict[str, dict[str, Any]] = {}
    for case, (fan_out, fan_in, finish) in cases.items():
        turns = Turns(finish)
        received: list = []

        async def branch(node_id: str, message: str, ctx: Any, turns: Turns = turns) -> None:
            await turns.wait(node_id)
            await ctx.send_message(node_id)
            turns.done(node_id)

        async def join(node_id: str, messages: list[str], ctx: Any, received: list[Any] = received) -> None:
            received.append(list(messages))

        start, joiner = Node("start", forward), Node("join", join)
        nodes = {name: Node(name, branch) for name in ("a", "b", "c")}
        workflow = (
            WorkflowBuilder(start_executor=start)
            .add_fan_out_edges(start, [nodes[n] for n in fan_out])
            .add_fan_in_edges([nodes[n] for n in fan_in], joiner)
            .build()
        )
        with obs.framework():
            trace = await af_kit.run(workflow)
        obs.require_in_flight(turns)
        obs.require_same_step({n: trace["steps"][n][0] for n in fan_out}, expected=3, what="branches")
        got = received[0] if len(received) == 1 else received
        if got == fan_in:
            rule = "fan-in declaration order"
        elif got == turns.acted:
            rule = "completion order"
        elif got == fan_out:
            rule = "fan-out order"
        elif got == sorted(fan_in):
            rule = "by name"
        else:
            rule = "other"
        observed[case] = {"list": got, "finished": turns.acted, "rule": rule}
    rules = {c["rule"] for c in observed.values()}
    rule = rules.pop() if len(rules) == 1 else "mixed"
    obs.record(
        {"cases": observed, "rule": rule},
        label=f"order: {rule}",
        detail=f"the fan-in list follows the {rule} in every case: {[c['list'] for c in observed.values()]}"
        if rule != "mixed"
        else f"the fan-in list order differs by case: {[c['rule'] for c in observed.values()]}",
        hazard="order-coupled",
    )
