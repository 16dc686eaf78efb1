"""Upgrading with live sessions: a session left mid-fan-out by the release before, resumed by this one.

The earlier release (the contract's EARLIER_*: the matrix's cell before this one on the same Python, `upgrade
--from`'s release, a bisect's good end) writes a DatabaseSessionService store in its own interpreter (adk_live.py):
`a` done and its output stored, `b` waiting on a long-running tool call. This release answers the call on the same
store. The same write made by this release itself (adk_live.py run with this cell's interpreter, a store of its
own) is the control: the probe grades the difference between the two resumes, so what it reports is what the
upgrade changed, not what a resume does anyway (adk/workflow/hitl-* and the scenario probes observe that).
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import adk_live
import live_kit
from adk_sessions import ASYNC_SQLITE, drop_database, missing_sqlalchemy, postgres_url

from fanin.probe import Claim, Observer, probe

WRITER = Path(adk_live.__file__).resolve()
DOCS = "https://google.github.io/adk-docs/sessions/session/#sessionservice-implementations"


@probe(
    "adk/upgrade/live-session",
    title="A session paused mid-fan-out (a done, b waiting on a long-running tool call) by the release before,"
    " resumed by this one on the same DatabaseSessionService store: does it resume as a session this release wrote"
    " itself?",
    claim=Claim(
        "DatabaseSessionService is ADK's persistent session store: a session it wrote survives the application's"
        " restart, so one written by the release before is read by the next, and answering a paused branch's"
        " long-running call resumes it as it resumes a session the same release wrote (the finished branch's"
        " output kept and not run again, the answer stored, the agent after the fan-out run), on SQLite and"
        " PostgreSQL.",
        DOCS,
        expect={"hazard": "safe"},
    ),
    sources=[
        "https://github.com/google/adk-python/issues/1184",  # 1.x: long_running_tool_ids_json missing after an upgrade
        "https://github.com/google/adk-python/issues/3272",  # 1.16 -> 1.17: events.usage_metadata does not exist
        "https://github.com/google/adk-python/issues/4319",  # `adk migrate session` copies to another database only
    ],
    backends=("sqlite", "postgres"),
)
async def test_live_session(obs: Observer) -> None:
    version, earlier = obs.earlier_release()
    reason = missing_sqlalchemy()
    if reason:
        obs.not_applicable(reason)
    obs.need("google.adk.sessions.database_session_service", "DatabaseSessionService")
    obs.need("google.adk.tools", "LongRunningFunctionTool")
    if obs.backend == "sqlite":
        stores = {side: f"{ASYNC_SQLITE}///{obs.scratch / f'{side}.db'}" for side in ("earlier", "same")}
        across, resumable = await _observe(obs, stores["earlier"], earlier, "auto")
        same, _ = await _observe(obs, stores["same"], sys.executable, "resumable" if resumable else "plain")
    else:
        # A database for each writer: the earlier release's tables (its schema version) must not be the control's.
        names = {side: f"{obs.database_name}_{side[0]}" for side in ("earlier", "same")}
        try:
            for name in names.values():
                _create_database(obs, name)
            stores = {side: postgres_url(obs.postgres_dsn(name)) for side, name in names.items()}
            across, resumable = await _observe(obs, stores["earlier"], earlier, "auto")
            same, _ = await _observe(obs, stores["same"], sys.executable, "resumable" if resumable else "plain")
        finally:
            for name in names.values():
                drop_database(obs, name)
    text, hazard = _reading(across, same)
    obs.record(
        {"across": across, "same_release": same, "resumable": resumable},
        label=text,
        detail=f"written by {version}, resumed here: {_said(across)}; written and resumed here: {_said(same)}",
        hazard=hazard,
    )


def _create_database(obs: Observer, name: str) -> None:
    """A fresh database `name` on the harness's PostgreSQL server (adk_sessions.create_database, by name)."""
    psycopg = obs.need("psycopg")
    with psycopg.connect(obs.postgres_dsn("postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')


async def _observe(obs: Observer, target: str, python: str, mode: str) -> tuple[dict[str, Any], bool]:
    """Write the session with `python`'s release (a subprocess), then resume it here; (the resume, resumable)."""
    done = subprocess.run(
        [python, str(WRITER), "write", obs.backend, target, "live", mode],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the writer ({python}) failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    written = json.loads(done.stdout.strip().splitlines()[-1])
    if python != sys.executable and written["adk"] != obs.earlier_release()[0]:
        raise RuntimeError(f"the earlier interpreter runs google-adk {written['adk']}, not the release named")
    if written["stuck"]:
        obs.vacuous(written["stuck"][0])
    if written["raised"]:
        obs.vacuous(f"the writer's run of google-adk {written['adk']} raised {written['raised'][:300]}")
    if written["pending"] != [adk_live.TOOL] or written["runs"].get("a") != 1 or written["state"]["a_out"] != "a-done":
        obs.vacuous(f"the writer did not leave the session with a done and b waiting: {written}")
    resumable = bool(written["resumable"]) and adk_live.can_resume()
    resumed = await adk_live.resume(obs.backend, target, "live", resumable)
    resumed["written_state"] = written["state"]
    return resumed, resumable


def _graded(resumed: dict[str, Any]) -> dict[str, Any]:
    """What the resume did, without what the writer left (a release's writer may store b_out "" or nothing)."""
    final = resumed["final"] or {}
    answer = f"b:{adk_live.ANSWER}"
    return {
        "raises": resumed["raises"],
        "read_raises": resumed["read_raises"],
        "runs_on_resume": resumed["runs_on_resume"],
        "a_kept": final.get("a_out") == "a-done",
        "b_answered": final.get("b_out") == answer,
        "joined": final.get("joined") == f"a-done+{answer}",
        "pending_after": resumed["pending_after"],
    }


def _reading(across: dict[str, Any], same: dict[str, Any]) -> tuple[str, str]:
    """The matrix label and hazard: what differs between the resume across releases and the same release's."""
    now, then = _graded(across), _graded(same)
    if now == then:
        return live_kit.same("session"), "safe"
    failed = now["raises"] or now["read_raises"]
    if failed and not (then["raises"] or then["read_raises"]):
        return live_kit.raised("the resume", failed), "loud"
    runs, same_runs = now["runs_on_resume"], then["runs_on_resume"]
    if runs["a"] > same_runs["a"]:
        return "a's run again", "silent"
    if then["a_kept"] and not now["a_kept"]:
        return "a's write lost", "silent"
    if then["b_answered"] and not now["b_answered"]:
        return "b's answer lost", "silent"
    if runs["join"] < same_runs["join"] or (then["joined"] and not now["joined"]):
        return "the join never ran", "silent"
    return live_kit.unlike("session"), "silent"


def _said(resumed: dict[str, Any]) -> str:
    errors = resumed["errors"]
    said = [f"{key.replace('_', ' ')} {resumed[key]}: {errors[key][:160]}" for key in ("raises", "read_raises") if resumed[key]]
    if said:
        return "; ".join(said)
    return f"ran {resumed['runs_on_resume']}, final {resumed['final']}"
