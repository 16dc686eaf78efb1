"""Checkpointer plumbing for the LangGraph probes that run under backends and modes.

A probe that declares `backends=("memory", "sqlite", "postgres")` and/or
`modes=("sync", "async")` gets the saver for its observation from
`checkpointer(obs)` and drives its graph through `driven(obs, graph)`:

    with lg_persist.checkpointer(obs) as saver:
        graph = builder.compile(checkpointer=saver)
        run = lg_persist.driven(obs, graph)
        run.invoke({"items": []}, config)          # graph.invoke, or graph.ainvoke in async mode

- memory   -> `MemorySaver()` (both modes)
- sqlite   -> `SqliteSaver` / `AsyncSqliteSaver` on `obs.scratch / "checkpoints.sqlite"`
- postgres -> `PostgresSaver` / `AsyncPostgresSaver` on a fresh database of the harness's server,
              after `.setup()`

`async def` probes (async-only scenarios) use `async with lg_persist.acheckpointer(obs)`,
which yields the async saver of `obs.backend` on the probe's own running loop.

A version without the companion package or API makes the probe `n/a` with the reason
(`obs.need`). Async savers bind to the event loop they were made on (aiosqlite's thread,
asyncio locks), so in async mode the saver is made on one event loop kept for the whole
observation, and every async call of the probe (`driven(...)`, `run(...)`) runs on that loop:
the equivalent of `asyncio.run(graph.ainvoke(...))` with one loop per observation instead of
one per call. Nothing here decides what a probe observes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

_loops: list[asyncio.AbstractEventLoop] = []


def run(awaitable: Awaitable[T]) -> T:
    """Run a coroutine to completion on the observation's event loop (a fresh one outside `checkpointer`)."""
    if _loops:
        return _loops[-1].run_until_complete(awaitable)
    return asyncio.run(awaitable)  # type: ignore[arg-type]


@contextmanager
def checkpointer(obs: Any) -> Iterator[Any]:
    """The saver for `obs.backend` in `obs.mode`, open for the duration of the block."""
    if obs.backend not in ("memory", "sqlite", "postgres"):
        raise ValueError(f"unknown backend {obs.backend!r}")
    if obs.mode not in ("sync", "async"):
        raise ValueError(f"unknown mode {obs.mode!r}")
    if obs.mode == "sync":
        with _sync_saver(obs) as saver:
            yield saver
        return
    loop = asyncio.new_event_loop()
    _loops.append(loop)
    try:
        factory = acheckpointer(obs)
        saver = loop.run_until_complete(factory.__aenter__())
        try:
            yield saver
        finally:
            loop.run_until_complete(factory.__aexit__(None, None, None))
    finally:
        _loops.remove(loop)
        try:
            _cancel_leftovers(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


@contextmanager
def _sync_saver(obs: Any) -> Iterator[Any]:
    if obs.backend == "memory":
        yield obs.need("langgraph.checkpoint.memory", "MemorySaver")()
    elif obs.backend == "sqlite":
        SqliteSaver = obs.need("langgraph.checkpoint.sqlite", "SqliteSaver")
        with SqliteSaver.from_conn_string(str(obs.scratch / "checkpoints.sqlite")) as saver:
            saver.setup()
            yield saver
    else:
        PostgresSaver = obs.need("langgraph.checkpoint.postgres", "PostgresSaver")
        with _database(obs) as dsn, PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
            yield saver


class acheckpointer:
    """`async with acheckpointer(obs) as saver`: the async saver of `obs.backend`, for `async def` probes
    (and for `checkpointer(obs)` in async mode, entered on the observation's loop)."""

    def __init__(self, obs: Any) -> None:
        self.obs = obs
        self.exits: list[Any] = []

    async def __aenter__(self) -> Any:
        obs = self.obs
        if obs.backend == "memory":
            return obs.need("langgraph.checkpoint.memory", "MemorySaver")()
        if obs.backend == "sqlite":
            obs.need("aiosqlite")
            AsyncSqliteSaver = obs.need("langgraph.checkpoint.sqlite.aio", "AsyncSqliteSaver")
            factory = AsyncSqliteSaver.from_conn_string(str(obs.scratch / "checkpoints.sqlite"))
        else:
            AsyncPostgresSaver = obs.need("langgraph.checkpoint.postgres.aio", "AsyncPostgresSaver")
            database = _database(obs)
            dsn = database.__enter__()
            self.exits.append(lambda: database.__exit__(None, None, None))
            factory = AsyncPostgresSaver.from_conn_string(dsn)
        saver = await factory.__aenter__()
        self.exits.append(factory)
        await saver.setup()
        return saver

    async def __aexit__(self, *exc: Any) -> None:
        for exit_ in reversed(self.exits):
            if hasattr(exit_, "__aexit__"):
                await exit_.__aexit__(None, None, None)
            else:
                exit_()


@contextmanager
def _database(obs: Any) -> Iterator[str]:
    """A fresh database on the harness's PostgreSQL server, dropped afterwards; yields its DSN."""
    psycopg = obs.need("psycopg")
    server = obs.postgres_dsn("postgres")
    name = obs.database_name
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield obs.postgres_dsn(name)
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


class driven:
    """The graph's API in `obs.mode`: sync methods, or their async twins run on the observation's loop."""

    def __init__(self, obs: Any, graph: Any) -> None:
        self.asynchronous = obs.mode == "async"
        self.graph = graph

    def invoke(self, input: Any, config: dict, **kwargs: Any) -> Any:
        if self.asynchronous:
            return run(self.graph.ainvoke(input, config, **kwargs))
        return self.graph.invoke(input, config, **kwargs)

    def stream(self, input: Any, config: dict, on_chunk: Any = None, **kwargs: Any) -> list:
        """Every chunk of a full stream, as a list; `on_chunk(chunk)` is called as each one arrives (gates)."""
        chunks: list = []

        def take(chunk: Any) -> None:
            chunks.append(chunk)
            if on_chunk is not None:
                on_chunk(chunk)

        if self.asynchronous:

            async def consume() -> None:
                async for chunk in self.graph.astream(input, config, **kwargs):
                    take(chunk)

            run(consume())
        else:
            for chunk in self.graph.stream(input, config, **kwargs):
                take(chunk)
        return chunks

    def get_state(self, config: dict) -> Any:
        if self.asynchronous:
            return run(self.graph.aget_state(config))
        return self.graph.get_state(config)

    def update_state(self, config: dict, values: Any, as_node: str | None = None) -> Any:
        if self.asynchronous:
            return run(self.graph.aupdate_state(config, values, as_node=as_node))
        return self.graph.update_state(config, values, as_node=as_node)

    def history(self, config: dict) -> list:
        """get_state_history as a list, newest first."""
        if self.asynchronous:

            async def collect() -> list:
                return [snapshot async for snapshot in self.graph.aget_state_history(config)]

            return run(collect())
        return list(self.graph.get_state_history(config))

    def saved(self, config: dict) -> Any:
        """The checkpointer's latest CheckpointTuple for `config` (checkpoint + pending writes)."""
        saver = self.graph.checkpointer
        if self.asynchronous:
            return run(saver.aget_tuple(config))
        return saver.get_tuple(config)


# --- plain views of what the framework saved -----------------------------------------------------


def plain(value: Any) -> Any:
    """Framework objects as plain data: interrupts as {"interrupt": value}, errors as {"error": class name}."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, BaseException):
        return {"error": type(value).__name__}
    if type(value).__name__ == "Interrupt":
        return {"interrupt": plain(value.value)}
    if type(value).__name__ == "Send":
        return {"send": value.node, "arg": plain(value.arg)}
    return {"object": type(value).__name__}


def interrupt_id(interrupt: Any) -> str | None:
    """The id `Command(resume={id: value})` addresses an interrupt by: `id` (0.6+), `interrupt_id` (0.4-0.5), else None."""
    for attribute in ("id", "interrupt_id"):
        value = getattr(interrupt, attribute, None)
        if isinstance(value, str) and value != "placeholder-id":
            return value
    return None


def interrupts_of(snapshot: Any) -> list:
    """The open interrupts of a StateSnapshot as sorted [task name, value] pairs."""
    return sorted(
        ([task.name, plain(i.value)] for task in snapshot.tasks for i in getattr(task, "interrupts", ())),
        key=repr,
    )


def pending_of(saved: Any, snapshot: Any, channels: tuple[str, ...] = ("items",)) -> list:
    """The pending writes of a CheckpointTuple to the state `channels`, interrupts and errors, as sorted
    [writer, channel, value] (writer: the task's node name). Internal trigger channels (`branch:to:x`,
    `join:a+b:x`, ...) are left out: their names change between versions and say nothing about state."""
    if saved is None:
        return []
    shown = set(channels) | {"__interrupt__", "__error__"}
    names = {"00000000-0000-0000-0000-000000000000": "(graph)"}
    if snapshot is not None:
        names.update((task.id, task.name) for task in snapshot.tasks)
    rows = [
        [names.get(str(task_id), "?"), channel, _pending_value(channel, value)]
        for task_id, channel, value in saved.pending_writes or []
        if channel in shown
    ]
    return sorted(rows, key=repr)


def _pending_value(channel: str, value: Any) -> Any:
    if channel == "__error__":
        return _error_name(value)
    if channel == "__interrupt__":  # one Interrupt (0.2) or a list of them (0.3+): always the list of values
        return [plain(i.value) for i in (value if isinstance(value, (list, tuple)) else [value])]
    return plain(value)


def _error_name(value: Any) -> str:
    """A saved error write (an exception, or its repr as some savers store it) as its class name only:
    messages carry durations and addresses."""
    if isinstance(value, BaseException):
        return type(value).__name__
    return str(value).split("(", 1)[0]
