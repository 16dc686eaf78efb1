"""ADK's `together` (docs/ADAPTERS.md): two runs at once on one session, each through its own session service.

Two workers, one database: each run's Runner has its own `DatabaseSessionService` opened on one SQLite file
(`sqlite+aiosqlite:///`, or `sqlite:///` where this version builds a synchronous engine: adk_sessions), the
session created first with the scenario's state by a third service, and each run given a new user message on it.
`final` is the state a fourth, fresh service reads back once both runs have ended.

Where the store stamps a session with whole seconds (the 1.x DatabaseSessionService on SQLite), its stale-session
check compares seconds: two runs whose writes fall within one second both pass it, a second apart the later one
is refused, so the clock would decide. As adk/session/concurrent-runs does (adk_sessions.in_one_second), an
attempt whose writes crossed a second boundary is run again on a fresh session from the top of a second (the
wait orders nothing; the gate does), and every attempt crossing one is vacuous, never a reading.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import scenario_kit
from adk_kit import APP, USER, run_turn, stored_state
from adk_sessions import close_service, keeps_whole_seconds, missing_sqlalchemy, open_database_service, window_start

TRIES = 5  # attempts at fitting the writes within one second where the store keeps whole seconds


async def _attempt(script: scenario_kit.Script, build: Callable[[Any], Any], url: str, session: str) -> Any:
    """One attempt: the session seeded, both runs at once (one gate over `<run>.<branch>`); (errors, whole, start,
    end): what each run raised (None: it returned), whether the store keeps whole seconds, the writes' window."""
    start = await window_start(int(session.rsplit("-", 1)[1]))
    seeder = open_database_service(url)
    try:
        created = await seeder.create_session(app_name=APP, user_id=USER, session_id=session, state=script.state)
    finally:
        await close_service(seeder)
    views = [script.of_run(number) for number in range(1, script.runs + 1)]
    services = [open_database_service(url) for _ in views]
    try:
        ends = await asyncio.gather(
            *(view.run(run_turn(build(view), service, session)) for view, service in zip(views, services)),
            return_exceptions=True,
        )
        end = time.time()
    finally:
        for service in services:
            await close_service(service)
    errors = [e if isinstance(e, BaseException) else None for e in ends]
    return errors, keeps_whole_seconds(created), start, end


async def run(scenario: dict[str, Any], order: list[str], build: Callable[[Any], Any]) -> dict[str, Any]:
    """Both runs at once on one session (retried where whole-second stamps would let the clock decide), then the
    session as a fresh service reads it back."""
    reason = missing_sqlalchemy()
    if reason:
        raise scenario_kit.NotExpressible(reason)
    script = scenario_kit.Script(scenario, order)
    with script.store_dir() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'sessions.db'}"
        for attempt in range(1, TRIES + 1):
            script = scenario_kit.Script(scenario, order)  # a fresh gate for each attempt
            session = f"together-{attempt}"
            errors, whole, start, end = await _attempt(script, build, url, session)
            if not whole or int(end) == int(start):
                break
        else:
            return {"vacuous": f"the writes crossed a second boundary in each of {TRIES} attempts (whole-second stamps)"}
        error = next((e for e in errors if e is not None), None)
        reader = open_database_service(url)
        try:
            answer = await script.answer(
                raises=None if error is None else type(error).__name__,
                final=lambda: stored_state(reader, session),
                error=error,
            )
        finally:
            await close_service(reader)
    clock = "the store stamps sessions with whole seconds; every write fell within one second" if whole else ""
    return {**answer, "detail": f"attempt {attempt}" + (f"; {clock}" if clock else "")}
