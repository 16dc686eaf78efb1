"""Where a cell's throwaway files go: a memory filesystem (`/dev/shm`) where the machine has one with room.

Two kinds of files are written only to be thrown away when the run ends: the harness's PostgreSQL
data directory (every observation's `CREATE DATABASE` copies ~7.5 MB and logs it in the WAL) and the
probes' scratch directories (SQLite files, committed with an fsync each). On a disk's filesystem
that writing, not PostgreSQL or SQLite, was most of what those observations cost (a database created,
set up and dropped: ~250 ms of the server's CPU on ext4, ~30 ms in memory; five threads' SQLite
checkpoints: ~630 ms on ext4, ~90 ms in memory, most of it waiting for fsync). The databases and files
are the same real PostgreSQL and SQLite, and a probe forces its orderings with gates, never with the
disk's latency, so what it observes does not depend on where they live.

`FANIN_SCRATCH_ROOT` chooses the directory; without it, /dev/shm when it is writable and has
`ROOM` free, else the temporary directory.

Each cell run's scratch is a directory of its own there (`scratch`: pytest's --basetemp), removed when
the run ends however it ends; pytest's own numbered directories (it keeps three of each) piled up in
/dev/shm, a run at a time. One a killed harness left is removed by the next run, once its process is gone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENV = "FANIN_SCRATCH_ROOT"
MEMORY_DIR = Path("/dev/shm")
ROOM = 1 << 30  # bytes free: the server's WAL (kept small, see fanin.run.services), a few databases, SQLite files
SCRATCH_PREFIX = "fanin-scratch-"  # then the harness's pid: a directory whose process is gone is a leftover


def root() -> Path:
    """The directory a cell's throwaway files go under."""
    chosen = os.environ.get(ENV)
    if chosen:
        return Path(chosen)
    try:
        if os.access(MEMORY_DIR, os.W_OK | os.X_OK) and shutil.disk_usage(MEMORY_DIR).free >= ROOM:
            return MEMORY_DIR
    except OSError:
        pass
    return Path(tempfile.gettempdir())


@contextmanager
def scratch(tag: str) -> Iterator[Path]:
    """A directory under `root()` for one run's throwaway files, removed when the block ends, however it ends."""
    base = root()
    base.mkdir(parents=True, exist_ok=True)
    sweep(base)
    path = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-{tag}-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sweep(base: Path) -> list[Path]:
    """Remove the scratch directories under `base` whose harness process is gone (killed with -9): their paths."""
    removed = []
    for stale in base.glob(f"{SCRATCH_PREFIX}*"):
        owner = stale.name[len(SCRATCH_PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner)):
            shutil.rmtree(stale, ignore_errors=True)
            removed.append(stale)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def home(scratch: Path) -> dict[str, str]:
    """A cell's own HOME, XDG base directories and temporary directory, inside its scratch: what a framework writes
    there on its own (CrewAI's key file and storage under ~/.local/share, its settings under ~/.config, its
    `crewai:<hash>.lock` files in the temporary directory; Haystack's telemetry id in ~/.haystack; Node 22's
    node-compile-cache in os.tmpdir()) goes with the run, never into the home or /tmp of whoever ran fanin.
    TMPDIR, TMP and TEMP all name it: Python's tempfile and Node's os.tmpdir() each read the first one set."""
    base = scratch / "home"
    temporary = scratch / "tmp"
    places = {
        "HOME": base,
        "XDG_CONFIG_HOME": base / ".config",
        "XDG_DATA_HOME": base / ".local" / "share",
        "XDG_STATE_HOME": base / ".local" / "state",
        "XDG_CACHE_HOME": base / ".cache",
        "TMPDIR": temporary,
        "TMP": temporary,
        "TEMP": temporary,
    }
    for place in places.values():
        place.mkdir(parents=True, exist_ok=True)
    return {name: str(place) for name, place in places.items()}
