"""Mitigations of the ADK 2.x workflow hazards: what the node after a JoinNode (or a plain fan-in) receives.

Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. Each
probe is its hazard probe's workflow (same nodes, same gates) with the fix applied in the node after
the fan-in; where the hazard depends on which predecessor finishes first, both orders run and the
collector's result must be the same. Every probe is `n/a` before 2.0 (no google.adk.workflow).
"""

from typing import Any

from gates import Turns
from adk_kit import FAN_IN_SAMPLE, gated, run_workflow, sorted_dict

from fanin.probe import Claim, Observer, probe
from mitigation import judge, words

JOIN_NODE_SOURCE = "https://github.com/google/adk-python/blob/main/src/google/adk/workflow/_join_node.py"


def plain(value: Any) -> Any:
    """A joined value as plain data (a validated input_schema model becomes its dict)."""
    return value.model_dump() if hasattr(value, "model_dump") else value


@probe(
    "adk/workflow/join-input-schema-mitigated",
    title="join-input-schema, mitigated: the node after the JoinNode (input_schema Score) checks every predecessor's"
    " output for None and raises on a missing one; a valid, an invalid and a None output",
    claim=Claim(
        "A collector that validates None explicitly never proceeds with a missing predecessor output: valid inputs"
        " pass, invalid ones are refused by the JoinNode's schema, None by the collector.",
        JOIN_NODE_SOURCE,
        expect={"value.variants.none.runs.run.raises": "ValueError", "value.lost": []},
    ),
)
async def test_join_input_schema_mitigated(obs: Observer) -> None:
    Workflow, JoinNode = obs.need("google.adk.workflow", "Workflow", "JoinNode")
    from pydantic import BaseModel

    class Score(BaseModel):
        score: int  # not Optional: a None is a missing result, never a score

    predecessors = ("market", "risk")

    async def run(risk_output: Any, order: list[str]) -> dict:
        turns = Turns(order)
        received: list = []

        def collect(node_input: Any) -> str:
            missing = [name for name in predecessors if not isinstance(node_input, dict) or node_input.get(name) is None]
            if missing:
                raise ValueError(f"missing predecessor output: {missing}")
            received.append({name: plain(node_input[name]) for name in predecessors})
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
        if "raises" in result:
            return {"raises": result["raises"]}
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        made = {"market": {"score": 1}, **({"risk": risk_output} if risk_output is not None else {})}
        used = received[0] if len(received) == 1 else {}
        return {
            "made": [f"{k}: {v}" for k, v in made.items()],
            "kept": [f"{k}: {v}" for k, v in made.items() if used.get(k) == v],
            "wrong": [f"collect ran {len(received)} times"] if len(received) != 1 else [],
            "result": used,
        }

    variants = {
        "valid": {"risk first": await run({"score": 3}, ["risk", "market"]), "market first": await run({"score": 3}, ["market", "risk"])},
        "invalid": {"run": await run({"grade": "high"}, ["risk", "market"])},
        "none": {"run": await run(None, ["risk", "market"])},
    }
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    if hazard == "loud" and variants["valid"]["risk first"].get("kept"):
        label = "valid kept; invalid, None stop the run"
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/workflow/join-none-output-mitigated",
    title="join-none-output, mitigated: the node after the JoinNode treats a None value as a missing result and"
    " decides explicitly (risk may be missing; anything else may not); both completion orders",
    claim=Claim(
        "A None in the joined dict is a missing result: a collector that says so explicitly never passes it on as a"
        " value, and proceeds only where the missing result is allowed.",
        "https://github.com/google/adk-js/pull/687",
        expect={"hazard": "safe"},
    ),
)
async def test_join_none_output_mitigated(obs: Observer) -> None:
    Workflow, JoinNode = obs.need("google.adk.workflow", "Workflow", "JoinNode")
    may_be_missing = {"risk"}

    async def run(order: list[str]) -> dict:
        turns = Turns(order)
        received: list = []

        def collect(node_input: Any) -> dict:
            joined = node_input if isinstance(node_input, dict) else {}
            missing = sorted(name for name in ("market", "risk") if joined.get(name) is None)
            if set(missing) - may_be_missing:
                raise ValueError(f"required results missing: {sorted(set(missing) - may_be_missing)}")
            decision = {"results": {k: v for k, v in sorted(joined.items()) if v is not None}, "missing": missing}
            received.append(decision)
            return decision

        workflow = Workflow(
            name="wf",
            edges=[("START", (gated(turns, "market", {"price": 10}), gated(turns, "risk", None)), JoinNode(name="join"), collect)],
        )
        result = await obs.attempt_async(lambda: run_workflow(workflow))
        if "raises" in result:
            return {"raises": result["raises"]}
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        decision = received[0] if len(received) == 1 else {}
        made = {"market": {"price": 10}}  # risk returned None: no result
        wrong = [f"collect ran {len(received)} times"] if len(received) != 1 else []
        wrong += [f"{k} passed on as a value: None" for k, v in decision.get("results", {}).items() if v is None]
        return {
            "made": [f"{k}: {v}" for k, v in made.items()],
            "kept": [f"{k}: {v}" for k, v in made.items() if decision.get("results", {}).get(k) == v],
            "wrong": wrong,
            "result": decision,
        }

    variants = {"None treated as missing": {"risk first": await run(["risk", "market"]), "market first": await run(["market", "risk"])}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe="None flagged missing, order-independent")
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/workflow/join-renamed-node-mitigated",
    title="join-renamed-node, mitigated: the collector reads the joined results through name constants shared with"
    " the node definitions and checks the keys it sees; as 'risk', then renamed 'risk_v2'",
    claim=Claim(
        "Reading joined results through constants shared with the node definitions (and testing the keys) keeps a"
        " rename from silently changing what the collector reads.",
        FAN_IN_SAMPLE,
        expect={"hazard": "safe"},
    ),
)
async def test_join_renamed_node_mitigated(obs: Observer) -> None:
    Workflow, JoinNode, node = obs.need("google.adk.workflow", "Workflow", "JoinNode", "node")

    async def run(RISK: str) -> dict:
        MARKET = "market"
        turns = Turns(["risk", "market"])
        received: list = []

        def collect(node_input: Any) -> str:
            joined = node_input if isinstance(node_input, dict) else {}
            received.append({"keys_match": sorted(joined) == sorted([MARKET, RISK]), "market": joined.get(MARKET), "risk": joined.get(RISK)})
            return "report"

        risk_node = node(gated(turns, "risk", {"score": 3}), name=RISK)
        workflow = Workflow(
            name="wf",
            edges=[("START", (gated(turns, MARKET, {"price": 10}), risk_node), JoinNode(name="join"), collect)],
        )
        result = await obs.attempt_async(lambda: run_workflow(workflow))
        if "raises" in result:
            return {"raises": result["raises"]}
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        read = received[0] if len(received) == 1 else {}
        made = {"market": {"price": 10}, "risk": {"score": 3}}
        wrong = [f"collect ran {len(received)} times"] if len(received) != 1 else []
        wrong += [] if read.get("keys_match") else ["the keys collect sees differ from the constants"]
        return {
            "made": [f"{k}: {v}" for k, v in made.items()],
            "kept": [f"{k}: {v}" for k, v in made.items() if read.get(k) == v],
            "wrong": wrong,
            "result": read,
        }

    variants = {"names read through shared constants": {"as 'risk'": await run("risk"), "renamed 'risk_v2'": await run("risk_v2")}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe="rename-proof: keys checked, both read")
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/workflow/plain-fan-in-mitigated",
    title="plain-fan-in, mitigated: a JoinNode before the node that needs both predecessors' outputs; both"
    " completion orders",
    claim=Claim(
        "With a JoinNode before it, the collector runs once and receives every predecessor's output, whichever"
        " finishes first.",
        "https://github.com/google/adk-go/pull/1041",
        expect={"hazard": "safe"},
    ),
)
async def test_plain_fan_in_mitigated(obs: Observer) -> None:
    Workflow, JoinNode = obs.need("google.adk.workflow", "Workflow", "JoinNode")

    async def run(order: list[str]) -> dict:
        turns = Turns(order)
        received: list = []

        def collect(node_input: Any) -> str:
            received.append(node_input)
            return "report"

        workflow = Workflow(
            name="wf",
            edges=[("START", (gated(turns, "market", {"price": 10}), gated(turns, "risk", {"score": 3})), JoinNode(name="join"), collect)],
        )
        result = await obs.attempt_async(lambda: run_workflow(workflow))
        if "raises" in result:
            return {"raises": result["raises"]}
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        made = {"market": {"price": 10}, "risk": {"score": 3}}
        every = [r for r in received if isinstance(r, dict)]
        return {
            "made": [f"{k}: {v}" for k, v in made.items()],
            "kept": [f"{k}: {v}" for k, v in made.items() if every and all(r.get(k) == v for r in every)],
            "wrong": [f"collect ran {len(received)} times"] if len(received) != 1 else [],
            "result": {"collect_runs": len(received), "received": [sorted_dict(r) for r in received]},
        }

    variants = {"JoinNode before collect": {"risk first": await run(["risk", "market"]), "market first": await run(["market", "risk"])}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe="collect ×1 with both, order-independent")
    obs.record(value, label=label, detail=detail, hazard=hazard)
