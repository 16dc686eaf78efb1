"""Liveness without a clock of the probe's own: has a run ended, or can nothing inside the process end it?

Kept apart from gates.py, whose probes import it whole (a helper added there would move their citations).
"""

from __future__ import annotations

import asyncio
import concurrent.futures.thread
import sys
import threading
import time

from gates import ThreadTurns, _stuck, settle


TIMER_ROUNDS = 100  # how many timers `quiesce` follows before it gives up (a timer that re-arms itself)


async def quiesce(run: "asyncio.Future") -> dict:
    """Run the loop until `run` is done or cannot progress: nothing ready and no timer pending.

    Timers pending are the framework's (a step_timeout's wait_for, a node timeout): `quiesce` sleeps until
    the earliest is due, so the framework's own clock decides, and the probe's wait is never a guess.
    Returns {"ended": bool, "timers_followed": n}.
    """
    loop = asyncio.get_running_loop()
    for followed in range(TIMER_ROUNDS):
        await settle()
        if run.done():
            return {"ended": True, "timers_followed": followed}
        timers = [h for h in loop._scheduled if not h.cancelled()]  # CPython's heap of timer handles
        if not timers:
            return {"ended": False, "timers_followed": followed}
        await asyncio.sleep(max(0.0, min(h.when() for h in timers) - loop.time()))
    raise RuntimeError(f"the run still had timers after {TIMER_ROUNDS} rounds (a timer that re-arms itself)")


POOL_IDLE = concurrent.futures.thread._worker.__code__  # a pool thread between tasks runs this frame, nothing above
SLICE = 0.005  # how often a waiting branch looks at its predecessor's thread: it observes a state, it orders nothing
LIVE_PATIENCE = 40.0  # how long a predecessor still working may take: vacuous before the probe timeout (60 s)


class PoolTurns(ThreadTurns):
    """`gates.ThreadTurns` whose patience a lagging signal or a loaded machine cannot run out.

    The probe releases the next branch from the framework's signal that a branch's writes exist (LangGraph's
    sync `updates` chunk), and that signal alone orders the branches. It can lag: the loop wakes on the
    finished future before the done callback that saves and streams the writes has run, then blocks on the
    held sibling, and only the gate's patience ended the wait (vacuous, more often under load: FINDINGS.md,
    "Races and traps"). So, once the patience has passed without the signal, the gate reads the previous
    branch's pool thread: back in its loop (`_worker`, no frame above it), its task and every done callback
    have returned and its writes exist, so the next branch goes (the signal lags; `acted` stays the probe's
    signal alone, so a predecessor that raised is still told apart); still working, that is load, not a
    deadlock, and the patience starts again (for up to LIVE_PATIENCE); neither, the run is vacuous as before.
    """

    def __init__(self, order: list[str], patience: float = 10.0) -> None:
        super().__init__(order, patience)
        self._threads: dict[str, int] = {}  # name -> the pool thread it arrived on

    def arrive(self, name: str) -> None:
        frames = [sys._getframe()]
        while frames[-1].f_back is not None:
            frames.append(frames[-1].f_back)
        with self._lock:
            if any(f.f_code is POOL_IDLE for f in frames):
                self._threads[name] = threading.get_ident()
            self.arrived.append(name)
            if set(self.arrived) >= set(self.order):
                self._events[self.order[0]].set()
        event, quiet_since, started = self._events[name], time.monotonic(), time.monotonic()
        while not event.wait(SLICE):
            state, now = self._predecessor(name), time.monotonic()
            if state == "busy" and now - started < LIVE_PATIENCE:
                quiet_since = now
            elif now - quiet_since < self.patience:
                continue
            elif state == "idle":
                event.set()
            else:
                with self._lock:
                    self.vacuous = _stuck(self.order, self.arrived, self.acted, name, round(now - started, 1))
                for other in self._events.values():
                    other.set()

    def _predecessor(self, name: str) -> str:
        """"idle" (released, and its pool thread is back in its loop), "busy" (released, still working), else ""."""
        position = self.order.index(name)
        if position == 0 or not set(self.arrived) >= set(self.order):
            return ""
        before = self.order[position - 1]
        ident = self._threads.get(before)
        if ident is None or not self._events[before].is_set():
            return ""
        top = sys._current_frames().get(ident)
        return "idle" if top is None or top.f_code is POOL_IDLE else "busy"

