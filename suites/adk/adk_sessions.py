"""Session services per storage backend, for the ADK session probes.

A probe that declares `backends=("memory", "sqlite", "postgres", "sqlite-native")` gets the
session service of its observation from `session_service(obs)`:

    async with session_service(obs) as service:
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        ...

- memory        -> `InMemorySessionService()` (exactly what the probes used before backends)
- sqlite        -> `DatabaseSessionService("sqlite+aiosqlite:///<obs.scratch>/sessions.db")`, or
                   `"sqlite:///<obs.scratch>/sessions.db"` where this version's DatabaseSessionService builds a
                   synchronous engine (see `open_service`)
- postgres      -> `DatabaseSessionService("postgresql+psycopg://...")` on a fresh database of the
                   harness's PostgreSQL server (reached over its Unix socket), dropped afterwards
- sqlite-native -> `SqliteSessionService("<obs.scratch>/sessions.db")` (aiosqlite, no SQLAlchemy)

These are the URLs ADK's own session contract tests use (`tests/unittests/sessions/_conformance.py`:
`DatabaseSessionService('sqlite+aiosqlite:///:memory:')`, `SqliteSessionService(str(tmp_path / ...))`).
The 1.0-1.15 DatabaseSessionService builds a synchronous engine, on which the async driver raises
SQLAlchemy's MissingGreenlet; there the same file opens with the synchronous driver (`sqlite:///`), which
is what a user of those versions writes. The installed service decides (it is tried), never a version
number. A version that lacks the backend makes the observation `n/a` with the reason found in the
installed package (never a guess). The service is closed and its engine disposed when the block ends,
so no connection or thread outlives it.

`open_service(kind, target)` / `close_service(service)` build and close the same services from plain
strings; the worker processes of `adk/session/concurrent-processes` use them (`start_worker` below),
so this module imports nothing of the harness.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import importlib.util
import math
import time
from typing import Any, NoReturn, Protocol
from urllib.parse import quote

BACKENDS = ("memory", "sqlite", "postgres", "sqlite-native")
DATABASE_MODULE = "google.adk.sessions.database_session_service"
NATIVE_MODULE = "google.adk.sessions.sqlite_session_service"

# Imported here, when the suite is collected, where this version has them: importing SQLAlchemy and its
# dialects costs a few hundred milliseconds once, which would otherwise land in whichever probe variant
# happens to run first. A missing module is decided per observation (n/a), never here.
for _module in (DATABASE_MODULE, NATIVE_MODULE, "sqlalchemy.dialects.postgresql.psycopg", "sqlalchemy.dialects.sqlite.aiosqlite", "psycopg", "aiosqlite"):
    try:
        importlib.import_module(_module)
    except ImportError:
        pass


def adk_version() -> str:
    return importlib.metadata.version("google-adk")


def missing_sqlalchemy() -> str | None:
    """Why DatabaseSessionService cannot be imported here (SQLAlchemy absent), or None when it can."""
    if importlib.util.find_spec("sqlalchemy") is not None:
        return None
    extras = sorted(
        {req.split("extra ==", 1)[1].strip().strip("'\"") for req in importlib.metadata.requires("google-adk") or ()
         if req.lower().startswith("sqlalchemy") and "extra ==" in req}
    )
    where = f"only under its extra(s) {', '.join(extras)}" if extras else "not at all"
    return (
        f"DatabaseSessionService needs sqlalchemy, which google-adk {adk_version()} declares {where}; "
        "this cell's lock installs google-adk without that extra, so sqlalchemy is not installed"
    )


def postgres_url(dsn: str) -> str:
    """SQLAlchemy's psycopg 3 URL for a libpq keyword DSN (`host=<socket dir> port=... user=... dbname=...`)."""
    fields = dict(part.split("=", 1) for part in dsn.split())
    query = "&".join(f"{key}={quote(fields[key], safe='')}" for key in ("host", "port") if key in fields)
    return f"postgresql+psycopg://{quote(fields.get('user', 'postgres'), safe='')}@/{fields['dbname']}?{query}"


ASYNC_SQLITE = "sqlite+aiosqlite:"


def engine_kind(module: Any) -> str:
    """`async` when DatabaseSessionService builds `create_async_engine`, `sync` when it builds `create_engine`."""
    return "async" if hasattr(module, "create_async_engine") else "sync"


def open_database_service(target: str) -> Any:
    """`DatabaseSessionService(target)`; an async-driver SQLite URL that this version cannot run falls back
    to the synchronous driver on the same file.

    Only one failure means "this service builds a synchronous engine": SQLAlchemy's MissingGreenlet (an
    async driver called from synchronous code, raised while the constructor inspects the new engine; the
    file is not created). Any other exception is the framework's answer and propagates."""
    service_class = importlib.import_module(DATABASE_MODULE).DatabaseSessionService
    try:
        return service_class(target)
    except Exception as exc:
        from sqlalchemy.exc import MissingGreenlet

        if not target.startswith(ASYNC_SQLITE) or not any(
            isinstance(cause, MissingGreenlet) for cause in (exc, exc.__cause__, exc.__context__)
        ):
            raise
    return service_class("sqlite:" + target.removeprefix(ASYNC_SQLITE))


def open_service(kind: str, target: str) -> Any:
    """The session service of backend `kind` on `target` (a SQLAlchemy URL, or a file path for sqlite-native)."""
    if kind == "memory":
        from google.adk.sessions import InMemorySessionService

        return InMemorySessionService()
    if kind in ("sqlite", "postgres"):
        return open_database_service(target)
    if kind == "sqlite-native":
        return importlib.import_module(NATIVE_MODULE).SqliteSessionService(target)
    raise ValueError(f"unknown session backend {kind!r}")


async def close_service(service: Any) -> None:
    """Close what the service holds open: `close()` where ADK has it, else dispose its SQLAlchemy engine."""
    close = getattr(service, "close", None)
    if close is not None:
        await close()
        return
    engine = getattr(service, "db_engine", None)
    if engine is not None:
        disposed = engine.dispose()
        if hasattr(disposed, "__await__"):
            await disposed


def keeps_whole_seconds(session: Any) -> bool:
    """Whether the store stamps a session with whole seconds (SQLite's CURRENT_TIMESTAMP under the 1.x
    DatabaseSessionService), read from a session it returned: its stale check then compares seconds."""
    return float(session.last_update_time).is_integer()


async def window_start(attempt: int) -> float:
    """`time.time()` where a scenario's writes begin. A repeated attempt first waits for the top of the next
    second, so its writes have a whole second to fit in; the wait decides no order, and whether they did fit
    is still checked after (`in_one_second`)."""
    if attempt > 1:
        now = time.time()
        await asyncio.sleep(math.floor(now) + 1 - now)
    return time.time()


class CanBeVacuous(Protocol):
    """The part of the probe's `obs` that `in_one_second` uses (this module does not import the harness)."""

    def vacuous(self, reason: str) -> NoReturn: ...


async def in_one_second(obs: CanBeVacuous, scenario: Any, tries: int = 5) -> tuple[Any, str]:
    """`await scenario(attempt)` -> (result, whole_seconds, (start, end)), repeated until its writes fell within
    one wall-clock second where the store keeps whole seconds; returns (result, the clock precondition, or ""
    where there is none).

    Where a session is stamped with whole seconds, "stale" means "updated in a later second", so two copies
    that write within one second both pass and a second apart the later one is refused: the clock, not the
    probe, would decide. The scenario takes `start = await window_start(attempt)` just before it creates the
    session and `end = time.time()` just after its last write: when both are in one second, every write is.
    An attempt that crossed a boundary is run again on a fresh session, from the top of a second; if every
    attempt crossed one (writes spread over more than a second), the observation is `vacuous`, never a
    reading. A store with finer stamps is run once."""
    for attempt in range(1, tries + 1):
        result, whole, (start, end) = await scenario(attempt)
        if not whole:
            return result, ""
        if int(end) == int(start):
            return result, "the store stamps sessions with whole seconds; every write fell within one second"
    obs.vacuous(f"the writes crossed a second boundary in each of {tries} attempts (the store keeps whole seconds)")


class session_store:
    """`async with session_store(obs) as target`: where `obs.backend` keeps sessions (a URL, a file path,
    or "" for memory); a PostgreSQL database is created first and dropped when the block ends.
    `store.open(target)` opens a session service on it (`n/a` when this version cannot)."""

    def __init__(self, obs: Any) -> None:
        self.obs = obs
        self.database: str | None = None

    async def __aenter__(self) -> str:
        try:
            return self.target()
        except BaseException:
            self.drop_database()
            raise

    def open(self, target: str) -> Any:
        """`open_service(obs.backend, target)`: a synchronous DatabaseSessionService (1.0-1.15) opens SQLite with
        the synchronous driver; psycopg 3 has both kinds, so `postgresql+psycopg://` opens on either engine."""
        return open_service(self.obs.backend, target)

    def target(self) -> str:
        """What a service is opened on; `n/a` when this version has no such backend."""
        obs = self.obs
        if obs.backend not in BACKENDS:
            raise ValueError(f"unknown session backend {obs.backend!r}")
        if obs.backend == "memory":
            return ""
        if obs.backend == "sqlite-native":
            obs.need(NATIVE_MODULE, "SqliteSessionService")
            return str(obs.scratch / "sessions.db")
        reason = missing_sqlalchemy()
        if reason:
            obs.not_applicable(reason)
        obs.need(DATABASE_MODULE, "DatabaseSessionService")
        if obs.backend == "sqlite":
            return f"{ASYNC_SQLITE}///{obs.scratch / 'sessions.db'}"
        self.database = create_database(obs)
        return postgres_url(obs.postgres_dsn(self.database))

    def drop_database(self) -> None:
        if self.database is not None:
            drop_database(self.obs, self.database)
            self.database = None

    async def __aexit__(self, *exc: Any) -> None:
        self.drop_database()


class session_service:
    """`async with session_service(obs) as service`: the session service of `obs.backend` on a fresh store,
    closed (and the store removed) when the block ends."""

    def __init__(self, obs: Any) -> None:
        self.store = session_store(obs)
        self.service: Any = None

    async def __aenter__(self) -> Any:
        target = await self.store.__aenter__()
        try:
            self.service = self.store.open(target)
        except BaseException:
            await self.store.__aexit__(None, None, None)
            raise
        return self.service

    async def __aexit__(self, *exc: Any) -> None:
        try:
            if self.service is not None:
                await close_service(self.service)
        finally:
            await self.store.__aexit__(None, None, None)


def create_database(obs: Any) -> str:
    """A fresh database (obs.database_name) on the harness's PostgreSQL server; returns its name."""
    psycopg = obs.need("psycopg")
    name = obs.database_name
    with psycopg.connect(obs.postgres_dsn("postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_database(obs: Any, name: str) -> None:
    import psycopg

    with psycopg.connect(obs.postgres_dsn("postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- worker processes (adk/session/concurrent-processes) ------------------------------------------


def start_worker(kind: str, target: str, name: str, app: str, user: str, session_id: str) -> tuple[Any, Any]:
    """Fork a worker process that opens its own `kind` session service on `target` (its own engine and
    connections: two workers, one database); returns (process, the parent's end of its pipe).

    Forked, not exec'd: a fresh interpreter spends seconds importing ADK before it can hold a session,
    a fork starts with ADK already imported and nothing else shared but the database. The worker gets
    the backend, the store (URL or file path) and the session address as its arguments."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    parent_end, child_end = context.Pipe()
    process = context.Process(
        target=_worker_main, args=(kind, target, name, app, user, session_id, child_end), name=f"worker-{name}",
        daemon=True,
    )
    process.start()
    child_end.close()
    return process, parent_end


def _worker_main(kind: str, target: str, name: str, app: str, user: str, session_id: str, conn: Any) -> None:
    """The worker: open its service and say so, read the session when told to and say so, then append one
    event per `go <key>` until told to stop or an append raises (as a Runner would stop). Everything it saw
    goes back through the pipe as plain data. Opening first keeps the slow part (an engine, its tables) out
    of the span between the session's creation and the last append."""
    import asyncio
    import traceback

    # Forked from inside the parent's running event loop: forget it here (Python 3.12+ does this at fork).
    asyncio.events._set_running_loop(None)
    try:
        asyncio.run(_worker(kind, target, name, app, user, session_id, conn))
    except BaseException:  # noqa: BLE001 - a defect of the worker itself: the parent turns it into probe-error
        conn.send(("worker-error", traceback.format_exc()))
    finally:
        conn.close()


async def _worker(kind: str, target: str, name: str, app: str, user: str, session_id: str, conn: Any) -> None:
    from google.adk.events import Event, EventActions

    service = open_service(kind, target)
    try:
        conn.send(("ready",))
        if conn.recv() is None:  # the go-ahead to read the session (None: stop before reading)
            return
        session = await service.get_session(app_name=app, user_id=user, session_id=session_id)
        conn.send(("holding", [event.invocation_id for event in session.events]))
        while True:
            key = conn.recv()
            if key is None:
                break
            event = Event(
                author=name, invocation_id=f"inv-{key}", actions=EventActions(state_delta={key: name.upper(), "last": key})
            )
            try:
                await service.append_event(session, event)
            except Exception as exc:  # noqa: BLE001 - the framework's answer, reported to the parent
                error = {"raises": type(exc).__name__, "module": type(exc).__module__, "is_value_error": isinstance(exc, ValueError)}
                conn.send(("raised", error, str(exc)))
                break
            conn.send(("appended", sorted(session.state)))
    finally:
        await close_service(service)
