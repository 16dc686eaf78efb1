"""The PostgreSQL server the harness runs for a cell: real, reachable on its Unix socket only, gone afterwards."""

import subprocess
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pgserver
import psutil
import pytest

from fanin.run import memory, services


def postgres_processes(directory: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(attrs=["name", "cmdline"]):
        if process.info["name"] == "postgres" and directory in " ".join(process.info["cmdline"] or []):
            found.append(process)
    return found


def test_a_real_server_answers_on_its_socket_and_leaves_nothing_behind() -> None:
    with services.postgres() as env:
        dsn = env[services.POSTGRES_DSN]
        host = dict(part.split("=", 1) for part in dsn.split())["host"]
        psql = Path(pgserver.__file__).parent / "pginstall" / "bin" / "psql"
        done = subprocess.run(
            [str(psql), f"{dsn} dbname=postgres", "-tAc", "SHOW listen_addresses"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.strip() == ""  # no TCP listener at all: the Unix socket only
        assert env[services.POSTGRES_VERSION].split(".")[0].isdigit()
        assert postgres_processes(host)
    assert not Path(host).exists()
    assert postgres_processes(host) == []


def test_a_cell_without_postgres_probes_starts_nothing() -> None:
    with services.for_cell("no-such-framework") as service:
        assert service.env == {} and service.failure() is None


def test_cells_in_threads_each_get_their_own_server() -> None:
    """The matrix runs cells in threads of one process; pgserver's own lock is not thread-safe, fanin's is."""
    from concurrent.futures import ThreadPoolExecutor

    def one(_: int) -> str:
        with services.postgres() as env:
            return env[services.POSTGRES_DSN]

    with ThreadPoolExecutor(3) as pool:
        dsns = list(pool.map(one, range(3)))
    assert len(set(dsns)) == 3


def test_a_held_pgserver_lock_is_could_not_run_with_the_reason_not_a_hang(
    monkeypatch: pytest.MonkeyPatch, pgserver_lock_held: Callable[[], None]
) -> None:
    """Issue 21 case 5: fanin's servers have their own runtime directory, and a start that cannot proceed times out."""
    import os
    import tempfile

    assert services.runtime_dir().parent == Path(tempfile.gettempdir())  # not pgserver's shared one
    monkeypatch.setenv("FANIN_PG_START_SECONDS", "2")
    ours = f"fanin-pg-{os.getpid()}-*"  # other sessions on the machine may start servers meanwhile
    before = set(memory.root().glob(ours))
    with pytest.raises(services.ServiceError) as refused, services.postgres():
        pass
    assert refused.value.exit_code == 3
    assert str(refused.value).startswith("PostgreSQL did not start within 2 s: pgserver's lock ")
    assert str(refused.value).endswith("is held by another process")
    assert set(memory.root().glob(ours)) - before == set()  # its directory is removed
    pgserver_lock_held()
    monkeypatch.setenv("FANIN_PG_START_SECONDS", "120")
    with services.postgres() as env:  # once the lock is free, the abandoned start has cleaned up after itself
        assert env[services.POSTGRES_DSN]


def test_a_matrix_run_shares_one_server_and_each_cell_run_has_its_own_database_names() -> None:
    """One server per matrix run, started in the background: its DSN is known at once, a ready file says when it is up."""
    with services.shared() as pool:
        first, second = pool.get(), pool.get()
        assert first is second
        one, two = first.env(), first.env()
        assert one[services.POSTGRES_DSN] == two[services.POSTGRES_DSN]
        assert one[services.POSTGRES_TAG] != two[services.POSTGRES_TAG]
        first.wait()
        assert Path(one[services.POSTGRES_READY]).read_text() == "ok"
        host = dict(part.split("=", 1) for part in one[services.POSTGRES_DSN].split())["host"]
        assert postgres_processes(host)
    assert not Path(host).exists() and postgres_processes(host) == []


def test_database_names_differ_between_cell_runs_sharing_a_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from fanin import probe

    names = []
    for tag in ("cell-a", "cell-b"):
        monkeypatch.setenv(probe.POSTGRES_TAG, tag)
        stub = SimpleNamespace(observation_id="langgraph/resume/durability-modes[postgres,async]")
        names.append(probe.Observer.database_name.fget(stub))  # type: ignore[attr-defined]
    assert names[0] != names[1] and all(len(n) <= 63 for n in names)


def test_a_server_lives_in_the_scratch_root_with_its_wal_kept_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its directory is under fanin.run.memory's root (/dev/shm where there is room), so CREATE DATABASE writes
    no disk; the WAL it writes for every database is bounded (max_wal_size), so the memory it holds stays small."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="fr-"))  # short: the server's socket path must stay under ~100 bytes
    monkeypatch.setenv(memory.ENV, str(root))
    try:
        _server_in(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _server_in(root: Path) -> None:
    with services.postgres() as env:
        dsn = env[services.POSTGRES_DSN]
        host = Path(dict(part.split("=", 1) for part in dsn.split())["host"])
        assert host.parent.parent == root
        psql = Path(pgserver.__file__).parent / "pginstall" / "bin" / "psql"
        shown = subprocess.run(
            [
                str(psql),
                f"{dsn} dbname=postgres",
                "-tAc",
                "SELECT current_setting('max_wal_size'), current_setting('fsync')",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert shown == "64MB|off"
    assert not host.exists()


def test_the_scratch_root_is_memory_with_room_else_the_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil
    import tempfile

    monkeypatch.delenv(memory.ENV, raising=False)
    monkeypatch.setattr(memory, "MEMORY_DIR", tmp_path / "no-such-dir")
    assert memory.root() == Path(tempfile.gettempdir())
    monkeypatch.setattr(memory, "MEMORY_DIR", tmp_path)
    monkeypatch.setattr(memory, "ROOM", shutil.disk_usage(tmp_path).free * 2)  # too little room
    assert memory.root() == Path(tempfile.gettempdir())
    monkeypatch.setattr(memory, "ROOM", 1)
    assert memory.root() == tmp_path
    monkeypatch.setenv(memory.ENV, str(tmp_path / "chosen"))
    assert memory.root() == tmp_path / "chosen"


def test_the_immediate_stop_waits_until_the_postmaster_is_gone_and_its_pid_file_removed(tmp_path: Path) -> None:
    server = services.Postgres()
    try:
        server.wait()
        pid = int((server.data / "postmaster.pid").read_text().splitlines()[0])
        assert services._running(pid)
        services._stop_immediately(server.data)
        assert not (server.data / "postmaster.pid").exists()
        assert not services._running(pid)
        assert postgres_processes(str(server.data)) == []
    finally:
        server.stop()
    services._stop_immediately(tmp_path)  # no server there (never started, or stopped): returns at once


def test_needs_postgres_reads_the_frameworks_own_suite_and_answers_as_the_whole_catalogue_does() -> None:
    from fanin.model import catalog, matrix

    everywhere = catalog.backends()
    for key in matrix.load().frameworks:
        expected = any(pid.split("/", 1)[0] == key and "postgres" in values for pid, _, values in everywhere)
        assert services.needs_postgres(key) is expected, key
    assert services.needs_postgres("langgraph") and services.needs_postgres("adk")
    # A Node probe names the server in its metadata (`"services": ["postgres"]`), for its file alone.
    assert services.needs_postgres("adkjs") and services.needs_postgres("langgraphjs")
    assert not services.needs_postgres("mastra")
    assert not services.needs_postgres("adkjs", ("suites/adkjs/hitl.test.mjs",))
    assert services.needs_postgres("adkjs", ("suites/adkjs/upgrade.test.mjs",))
    assert not services.needs_postgres("langgraphjs", ("suites/langgraphjs/send.test.mjs",))


def test_the_server_user_runs_postgresql_even_when_the_checkout_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root the server runs as pgserver's own account, which may not traverse the checkout's parents (a clone in
    `mktemp -d` is mode 0700): it runs a copy of the wheel's build kept in fanin's runtime directory instead. Every
    binary the server's start runs must load from that copy: initdb and pg_ctl link the libpq auditwheel vendored
    beside the package (RPATH $ORIGIN/../../../pgserver.libs), which a copy of the build alone left behind."""
    import os
    import shutil

    if os.geteuid() != 0:  # as any other user the server runs as that user, from the harness's own build
        assert services._server_bin(None) == services._bin()
        return
    site = services._bin().parent.parent.parent
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    for part in ("pgserver/pginstall", "pgserver.libs"):
        shutil.copytree(site / part, private / part, symlinks=True)
    monkeypatch.setattr(services, "_bin", lambda: private / "pgserver" / "pginstall" / "bin")
    monkeypatch.setattr(services, "runtime_dir", lambda: tmp_path / "runtime")
    user = services._system_user()
    for binary in ("postgres", "initdb", "pg_ctl"):
        assert services._run(binary, ["-V"], user, 30).split()[-1] == services.server_version(), binary
    assert services._server_bin(user).is_relative_to(tmp_path / "runtime")
    assert oct(private.stat().st_mode & 0o777) == "0o700"  # nothing widened in the user's tree


def test_the_server_copy_resolves_every_library_inside_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every $ORIGIN-relative RPATH of every ELF file in the copy names a directory inside the copy: a machine whose
    own libraries happen to satisfy a binary (a system libpq) must not be what makes the server start."""
    import os

    if os.geteuid() != 0:
        pytest.skip("as any other user the server runs from the harness's own build: no copy is made")
    monkeypatch.setattr(services, "runtime_dir", lambda: tmp_path / "runtime")
    copy = services._server_bin(services.SYSTEM_USER).parent.parent.parent
    checked = 0
    for path in copy.rglob("*"):
        if path.is_symlink() or not path.is_file() or path.read_bytes()[:4] != b"\x7fELF":
            continue
        done = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True)
        for line in done.stdout.splitlines():
            if "(RPATH)" in line or "(RUNPATH)" in line:
                for entry in line.split("[", 1)[1].rstrip("]").split(":"):
                    if entry.startswith("$ORIGIN"):
                        target = (path.parent / entry.replace("$ORIGIN", ".")).resolve()
                        assert target.is_dir() and target.is_relative_to(copy.resolve()), (path, entry)
                        checked += 1
    assert checked > 20  # the binaries and the server's modules were read, not an empty tree
