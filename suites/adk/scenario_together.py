"""ADK's `together` (docs/ADAPTERS.md): two runs at once on one session, each through its own session service.

Two workers, one database: each run's Runner has its own `DatabaseSessionService` opened on one SQLite file
(`sqlite+aiosqlite:///`, or `sqlite:///` where this version builds a synchronous engine: adk_sessions), the
session created first with the scenario's state by a third service, and each run given a new user message on it.
`final` is the state a fourth, fresh service reads back once both runs have ended.

Run n + 1 starts once every branch of run n waits at the gate: each Runner first loads the session and appends its
user message, and two runs doing that at once race (from 1.28.0 the stale-session check can refuse the later
append, before that run's branches reach the gate, and the gate's patience then runs out: vacuous on one run in
two). Started so, the later run loads the session while the earlier one is mid-fan-out, as the scenario asks, and
the gate alone orders what either run appends after that.

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
from typing import Any, NoReturn

import gates
import scenario_kit
from adk_kit import APP, USER, run_turn, stored_state
from adk_sessions import (
    close_service,
    in_one_second,
    keeps_whole_seconds,
    missing_sqlalchemy,
    open_database_service,
    window_start,
)
from fanin.model.scenarios import turn_key

TRIES = 5  # attempts at fitting the writes within one second where the store keeps whole seconds


class Arrivals(gates.Turns):
    """The one gate over every run's branches, which also says when a run's branches are all waiting at it."""

    def __init__(self, order: list[str]) -> None:
        super().__init__(order)
        self._waiting: list[tuple[set[str], asyncio.Event]] = []

    def all_waiting(self, names: set[str]) -> asyncio.Event:
        """An event set once every name in `names` has arrived at the gate."""
        event = asyncio.Event()
        self._waiting.append((names, event))
        self._check(set())
        return event

    def _check(self, also: set[str]) -> None:
        arrived = set(self.arrived) | also
        for names, event in self._waiting:
            if names <= arrived:
                event.set()

    async def wait(self, name: str) -> None:
        self._check({name})
        await super().wait(name)


class _Vacuous(Exception):
    """`in_one_second`'s `obs`: its `vacuous(reason)` ends the scenario as a vacuous answer, not a reading."""

    @staticmethod
    def vacuous(reason: str) -> NoReturn:
        raise _Vacuous(reason)


async def _staggered(
    script: scenario_kit.Script, build: Callable[[Any], Any], services: list[Any], session: str
) -> list[Any]:
    """Run n on services[n - 1], each started once the previous run's branches all wait at the gate (or it ended):
    what each run returned or raised."""
    gate = script.turns
    assert isinstance(gate, Arrivals)
    tasks: list[asyncio.Future[Any]] = []
    for number, service in enumerate(services, 1):
        view = script.of_run(number)
        task = asyncio.ensure_future(view.run(run_turn(build(view), service, session)))
        tasks.append(task)
        if number < len(services):
            waiting = gate.all_waiting({turn_key(number, name) for name in script.selected})
            waiter = asyncio.ensure_future(waiting.wait())
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
    return await asyncio.gather(*tasks, return_exceptions=True)


async def _attempt(script: scenario_kit.Script, build: Callable[[Any], Any], url: str, session: str) -> Any:
    """One attempt: the session seeded, both runs in flight together (one gate over `<run>.<branch>`); (errors,
    whole, start, end): what each run raised (None: it returned), whether the store keeps whole seconds, the
    writes' window."""
    seeder = open_database_service(url)
    services = [open_database_service(url) for _ in range(script.runs)]
    try:
        start = await window_start(int(session.rsplit("-", 1)[1]))
        created = await seeder.create_session(app_name=APP, user_id=USER, session_id=session, state=script.state)
        ends = await _staggered(script, build, services, session)
        end = time.time()
    finally:
        for service in (seeder, *services):
            await close_service(service)
    errors = [e if isinstance(e, BaseException) else None for e in ends]
    return errors, keeps_whole_seconds(created), start, end


async def run(scenario: dict[str, Any], order: list[str], build: Callable[[Any], Any]) -> dict[str, Any]:
    """Both runs in flight together on one session (retried where whole-second stamps would let the clock decide),
    then the session as a fresh service reads it back."""
    reason = missing_sqlalchemy()
    if reason:
        raise scenario_kit.NotExpressible(reason)
    with scenario_kit.Script.store_dir() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'sessions.db'}"

        async def attempt(number: int) -> tuple[Any, bool, tuple[float, float]]:
            script = scenario_kit.Script(scenario, order)  # a fresh gate for each attempt
            script.turns = Arrivals(order)
            session = f"together-{number}"
            errors, whole, start, end = await _attempt(script, build, url, session)
            return (script, session, errors, number), whole, (start, end)

        try:
            (script, session, errors, number), clock = await in_one_second(_Vacuous, attempt, TRIES)
        except _Vacuous as exc:
            return {"vacuous": str(exc)}
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
    raised = [number for number, e in enumerate(errors, 1) if e is not None]
    return {**answer, "detail": f"attempt {number}, runs raised: {raised or 'none'}" + (f"; {clock}" if clock else "")}
