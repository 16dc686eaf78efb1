"""The fix for a BranchJoiner fed by live branches and for a join order that follows the run mode."""

from typing import Any, List

from haystack import Pipeline

import hs_kit
from fanin.probe import Claim, Observer, probe
from gates import Turns
from mitigation import judge, words


@probe(
    "haystack/branch-joiner/two-live-branches-mitigated",
    title="The two-live-branches pipeline joined instead by a component with one input per branch, or by"
    " ListJoiner with the consumer sorting what it gets; sync in both add orders, async in both finishing orders",
    claim=Claim(
        "Precondition: branches that always both run. A component with one mandatory input per branch runs"
        " once both arrived and sees each under its own name; ListJoiner keeps every value but in arrival"
        " order, which a consumer that sorts by branch makes irrelevant: no value lost, the same result"
        " sync or async, in every order.",
        f"{hs_kit.DOCS}/listjoiner",
        expect={"hazard": "safe", "value.lost": []},
    ),
    sources=(f"{hs_kit.SRC}/v2.15.2/haystack/components/joiners/list_joiner.py", f"{hs_kit.DOCS}/custom-components"),
)
async def test_two_live_branches_mitigated(obs: Observer) -> None:
    import haystack.components.joiners as joiners

    runner = hs_kit.async_runner(_Optional())
    variants: dict[str, dict[str, Any]] = {}
    for variant in ("explicit-join", "list-joiner-sorted"):
        if variant == "list-joiner-sorted" and not hasattr(joiners, "ListJoiner"):
            variants[variant] = {"n/a": "haystack.components.joiners.ListJoiner does not exist in this version"}
            continue
        runs: dict[str, Any] = {}
        for mode, case in [("sync", ["a", "b"]), ("sync", ["b", "a"])] + ([("async", ["a", "b"]), ("async", ["b", "a"])] if runner else []):
            ran: list[str] = []
            turns = Turns(case) if mode == "async" else None
            if variant == "explicit-join":
                join, into, out, field = hs_kit.explicit_join(["a", "b"]), "{name}", "out", "joined"
            else:
                join, into, out, field = joiners.ListJoiner(List[str]), "values", "items", "values"
            added = case if turns is None else ["a", "b"]
            pipeline = hs_kit.fan(Pipeline() if turns is None else runner(), added, join, into, ran, turns, out)
            data = {"start": {"text": "go"}}
            try:
                outputs = pipeline.run(data) if turns is None else await pipeline.run_async(data)
            except Exception as exc:
                runs[f"{mode} {', '.join(case)}"] = {"raises": type(exc).__name__}
                continue
            if turns is not None:
                obs.require_in_flight(turns)
            got = outputs["join"][field]
            result = sorted(got) if variant == "list-joiner-sorted" else got
            runs[f"{mode} {', '.join(case)}"] = {"made": ran, "kept": got, "result": result, "observed": {"arrived": got}}
        variants[variant] = runs
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


class _Optional:
    """hs_kit.async_runner's `obs` here: a version without an async runner is checked sync only (None)."""

    def not_applicable(self, reason: str) -> None:
        return None
