"""Mitigations of the ADK 2.x workflow hazards: what the node after a JoinNode (or a plain fan-in) receives.

Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. Each
probe is its hazard probe's workflow (same nodes, same gates) with the fix applied in the node after
the fan-in; where the hazard depends on which predecessor finishes first, both orders run and the
collector's result must be the same. Every probe is `n/a` before 2.0 (no google.adk.workflow).
"""

from typing import Any

from gates import Turns
from adk_kit import run_workflow

from fanin.probe import Claim, Observer, probe

JOIN_NODE_SOURCE = "https://github.com/google/adk-python/blob/main/src/google/adk/workflow/_join_node.py"
FAN_IN_SAMPLE = (
    "https://github.com/google/adk-python/blob/main/contributing/samples/workflows/fan_out_fan_in/README.md"
)

# Worst last: a write lost with no error outranks a stopped run, which outranks an order dependence.
RANK = ("safe", "order-coupled", "nondeterministic", "loud", "silent")


def judge(variants: dict[str, dict[str, dict]]) -> tuple[dict, str]:
    """The value and hazard of a mitigation observed in several variants and runs (completion orders).

    `variants[variant][run]` is `{"made": [...], "kept": [...], "result": ...}` (optionally `"wrong"`:
    what went wrong although no write is missing, e.g. a stale value accepted; `"observed"`: shown, not
    compared) or `{"raises": "Name"}`; a variant the version cannot build is `{"n/a": reason}`. Writes
    are named `variant | run | write`. A variant is silent if a write is missing (or something is
    wrong), loud if a run raised, order-coupled if its runs' results differ, safe otherwise; the probe
    is its worst variant.
    """
    made: list[str] = []
    kept: list[str] = []
    lost: list[str] = []
    wrong: list[str] = []
    shown: dict[str, Any] = {}
    hazards: dict[str, str] = {}
    for variant, runs in variants.items():
        if "n/a" in runs:
            shown[variant] = runs
            continue
        found = ["safe"]
        results = []
        for run, seen in runs.items():
            if "raises" in seen:
                found.append("loud")
                results.append(seen)
                continue
            tag = " | ".join([*([variant] if len(variants) > 1 else []), *([run] if len(runs) > 1 else [])])
            named = {w: f"{tag} | {w}" if tag else w for w in seen["made"] + seen.get("wrong", [])}
            made += [named[w] for w in seen["made"]]
            kept += [named[w] for w in seen["made"] if w in seen["kept"]]
            missing = [named[w] for w in seen["made"] if w not in seen["kept"]]
            lost += missing
            wrong += [named[w] for w in seen.get("wrong", [])]
            found.append("silent" if missing or seen.get("wrong") else "safe")
            results.append(seen["result"])
        same = all(result == results[0] for result in results)
        if not same:
            found.append("order-coupled")
        hazards[variant] = max(found, key=RANK.index)
        shown[variant] = {
            "hazard": hazards[variant],
            **({"order_independent": same} if len(runs) > 1 else {}),
            "runs": {
                run: seen if "raises" in seen else {"result": seen["result"], **seen.get("observed", {})}
                for run, seen in runs.items()
            },
        }
    hazard = max(hazards.values(), key=RANK.index) if hazards else "n/a"
    return {"writes": {"made": made, "kept": kept}, "lost": lost, "wrong": wrong, "variants": shown}, hazard


def words(value: dict, hazard: str, safe: str = "every write kept, order-independent") -> tuple[str, str]:
    """A label (at most 40 characters) and a detail line for a judged mitigation."""
    variants = {k: v for k, v in value["variants"].items() if "n/a" not in v}
    total, kept = len(value["writes"]["made"]), len(value["writes"]["kept"])
    if hazard == "safe":
        label = safe
    elif len(variants) == 1:
        label = {
            "order-coupled": "all kept, order-coupled",
            "loud": "raises",
            "silent": f"lost {total - kept} of {total}, {len(value['wrong'])} wrong",
        }.get(hazard, hazard)
    else:
        unsafe = [f"{name.split()[0]}: {v['hazard']}" for name, v in variants.items() if v["hazard"] != "safe"]
        label = "; ".join(unsafe) + ("; rest safe" if len(unsafe) < len(variants) else "")
    label = label if len(label) <= 40 else label[:39] + "…"
    detail = f"{kept} of {total} writes kept" + (f"; wrong: {value['wrong']}" if value["wrong"] else "") + "; "
    detail += "; ".join(
        f"{name}: n/a ({v['n/a']})" if "n/a" in v else f"{name}: {v['hazard']}, results {[r.get('result', r) for r in v['runs'].values()]}"
        for name, v in value["variants"].items()
    )
    return label, detail


def sorted_dict(value: Any) -> Any:
    """Dict key order of a join's output comes from a set (hash order): sort it before recording."""
    return {k: value[k] for k in sorted(value)} if isinstance(value, dict) else value


def gated(turns: Turns, name: str, output: Any):
    """An async function node named `name` that waits for its turn, then returns `output`."""

    async def branch(node_input: Any) -> Any:
        await turns.wait(name)
        turns.done(name)
        return output

    branch.__name__ = name
    return branch


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
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        if "raises" in result:
            return {"raises": result["raises"]}
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
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        if "raises" in result:
            return {"raises": result["raises"]}
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
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        if "raises" in result:
            return {"raises": result["raises"]}
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
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        if "raises" in result:
            return {"raises": result["raises"]}
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
