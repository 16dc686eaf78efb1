"""Upgrading with live flows: a `@persist`ed flow stopped mid-fan-out by the release before, resumed by this one.

The earlier release (the contract's EARLIER_*: the matrix's cell before this one on the same Python, `upgrade
--from`'s release, a bisect's good end) writes the SQLiteFlowPersistence store in its own interpreter (cw_live.py):
`a` done and its write saved, `b` stopped, paused for human feedback (`paused`, the default: 1.8 on) or failed
(`failed`: every release, the only way a flow of 1.0-1.7 stops with a branch unfinished). This release resumes it:
`Flow.from_pending` and `resume_async` after the pause, a kickoff on the stored state's id after the failure. The
same write made by this release (cw_live.py run with this cell's interpreter) is the control: the probe grades the
difference between the two resumes, so what it reports is what the upgrade changed, not what a resume does anyway
(crewai/scenario/pause-resume and crewai/scenario/fail-resume observe that: the join never runs after a pause, the
failed flow runs every branch again).
"""

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import cw_live
import live_kit

from fanin.probe import Claim, Observer, probe

WRITER = Path(cw_live.__file__).resolve()
DOCS = "https://docs.crewai.com/en"
SRC = "https://github.com/crewAIInc/crewAI/blob"


@probe(
    "crewai/upgrade/live-flow",
    title="A `@persist`ed flow stopped mid-fan-out (a done and saved; b paused for human feedback, or failed) in a"
    " SQLiteFlowPersistence store by the release before, resumed by this one (`from_pending` + `resume_async`, or"
    " a kickoff on the state's id): does it resume as a flow this release wrote itself?",
    claim=Claim(
        "`@persist` saves a flow's state after every method to its FlowPersistence (SQLiteFlowPersistence by"
        " default), so a flow survives a restart: a paused flow (HumanFeedbackPending, 1.8 on) is restored by"
        " `Flow.from_pending(flow_id, persistence)` and resumed with `resume_async(feedback)`, its state and pending"
        " context read from the store; a stopped one is hydrated by a kickoff with the stored state's id"
        " (`inputs={'id': ...}`, deprecated from 1.14.5 for `restore_from_state_id` but kept). Nothing says a store"
        " is tied to the release that wrote it: one written by the release before resumes on the next as a store"
        " the same release wrote (the finished branch's write kept, the answer reaching the paused branch).",
        f"{DOCS}/learn/human-feedback-in-flows",
        expect={"hazard": "safe"},
    ),
    sources=[
        f"{DOCS}/concepts/flows",  # Flow Persistence: @persist, SQLiteFlowPersistence, state recovery by id
        f"{DOCS}/guides/flows/inputs-id-deprecation",
        f"{SRC}/1.8.1/lib/crewai/src/crewai/flow/flow.py#L567-L630",  # from_pending: state + context from the store
        f"{SRC}/1.8.1/lib/crewai/src/crewai/flow/persistence/sqlite.py",  # flow_states and pending_feedback tables
        "https://github.com/crewAIInc/crewAI/pull/4203",  # HumanFeedbackPending is a pause, not a failure
        "https://github.com/crewAIInc/crewAI/pull/4501",  # kickoff(inputs={"id"}) and the resuming flag
    ],
    modes=("paused", "failed"),
)
async def test_live_flow(obs: Observer) -> None:
    mode = obs.mode
    here = cw_live.cannot(mode)
    if here:
        obs.not_applicable(f"this release cannot stop a flow this way ({mode}): {'; '.join(here.values())}")
    version, earlier = obs.earlier_release()
    across = await _observe(obs, mode, obs.scratch / "earlier", earlier, version)
    same = await _observe(obs, mode, obs.scratch / "same", sys.executable, None)
    text, hazard = _reading(mode, across, same)
    obs.record(
        {"across": across, "same_release": same},
        label=text,
        detail=f"written by {version} ({mode}), resumed here: {_said(across)}; written and resumed here:"
        f" {_said(same)}",
        hazard=hazard,
    )


async def _observe(obs: Observer, mode: str, folder: Path, python: str, version: str | None) -> dict[str, Any]:
    """Write the stopped flow with `python` (the earlier release's interpreter, or this one's; the cell's own
    environment, telemetry off), then resume it here: the resume, with what the writer's store held."""
    folder.mkdir(parents=True)
    done = subprocess.run(
        [python, str(WRITER), "write", mode, str(folder)], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the writer ({python}) failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    written = json.loads((folder / cw_live.WRITTEN).read_text())
    if version is not None and written["crewai"] != version:
        raise RuntimeError(f"the earlier interpreter runs crewai {written['crewai']}, not {version}")
    if written["cannot"]:
        reasons = "; ".join(written["cannot"].values())
        obs.not_applicable(f"the earlier release crewai {written['crewai']} cannot stop a flow this way ({mode}): {reasons}")
    if written["stuck"]:
        obs.vacuous(written["stuck"][0])
    stopped = {"s": 1, "a": 1, "b": 1, "b answered": 0, "join": 0}
    if written["runs"] != stopped or written["stored"] != {"a": cw_live.A_WRITE}:
        obs.vacuous(f"the writer's flow did not stop with a done and saved, b stopped: {written}")
    if mode == "paused" and (written["pending"] != "b" or written["raises"]):
        obs.vacuous(f"the writer's flow did not pause with b's feedback pending in the store: {written}")
    resumed = await cw_live.resume(mode, str(folder), written["flow_id"])
    for key in ("read_raises", "raises"):  # the flow id is a new uuid each write: not a difference
        if resumed[key]:
            resumed[key] = re.sub(re.escape(written["flow_id"]), "<flow id>", resumed[key])
    return resumed


def _reading(mode: str, across: dict[str, Any], same: dict[str, Any]) -> tuple[str, str]:
    """The matrix label and hazard: what differs between the resume across releases and the same release's."""
    store = f"{mode} flow"
    if across == same:
        return live_kit.same(store), "safe"
    failed = across["read_raises"] or across["raises"]
    if failed and not (same["read_raises"] or same["raises"]):
        said = "reading the flow" if across["read_raises"] else "the resume"
        return live_kit.raised(said, failed.split(":")[0]), "loud"
    runs, same_runs = across["runs_on_resume"], same["runs_on_resume"]
    state, same_state = across["state"] or {}, same["state"] or {}
    if runs["a"] > same_runs["a"]:
        return "the finished branch a ran again", "silent"
    if same_state.get("a") == cw_live.A_WRITE and state.get("a") != cw_live.A_WRITE:
        return "a's write was lost", "silent"
    if runs["b answered"] < same_runs["b answered"] or (across["pending_after"] and not same["pending_after"]):
        return "b's answer was lost", "silent"
    if same_state.get("b") and state.get("b") != same_state.get("b"):
        return "b's write was lost", "silent"
    if runs["join"] < same_runs["join"]:
        return "the join never ran", "silent"
    return live_kit.unlike(store), "silent"


def _said(resumed: dict[str, Any]) -> str:
    read, raises = resumed["read_raises"], resumed["raises"]
    if read:
        return f"reading the flow raised {read}"
    if raises:
        return f"the resume raised {raises}"
    return f"ran {resumed['runs_on_resume']}, state {resumed['state']}, pending after {resumed['pending_after']}"
