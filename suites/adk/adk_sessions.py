"""Session services per storage backend, for the ADK session probes.

A probe that declares `backends=("memory", "sqlite", "postgres", "sqlite-native")` gets the
session service of its observation from `session_service(obs)`:

    async with session_service(obs) as service:
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        ...

- memory        -> `InMemorySessionService()` (exactly what the probes used before backends)
- sqlite        -> `DatabaseSessionService("sqlite+aiosqlite:///<obs.scratch>/sessions.db")`
- postgres      -> `DatabaseSessionService("postgresql+psycopg://...")` on a fresh database of the
                   harness's PostgreSQL server (reached over its Unix socket), dropped afterwards
- sqlite-native -> `SqliteSessionService("<obs.scratch>/sessions.db")` (aiosqlite, no SQLAlchemy)

These are the URLs ADK's own session contract tests use (`tests/unittests/sessions/_conformance.py`:
`DatabaseSessionService('sqlite+aiosqlite:///:memory:')`, `SqliteSessionService(str(tmp_path / ...))`).
A version that lacks the backend, or whose DatabaseSessionService cannot run on the driver, makes
the observation `n/a` with the reason found in the installed package (never a guess). The service
is closed and its engine disposed when the block ends, so no connection or thread outlives it.

`open_service(kind, target)` / `close_service(service)` build and close the same services from plain
strings; the worker processes of `adk/session/concurrent-processes` use them (`adk_session_worker.py`),
so this module imports nothing of the harness.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from typing import Any
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


def engine_kind(module: Any) -> str:
    """`async` when DatabaseSessionService builds `create_async_engine`, `sync` when it builds `create_engine`."""
    return "async" if hasattr(module, "create_async_engine") else "sync"


def open_service(kind: str, target: str) -> Any:
    """The session service of backend `kind` on `target` (a SQLAlchemy URL, or a file path for sqlite-native)."""
    if kind == "memory":
        from google.adk.sessions import InMemorySessionService

        return InMemorySessionService()
    if kind in ("sqlite", "postgres"):
        return importlib.import_module(DATABASE_MODULE).DatabaseSessionService(target)
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
        """`open_service(obs.backend, target)`. A synchronous DatabaseSessionService (the 1.0-1.15.1 cells)
        cannot be built on aiosqlite, an async-only driver: the observation is `n/a`, with what it raised.
        (psycopg 3 has both kinds, so `postgresql+psycopg://` opens there, on a synchronous engine.)"""
        try:
            return open_service(self.obs.backend, target)
        except Exception as exc:
            if "+aiosqlite:" not in target or engine_kind(importlib.import_module(DATABASE_MODULE)) != "sync":
                raise
            self.obs.not_applicable(
                f"DatabaseSessionService of google-adk {adk_version()} builds a synchronous SQLAlchemy engine "
                f"(create_engine), and constructing it on {target.split(':', 1)[0]}:// raises {type(exc).__name__}"
            )

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
            return f"sqlite+aiosqlite:///{obs.scratch / 'sessions.db'}"
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
    """The worker: read the session, say so, then append one event per `go <key>` until told to stop or an
    append raises (as a Runner would stop). Everything it saw goes back through the pipe as plain data."""
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
