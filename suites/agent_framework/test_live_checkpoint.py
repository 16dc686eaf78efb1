"""Upgrading with live runs: a workflow paused mid-fan-out by the release before, resumed by this one.

The earlier release (the contract's EARLIER_*: the matrix's cell before this one on the same Python, `upgrade
--from`'s release, a bisect's good end) writes the checkpoint folder in its own interpreter (af_live.py); this
release resumes it. The same write made by this release (af_live.py run with this cell's interpreter) is the
control: the probe grades the difference between the two resumes, so what it reports is what the upgrade changed,
not what a resume does anyway (agent_framework/scenario/pause-resume observes that).
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import af_live
import live_kit

from fanin.probe import Claim, Observer, probe

WRITER = Path(af_live.__file__).resolve()


@probe(
    "agent_framework/upgrade/live-checkpoint",
    title="A workflow paused mid-fan-out (a sent its message, b asked for input) and checkpointed to files by the"
    " release before, resumed by this one: does it resume as a checkpoint this release wrote itself?",
    claim=Claim(
        "A checkpoint captures the whole workflow state (executor states, pending messages, pending requests,"
        " shared state) and a workflow resumes from it, across environments and instances; the release notes"
        " say existing checkpoints remain supported: a run paused by one release resumes on the next, its"
        " request answered, as a checkpoint the same release wrote.",
        "https://learn.microsoft.com/en-us/agent-framework/workflows/checkpoints?pivots=programming-language-python",
        expect={"hazard": "safe"},
    ),
    sources=[
        "https://github.com/microsoft/agent-framework/issues/7371",
        "https://github.com/microsoft/agent-framework/pull/7948",
    ],
)
async def test_live_checkpoint(obs: Observer) -> None:
    version, earlier = obs.earlier_release()
    obs.need("agent_framework", "FileCheckpointStorage")
    across, held = await _observe(obs, obs.scratch / "earlier", earlier, version)
    same, held_same = await _observe(obs, obs.scratch / "same", sys.executable, None)
    text, hazard = _reading(across, same)
    obs.record(
        {"across": across, "same_release": same, "checkpoint_held": {"earlier": held, "same_release": held_same}},
        label=text,
        detail=f"written by {version}, resumed here: {_said(across)}; written and resumed here: {_said(same)}",
        hazard=hazard,
    )


async def _observe(
    obs: Observer, folder: Path, python: str, version: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Write the paused run with `python` (the earlier release's interpreter, or this one's), then resume it here:
    the resume, and what the resumed checkpoint held (shown, not graded: the two releases may keep it apart)."""
    folder.mkdir(parents=True)
    done = subprocess.run(
        [python, str(WRITER), "write", str(folder)], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the writer ({python}) failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    written = json.loads(done.stdout.strip().splitlines()[-1])
    if version is not None and written["agent_framework"] != version:
        ran = written["agent_framework"]
        raise RuntimeError(f"the earlier interpreter runs agent-framework-core {ran}, not {version}")
    if written["stuck"]:
        obs.vacuous(written["stuck"][0])
    if written["raises"] or written["runs"] != {"a": 1, "b": 1} or written["joined"]:
        obs.vacuous(f"the writer's run did not stop with a done and b asking: {written}")
    if not written["asked_with_a"] or written["holds"]["requests"] != [af_live.REQUEST]:
        obs.vacuous(f"no checkpoint held a's message beside b's request, or the latest lost the request: {written}")
    return await af_live.resume(str(folder), written["checkpoint_id"]), written["holds"]


def _reading(across: dict[str, Any], same: dict[str, Any]) -> tuple[str, str]:
    """The matrix label and hazard: what differs between the resume across releases and the same release's."""
    if across == same:
        return live_kit.same("checkpoint"), "safe"
    failed = across["raises"] or across["read_raises"]
    if failed and not (same["raises"] or same["read_raises"]):
        return live_kit.raised("the resume", failed.split(":")[0]), "loud"
    runs, same_runs = across["runs_on_resume"], same["runs_on_resume"]
    got, same_got = _received(across), _received(same)
    if runs["a"] > same_runs["a"]:
        return "the finished branch ran again", "silent"
    if runs["b answered"] < same_runs["b answered"]:
        return "b's answer was lost", "silent"
    if runs["join"] < same_runs["join"]:  # b answered and sent on: the fan-in still waits for a
        return "a's message was lost: the join never ran", "silent"
    if "a" in same_got and "a" not in got:
        return "a's message was lost", "silent"
    if "b" in same_got and "b" not in got:
        return "b's answer was lost", "silent"
    return live_kit.unlike("checkpoint"), "silent"


def _received(resumed: dict[str, Any]) -> set[str]:
    """Whose messages the join received on the resume (`a`, `b`), from its messages' texts."""
    return {message.split(":")[0] for batch in resumed["joined"] for message in batch}


def _said(resumed: dict[str, Any]) -> str:
    raises, read = resumed["raises"], resumed["read_raises"]
    if raises and read:
        return f"reading the checkpoint raised {read}, the resume raised {raises}"
    if raises or read:
        return f"raised {raises}" if raises else f"reading the checkpoint raised {read}"
    return f"ran {resumed['runs_on_resume']}, the join received {resumed['joined']}"
