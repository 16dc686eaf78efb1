"""Upgrading with live sessions: a graph paused mid-fan-out by the release before, resumed by this one.

The earlier release (the contract's EARLIER_*: the matrix's cell before this one on the same Python, `upgrade
--from`'s release, a bisect's good end) writes the FileSessionManager directory in its own interpreter (st_live.py):
`a` done and its result stored, `b` interrupted by its BeforeNodeCallEvent hook. This release builds the graph on
the same directory and answers the interrupt. The same write made by this release (st_live.py run with this cell's
interpreter, a directory of its own) is the control: the probe grades the difference between the two resumes, so
what it reports is what the upgrade changed, not what a resume does anyway (strands/scenario/pause-resume observes
that). The writer runs under the cell's own environment (its PYTHONHASHSEED among it), with the suite's directories
on its path.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import live_kit
import st_live
import st_resume

from fanin.probe import Claim, Observer, probe

WRITER = Path(st_live.__file__).resolve()
DOCS = "https://strandsagents.com/docs/user-guide"
REPO = "https://github.com/strands-agents/sdk-python"


@probe(
    "strands/upgrade/live-session",
    title="A graph paused mid-fan-out (a done, b interrupted by a BeforeNodeCallEvent hook) and persisted by a"
    " FileSessionManager by the release before, built on the same directory and its interrupt answered by this"
    " one: does it resume as a session this release wrote itself?",
    claim=Claim(
        "A graph built with a session manager persists its state (completed and interrupted nodes, their results,"
        " the interrupt state, the next nodes) and restores it when built again on the session, so an interrupted"
        " multi-agent run is persisted and resumed later, even after the application restarts: a graph paused by"
        " one release resumes on the next, the finished node's result kept and not run again, the interrupt"
        " answered and the join run, as a session the same release wrote.",
        f"{DOCS}/sdk/interrupts-multi-agent/",
        expect={"hazard": "safe"},
    ),
    sources=[
        f"{DOCS}/concepts/agents/session-management/",
        f"{REPO}/pull/1110",  # Graph and Swarm session persistence (serialize_state / deserialize_state)
        f"{REPO}/pull/1478",  # a graph stops at a BeforeNodeCallEvent hook's interrupt (first in 1.23.0)
        f"{REPO}/blob/v1.62.0/src/strands/multiagent/graph.py",
    ],
)
async def test_live_session(obs: Observer) -> None:
    here = st_resume.cannot()
    if here:
        obs.not_applicable(f"this release cannot pause a graph and resume it from its session: {'; '.join(here.values())}")
    version, earlier = obs.earlier_release()
    across, held = await _observe(obs, obs.scratch / "earlier", earlier, version)
    same, held_same = await _observe(obs, obs.scratch / "same", sys.executable, None)
    text, hazard = _reading(across, same)
    obs.record(
        {"across": across, "same_release": same, "session_held": {"earlier": held, "same_release": held_same}},
        label=text,
        detail=f"written by {version}, resumed here: {_said(across)}; written and resumed here: {_said(same)}",
        hazard=hazard,
    )


async def _observe(obs: Observer, folder: Path, python: str, version: str | None) -> tuple[dict[str, Any], Any]:
    """Write the paused graph with `python` (the earlier release's interpreter, or this one's), then resume it here:
    the resume, and what the writer's session held (shown, not graded: each release stores its own fields)."""
    folder.mkdir(parents=True)
    suites = WRITER.parent.parent  # gates.py, which st_kit imports
    path = os.pathsep.join(p for p in (str(suites), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [python, str(WRITER), "write", str(folder)],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the writer ({python}) failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    written = json.loads(done.stdout.strip().splitlines()[-1])
    if version is not None and written["strands"] != version:
        raise RuntimeError(f"the earlier interpreter runs strands-agents {written['strands']}, not {version}")
    if written["cannot"]:
        reasons = "; ".join(written["cannot"].values())
        obs.not_applicable(
            f"the earlier release strands-agents {written['strands']} cannot pause a graph and resume it from its"
            f" session: {reasons}"
        )
    if written["stuck"]:
        obs.vacuous(written["stuck"][0])
    held = written["stored"] or {}
    shape = (written["raises"], written["status"], [i["name"] for i in written["interrupts"]], written["runs"])
    if shape != (None, "interrupted", [st_live.ASK], {"a": 1, "b asked": 1, "b": 0, "join": 0}) or (
        held.get("completed_nodes"), held.get("interrupted_nodes"), held.get("node_results")
    ) != (["a"], ["b"], ["a"]):
        obs.vacuous(f"the writer's graph did not stop with a done and stored, b interrupted: {written}")
    return await st_live.resume(str(folder), written["interrupts"]), held


def _reading(across: dict[str, Any], same: dict[str, Any]) -> tuple[str, str]:
    """The matrix label and hazard: what differs between the resume across releases and the same release's."""
    if across == same:
        return live_kit.same("session"), "safe"
    failed = across["read_raises"] or across["raises"]
    if failed and not (same["read_raises"] or same["raises"]):
        said = "reading the session" if across["read_raises"] else "the resume"
        return live_kit.raised(said, failed.split(":")[0]), "loud"
    runs, same_runs = across["runs_on_resume"], same["runs_on_resume"]
    if runs["a"] > same_runs["a"]:
        return "the finished branch a ran again", "silent"
    if across["interrupts"] and not same["interrupts"]:
        return "b asked again: its answer was lost", "silent"
    if st_live.ANSWER in same["b_got"] and st_live.ANSWER not in across["b_got"]:
        return "b's answer was lost", "silent"
    if runs["join"] < same_runs["join"]:
        return "the join never ran", "silent"
    if _quoted(same, "a") and not _quoted(across, "a"):
        return "a's output never reached the join", "silent"
    return live_kit.unlike("session"), "silent"


def _quoted(resumed: dict[str, Any], node: str) -> bool:
    """Whether a run of the join on the resume quoted `node`'s output (a's `a-done`, b's answer)."""
    wanted = st_live.A_OUTPUT if node == "a" else f"b:{st_live.ANSWER}"
    return any(wanted in run.get(node, []) for run in resumed["join_received"])


def _said(resumed: dict[str, Any]) -> str:
    read, raises = resumed["read_raises"], resumed["raises"]
    if read:
        return f"building the graph on the session raised {read}"
    if raises:
        return f"the resume raised {raises}"
    return (
        f"ran {resumed['runs_on_resume']}, b's hook got {resumed['b_got']}, the join received"
        f" {resumed['join_received']}, status {resumed['status']}"
    )
