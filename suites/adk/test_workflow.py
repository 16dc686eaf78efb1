"""ADK 2.x graph workflows: JoinNode fan-in, a None output, a renamed predecessor, plain fan-in, input schema.

Every probe is `n/a` before 2.0 (no google.adk.workflow). The branches are async
function nodes held by gates, so both are in flight before either finishes and
they finish in a chosen order (risk first, then market).
"""

from typing import Any

from gates import Turns
from adk_kit import FAN_IN_SAMPLE, gated, run_workflow, sorted_dict

from fanin.probe import Claim, Observer, probe


def join_output_persisted(stored_events: list, received: Any) -> bool:
    """Is the value the successor received also the output of an event the session service stored?"""
    return any(getattr(e, "output", None) == received for e in stored_events)


@probe(
    "adk/workflow/join-inputs",
    title="Workflow (START, prepare, (market, risk), JoinNode, collect): what collect receives",
    claim=Claim(
        "The node after a JoinNode receives a dict whose keys are the names of the upstream nodes and whose "
        "values are their outputs.",
        FAN_IN_SAMPLE,
        expect={"value.received": [{"market": {"price": 10}, "risk": {"score": 3}}]},
    ),
)
async def test_join_inputs(obs: Observer) -> None:
    Workflow, JoinNode = obs.need("google.adk.workflow", "Workflow", "JoinNode")
    turns = Turns(["risk", "market"])
    received: list = []

    def prepare(node_input: Any) -> str:
        return "ACME"

    def collect(node_input: Any) -> str:
        received.append(node_input)
        return "report"

    market, risk = gated(turns, "market", {"price": 10}), gated(turns, "risk", {"score": 3})
    workflow = Workflow(name="wf", edges=[("START", prepare, (market, risk), JoinNode(name="join"), collect)])
    with obs.framework():
        _, stored = await run_workflow(workflow)
    obs.require_in_flight(turns)
    value = {
        "collect_runs": len(received),
        "received": [sorted_dict(r) for r in received],
        "join_output_persisted": bool(received) and join_output_persisted(stored, received[0]),
    }
    keys = sorted(received[0]) if len(received) == 1 and isinstance(received[0], dict) else None
    by_name = keys == ["market", "risk"]
    obs.record(
        value,
        label="dict keyed by node name" if by_name else f"collect ran {len(received)}×",
        detail=f"collect runs {len(received)}× and receives {value['received']}"
        + ("; keys are the predecessor node names" if by_name else ""),
        hazard="safe" if by_name and len(received) == 1 else "silent",
    )


@probe(
    "adk/workflow/join-none-output",
    title="One JoinNode predecessor returns None: does the join release, and with what for that key?",
    claim=Claim(
        "The JoinNode barrier releases when every predecessor has completed; a predecessor that completes "
        "without an output releases it too and appears in the joined record as its name mapped to no value "
        "(adk-js documents this as the adk-python behaviour).",
        "https://github.com/google/adk-js/pull/687",
        expect={"value.released": True, "value.risk_key_present": True, "value.risk_value": None},
    ),
)
async def test_join_none_output(obs: Observer) -> None:
    Workflow, JoinNode = obs.need("google.adk.workflow", "Workflow", "JoinNode")
    turns = Turns(["risk", "market"])
    received: list = []

    def collect(node_input: Any) -> str:
        received.append(node_input)
        return "report"

    market, risk = gated(turns, "market", {"price": 10}), gated(turns, "risk", None)
    workflow = Workflow(name="wf", edges=[("START", (market, risk), JoinNode(name="join"), collect)])
    with obs.framework():
        await run_workflow(workflow)
    obs.require_in_flight(turns)
    joined = received[0] if received and isinstance(received[0], dict) else None
    value = {
        "released": bool(received),
        "collect_runs": len(received),
        "risk_key_present": joined is not None and "risk" in joined,
        "risk_value": joined.get("risk") if joined else None,
        "received": [sorted_dict(r) for r in received],
    }
    if not received:
        label, detail, hazard = "join never releases", "collect never runs: the join waits for risk's output", "loud"
    elif value["risk_key_present"]:
        label = f"releases, risk: {value['risk_value']!r}"
        detail = f"the join releases and collect receives risk -> {value['risk_value']!r} with no error"
        hazard = "silent" if value["risk_value"] is None else "safe"
    else:
        label, detail, hazard = "releases, risk key missing", "the join releases and the risk key is absent", "silent"
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/workflow/join-renamed-node",
    title="Renaming a JoinNode predecessor (node(risk, name='risk_v2')) changes the key collect sees",
    claim=Claim(
        "The joined dict is keyed by the names of the upstream nodes, so the key a successor reads follows "
        "the node's name, not the function it wraps.",
        FAN_IN_SAMPLE,
        expect={"value.keys_seen_by_collect.risk_v2": ["market", "risk_v2"]},
    ),
)
async def test_join_renamed_node(obs: Observer) -> None:
    Workflow, JoinNode, node = obs.need("google.adk.workflow", "Workflow", "JoinNode", "node")
    keys = {}
    for variant in ("risk", "risk_v2"):
        turns = Turns(["risk", "market"])
        received: list = []

        def collect(node_input: Any) -> str:
            received.append(node_input)
            return "report"

        risk = gated(turns, "risk", {"score": 3})
        risk_node = risk if variant == "risk" else node(risk, name=variant)
        workflow = Workflow(
            name="wf",
            edges=[("START", (gated(turns, "market", {"price": 10}), risk_node), JoinNode(name="join"), collect)],
        )
        with obs.framework():
            await run_workflow(workflow)
        obs.require_in_flight(turns)
        keys[variant] = sorted(received[0]) if received and isinstance(received[0], dict) else None
    follows = keys["risk_v2"] is not None and "risk_v2" in keys["risk_v2"] and "risk" not in keys["risk_v2"]
    obs.record(
        {"keys_seen_by_collect": keys},
        label="key follows the node name" if follows else "key unchanged by rename",
        detail=f"as 'risk' collect sees keys {keys['risk']}; renamed 'risk_v2' it sees {keys['risk_v2']}",
        hazard="silent" if follows else "safe",
    )


@probe(
    "adk/workflow/plain-fan-in",
    title="Two predecessors feed a plain node (no JoinNode): how often it runs and what it receives",
    claim=Claim(
        "adk-python's graph engine allows plain fan-in: it buffers one trigger per predecessor and runs the "
        "node once per trigger, never concurrently (the adk-go PR describes the Python behaviour).",
        "https://github.com/google/adk-go/pull/1041",
        expect={"value.collect_runs": 2},
    ),
)
async def test_plain_fan_in(obs: Observer) -> None:
    Workflow = obs.need("google.adk.workflow", "Workflow")
    # market is released only once collect has run on risk's output, so the order is forced end to end.
    # If collect waited for both inputs instead, market would never be released: the gate then gives
    # up after `patience` and the run is recorded as vacuous, never as a pass.
    turns = Turns(["risk", "market"], patience=5.0)
    received: list = []

    def collect(node_input: Any) -> str:
        received.append(node_input)
        if len(received) == 1:
            turns.done("risk")
        return "report"

    market, risk = gated(turns, "market", {"price": 10}), gated(turns, "risk", {"score": 3}, mark_done=False)
    with obs.framework():
        workflow = Workflow(name="wf", edges=[("START", (market, risk), collect)])
        await run_workflow(workflow)
    obs.require_in_flight(turns)
    value = {"collect_runs": len(received), "received_in_order": [sorted_dict(r) for r in received]}
    obs.record(
        value,
        label=f"runs {len(received)}×, one input each" if len(received) > 1 else f"runs {len(received)}×",
        detail=f"collect runs {len(received)}× receiving {value['received_in_order']} (risk finished first)",
        hazard="silent" if len(received) > 1 else "safe",
    )


@probe(
    "adk/workflow/join-input-schema",
    title="A JoinNode with an input schema, one predecessor returning a valid, an invalid or a None value",
    claim=Claim(
        "A node's input_schema validates and coerces its input; a JoinNode validates each predecessor's "
        "output against it.",
        "https://github.com/google/adk-python/blob/main/src/google/adk/workflow/_join_node.py",
        expect={"value.invalid.run.raises": "ValidationError", "value.none.collect_runs": 0},
    ),
)
async def test_join_input_schema(obs: Observer) -> None:
    Workflow, JoinNode = obs.need("google.adk.workflow", "Workflow", "JoinNode")
    from pydantic import BaseModel

    class Score(BaseModel):
        score: int

    variants = {}
    for variant, risk_output in (("valid", {"score": 3}), ("invalid", {"grade": "high"}), ("none", None)):
        turns = Turns(["risk", "market"])
        received: list = []

        def collect(node_input: Any) -> str:
            received.append(node_input)
            return "report"

        workflow = Workflow(
            name="wf",
            edges=[
                (
                    "START",
                    (gated(turns, "market", {"score": 1}), gated(turns, "risk", risk_output)),
                    JoinNode(name="join", input_schema=Score),
                    collect,
                )
            ],
        )
        result = await obs.attempt_async(lambda: run_workflow(workflow))
        obs.require_in_flight(turns)
        joined = received[0] if received and isinstance(received[0], dict) else None
        variants[variant] = {
            "run": "returned" if "returned" in result else result,
            "collect_runs": len(received),
            "risk_received": (
                joined["risk"].model_dump() if joined and hasattr(joined.get("risk"), "model_dump")
                else joined.get("risk", "absent") if joined else None
            ),
            "risk_received_type": type(joined.get("risk")).__name__ if joined and "risk" in joined else None,
        }

    def verdict(v: dict) -> str:
        return f"raises {v['run']['raises']}" if v["run"] != "returned" else f"passes {v['risk_received']!r}"

    obs.record(
        variants,
        label=f"invalid {verdict(variants['invalid']).split(' ')[0]}, None {verdict(variants['none']).split(' ')[0]}",
        detail="; ".join(f"{k}: {verdict(v)}" for k, v in variants.items()),
        hazard="silent" if variants["none"]["run"] == "returned" or variants["invalid"]["run"] == "returned" else "loud",
    )
