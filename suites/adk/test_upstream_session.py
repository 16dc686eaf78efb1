"""Concurrent `create_session` calls for a new app on PostgreSQL (adk-python #4954).

DatabaseSessionService reads the app's `app_states` row and inserts it when it is missing. Two calls that
both read before either inserts both insert. The probe makes that interleaving happen every time, with the
database's own locks rather than the clock: a separate connection holds `LOCK TABLE app_states IN SHARE
MODE`, which lets reads through and holds every INSERT, so each call is proven to have read (found
nothing) and to be waiting at its INSERT (`pg_locks`: two ungranted locks on app_states) before the lock is
released and both inserts go ahead.
"""

import asyncio
import threading
import time

from adk_sessions import DATABASE_MODULE, close_service, engine_kind, session_store

from fanin.probe import Claim, Observer, probe

ISSUE = "https://github.com/google/adk-python/issues/4954"
PATIENCE = 20.0  # seconds for both calls to reach their INSERT; only ever reached when they never overlap
RACE_APP = "race-app"

WAITERS = (
    "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
    "WHERE c.relname = 'app_states' AND NOT l.granted"
)


def wait_for_waiters(dsn: str, wanted: int) -> int:
    """Poll pg_locks until `wanted` sessions wait for app_states (or PATIENCE runs out); returns how many do.

    The poll reads a condition of the database; its interval decides no order, and the deadline only
    breaks a deadlock (the probe then records vacuous)."""
    import psycopg

    deadline = time.monotonic() + PATIENCE
    with psycopg.connect(dsn, autocommit=True) as watcher:
        while True:
            count = watcher.execute(WAITERS).fetchone()[0]
            if count >= wanted or time.monotonic() > deadline:
                return count
            time.sleep(0.005)


def error_of(exc: BaseException) -> dict:
    return {"raises": type(exc).__name__, "module": type(exc).__module__.split(".")[0]}


@probe(
    "adk/session/create-session-race",
    title="Two create_session calls for a new app, two users, on one DatabaseSessionService: both read the"
    " missing app_states row before either inserts it",
    claim=Claim(
        "Concurrent create_session calls for the same new app_name succeed: the app_states row is created once"
        " and both sessions are stored (adk-python #4954 reports UniqueViolation on app_states_pkey for every"
        " call but the first).",
        ISSUE,
        expect={"value.created": 2, "value.raised": [], "value.sessions_stored": 2},
    ),
    sources=("https://github.com/google/adk-python/pull/4955",),
    backends=("postgres",),
)
async def test_create_session_race(obs: Observer) -> None:
    psycopg = obs.need("psycopg")
    store = session_store(obs)
    async with store as target:
        service = store.open(target)
        try:
            # The tables exist (created by the first use), the race app's rows do not.
            await service.create_session(app_name="warm-up", user_id="u0", session_id="w0")
            dsn = obs.postgres_dsn(store.database)  # type: ignore[arg-type]  # set: the postgres backend created it on entering
            kind = engine_kind(obs.need(DATABASE_MODULE))
            outcomes: dict = {}

            async def create(user: str) -> None:
                try:
                    await service.create_session(app_name=RACE_APP, user_id=user, session_id=f"s-{user}")
                    outcomes[user] = "created"
                except Exception as exc:  # noqa: BLE001 - the framework's answer
                    outcomes[user] = error_of(exc)

            admin = psycopg.connect(dsn)  # a transaction opens with the first statement
            try:
                admin.execute("LOCK TABLE app_states IN SHARE MODE")
                if kind == "async":
                    # One event loop, two tasks: how an async app (asyncio.gather) calls it.
                    tasks = [asyncio.ensure_future(create(user)) for user in ("u1", "u2")]
                    waiting = await asyncio.to_thread(wait_for_waiters, dsn, 2)
                    admin.commit()
                    await asyncio.gather(*tasks)
                    concurrency = "two asyncio tasks"
                else:
                    # A synchronous engine blocks the event loop in every query, so two calls in one loop never
                    # overlap: an app overlaps them from two threads, each with its own loop.
                    threads = [threading.Thread(target=lambda u=user: asyncio.run(create(u))) for user in ("u1", "u2")]
                    for thread in threads:
                        thread.start()
                    waiting = wait_for_waiters(dsn, 2)
                    admin.commit()
                    for thread in threads:
                        thread.join(PATIENCE)
                    concurrency = "two threads (synchronous engine)"
            finally:
                admin.close()
            if waiting < 2:
                obs.vacuous(f"only {waiting} create_session call(s) waited at the app_states INSERT together")
            with psycopg.connect(dsn, autocommit=True) as check:
                app_rows = check.execute("SELECT count(*) FROM app_states WHERE app_name = %s", (RACE_APP,)).fetchone()[0]
            stored = 0
            for user in ("u1", "u2"):
                got = await service.get_session(app_name=RACE_APP, user_id=user, session_id=f"s-{user}")
                stored += got is not None
        finally:
            await close_service(service)
    raised = sorted(o["raises"] for o in outcomes.values() if isinstance(o, dict))
    created = sum(1 for o in outcomes.values() if o == "created")
    value = {
        "engine": kind,
        "concurrency": concurrency,
        "both_read_before_insert": waiting >= 2,
        "created": created,
        "raised": raised,
        "sessions_stored": stored,
        "app_states_rows": app_rows,
    }
    lost = created > stored  # a call that said "created" whose session is not there
    obs.record(
        value,
        label=f"{created} created, {', '.join(raised) or 'no error'}",
        detail=f"{concurrency}, both past their read of app_states and waiting at its INSERT: {created} call(s) return,"
        f" {len(raised)} raise {', '.join(raised) or 'nothing'}; {stored} session(s) stored, {app_rows} app_states row",
        hazard="silent" if lost else "loud" if raised else "safe",
        outcome=f"raises:{raised[0]}" if raised else "ok",
    )
