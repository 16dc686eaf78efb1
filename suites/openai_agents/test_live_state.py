"""Upgrading with live runs: a run stopped on an approval by the release before, resumed by this one.

The earlier release (the contract's EARLIER_*: the matrix's cell before this one on the same Python, `upgrade
--from`'s release, a bisect's good end) writes the serialized RunState in its own interpreter (oa_live.py); this
release reads, approves and resumes it. The same write made by this release (oa_live.py run with this cell's
interpreter) is the control: the probe grades the difference between the two resumes, so what it reports is what the
upgrade changed, not what a resume does anyway (openai_agents/scenario/pause-resume observes that).
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import live_kit
import oa_live
import oa_resume

from fanin.probe import Claim, Observer, probe

WRITER = Path(oa_live.__file__).resolve()
DOCS = "https://openai.github.io/openai-agents-python"


@probe(
    "openai_agents/upgrade/live-state",
    title="A run stopped on an approval (one model turn called `a`, which ran, and `b`, which needs approval) and"
    " serialized with `to_state().to_string()` by the release before, read with `RunState.from_string`, b approved"
    " and resumed by this one: does it resume as a state this release wrote itself?",
    claim=Claim(
        "A run that stops on tool approvals returns its interruptions; RunState is designed to be durable: store"
        " `to_state().to_string()` in a database or queue and recreate it later with `RunState.from_string(agent,"
        " ...)`, approve, and resume with `Runner.run(agent, state)`, the run continuing where it left off; the"
        " SDK's schema policy keeps the schema versions shipped in releases readable (an older `$schemaVersion` in"
        " SUPPORTED_SCHEMA_VERSIONS is read, only a newer or unknown one refused): a run stopped by one release"
        " resumes on the next, the finished call's output kept and the approved call run once, as a state the same"
        " release wrote. (The docs also advise storing an SDK version marker beside a state that may wait long.)",
        f"{DOCS}/human_in_the_loop/#long-running-approvals",
        expect={"hazard": "safe"},
    ),
    sources=[
        f"{DOCS}/human_in_the_loop/#versioning-pending-tasks",
        "https://github.com/openai/openai-agents-python/blob/v0.24.0/src/agents/run_state.py",
        "https://github.com/openai/openai-agents-python/pull/2502",  # schema 1.1: an explicit backward-read policy
        "https://github.com/openai/openai-agents-python/pull/2632",  # released schemas stay readable, unreleased not
    ],
)
async def test_live_state(obs: Observer) -> None:
    here = oa_resume.cannot()
    if here:
        obs.not_applicable(f"this release cannot stop a run on an approval and resume it: {'; '.join(here.values())}")
    version, earlier = obs.earlier_release()
    across, schema = await _observe(obs, obs.scratch / "earlier", earlier, version)
    same, schema_same = await _observe(obs, obs.scratch / "same", sys.executable, None)
    text, hazard = _reading(across, same)
    obs.record(
        {"across": across, "same_release": same, "schema_version": {"earlier": schema, "same_release": schema_same}},
        label=text,
        detail=f"written by {version} (schema {schema}), resumed here: {_said(across)}; written and resumed here"
        f" (schema {schema_same}): {_said(same)}",
        hazard=hazard,
    )


async def _observe(obs: Observer, folder: Path, python: str, version: str | None) -> tuple[dict[str, Any], Any]:
    """Write the stopped run with `python` (the earlier release's interpreter, or this one's), then resume it here:
    the resume, and the `$schemaVersion` the writer stamped (shown, not graded: each release writes its own)."""
    folder.mkdir(parents=True)
    done = subprocess.run(
        [python, str(WRITER), "write", str(folder)], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the writer ({python}) failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    written = json.loads(done.stdout.strip().splitlines()[-1])
    if version is not None and written["openai_agents"] != version:
        raise RuntimeError(f"the earlier interpreter runs openai-agents {written['openai_agents']}, not {version}")
    if written["cannot"]:
        reasons = "; ".join(written["cannot"].values())
        ran = written["openai_agents"]
        obs.not_applicable(f"the earlier release openai-agents {ran} cannot stop a run on an approval: {reasons}")
    if written["stuck"]:
        obs.vacuous(written["stuck"][0])
    shape = (written["raises"], written["interruptions"], written["runs"]["a"], written["runs"]["b"])
    if shape != (None, ["b"], 1, 0) or written["context"] != {"ran": ["a"]}:
        obs.vacuous(f"the writer's run did not stop with a done and b waiting for approval: {written}")
    return await oa_live.resume(str(folder)), written["schema_version"]


def _reading(across: dict[str, Any], same: dict[str, Any]) -> tuple[str, str]:
    """The matrix label and hazard: what differs between the resume across releases and the same release's."""
    if across == same:
        return live_kit.same("state"), "safe"
    failed = across["read_raises"] or across["raises"]
    if failed and not (same["read_raises"] or same["raises"]):
        said = "reading the state" if across["read_raises"] else "the resume"
        return live_kit.raised(said, failed.split(":")[0]), "loud"
    runs, same_runs = across["runs_on_resume"], same["runs_on_resume"]
    got, same_got = _received(across), _received(same)
    if runs["a"] > same_runs["a"]:
        return "the finished call a ran again", "silent"
    if runs["b"] < same_runs["b"] or (across["interruptions"] and not same["interruptions"]):
        return "b's approval was lost", "silent"
    if oa_live.A_OUTPUT in same_got and oa_live.A_OUTPUT not in got:
        return "a's output never reached the next turn", "silent"
    if oa_live.B_OUTPUT in same_got and oa_live.B_OUTPUT not in got:
        return "b's output never reached the next turn", "silent"
    if "a" in (same["context"] or {}).get("ran", []) and "a" not in (across["context"] or {}).get("ran", []):
        return "a's write to the context was lost", "silent"
    return live_kit.unlike("state"), "silent"


def _received(resumed: dict[str, Any]) -> list[Any]:
    """The tool outputs the model's next turn received on the resume."""
    return [output for _, output in resumed["next_turn_received"] or []]


def _said(resumed: dict[str, Any]) -> str:
    read, raises = resumed["read_raises"], resumed["raises"]
    if read:
        return f"reading the state raised {read}"
    if raises:
        return f"the resume raised {raises}"
    return (
        f"ran {resumed['runs_on_resume']}, the next turn received {_received(resumed)}, final output"
        f" {resumed['final_output']!r}, context {resumed['context']}"
    )
