"""BranchJoiner fed by two branches that both produce a value (both live), in a sync and an async run."""

from typing import Any

from haystack import Pipeline

import hs_kit
from fanin.probe import Claim, Observer, probe
from gates import Turns

BRANCH_SRC = f"{hs_kit.SRC}/v2.7.0/haystack/components/joiners/branch.py#L128-L141"
RUN_SRC = f"{hs_kit.SRC}/v2.15.2/haystack/core/pipeline/base.py#L1478-L1490"  # a greedy socket keeps the latest value


@probe(
    "haystack/branch-joiner/two-live-branches",
    title="start fans out to branches `a` and `b`, both connected to one BranchJoiner(str) feeding a sink;"
    " sync: both add orders; async: both finishing orders forced",
    claim=Claim(
        "Precondition: two branches of one run both produce a value for a BranchJoiner. Its docstring says it"
        " receives one input at a time and run() raises ValueError when it gets more than one. Its input is"
        " greedy variadic; from 2.7.0 the pipeline overwrites such a socket with each value it is sent, so it"
        " runs once, silently, with the value of the branch that finished last (the other is dropped); up to"
        " 2.6.1 run() received both and raised ValueError.",
        BRANCH_SRC,
        expect={"hazard": "silent", "value.rule": "last finisher survives"},
    ),
    sources=(f"{hs_kit.DOCS}/branchjoiner", RUN_SRC),
    modes=("sync", "async"),
)
async def test_two_live_branches(obs: Observer) -> None:
    BranchJoiner = obs.need("haystack.components.joiners", "BranchJoiner")
    runs: dict[str, dict[str, Any]] = {}
    cases = (["a", "b"], ["b", "a"])
    runner = Pipeline if obs.mode == "sync" else hs_kit.async_runner(obs)
    for case in cases:
        ran: list[str] = []
        turns = Turns(case) if obs.mode == "async" else None
        sink = hs_kit.Sink()
        # sync: `case` is the order the branches are added (the pipeline picks the run order);
        # async: the branches are added a, b and `case` is the finishing order the gate forces.
        pipeline = hs_kit.fan(runner(), case if turns is None else ["a", "b"], BranchJoiner(str), "value", ran, turns)
        pipeline.add_component("sink", sink)
        pipeline.connect("join.value", "sink.value")
        key = ("added " if turns is None else "finished ") + ", ".join(case)
        try:
            if turns is None:
                pipeline.run({"start": {"text": "go"}})
            else:
                await pipeline.run_async({"start": {"text": "go"}})
        except Exception as exc:
            runs[key] = {"ran": ran, "raises": type(exc).__name__, "joined": sink.got}
            continue
        if turns is not None:
            obs.require_in_flight(turns)
        runs[key] = {"ran": ran, "joiner_runs": len(sink.got), "joined": sink.got}
    raised = [k for k, r in runs.items() if "raises" in r]
    lost = sorted({f"{k} | {n}" for k, r in runs.items() if "raises" not in r for n in r["ran"] if n not in r["joined"]})
    kept = [r for r in runs.values() if "raises" not in r and r["joined"]]
    rule = (
        "raises" if len(raised) == len(runs)
        else "last finisher survives" if kept and all(r["joined"][-1] == r["ran"][-1] for r in kept) and lost
        else "first finisher survives" if kept and all(r["joined"][-1] == r["ran"][0] for r in kept) and lost
        else "both kept" if not lost and not raised else "other"
    )
    hazard = "silent" if lost else "loud" if raised else "safe"
    errors = sorted({r["raises"] for r in runs.values() if "raises" in r})
    obs.record(
        {"runs": runs, "lost": lost, "rule": rule, "raises": errors},
        label=f"{rule}, no error" if lost and not raised else (f"raises {errors[0]}" if raised else rule),
        detail=f"{obs.mode}: " + "; ".join(
            f"{k}: ran {r['ran']}, " + (f"raises {r['raises']}" if "raises" in r else f"joiner ran {r['joiner_runs']}x with {r['joined']}")
            for k, r in runs.items()
        ),
        hazard=hazard,
    )
