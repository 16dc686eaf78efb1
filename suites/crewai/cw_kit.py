"""Helpers shared by the CrewAI Flows probes: Flows of plain async methods, no LLM, no crew, no network.

Everything that phones home is off before crewai imports (matrix.toml's env does it for a cell; setdefault
here keeps a probe file or the adapter run outside a cell offline too; tests/test_telemetry_off.py holds
the two to the same names and values). Every method is `async def`: the Flow awaits it on its own
event loop in every release, so `asyncio.Event` gates order the branches (a sync method runs in a worker thread
in some releases and on the loop in others).

- `fan(join)`: a Flow class: `s` (start) -> `a`, `b` (each listens to `s`) -> the join that `join(a, b)` builds
  (`or_`, `and_`); `log` is what ran, in order; `b_done` is set as `b` returns, so a join that waits for it
  forces `a` first, then `b`, with the join still in flight when `b` finishes.
- `counter_flow(log, lock)`: `s` sets state["n"] = 0 -> `a`, `b` each read-modify-write it across an await.
"""

import asyncio
import os
from typing import Any

for _name, _value in {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TESTING": "true",  # no first-run trace collection (1.x: it ignores CREWAI_TRACING_ENABLED)
    "CREWAI_DISABLE_VERSION_CHECK": "true",  # no PyPI look-up for the console's "new version" panel
}.items():
    os.environ.setdefault(_name, _value)

from crewai.flow.flow import Flow, and_, listen, or_, router, start  # noqa: E402


def _no_trace_uploads() -> None:
    """1.4.x attaches its trace listener at import whatever CREWAI_TRACING_ENABLED says (EventListener creates
    it, BaseEventListener.__init__ subscribes it) and, once the user's first run is recorded in the user data
    directory, opens a trace batch on app.crewai.com at every flow start (the failure is logged, the flow goes
    on). No switch turns it off, so the kit takes the uploader from the listener that is already there (the
    batch manager returns early without one); a release that attached none is left as it is."""
    try:
        from crewai.events.listeners.tracing.trace_listener import TraceCollectionListener
    except ImportError:
        return
    listener = getattr(TraceCollectionListener, "_instance", None)
    if listener is not None and getattr(listener, "batch_manager", None) is not None:
        listener.batch_manager.plus_api = None


_no_trace_uploads()

SRC = "https://github.com/crewAIInc/crewAI/blob"
FLOW_181 = f"{SRC}/1.8.1/lib/crewai/src/crewai/flow/flow.py"
FLOW_190 = f"{SRC}/1.9.0/lib/crewai/src/crewai/flow/flow.py"
DOCS = "https://docs.crewai.com/concepts/flows"
# The lines that decide, in each version's flow.py (the wheel's file is the repository's at the tag):
OR_181 = f"{FLOW_181}#L1852-L1854"  # _find_triggered_methods: an or_ listener is triggered by every source
AND_181 = f"{FLOW_181}#L1855-L1864"  # and_: the pending set per listener, triggered once it is empty
GATHER_181 = f"{FLOW_181}#L1727-L1731"  # the listeners one method triggers run concurrently (asyncio.gather)
KICKOFF_181 = f"{FLOW_181}#L1413-L1442"  # kickoff_async returns the last method output
OR_190 = f"{FLOW_190}#L2196-L2212"  # a multi-source or_ listener is marked fired and never triggered again
RACING_190 = f"{FLOW_190}#L665-L731"  # sources that feed only one or_ listener race: first to finish wins
PROXY_190 = f"{FLOW_190}#L410-L436"  # StateProxy: a lock around each single write
GATE_SECONDS = 10.0  # a bound against a defect only: every wait is released by an event the flow itself sets

__all__ = ["Flow", "and_", "listen", "or_", "router", "start", "bounded", "kickoff", "counter_flow"]


async def bounded(event: asyncio.Event, log: list[str], name: str) -> None:
    """Wait for `event`; a wait the flow never releases is noted in `log` (never hangs the probe)."""
    try:
        await asyncio.wait_for(event.wait(), GATE_SECONDS)
    except asyncio.TimeoutError:
        log.append(f"{name}:gate-timeout")


async def kickoff(flow: Any, inputs: dict[str, Any] | None = None) -> Any:
    """Run the flow on this probe's loop: kickoff_async where it exists, else kickoff in a worker thread
    (`inputs`, where given: the kickoff's inputs, e.g. the `id` of a persisted state to run on)."""
    given = {} if inputs is None else {"inputs": inputs}
    if hasattr(flow, "kickoff_async"):
        return await flow.kickoff_async(**given)
    return await asyncio.to_thread(flow.kickoff, **given)


def counter_flow(log: list[str], lock: asyncio.Lock | None = None) -> Any:
    """s sets state["n"] = 0 -> a, b each read n, await, write n + 1. Without a lock both read before either
    writes (each waits until both have read); with `lock` each holds it across its read-modify-write, and the
    first holder waits until the other has started (so the two are in flight together)."""
    read = {"a": asyncio.Event(), "b": asyncio.Event()}
    started = {"a": asyncio.Event(), "b": asyncio.Event()}

    async def bump(flow: Any, me: str, other: str) -> str:
        started[me].set()
        if lock is None:
            n = flow.state["n"]
            read[me].set()
            await bounded(read[other], log, me)
            flow.state["n"] = n + 1
        else:
            async with lock:
                n = flow.state["n"]
                await bounded(started[other], log, me)
                flow.state["n"] = n + 1
        log.append(f"{me}:{n}->{n + 1}")
        return me

    class Counter(Flow):
        @start()
        async def s(self) -> str:
            self.state["n"] = 0
            return "s"

        @listen(s)
        async def a(self) -> str:
            return await bump(self, "a", "b")

        @listen(s)
        async def b(self) -> str:
            return await bump(self, "b", "a")

    return Counter()
