"""./noxw's supervisor: it runs nox, passes a signal on as a terminal would, and ends after everything below it.

A shell defers its traps until its foreground child ends, so `kill <noxw pid>` and `timeout ./noxw`
would wait for nox; ./noxw execs this instead. It
- is the child subreaper of everything it starts (PR_SET_CHILD_SUBREAPER): a process whose parent dies
  (the session's fanin, once nox has killed `uv run` 0.25 s after a Ctrl-C) is reparented here, not
  to init, and waited for. When noxw exits nothing it started is alive, so a caller that reads a
  marker or a result set at that moment reads this run's;
- passes SIGINT or SIGTERM sent to it alone (`kill -INT <pid>`, `timeout`) on, once, to the processes
  below it in its own process group, as the terminal delivers Ctrl-C (the session's fanin passes it
  on to the pytest runs it started in sessions of their own). A Ctrl-C from the terminal reached
  them already (the kernel sent it: SI_KERNEL), so it is not sent twice. A group signal from a
  process (`kill -INT -<pgid>`) cannot be told from one to this pid alone: they get it twice, and
  fanin takes the repeat as the same interrupt (`fanin.run.one_cell.signals_end_children`);
- gives what is left below it GRACE seconds once nox has ended, then kills it and says so;
- exits 130 after a signal, else fanin's own code from the exit file (nox says only pass or fail).

Standard library only: it runs on the tools venv's Python, before the harness's environment exists.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

from fanin.model.exits import INTERRUPTED, NOT_RUN
from fanin.run import lifetime

GRACE = 60.0  # seconds what is still running below may take to end once nox has ended
SI_KERNEL = 0x80  # siginfo's si_code when the kernel sent the signal (the terminal's Ctrl-C), Linux
ENDING = (signal.SIGINT, signal.SIGTERM)
WATCHED = {*ENDING, signal.SIGCHLD}

# The next signal within `timeout` seconds (None: no bound): (its number, whether the kernel sent it), or None.
NextSignal = Callable[[float | None], tuple[int, bool] | None]


def _sigwait(timeout: float | None) -> tuple[int, bool] | None:
    """Linux: the signals stay blocked and are taken here, with who sent them."""
    info = signal.sigwaitinfo(WATCHED) if timeout is None else signal.sigtimedwait(WATCHED, timeout)
    return None if info is None else (info.si_signo, info.si_code == SI_KERNEL)


def _handled() -> NextSignal:
    """Without sigtimedwait (macOS): handlers record the signals, the loop polls; none counts as the terminal's."""
    pending: list[int] = []
    for sig in ENDING:
        signal.signal(sig, lambda signum, frame: pending.append(signum))

    def wait(timeout: float | None) -> tuple[int, bool] | None:
        time.sleep(0.05 if timeout is None else min(timeout, 0.05))
        return (pending.pop(0), False) if pending else None

    return wait


def descendants(root: int) -> list[int]:
    """Every live process below `root`, parents before their children."""
    found, todo = [], [root]
    while todo:
        children = lifetime.children(todo.pop(0))
        found += children
        todo += children
    return found


def forward(sig: int) -> list[int]:
    """`sig` to each process below this one in its own process group (where the terminal would have sent it)."""
    group, sent = os.getpgrp(), []
    for pid in descendants(os.getpid()):
        try:
            if os.getpgid(pid) == group:
                os.kill(pid, sig)
                sent.append(pid)
        except (ProcessLookupError, PermissionError):
            continue
    return sent


def _reap() -> tuple[dict[int, int], bool]:
    """Collect every child that has ended: their exit codes, and whether no child is left at all."""
    ended: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended, True
        if pid == 0:
            return ended, False
        ended[pid] = os.waitstatus_to_exitcode(status)


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return " ".join(handle.read().replace(b"\0", b" ").decode(errors="replace").split())[:80] or str(pid)
    except OSError:
        return str(pid)


def supervise(nox: int, next_signal: NextSignal, grace: float = GRACE) -> tuple[int | None, str | None]:
    """Wait until no process below is left: nox's exit code, and the signal that came (None: none did)."""
    code: int | None = None
    signalled: str | None = None
    deadline: float | None = None
    while True:
        ended, none_left = _reap()
        code = ended.get(nox, code)
        if none_left:
            return code, signalled
        if code is not None and deadline is None:
            deadline = time.monotonic() + grace
        timeout = None if deadline is None else deadline - time.monotonic()
        if timeout is not None and timeout <= 0:
            _kill_left(grace)
            deadline = time.monotonic() + grace  # SIGKILL ends them now; one stuck in the kernel is tried again
            continue
        got = next_signal(timeout)
        if got is None or got[0] == signal.SIGCHLD or signalled is not None:
            continue
        signum, from_terminal = got
        signalled = signal.Signals(signum).name
        if not from_terminal:
            forward(signum)


def _kill_left(grace: float) -> None:
    """What is still below after the grace: SIGKILL, named on stderr (it would have outlived noxw)."""
    left = descendants(os.getpid())
    names = ", ".join(f"{pid} ({_name(pid)})" for pid in left)
    sys.stderr.write(f"fanin: still running {grace:g} s after nox ended, killed: {names}\n")
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _exit_code(exit_file: str, code: int | None, signalled: str | None) -> int:
    if signalled is not None:
        return INTERRUPTED
    if code is None:
        return NOT_RUN
    if code != 0:
        try:
            with open(exit_file, encoding="utf-8") as handle:
                return int(handle.read().strip() or code)
        except (OSError, ValueError):
            pass
    return code


def main(argv: list[str]) -> int:
    """`supervisor EXIT_FILE COMMAND...`: run COMMAND (nox) under supervision; noxw's exit code."""
    exit_file, command = argv[0], argv[1:]
    lifetime.adopt_orphans()
    if hasattr(signal, "sigtimedwait"):
        signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
        next_signal: NextSignal = _sigwait
    else:
        next_signal = _handled()
    try:
        try:
            nox = os.posix_spawnp(command[0], command, os.environ, setsigmask=())  # nox gets the usual mask
        except OSError as exc:
            sys.stderr.write(f"fanin: error: cannot run {command[0]}: {exc.strerror or exc}\n")
            return NOT_RUN
        code, signalled = supervise(nox, next_signal, GRACE)
        return _exit_code(exit_file, code, signalled)
    finally:
        try:
            os.unlink(exit_file)
        except OSError:
            pass
