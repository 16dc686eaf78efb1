"""LangGraph's `together` (docs/ADAPTERS.md): two runs at once on one thread, each on its own checkpointer.

Two workers, one database: each run's graph is compiled on its own `AsyncSqliteSaver` (langgraph-checkpoint-sqlite)
opened on one SQLite file, the thread seeded first with the scenario's state by a one-node graph on a saver of its
own (as the probe langgraph/threads/two-processes-one-thread seeds), and both runs given only the empty list of
returns (`RETURNS`), so each continues the thread from what it finds stored. `final` is what `aget_state` shows
through a third, fresh saver on the file once both runs have ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import scenario_kit
from langgraph.graph import END, START, StateGraph

RETURNS = "fanin_returns"  # as scenario_adapter.RETURNS: the channel of the branches' `return` values
THREAD = {"configurable": {"thread_id": "scenario-together"}}


def _saver_class() -> Any:
    """`AsyncSqliteSaver`, or n/a naming the import that failed (the cell's lock has no checkpoint-sqlite)."""
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    except ImportError as exc:
        raise scenario_kit.NotExpressible(f"no langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver: {exc}") from exc
    return AsyncSqliteSaver


async def _saver(stack: AsyncExitStack, saver_class: Any, path: str) -> Any:
    """A store object of its own on the one SQLite file (its own aiosqlite connection), closed with the stack."""
    saver = await stack.enter_async_context(saver_class.from_conn_string(path))
    await saver.setup()
    return saver


async def _seed(saver: Any, state_class: Any, state: dict[str, Any]) -> None:
    """The thread's first checkpoint, holding the scenario's state: a one-node graph's run on the thread."""

    async def seed(_: dict[str, Any]) -> dict[str, Any]:
        return {}

    builder = StateGraph(state_class)
    builder.add_node("seed", seed)
    builder.add_edge(START, "seed")
    builder.add_edge("seed", END)
    await builder.compile(checkpointer=saver).ainvoke({**state, RETURNS: []}, THREAD)


async def run(script: scenario_kit.Script, build: Callable[[Any, dict[str, Any]], Any], state_class: Any) -> Any:
    """Both runs at once (one gate over `<run>.<branch>`), then the thread as a third saver reads it back."""
    saver_class = _saver_class()
    with script.store_dir() as folder:
        path = str(folder / "checkpoints.sqlite")
        async with AsyncExitStack() as stack:
            await _seed(await _saver(stack, saver_class, path), state_class, script.state)
        views = [script.of_run(number) for number in range(1, script.runs + 1)]
        async with AsyncExitStack() as stack:
            graphs = [build(view, {}).compile(checkpointer=await _saver(stack, saver_class, path)) for view in views]
            ends = await asyncio.gather(
                *(view.run(graph.ainvoke({RETURNS: []}, THREAD)) for view, graph in zip(views, graphs)),
                return_exceptions=True,
            )
        error = next((end for end in ends if isinstance(end, BaseException)), None)
        async with AsyncExitStack() as stack:
            reader = build(script, {}).compile(checkpointer=await _saver(stack, saver_class, path))
            snapshot = await reader.aget_state(THREAD)
            values = {k: v for k, v in snapshot.values.items() if k != RETURNS}
            return await script.answer(
                raises=None if error is None else type(error).__name__, final=lambda: values or None, error=error
            )
