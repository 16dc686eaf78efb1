"""Infrastructure the harness runs for a cell: a real PostgreSQL server, started and removed with it.

The server is the harness's, not the framework's: `pgserver` (a PostgreSQL build in a
PyPI wheel) lives in the harness's own tools, the cell's lock holds only the client side
(a checkpointer package and its driver). It listens on a Unix socket only, so it is
reachable from a probe run inside an isolated network namespace, and nothing listens
on a network address. Everything it writes lives in one temporary directory that is
removed when the cell ends, however it ends.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fanin.model.errors import EnvironmentFault

POSTGRES_DSN = "FANIN_POSTGRES_DSN"
POSTGRES_VERSION = "FANIN_POSTGRES_VERSION"


class ServiceError(EnvironmentFault):
    """A service the cell needs could not be started."""


# pgserver guards its bookkeeping with an inter-process file lock that is not safe to share between
# threads of one process; cells run in threads, so starting and stopping servers is serialised here.
_PGSERVER = threading.Lock()


@contextmanager
def postgres() -> Iterator[dict[str, str]]:
    """Start a PostgreSQL server in a fresh directory; yield the environment a probe run needs."""
    try:
        with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset: irrelevant here
            warnings.simplefilter("ignore")
            import pgserver  # the harness's tools only
    except ImportError:
        raise ServiceError("pgserver is not installed in the harness tools; re-run ./noxw to reinstall them") from None
    # A short path: the server's Unix socket lives in it, and socket paths are limited to ~100 bytes.
    workdir = Path(tempfile.mkdtemp(prefix="fanin-pg-"))
    server = None
    try:
        try:
            with _PGSERVER:
                server = pgserver.get_server(workdir / "data", cleanup_mode="delete")
            info = server.get_postmaster_info()
            version = server.psql("SHOW server_version;").splitlines()[2].strip()
        except Exception as exc:
            raise ServiceError(f"cannot start PostgreSQL for the cell: {type(exc).__name__}: {exc}") from None
        yield {POSTGRES_DSN: f"host={info.socket_dir} port={info.port} user=postgres", POSTGRES_VERSION: version}
    finally:
        if server is not None:
            with _PGSERVER:
                server.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


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
def for_cell(framework: str, targets: tuple[str, ...] = ()) -> Iterator[dict[str, str]]:
    """The services a cell's probe run needs, as environment variables; nothing when it needs none."""
    if needs_postgres(framework, targets):
        with postgres() as env:
            yield env
    else:
        yield {}
