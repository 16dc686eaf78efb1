"""Liveness without a clock of the probe's own: has a run ended, or can nothing inside the process end it?

Kept apart from gates.py, whose probes import it whole (a helper added there would move their citations).
"""

from __future__ import annotations

import asyncio

from gates import settle


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
