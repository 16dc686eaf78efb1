"""Infrastructure the harness runs for cells: a real PostgreSQL server, started and removed with them.

The server is the harness's, not the framework's: `pgserver` (a PostgreSQL build in a
PyPI wheel) lives in the harness's own tools, the cell's lock holds only the client side
(a checkpointer package and its driver). It listens on a Unix socket only, so it is
reachable from a probe run inside an isolated network namespace, and nothing listens
on a network address. Everything it writes lives in one temporary directory that is
removed when the run ends, however it ends (a guardian process removes it, and kills the
server, if the harness itself is killed: fanin.run.lifetime).

What it costs, and how little of it is in a cell's critical path:
- `initdb` runs once per machine and PostgreSQL build, into a template directory beside
  pgserver's lock; a server starts from a copy of it (`cp -a`, a tenth of a second);
- as root the server runs as pgserver's own `pgserver` account, from a copy of the wheel's build and its
  vendored libraries in fanin's runtime directory (that account may not traverse the checkout's parents);
- a server starts in the background while pytest starts: its DSN is known before it is
  up (its socket is in its own directory), and a probe's `obs.postgres_dsn()` waits for
  the ready file the harness writes (`FANIN_POSTGRES_READY`); a server that fails to start
  ends the cell's pytest and the cell is "could not run" with the reason;
- a matrix run starts one server for all of its cells (`shared()`); each cell run gets a
  tag of its own (`FANIN_POSTGRES_TAG`), which goes into every observation's database
  name, so two cells running side by side never share a database;
- it is stopped as `pg_ctl -m immediate` stops it, SIGQUIT to the postmaster, watched every 5 ms
  (the directory is removed right after: there is nothing to keep) and runs with `fsync=off` (a
  crash of the machine loses nothing anyone keeps);
- its directory is in memory where the machine has room (fanin.run.memory): every observation's
  `CREATE DATABASE` writes ~7.5 MB, and on a disk that writing was most of what a database cost;
  the WAL is kept small (`SETTINGS`), so the memory a matrix run holds stays bounded.

pgserver keeps an inter-process lock in a runtime directory shared by every pgserver user on
the machine; fanin's servers get their own (`fanin-pgserver-<uid>` in the temporary directory),
hold it while they start, and a server that has not started within `FANIN_PG_START_SECONDS`
(default 60) is "could not run" with the reason (a held lock is named), never a silent hang.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fanin.model.contract import POSTGRES_DSN, POSTGRES_READY, POSTGRES_TAG, POSTGRES_VERSION
from fanin.model.errors import EnvironmentFault, FaninError
from fanin.run import memory
from fanin.run.lifetime import Guardian

SYSTEM_USER = "pgserver"  # PostgreSQL refuses to run as root; pgserver's own choice of user


class ServiceError(EnvironmentFault):
    """A service the cell needs could not be started."""


# fasteners' inter-process lock is not safe to share between threads of one process; cells run in
# threads, so taking pgserver's lock (and making the template) is serialised here too.
_PGSERVER = threading.Lock()


def runtime_dir() -> Path:
    """fanin's own pgserver runtime directory (its inter-process lock lives there), per user."""
    return Path(tempfile.gettempdir()) / f"fanin-pgserver-{os.getuid()}"


# Checkpoints come every ~64 MB of WAL and keep 32 MB for reuse: in memory (fanin.run.memory) the WAL stays
# ~100-200 MB while a matrix run creates and drops hundreds of databases.
SETTINGS = ("fsync=off", "max_wal_size=64MB", "min_wal_size=32MB")


def start_seconds() -> float:
    """How long PostgreSQL may take to start; a malformed value is bad input (the CLI checks it before any cell
    runs, so it is one line and exit 2, never a cell's `.error` marker)."""
    raw = os.environ.get("FANIN_PG_START_SECONDS", "60")
    try:
        seconds = float(raw)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise FaninError(f"FANIN_PG_START_SECONDS={raw!r} is not a number of seconds (e.g. FANIN_PG_START_SECONDS=60)")
    return seconds


def _bin() -> Path:
    try:
        with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset: irrelevant here
            warnings.simplefilter("ignore")
            import pgserver  # the harness's tools only
    except ImportError:
        raise ServiceError("pgserver is not installed in the harness tools; re-run ./noxw to reinstall them") from None
    return Path(pgserver.__file__).parent / "pginstall" / "bin"


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _system_user() -> str | None:
    """The user the server runs as: ours, or pgserver's own `pgserver` account when we are root."""
    if not _as_root():
        return None
    from pgserver.utils import ensure_prefix_permissions, ensure_user_exists

    ensure_user_exists(SYSTEM_USER)
    binaries = _server_bin(SYSTEM_USER)
    ensure_prefix_permissions(binaries)  # fanin's runtime directory, which holds the copy, and its parents
    return SYSTEM_USER


# The parts of pgserver's wheel its binaries load at run time, relative to site-packages: the build, and the
# shared libraries auditwheel vendored beside the package (libpq-<hash>.so.5.16 and two more), which every
# binary finds through an RPATH of $ORIGIN/../../../pgserver.libs (lib/postgresql/*.so: one level deeper).
_WHEEL_PARTS = ("pgserver/pginstall", "pgserver.libs")


def _copy_readable(source: Path, target: Path) -> None:
    """`source` copied to `target` (symlinks kept), readable and runnable by any user whatever the umask."""
    shutil.copytree(source, target, symlinks=True)
    for path in (target, *target.rglob("*")):
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        path.chmod(mode | (0o755 if path.is_dir() or mode & 0o100 else 0o644))


def _server_bin(user: str | None) -> Path:
    """Where the server's user runs PostgreSQL from: the harness's own build when that user is us; else a copy in
    fanin's runtime directory, made once per build. The harness lives in the checkout, whose parents another user
    may not traverse (a clone in `mktemp -d`, mode 0700): pgserver would widen every parent's permissions instead.
    The copy keeps the wheel's layout, so the RPATHs that find its vendored libraries hold in it (a copy of the
    build alone could not load libpq: initdb and pg_ctl failed to start on a machine without leftovers)."""
    if user is None:
        return _bin()
    site = _bin().parent.parent.parent
    copy = runtime_dir() / f"pgserver-{server_version()}"
    binaries = copy / "pgserver" / "pginstall" / "bin"
    if not (copy / "complete").exists():
        runtime_dir().mkdir(mode=0o700, exist_ok=True)
        making = Path(tempfile.mkdtemp(prefix="pgserver-", dir=runtime_dir()))
        try:
            for part in _WHEEL_PARTS:
                if (site / part).exists():
                    _copy_readable(site / part, making / part)
            making.chmod(0o755)
            (making / "complete").write_text(str(site), encoding="utf-8")
            shutil.rmtree(copy, ignore_errors=True)  # an incomplete copy an interrupted run left
            os.replace(making, copy)
        finally:
            shutil.rmtree(making, ignore_errors=True)
    return binaries


def _give(path: Path, user: str | None) -> None:
    """Let the server's user own `path` and traverse its parents."""
    if user is None:
        return
    import pwd

    from pgserver.utils import ensure_prefix_permissions

    ensure_prefix_permissions(path)
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def _run(binary: str, args: list[str], user: str | None, timeout: float) -> str:
    done = subprocess.run(
        [str(_server_bin(user) / binary), *args],
        capture_output=True,
        text=True,
        user=user,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise ServiceError(f"{binary} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-500:]}")
    return done.stdout


def server_version() -> str:
    """The PostgreSQL version as `SHOW server_version` gives it (`16.2`), from the build itself."""
    return _run("postgres", ["-V"], None, 30).split()[-1]


def _template(user: str | None) -> Path:
    """An initialised data directory for this PostgreSQL build, made once (under the locks); started from copies."""
    version = server_version()
    template = runtime_dir() / f"template-{version}-{'root' if user else 'user'}"
    if (template / "PG_VERSION").exists():
        return template
    making = Path(tempfile.mkdtemp(prefix="template-", dir=runtime_dir()))
    try:
        data = making / "data"
        data.mkdir(mode=0o700)
        _give(making, user)
        _give(data, user)
        _run(
            "initdb",
            ["-D", str(data), "--auth=trust", "--auth-local=trust", "--encoding=utf8", "-U", "postgres", "--no-sync"],
            user,
            start_seconds(),
        )
        os.replace(data, template)
    finally:
        shutil.rmtree(making, ignore_errors=True)
    return template


def _why_not_started(seconds: float) -> str:
    import fasteners  # type: ignore[import-untyped]

    lock = fasteners.InterProcessLock(runtime_dir() / ".lockfile")
    if lock.acquire(blocking=False):
        lock.release()
        return f"PostgreSQL did not start within {seconds:.0f} s (FANIN_PG_START_SECONDS)"
    return (
        f"PostgreSQL did not start within {seconds:.0f} s: pgserver's lock {runtime_dir() / '.lockfile'} "
        "is held by another process"
    )


class Postgres:
    """One PostgreSQL server in a fresh directory, started in the background; its DSN is known at once.

    `env(tag)` is what a probe run needs; `failure()` says why it did not start (None while it
    starts or once it runs); `wait()` blocks until it answers; `stop()` ends it and removes
    its directory (idempotent). The guardian is started first: from then on the directory and
    its server die with this process, by any means."""

    def __init__(self, cancelled: Callable[[], bool] = lambda: False) -> None:
        _bin()  # pgserver is missing: one line, before anything starts
        self.version = server_version()
        # A short path: the server's Unix socket lives in it, and socket paths are limited to ~100 bytes.
        # Its name says whose it is, at a glance; in memory where there is room (fanin.run.memory).
        self.workdir = Path(tempfile.mkdtemp(prefix=f"fanin-pg-{os.getpid()}-", dir=memory.root()))
        self.data = self.workdir / "data"
        self.ready_file = self.workdir / "ready"
        self.guardian = Guardian(self.workdir)
        self.cancelled = cancelled
        self._error: str | None = None
        self._up = threading.Event()
        self._abandoned = threading.Event()
        self._stopped = False
        self._user: str | None = None
        self._began = time.monotonic()
        self._thread = threading.Thread(target=self._start, name="fanin-postgres-start", daemon=True)
        self._thread.start()

    @property
    def dsn(self) -> str:
        return f"host={self.data} port=5432 user=postgres"

    def env(self, tag: str | None = None) -> dict[str, str]:
        return {
            POSTGRES_DSN: self.dsn,
            POSTGRES_VERSION: self.version,
            POSTGRES_READY: str(self.ready_file),
            POSTGRES_TAG: tag or uuid.uuid4().hex[:12],
        }

    def _start(self) -> None:
        try:
            import fasteners

            seconds = start_seconds()
            runtime_dir().mkdir(mode=0o700, exist_ok=True)
            with _PGSERVER:
                lock = fasteners.InterProcessLock(runtime_dir() / ".lockfile")
                deadline = time.monotonic() + seconds
                while not lock.acquire(blocking=False):  # polled: an abandoned start must not keep waiting
                    if self._abandoned.is_set() or time.monotonic() > deadline:
                        return
                    time.sleep(0.05)
                try:
                    if self._abandoned.is_set():
                        return
                    self._user = _system_user()
                    template = _template(self._user)
                    _give(self.workdir, self._user)
                    subprocess.run(["cp", "-a", str(template), str(self.data)], check=True, capture_output=True)
                    settings = [arg for setting in SETTINGS for arg in ("-o", f"-c {setting}")]
                    _run(
                        "pg_ctl",
                        [
                            "-D", str(self.data), "-w", "-t", str(int(seconds)), "-l", str(self.workdir / "log"),
                            "-o", '-h ""', "-o", f"-k {self.data}", *settings, "-o", "-p 5432",
                            "start",
                        ],
                        self._user,
                        seconds + 5,
                    )  # fmt: skip
                finally:
                    lock.release()
            self._write_ready("ok")
            self._up.set()
        except Exception as exc:
            self._error = f"cannot start PostgreSQL: {type(exc).__name__}: {exc}"
            self._write_failure(self._error)

    def _write_ready(self, text: str) -> None:
        """All at once (a probe polls the file): written beside it, then renamed."""
        staged = self.workdir / "ready.tmp"
        staged.write_text(text, encoding="utf-8")
        os.replace(staged, self.ready_file)

    def _write_failure(self, reason: str) -> None:
        try:
            self._write_ready(reason)
        except OSError:
            pass

    def failure(self) -> str | None:
        """Why the server did not start, once that is known (None: starting or running)."""
        if self._error is None and not self._up.is_set():
            if time.monotonic() - self._began > start_seconds():
                self._abandoned.set()
                self._error = _why_not_started(start_seconds())
                self._write_failure(self._error)
            elif not self._thread.is_alive() and not self._up.is_set():
                self._error = self._error or "PostgreSQL start abandoned"
        return self._error

    def wait(self) -> None:
        """Until the server answers; ServiceError with the reason if it does not (or the run is cancelled)."""
        while not self._up.wait(0.05):
            if self.cancelled():
                self._abandoned.set()
                raise ServiceError("interrupted while PostgreSQL was starting")
            reason = self.failure()
            if reason is not None:
                raise ServiceError(reason)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._abandoned.set()
        self._thread.join()  # an abandoned start returns within one poll of the lock
        _stop_immediately(self.data)
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.guardian.release()


def _stop_immediately(data: Path, seconds: float = 30.0) -> None:
    """What `pg_ctl -m immediate -w stop` does (SIGQUIT to the postmaster, then wait until its pid file is gone),
    looking every 5 ms rather than pg_ctl's 100: the stop is in the critical path of every `probe --here` and
    matrix run. A server that outlives `seconds` is left to the guardian, which kills it."""
    pidfile = data / "postmaster.pid"
    try:
        pid = int(pidfile.read_text(encoding="utf-8").splitlines()[0])
        os.kill(pid, signal.SIGQUIT)
    except (OSError, ValueError, IndexError):
        return  # not started, already gone, or a pid file being written: nothing this stop can do better
    deadline = time.monotonic() + seconds
    while (pidfile.exists() or _running(pid)) and time.monotonic() < deadline:
        time.sleep(0.005)


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (an exited daemon its new parent has not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def postgres(cancelled: Callable[[], bool] = lambda: False) -> Iterator[dict[str, str]]:
    """Start a PostgreSQL server in a fresh directory, wait until it answers; yield a probe run's environment."""
    server = Postgres(cancelled)
    try:
        server.wait()
        yield server.env()
    finally:
        server.stop()


class Shared:
    """One server for every cell of a matrix run: started when the first cell needs it, stopped at the end."""

    def __init__(self, cancelled: Callable[[], bool] = lambda: False) -> None:
        self.cancelled = cancelled
        self._lock = threading.Lock()
        self._server: Postgres | None = None

    def get(self) -> Postgres:
        with self._lock:
            if self._server is None:
                self._server = Postgres(self.cancelled)
            return self._server

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.stop()


@contextmanager
def shared(cancelled: Callable[[], bool] = lambda: False) -> Iterator[Shared]:
    holder = Shared(cancelled)
    try:
        yield holder
    finally:
        holder.close()


def needs_postgres(framework: str, targets: tuple[str, ...] = ()) -> bool:
    """Whether any probe of the framework (or of `targets`, files or file::function ids) runs on postgres."""
    from fanin.model import catalog
    from fanin.model.source import SUITES

    # A cell runs suites/<framework>/ only (fanin.run.one_cell): its files alone are read.
    own = SUITES / framework
    for probe_id, file, values in catalog.backends(own if own.is_dir() else SUITES):
        if probe_id.split("/", 1)[0] != framework or "postgres" not in values:
            continue
        if not targets or any(file in target for target in targets):
            return True
    return False


class Services:
    """What one cell run gets: its environment variables, and a way to ask whether a service failed."""

    def __init__(self, env: dict[str, str], server: Postgres | None) -> None:
        self.env = env
        self.server = server

    def failure(self) -> str | None:
        return self.server.failure() if self.server is not None else None


@contextmanager
def for_cell(
    framework: str,
    targets: tuple[str, ...] = (),
    cancelled: Callable[[], bool] = lambda: False,
    pool: Shared | None = None,
) -> Iterator[Services]:
    """The services a cell's probe run needs (nothing when it needs none); from `pool` when the run shares one."""
    if not needs_postgres(framework, targets):
        yield Services({}, None)
        return
    if pool is not None:
        server = pool.get()
        yield Services(server.env(), server)
        return
    own = Postgres(cancelled)
    try:
        yield Services(own.env(), own)
    finally:
        own.stop()
