"""The Python side of the scenario protocol (docs/ADAPTERS.md): what every Python adapter shares.

An adapter (suites/<framework>/scenario_adapter.py) builds a scenario (scenarios/*.toml) in its
framework's own API and reports what it observed; it never grades. Three parts live here, once:

- `Script`: a scenario's branch steps run inside the framework's branch (`turn`, `read`, `write`,
  `raise`, `return`), the order forced with `gates.Turns` (never a sleep), each branch's end
  (done, raised, cancelled, unfinished) and the observed fields the scenario names.
- `Adapter.handle` and `serve`: the messages (start -> capabilities, run -> an answer, stop), one JSON
  object a line on stdin/stdout when the adapter runs as a program (`python scenario_adapter.py`).
- `observe`: a scenario probe (suites/<framework>/test_scenarios.py) runs every forced order through
  the adapter with the same messages, each a JSON round trip, and the harness grades them
  (`obs.record_scenario`, fanin.model.scenarios' one grader).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import sys
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import IO, Any

import gates

PROTOCOL = 1
PRIMITIVES = ("turn", "read", "write", "write.add", "raise", "return", "join.all")  # as fanin.model.scenarios


class BranchFailed(Exception):
    """The error a `raise` step raises: one name in every adapter, so `raises` compares across frameworks."""


class NotExpressible(Exception):
    """This version of the framework cannot build the scenario (the reason comes from the installed package)."""


Reader = Callable[[str], Any]  # a key's value as the branch sees it (may return an awaitable)
Writer = Callable[[str, Any], Any]  # set a key as the framework lets a branch (may return an awaitable)


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


_RELEASES: list[asyncio.Task[None]] = []  # turns released once the loop settles after a failure (one settle at a time)


class Script:
    """One run of a scenario in one forced order: the branches' steps, their ends, and the observed fields."""

    def __init__(self, scenario: dict[str, Any], order: list[str]) -> None:
        self.scenario = scenario
        self.steps = {str(b["name"]): list(b["do"]) for b in scenario["branches"]}
        self.branches = list(self.steps)
        self.turns = gates.Turns(order)
        self.ends = dict.fromkeys(self.branches, "unfinished")
        self.returned: dict[str, Any] = {}  # what each branch's `return` step handed to the join

    @property
    def state(self) -> dict[str, Any]:
        """The keys and values before the run (a fresh copy each time)."""
        return json.loads(json.dumps(self.scenario["state"]))

    async def branch(self, name: str, read: Reader, write: Writer) -> Any:
        """Run branch `name`'s steps; returns what its `return` step hands to the join (None without one)."""
        async with contextlib.aclosing(self.walk(name, read)) as steps:
            async for key, value in steps:
                try:
                    await _maybe(write(key, value))
                except asyncio.CancelledError:
                    self.ends[name] = "cancelled"
                    raise
        return self.returned[name]

    async def walk(self, name: str, read: Reader, later: bool = False) -> AsyncGenerator[tuple[str, Any], None]:
        """Branch `name`'s steps as an async generator of its writes, `(key, value)`; what its `return` step
        hands to the join is `returned[name]` once the generator ends. For a framework whose branches write
        by yielding (ADK's events), `branch` for the rest. With `later`, a branch that ends normally hands on
        its turn only when the adapter calls `hand_on(name)`: once the framework has taken what it returned
        (ADK: the event yielded with it was consumed)."""
        seen: dict[str, Any] = {}
        self.returned[name] = None
        try:
            for step in self.steps[name]:
                if step == "turn":
                    await self.turns.wait(name)
                    continue
                (kind, argument), *_ = step.items()
                if kind == "read":
                    seen[argument] = await _maybe(read(argument))
                elif kind == "write":
                    key = argument["key"]
                    yield key, (seen[key] + argument["add"] if "add" in argument else argument["value"])
                elif kind == "raise":
                    self.ends[name] = "raised"
                    raise BranchFailed(argument)
                elif kind == "return":
                    self.returned[name] = argument
            self.ends[name] = "done"
        except asyncio.CancelledError:
            self.ends[name] = "cancelled"
            raise
        finally:
            if self.ends[name] == "raised" and self.turns.order[-1] != name:
                # The next branch's turn comes once the framework has reacted to the failure (the loop
                # settled): a sibling it cancels is cancelled at its gate, one it waits for goes on.
                _RELEASES.append(asyncio.get_running_loop().create_task(self._release_settled(name)))
            elif not (later and self.ends[name] == "done"):
                self.hand_on(name)  # the next branch's turn comes however this one ended

    def hand_on(self, name: str) -> None:
        """The next branch's turn (once per branch)."""
        if name not in self.turns.acted:
            self.turns.done(name)

    async def _release_settled(self, name: str) -> None:
        await settle_with_threads()
        self.turns.done(name)

    def observed(
        self, ends: dict[str, str], raises: str | None, final: dict[str, Any] | None, saw: Any
    ) -> dict[str, Any]:
        """The fields the scenario observes: `final` is the state the caller can read (None: none)."""
        found: dict[str, Any] = {}
        for name in self.scenario["observe"]:
            head, _, rest = name.partition(".")
            if name == "raises":
                found[name] = raises
            elif name == "join.saw":
                found[name] = saw
            elif head == "final":
                found[name] = None if final is None else final.get(rest)
            elif head == "branch":
                found[name] = ends[rest]
        return found

    async def answer(self, *, raises: str | None, final: Callable[[], Any], saw: Any = None) -> dict[str, Any]:
        """The run's answer, called as the run returns: each branch's end as it was then (`unfinished`: the run
        returned while it still ran), the state `final()` reads once the loop has settled (a dict or None, or an
        awaitable of one: a session service's read); vacuous when the gate could not force the order (the
        branches were never in flight together)."""
        ends = dict(self.ends)
        await settled()
        if self.turns.vacuous:
            return {"vacuous": self.turns.vacuous}
        return {"observed": self.observed(ends, raises, await _maybe(final()), saw)}


async def settled() -> None:
    """Every turn a failure holds is released, then the loop settles: nothing the run started is still runnable."""
    while _RELEASES:  # one settle at a time: two at once keep each other runnable
        await _RELEASES.pop()
    await settle_with_threads()


async def settle_with_threads() -> None:
    """`gates.settle`, and the work the loop handed to its default thread pool too (`run_in_executor(None, ...)`:
    langchain runs a sync callback handler there on a tool's error, on the failure's way to the framework), which
    `gates.settle` cannot see: a turn released while a pool thread still works would race the framework's reaction.

    A pool thread hands its result to the loop (a ready callback) before it counts itself idle, so once no pool
    thread is busy and then nothing is ready, nothing is left that could still wake a task. Loop iterations,
    never a timer."""
    loop = asyncio.get_running_loop()
    while True:
        await gates.settle()
        pool = getattr(loop, "_default_executor", None)
        # CPython's ThreadPoolExecutor: queued items, and one semaphore count per idle thread.
        if pool is None or (pool._work_queue.empty() and pool._idle_semaphore._value >= len(pool._threads)):
            await gates.settle()
            if not loop._ready:  # type: ignore[attr-defined]  # CPython's queue of ready callbacks, as gates.settle reads it
                return
        await asyncio.sleep(0)


@dataclass(frozen=True)
class Adapter:
    """A Python adapter: its capabilities and how it runs one scenario in one order."""

    capabilities: Callable[[], dict[str, Any]]
    run: Callable[[dict[str, Any], list[str]], Awaitable[dict[str, Any]]]

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The answer to one message (None for stop, which has none)."""
        command = message.get("cmd")
        if command == "start":
            if message.get("protocol") != PROTOCOL:
                return {"error": f"this adapter speaks protocol {PROTOCOL}, not {message.get('protocol')!r}"}
            return self.capabilities()
        if command == "stop":
            return None
        if command != "run":
            return {"error": f"unknown command {command!r}"}
        started = time.perf_counter()
        try:
            reply = asyncio.run(self._settled(message["scenario"], list(message["order"])))
        except NotExpressible as exc:
            reply = {"not_applicable": str(exc)}
        except Exception as exc:  # the adapter's own defect: the harness records probe-error, never a finding
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        return {**reply, "took_s": round(time.perf_counter() - started, 4)}

    async def _settled(self, scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
        reply = await self.run(scenario, order)
        await settled()  # whatever the adapter did, nothing of this run is left for the next one
        return reply


def declare(framework: str, version: str, cannot: dict[str, str] | None = None) -> dict[str, Any]:
    """A Python adapter's answer to start: every primitive but those it names with the reason it cannot."""
    cannot = cannot or {}
    return {
        "framework": framework,
        "version": version,
        "protocol": PROTOCOL,
        "language": "python",
        "supports": [p for p in PRIMITIVES if p not in cannot],
        **({"cannot": cannot} if cannot else {}),
    }


def serve(adapter: Adapter, source: IO[str] = sys.stdin, sink: IO[str] = sys.stdout) -> None:
    """The adapter as a program: one JSON message a line in, one JSON answer a line out, until stop."""
    for line in source:
        if not line.strip():
            continue
        reply = adapter.handle(json.loads(line))
        if reply is None:
            return
        sink.write(json.dumps(reply, sort_keys=True) + "\n")
        sink.flush()


def _exchange(adapter: Adapter, message: dict[str, Any]) -> Any:
    """One message and its answer as the protocol carries them: JSON text both ways."""
    reply = adapter.handle(json.loads(json.dumps(message)))
    return None if reply is None else json.loads(json.dumps(reply))


def observe(obs: Any, adapter: Adapter) -> None:
    """A scenario probe: start, every forced order the adapter can express, stop; the harness grades."""
    scenario = obs.scenario
    capable = _exchange(adapter, {"cmd": "start", "protocol": PROTOCOL})
    answers = {}
    if isinstance(capable, dict) and set(scenario.primitives()) <= set(capable.get("supports", ())):
        for order in scenario.orders:
            answers[",".join(order)] = _exchange(adapter, {"cmd": "run", "scenario": scenario.data, "order": order})
    _exchange(adapter, {"cmd": "stop"})
    obs.record_scenario(capable, answers)
