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
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

ENV = "FANIN_SCRATCH_ROOT"
MEMORY_DIR = Path("/dev/shm")
ROOM = 1 << 30  # bytes free: the server's WAL (kept small, see fanin.run.services), a few databases, SQLite files


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
