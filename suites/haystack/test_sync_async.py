"""The same fan-out pipeline run by sync Pipeline.run and by the async runner: which order the join sees."""

from typing import Any, List

from haystack import Pipeline

import hs_kit
from fanin.probe import Claim, Observer, probe
from gates import Turns


@probe(
    "haystack/sync-async/join-order",
    title="start fans out to `b` and `a` (added in that order) joined by a ListJoiner and, on a copy, a"
    " BranchJoiner; run once by Pipeline.run and once asynchronously with `b` forced to finish first",
    claim=Claim(
        "Precondition: the branches are independent and both feed one variadic joiner. Sync Pipeline.run"
        " runs ready components one at a time, ties broken by a lexicographical topological sort (for sibling"
        " branches: by name, not by the order they were added), so"
        " ListJoiner gets [a, b] and BranchJoiner keeps b; the async run starts both at once and delivers"
        " in finishing order, so the same pipeline gives [b, a] and keeps a: the join's result depends on"
        " how the pipeline is run.",
        f"{hs_kit.SRC}/v2.15.2/haystack/core/pipeline/base.py#L1212-L1256",
        expect={"value.differs": True, "hazard": "order-coupled"},
    ),
    sources=(
        f"{hs_kit.SRC}/v2.15.2/haystack/core/pipeline/async_pipeline.py",
        f"{hs_kit.DOCS}/asyncpipeline",
        f"{hs_kit.DOCS}/listjoiner",
    ),
)
async def test_join_order(obs: Observer) -> None:
    ListJoiner, BranchJoiner = obs.need("haystack.components.joiners", "ListJoiner", "BranchJoiner")
    runner = hs_kit.async_runner(obs)
    seen: dict[str, dict[str, Any]] = {}
    for mode in ("sync", "async"):
        result: dict[str, Any] = {}
        for joiner, into, out, field in ((ListJoiner(List[str]), "values", "items", "values"), (BranchJoiner(str), "value", "out", "value")):
            ran: list[str] = []
            gate = Turns(["b", "a"]) if mode == "async" else None
            pipeline = hs_kit.fan(Pipeline() if gate is None else runner(), ["b", "a"], joiner, into, ran, gate, out)
            data = {"start": {"text": "go"}}
            outputs = pipeline.run(data) if gate is None else await pipeline.run_async(data)
            if gate is not None:
                obs.require_in_flight(gate)
            result["ran"] = ran
            result["list" if field == "values" else "survivor"] = outputs["join"][field]
        seen[mode] = result
    differs = seen["sync"] != seen["async"]
    obs.record(
        {**seen, "differs": differs},
        label="sync and async differ" if differs else "sync and async agree",
        detail="; ".join(
            f"{mode}: ran {r['ran']}, ListJoiner {r['list']}, BranchJoiner kept {r['survivor']!r}" for mode, r in seen.items()
        ),
        hazard="order-coupled" if differs else "safe",
    )
