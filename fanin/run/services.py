"""Infrastructure the harness runs for a cell: a real PostgreSQL server, started and removed with it.

The server is the harness's, not the framework's: `pgserver` (a PostgreSQL build in a
PyPI wheel) lives in the harness's own tools, the cell's lock holds only the client side
(a checkpointer package and its driver). It listens on a Unix socket only, so it is
reachable from a probe run inside an isolated network namespace, and nothing listens
on a network address. Everything it writes lives in one temporary directory that is
removed when the cell ends, however it ends (a guardian process removes it, and kills the
server, if the harness itself is killed: fanin.run.lifetime).

pgserver keeps an inter-process lock in a runtime directory shared by every pgserver user on
the machine; fanin's servers get their own (`fanin-pgserver-<uid>` in the temporary directory),
and a server that has not started within `FANIN_PG_START_SECONDS` (default 60) is "could not
run" with the reason (a held lock is named), never a silent hang.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fanin.model.errors import EnvironmentFault
from fanin.run.lifetime import Guardian

POSTGRES_DSN = "FANIN_POSTGRES_DSN"
POSTGRES_VERSION = "FANIN_POSTGRES_VERSION"


class ServiceError(EnvironmentFault):
    """A service the cell needs could not be started."""


# pgserver guards its bookkeeping with an inter-process file lock that is not safe to share between
# threads of one process; cells run in threads, so starting and stopping servers is serialised here.
_PGSERVER = threading.Lock()


def runtime_dir() -> Path:
    """fanin's own pgserver runtime directory (its inter-process lock lives there), per user."""
    return Path(tempfile.gettempdir()) / f"fanin-pgserver-{os.getuid()}"


def start_seconds() -> float:
    raw = os.environ.get("FANIN_PG_START_SECONDS", "60")
    try:
        return float(raw)
    except ValueError:
        raise ServiceError(f"FANIN_PG_START_SECONDS={raw!r} is not a number of seconds") from None


def _import_pgserver() -> object:
    try:
        with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset: irrelevant here
            warnings.simplefilter("ignore")
            import fasteners  # type: ignore[import-untyped]
            import pgserver  # the harness's tools only
            from pgserver.postgres_server import PostgresServer
    except ImportError:
        raise ServiceError("pgserver is not installed in the harness tools; re-run ./noxw to reinstall them") from None
    ours = runtime_dir()
    if PostgresServer.runtime_path != ours:
        ours.mkdir(mode=0o700, exist_ok=True)
        PostgresServer.runtime_path = ours
        PostgresServer.lock_path = ours / ".lockfile"
        PostgresServer._lock = fasteners.InterProcessLock(PostgresServer.lock_path)
    return pgserver


def _why_not_started(seconds: float) -> str:
    import fasteners

    lock = fasteners.InterProcessLock(runtime_dir() / ".lockfile")
    if lock.acquire(blocking=False):
        lock.release()
        return f"PostgreSQL did not start within {seconds:.0f} s (FANIN_PG_START_SECONDS)"
    return (
        f"PostgreSQL did not start within {seconds:.0f} s: pgserver's lock {runtime_dir() / '.lockfile'} "
        "is held by another process"
    )


def _start(pgserver: object, data: Path, cancelled: Callable[[], bool]) -> object:
    """pgserver.get_server in a thread, waited for at most start_seconds(); an abandoned start cleans up after itself."""
    seconds = start_seconds()
    outcome: dict[str, object] = {}
    abandoned = threading.Event()

    def start() -> None:
        try:
            with _PGSERVER:
                server = pgserver.get_server(data, cleanup_mode="delete")  # type: ignore[attr-defined]
            if abandoned.is_set():
                with _PGSERVER:
                    server.cleanup()
                return
            outcome["server"] = server
        except Exception as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=start, name="fanin-pgserver-start", daemon=True)
    thread.start()
    deadline = time.monotonic() + seconds
    while thread.is_alive():
        thread.join(0.1)
        if cancelled():
            abandoned.set()
            raise ServiceError("interrupted while PostgreSQL was starting")
        if time.monotonic() > deadline and thread.is_alive():
            abandoned.set()
            raise ServiceError(_why_not_started(seconds))
    if "error" in outcome:
        exc = outcome["error"]
        raise ServiceError(f"cannot start PostgreSQL for the cell: {type(exc).__name__}: {exc}")
    return outcome["server"]


@contextmanager
def postgres(cancelled: Callable[[], bool] = lambda: False) -> Iterator[dict[str, str]]:
    """Start a PostgreSQL server in a fresh directory; yield the environment a probe run needs."""
    pgserver = _import_pgserver()
    # A short path: the server's Unix socket lives in it, and socket paths are limited to ~100 bytes.
    workdir = Path(tempfile.mkdtemp(prefix="fanin-pg-"))
    guardian = Guardian(workdir)  # first: from here on, the directory and its server die with this process
    server = None
    try:
        server = _start(pgserver, workdir / "data", cancelled)
        try:
            info = server.get_postmaster_info()  # type: ignore[attr-defined]
            version = server.psql("SHOW server_version;").splitlines()[2].strip()  # type: ignore[attr-defined]
        except Exception as exc:
            raise ServiceError(f"cannot start PostgreSQL for the cell: {type(exc).__name__}: {exc}") from None
        yield {POSTGRES_DSN: f"host={info.socket_dir} port={info.port} user=postgres", POSTGRES_VERSION: version}
    finally:
        if server is not None:
            with _PGSERVER:
                server.cleanup()  # type: ignore[attr-defined]
        shutil.rmtree(workdir, ignore_errors=True)
        guardian.release()


def needs_postgres(framework: str, targets: tuple[str, ...] = ()) -> bool:
    """Whether any probe of the framework (or of `targets`, files or file::function ids) runs on postgres."""
    from fanin.model import catalog

    for declared in catalog.declared():
        if declared.framework != framework or "postgres" not in dict(declared.dimensions).get("backend", ()):
            continue
        if not targets or any(declared.file in target for target in targets):
            return True
    return False


@contextmanager
def for_cell(
    framework: str, targets: tuple[str, ...] = (), cancelled: Callable[[], bool] = lambda: False
) -> Iterator[dict[str, str]]:
    """The services a cell's probe run needs, as environment variables; nothing when it needs none."""
    if needs_postgres(framework, targets):
        with postgres(cancelled) as env:
            yield env
    else:
        yield {}
