"""Upgrading with live threads: a thread left mid-fan-out by the release before, resumed by this one.

The earlier release (the contract's EARLIER_*: the matrix's cell before this one on the same Python, `upgrade
--from`'s release, a bisect's good end) writes the store in its own interpreter (lg_live.py); this release resumes
it. The same write made by this release itself (a forked writer, the same store kind) is the control: the probe
grades the difference between the two resumes, so what it reports is what the upgrade changed, not what a resume
does anyway (langgraph/interrupt/* and langgraph/resume/* observe that).
"""

import json
import subprocess
from pathlib import Path
from typing import Any

import lg_live
import live_kit
import lg_persist
import lg_procs

from fanin.probe import Claim, Observer, probe

WRITER = Path(lg_live.__file__).resolve()


@probe(
    "langgraph/upgrade/live-thread",
    title="A thread interrupted mid-fan-out (a done, b waiting for input) by the release before, resumed by this one:"
    " does it resume as a thread this release wrote itself?",
    claim=Claim(
        "A checkpoint written by one release is read by the next: a thread interrupted inside a parallel superstep"
        " keeps its finished branch's pending write, and the resume answers the interrupt and runs the join, as it"
        " does on a thread the same release wrote (sync, SQLite and PostgreSQL savers).",
        "https://docs.langchain.com/oss/python/langgraph/persistence#pending-writes",
        expect={"hazard": "safe"},
    ),
    sources=[
        "https://github.com/langchain-ai/langgraph/issues/5557",
        "https://github.com/langchain-ai/langgraph/issues/5677",
        "https://github.com/langchain-ai/langgraph/pull/6162",
    ],
    backends=("sqlite", "postgres"),
)
def test_live_thread(obs: Observer) -> None:
    version, earlier = obs.earlier_release()
    if obs.backend == "sqlite":
        obs.need("langgraph.checkpoint.sqlite", "SqliteSaver")
        across = _observe(obs, str(obs.scratch / "earlier.sqlite"), earlier)
        same = _observe(obs, str(obs.scratch / "same.sqlite"), None)
    else:
        obs.need("langgraph.checkpoint.postgres", "PostgresSaver")
        with lg_persist._database(obs) as dsn:  # one database, a thread for each writer
            across = _observe(obs, dsn, earlier, thread="earlier")
            same = _observe(obs, dsn, None, thread="same")
    text, hazard = _reading(across, same)
    obs.record(
        {"across": across, "same_release": same},
        label=text,
        detail=f"written by {version}, resumed here: {_said(across)}; written and resumed here: {_said(same)}",
        hazard=hazard,
    )


def _observe(obs: Observer, target: str, earlier: str | None, thread: str = "live") -> dict[str, Any]:
    """Write the thread (with `earlier`'s interpreter, or forked from this one), then resume it here."""
    if earlier is not None:
        done = subprocess.run(
            [earlier, str(WRITER), "write", obs.backend, target, thread],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"the earlier release's writer failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        written = json.loads(done.stdout.strip().splitlines()[-1])
        if written["langgraph"] != obs.earlier_release()[0]:
            raise RuntimeError(f"the earlier interpreter runs langgraph {written['langgraph']}, not the release named")
    else:
        worker, pipe = lg_procs.fork(lg_live.forked_write, obs.backend, target, thread)
        written = lg_procs.ask(pipe, "written", "the same release's writer")
        lg_procs.finish(worker, pipe)
    if written["stuck"]:
        obs.vacuous(written["stuck"][0])
    if written["next"] != ["b"] or written["runs"].get("a") != 1:
        obs.vacuous(f"the writer did not leave the thread with a done and b waiting: {written}")
    return lg_live.resume(obs.backend, target, thread)


def _reading(across: dict[str, Any], same: dict[str, Any]) -> tuple[str, str]:
    """The matrix label and hazard: what differs between the resume across releases and the same release's."""
    if across == same:
        return live_kit.same("thread"), "safe"
    failed = across["raises"] or across["read_raises"]
    if failed and not (same["raises"] or same["read_raises"]):
        return live_kit.raised("the resume", failed), "loud"
    runs, same_runs = across["runs_on_resume"], same["runs_on_resume"]
    if runs["a"] > same_runs["a"]:
        return "the finished branch ran again", "silent"
    if runs["join"] < same_runs["join"]:
        return "the join never ran", "silent"
    if len(across["final"] or []) < len(same["final"] or []):
        return "a write was lost", "silent"
    return live_kit.unlike("thread"), "silent"


def _said(resumed: dict[str, Any]) -> str:
    raises, read = resumed["raises"], resumed["read_raises"]
    if raises and read:
        return f"raised {raises}, reading the thread after it raised {read}"
    if raises or read:
        return f"raised {raises}" if raises else f"reading the thread raised {read}"
    return f"ran {resumed['runs_on_resume']}, final {resumed['final']}"
