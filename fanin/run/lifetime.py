"""Nothing a cell starts outlives the harness, however the harness ends (kill -9 of its group included).

- pytest runs in a session of its own (so a signal can end its whole group), which also puts it out of
  reach of a kill aimed at the harness's group; it is tied to the harness's life by the kernel instead:
  `PR_SET_PDEATHSIG` (prctl, through ctypes) sends it SIGKILL the moment the thread that started it dies.
- PostgreSQL daemonises itself (pg_ctl), so no death signal can be set on it. A guardian is started
  first, in a session of its own, holding the read end of a pipe whose only write end the harness
  keeps: when the harness dies by any means the pipe reads EOF, and the guardian kills the server
  recorded in the directory's `postmaster.pid` and removes the directory. A harness that ends
  normally closes the pipe after its own cleanup; the guardian then finds nothing left to do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

PR_SET_PDEATHSIG = 1

_prctl: Callable[..., int] | None
try:
    _prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: no death signal, the group kill is the only tie
    _prctl = None


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` that makes the child die with the thread that starts it (None where prctl is missing)."""
    if _prctl is None:
        return None
    parent = os.getpid()
    prctl = _prctl

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the call above: nobody would send the signal
            os._exit(137)

    return preexec


PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans() -> bool:
    """Make this process the reaper of its descendants' orphans (a cell's pytest; ./noxw's supervisor).

    A daemon a probe forks (double fork, setsid) is reparented here instead of to init, so
    `end_children` at the end of the run finds it: nothing a probe starts outlives its cell.
    """
    return _prctl is not None and _prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def children(parent: int) -> list[int]:
    """The processes whose parent is `parent`, read from /proc (none where there is no /proc)."""
    found: list[int] = []
    if not os.path.isdir("/proc"):
        return found
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[1] == str(parent):
            found.append(int(entry))
    return found


def end_children() -> list[int]:
    """SIGKILL and reap every child of this process (with `adopt_orphans`, orphaned descendants too); their pids."""
    if not os.path.isdir("/proc"):
        return []
    ended: list[int] = []
    for _ in range(5):  # a killed child's own children are reparented here next
        pids = children(os.getpid())
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        ended += pids
    return ended


_GUARDIAN = r"""
import os, shutil, signal, sys, time
workdir = sys.argv[1]
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdin.buffer.read()  # returns when the harness closes the pipe or dies
for pidfile in (os.path.join(workdir, "data", "postmaster.pid"),):
    try:
        pid = int(open(pidfile).readline().strip())
    except (OSError, ValueError):
        continue
    for sig in (signal.SIGQUIT, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            break
        for _ in range(50):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
shutil.rmtree(workdir, ignore_errors=True)
"""


class Guardian:
    """Removes `workdir` (and kills the PostgreSQL server in it) once the harness closes the pipe or dies."""

    def __init__(self, workdir: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _GUARDIAN, str(workdir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a kill aimed at the harness's group must not reach it
            close_fds=True,
        )

    def release(self) -> None:
        """The harness cleaned up itself: let the guardian check and end."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
