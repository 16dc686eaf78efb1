"""Run a LangGraph probe in its mode: `sync` or `async` (`obs.mode`).

Plumbing only, so that one probe function can state its scenario once and observe it both ways:

- `sync`: plain `def` nodes, driven by `graph.invoke` / `graph.stream` (LangGraph runs the nodes
  of a superstep in its thread pool);
- `async`: the same node bodies as `async def` nodes, driven by `graph.ainvoke` / `graph.astream`
  inside `asyncio.run` (LangGraph runs them as asyncio tasks on the event loop).

What a probe observes (the graph, the writes, what it records) stays in the probe. In `sync` mode
`node` is the identity, `invoke` / `stream` are the plain calls and `Gate` is `liveness.PoolTurns` (a
`gates.ThreadTurns` that a lagging `updates` chunk cannot stall), so a probe's default (sync) variant
observes exactly what it did before it had an async variant.

- `node(obs, fn)`: `fn` itself in `sync` mode; in `async` mode an `async def` with `fn`'s signature
  (LangGraph reads `config` etc. from it) that returns `fn(...)`.
- `invoke(obs, graph, input, ...)`: `invoke`, or `asyncio.run(ainvoke(...))`.
- `stream(obs, graph, input, ..., on_chunk=...)`: every chunk of `stream` / `astream`, in order;
  `on_chunk` sees each one as it arrives (gates are released from there).
- `Gate(obs, order)`: `liveness.PoolTurns` for sync nodes, `gates.Turns` for async ones, behind one
  interface: `gate.node(name, fn)` makes a node that waits for its turn before running `fn`,
  `gate.finished(name)` releases the next one, `gate.acted` / `gate.vacuous` as in both kits.
- `Hold(obs, names, held, patience)`: keep some tasks in flight (until cancelled, or `patience` runs
  out when the framework waits for them) while a sibling fails; `hold.fates` says how each ended.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Any

from fanin.probe import Observer
from gates import Turns
from liveness import PoolTurns


def node(obs: Observer, fn: Callable) -> Callable:
    """`fn` in sync mode; an `async def` wrapper around it in async mode."""
    if obs.mode != "async":
        return fn

    @functools.wraps(fn)
    async def coroutine(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return coroutine


def invoke(
    obs: Observer,
    graph: Any,
    input: Any,
    config: dict | None = None,
    *,
    on_return: Callable[[], None] | None = None,
    **kwargs: Any,
) -> Any:
    """`graph.invoke(...)`, or `graph.ainvoke(...)` on a fresh event loop in async mode.

    `on_return` is called the moment the call returns or raises: in async mode still inside the event
    loop, before `asyncio.run` cancels whatever tasks are left (so a probe can see what was still running).
    """
    if obs.mode == "async":

        async def call() -> Any:
            try:
                return await graph.ainvoke(input, config, **kwargs)
            finally:
                if on_return is not None:
                    on_return()

        return asyncio.run(call())
    try:
        return graph.invoke(input, config, **kwargs)
    finally:
        if on_return is not None:
            on_return()


def stream(
    obs: Observer,
    graph: Any,
    input: Any,
    config: dict | None = None,
    *,
    on_chunk: Callable[[Any], None] | None = None,
    **kwargs: Any,
) -> list:
    """Every chunk of `graph.stream(...)` (or `astream` in async mode), calling `on_chunk` on each as it arrives."""
    if obs.mode == "async":

        async def collect() -> list:
            chunks = []
            async for chunk in graph.astream(input, config, **kwargs):
                if on_chunk is not None:
                    on_chunk(chunk)
                chunks.append(chunk)
            return chunks

        return asyncio.run(collect())
    chunks = []
    for chunk in graph.stream(input, config, **kwargs):
        if on_chunk is not None:
            on_chunk(chunk)
        chunks.append(chunk)
    return chunks


class Gate:
    """Force the order in which gated nodes finish, in either mode, without sleeping.

    Sync mode uses `liveness.PoolTurns` (a node blocks its worker thread until its turn; past the patience,
    the previous node's idle pool thread stands in for its lagging `updates` chunk); async mode
    uses `gates.Turns` (a node awaits its turn on the event loop). Either way every gated node must
    be in flight before the first is released, and the next is released by `finished(name)`, which
    the probe calls when the previous node's update chunk arrives. Make one Gate per run.
    """

    def __init__(self, obs: Observer, order: list[str], patience: float = 10.0) -> None:
        self.mode = obs.mode
        self.order = list(order)
        # Turns (async: `wait`) or PoolTurns (sync: `arrive`): the mode picks which method `node` calls.
        self._turns: Any = Turns(order, patience) if self.mode == "async" else PoolTurns(order, patience)

    def node(self, name: str | Callable[..., str], fn: Callable) -> Callable:
        """A node that waits for its turn, then returns `fn(...)`. `name` may be a function of the
        node's input (a Send payload), called with the same arguments as `fn`."""
        turn = name if callable(name) else (lambda *args, **kwargs: name)
        if self.mode == "async":

            @functools.wraps(fn)
            async def waiting(*args: Any, **kwargs: Any) -> Any:
                await self._turns.wait(turn(*args, **kwargs))
                return fn(*args, **kwargs)

            return waiting

        @functools.wraps(fn)
        def blocking(*args: Any, **kwargs: Any) -> Any:
            self._turns.arrive(turn(*args, **kwargs))
            return fn(*args, **kwargs)

        return blocking

    def finished(self, name: str) -> None:
        """`name`'s writes exist: release the next node in the order (unknown names are ignored)."""
        if name not in self.order:
            return
        self._turns.done(name)

    @property
    def acted(self) -> list[str]:
        return self._turns.acted

    @property
    def vacuous(self) -> str | None:
        return self._turns.vacuous


class Hold:
    """Keep some concurrent tasks in flight until the framework cancels them, in either mode.

    Every task named in `names` first waits until all of them have arrived (proof they are in flight
    together; after `patience_all` seconds `vacuous` says which never came). Those in `held` then wait
    for a release that never comes: in async mode a cancellation ends the wait (`fates[name] ==
    "cancelled"`, and the CancelledError propagates); otherwise, after `patience` seconds, the task goes
    on and runs its body (`fates[name] == "finished"`): the only way out when the framework waits for
    running tasks, as threads cannot be cancelled. The delay breaks that deadlock; it orders nothing.
    The other tasks run their body as soon as everyone has arrived. Make one Hold per run.
    """

    def __init__(
        self, obs: Observer, names: list[str], held: list[str], patience: float, patience_all: float = 10.0
    ) -> None:
        self.mode = obs.mode
        self.names = set(names)
        self.held = set(held)
        self.patience = patience
        self.patience_all = patience_all
        self.fates: dict[str, str] = {}
        self.vacuous: str | None = None
        self._arrived: set[str] = set()
        self._lock = threading.Lock()
        if self.mode == "async":
            self._all_in: Any = asyncio.Event()
            self._never: Any = asyncio.Event()
        else:
            self._all_in = threading.Event()
            self._never = threading.Event()

    def _arrive(self, name: str) -> None:
        with self._lock:
            self._arrived.add(name)
            if self._arrived >= self.names:
                self._all_in.set()

    def _missing(self, name: str) -> None:
        self.vacuous = f"tasks {sorted(self.names - self._arrived)} were never in flight while {name} waited"

    def node(self, name: str | Callable[..., str], fn: Callable) -> Callable:
        """A task or node body that arrives, is held if its name is in `held`, then returns `fn(...)`."""
        turn = name if callable(name) else (lambda *args, **kwargs: name)
        if self.mode == "async":

            @functools.wraps(fn)
            async def waiting(*args: Any, **kwargs: Any) -> Any:
                me = turn(*args, **kwargs)
                self._arrive(me)
                try:
                    await asyncio.wait_for(self._all_in.wait(), self.patience_all)
                except asyncio.TimeoutError:
                    self._missing(me)
                if me in self.held:
                    try:
                        await asyncio.wait_for(self._never.wait(), self.patience)
                    except asyncio.TimeoutError:
                        self.fates[me] = "finished"
                    except asyncio.CancelledError:
                        self.fates[me] = "cancelled"
                        raise
                return fn(*args, **kwargs)

            return waiting

        @functools.wraps(fn)
        def blocking(*args: Any, **kwargs: Any) -> Any:
            me = turn(*args, **kwargs)
            self._arrive(me)
            if not self._all_in.wait(self.patience_all):
                self._missing(me)
            if me in self.held:
                self._never.wait(self.patience)
                self.fates[me] = "finished"
            return fn(*args, **kwargs)

        return blocking
