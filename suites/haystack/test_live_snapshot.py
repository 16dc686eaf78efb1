"""Upgrading with live runs: a pipeline run stopped at a break point mid-fan-out by the release before, its snapshot
saved to a JSON file, resumed from that file by this one.

The earlier release (the contract's EARLIER_*: the matrix's cell before this one on the same Python, `upgrade
--from`'s release, a bisect's good end) writes the snapshot file in its own interpreter (hs_live.py); this release
loads it with `load_pipeline_snapshot` and resumes the run. The same write made by this release (hs_live.py run with
this cell's interpreter) is the control: the probe grades the difference between the two resumes, so what it reports
is what the upgrade changed, not what a resume does anyway. Only the sync `Pipeline.run` has break points and
snapshots (the async runner has none: the scenario adapter's `pause`/`resume` are n/a), and it runs the two branches
one after another in name order, so the run stops at `b` with `a` done.
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import hs_kit
import hs_live
import live_kit

from fanin.probe import Claim, Observer, probe

WRITER = Path(hs_live.__file__).resolve()


@probe(
    "haystack/upgrade/live-snapshot",
    title="A pipeline run stopped mid-fan-out (a ran, a break point on b raised) and its snapshot saved to a JSON"
    " file by the release before, loaded with `load_pipeline_snapshot` and resumed with"
    " `Pipeline.run(pipeline_snapshot=...)` by this one: does it resume as a snapshot this release saved itself?",
    claim=Claim(
        "A break point stops the pipeline at a component and captures a snapshot of the pipeline's state, saved to"
        " a JSON file (snapshot_file_path, with snapshot file saving enabled); the file is loaded with"
        " load_pipeline_snapshot and the run resumed from the exact point where it stopped with"
        " Pipeline.run(pipeline_snapshot=...). When 3.x began recording each input's sender in a snapshot, the"
        " release note said snapshots created by earlier versions behave as before (only a resume on a later"
        " visit of a looping component needs one taken anew), and the one format a release stopped reading is"
        " named in its notes (a file saved before 2.21.0, whose pipeline_outputs has no serialization schema, is"
        " refused from 2.23.0 on): a run stopped at its first visit of b by one release resumes on the next as a"
        " snapshot the same release saved, a's output kept for the join, a not run again, b run once, the join"
        " given both.",
        f"{hs_kit.DOCS}/pipeline-breakpoints",
        expect={"hazard": "safe"},
    ),
    sources=[
        f"{hs_kit.SRC}/v2.31.0/haystack/core/pipeline/breakpoint.py",  # flattens each input to its value
        f"{hs_kit.SRC}/v3.4.1/haystack/core/pipeline/pipeline.py",  # inputs_format: the legacy resume path
        "https://github.com/deepset-ai/haystack/issues/12145",  # resuming on a later loop visit: blocked
        "https://github.com/deepset-ai/haystack/pull/12162",  # snapshots record each input's sender; old ones as before
        "https://github.com/deepset-ai/haystack/pull/10096",  # pipeline_outputs serialized (2.21.0), old read too
        "https://github.com/deepset-ai/haystack/pull/10249",  # 2.23.0: the old pipeline_outputs no longer read
    ],
)
def test_live_snapshot(obs: Observer) -> None:
    here = hs_live.cannot()
    if here:
        obs.not_applicable(f"this release cannot stop a run and resume it from a snapshot: {'; '.join(here.values())}")
    version, earlier = obs.earlier_release()
    across, held = _observe(obs, obs.scratch / "earlier", earlier, version)
    same, held_same = _observe(obs, obs.scratch / "same", sys.executable, None)
    text, hazard = _reading(across, same)
    obs.record(
        {"across": across, "same_release": same, "snapshot_held": {"earlier": held, "same_release": held_same}},
        label=text,
        detail=f"written by {version} (inputs format {held['inputs_format']}), resumed here: {_said(across)};"
        f" written and resumed here (inputs format {held_same['inputs_format']}): {_said(same)}",
        hazard=hazard,
    )


def _observe(obs: Observer, folder: Path, python: str, version: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Stop the run with `python` (the earlier release's interpreter, or this one's), then resume its file here:
    the resume, and what the file held (shown, not graded: each release saves its own format)."""
    folder.mkdir(parents=True)
    done = subprocess.run(
        [python, str(WRITER), "write", str(folder)], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the writer ({python}) failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    written = json.loads(done.stdout.strip().splitlines()[-1])
    if version is not None and written["haystack"] != version:
        raise RuntimeError(f"the earlier interpreter runs haystack-ai {written['haystack']}, not {version}")
    if written["cannot"]:
        reasons = "; ".join(written["cannot"].values())
        obs.not_applicable(
            f"the earlier release haystack-ai {written['haystack']} cannot stop a run and save a snapshot: {reasons}"
        )
    ran = {name: written["runs"][name] for name in hs_live.NAMES}
    if written["raises"] != "BreakpointException" or ran != {"start": 1, "a": 1, "b": 0, "join": 0}:
        obs.vacuous(f"the writer's run did not stop at b's break point with a done: {written}")
    if written["snapshot"] is None or not written["held"]["holds_a"]:
        obs.vacuous(f"no single snapshot file held a's output for the join: {written}")
    return hs_live.resume(written["snapshot"]), written["held"]


def _reading(across: dict[str, Any], same: dict[str, Any]) -> tuple[str, str]:
    """The matrix label and hazard: what differs between the resume across releases and the same release's."""
    if across == same:
        return live_kit.same("snapshot"), "safe"
    failed = across["read_raises"] or across["raises"]
    if failed and not (same["read_raises"] or same["raises"]):
        said = "reading the snapshot" if across["read_raises"] else "the resume"
        return live_kit.raised(said, failed.split(":")[0]), "loud"
    runs, same_runs = across["runs_on_resume"], same["runs_on_resume"]
    got, same_got = _received(across), _received(same)
    if runs["start"] > same_runs["start"]:
        return "the run started over", "silent"
    if runs["a"] > same_runs["a"]:
        return "the finished branch a ran again", "silent"
    if runs["b"] < same_runs["b"]:
        return "b never ran on the resume", "silent"
    if runs["join"] < same_runs["join"]:
        return "the join never ran", "silent"
    if hs_live.A_OUTPUT in same_got and hs_live.A_OUTPUT not in got:
        return "a's output was lost", "silent"
    if hs_live.B_OUTPUT in same_got and hs_live.B_OUTPUT not in got:
        return "b's output was lost", "silent"
    if got.count(hs_live.A_OUTPUT) > same_got.count(hs_live.A_OUTPUT):
        return "the join got a's output twice", "silent"
    return live_kit.unlike("snapshot"), "silent"


def _received(resumed: dict[str, Any]) -> list[str]:
    """Every value the join received on the resume, over its runs."""
    return [value for batch in resumed["joined"] for value in batch]


def _said(resumed: dict[str, Any]) -> str:
    read, raises = resumed["read_raises"], resumed["raises"]
    if read:
        return f"reading the snapshot raised {read}"
    if raises:
        return f"the resume raised {raises}"
    return f"ran {resumed['runs_on_resume']}, the join received {resumed['joined']}, outputs {resumed['outputs']}"
