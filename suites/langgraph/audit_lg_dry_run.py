"""The LangGraph inspector's dry run: the graph streamed once on the user's input with chat models faked, each
task's writes per superstep recorded; its failure is a fact, never an all clear. Part of suites/langgraph/audit.py.
"""

import contextlib
import inspect as pyinspect
import os
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from audit_lg_source import MAX_STEPS, unwrap


FAKE_REPLY = "fanin audit dry run: a fixed reply from a fake chat model"


@contextlib.contextmanager
def _fake_chat_models() -> Iterator[bool]:
    """Every langchain_core chat model answers with one fixed AIMessage while the dry run lasts."""
    try:
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.messages import AIMessage, AIMessageChunk
        from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    except ImportError:
        yield False
        return

    def result(*args: Any, **kwargs: Any) -> Any:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=FAKE_REPLY))])

    async def aresult(*args: Any, **kwargs: Any) -> Any:
        return result()

    def stream(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        yield AIMessageChunk(content=FAKE_REPLY)

    async def astream(self: Any, *args: Any, **kwargs: Any) -> Any:
        yield AIMessageChunk(content=FAKE_REPLY)

    def chunks(*args: Any, **kwargs: Any) -> Iterator[Any]:
        yield ChatGenerationChunk(message=AIMessageChunk(content=FAKE_REPLY))

    async def achunks(*args: Any, **kwargs: Any) -> Any:
        yield ChatGenerationChunk(message=AIMessageChunk(content=FAKE_REPLY))

    patches = {
        "_generate_with_cache": result,
        "_agenerate_with_cache": aresult,
        "_generate": result,
        "_agenerate": aresult,
        "_stream": chunks,
        "_astream": achunks,
        "stream": stream,
        "astream": astream,
    }
    saved = {name: BaseChatModel.__dict__.get(name) for name in patches}
    # Subclasses override _generate/_stream: patch the base's entry points, which every subclass inherits.
    for name, fake in patches.items():
        setattr(BaseChatModel, name, fake)
    subclass_saved: list[tuple[type, str, Any]] = []
    todo = list(BaseChatModel.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        for name in (
            "_generate",
            "_agenerate",
            "_stream",
            "_astream",
            "_generate_with_cache",
            "_agenerate_with_cache",
            "stream",
            "astream",
        ):
            if name in cls.__dict__:
                subclass_saved.append((cls, name, cls.__dict__[name]))
                setattr(cls, name, patches[name])
    try:
        yield True
    finally:
        for cls, name, original in subclass_saved:
            setattr(cls, name, original)
        for name, original in saved.items():
            if original is None:
                delattr(BaseChatModel, name)
            else:
                setattr(BaseChatModel, name, original)


def _has_async_nodes(builder: Any) -> bool:
    """A node with only an async function (`async def`), which the synchronous `stream` cannot run."""
    for spec in (getattr(builder, "nodes", None) or {}).values():
        runnable = getattr(spec, "runnable", spec)
        func, afunc = getattr(runnable, "func", None), getattr(runnable, "afunc", None)
        if func is None and afunc is not None:
            return True
        if pyinspect.iscoroutinefunction(func) or pyinspect.iscoroutinefunction(unwrap(runnable)):
            return True
    return False


SYNC_REFUSED = "No synchronous function provided"  # LangGraph's error when `stream` meets an async-only node


def _dry_run(target: Any, builder: Any, given: Any) -> dict[str, Any]:
    """Which task wrote which key in which superstep, observed by running the graph once on `given`.

    A graph with async nodes runs with `astream` (in `asyncio.run`): up front when a node of the
    graph is async, else when the synchronous run says a node has no synchronous function (an
    async node inside a subgraph), starting over.
    """
    graph = target if hasattr(target, "stream") and not hasattr(target, "add_node") else builder.compile()
    writes: list[dict[str, Any]] = []
    error = None
    limit = int(os.environ.get("FANIN_AUDIT_RECURSION_LIMIT") or MAX_STEPS)  # --recursion-limit
    config = {"configurable": {"thread_id": "fanin-audit-dry-run"}, "recursion_limit": limit}

    def collect(event: Any) -> None:
        if not isinstance(event, dict) or event.get("type") != "task_result":
            return
        payload = event.get("payload", {})
        channels = [item[0] if isinstance(item, (list, tuple)) else item for item in payload.get("result", [])]
        keys = sorted({str(c) for c in channels if not str(c).startswith(("__", "branch:"))})
        writes.append({"step": event.get("step"), "node": payload.get("name"), "task": payload.get("id"), "keys": keys})

    async def run_async() -> None:
        async for event in graph.astream(
            given, {**config, "configurable": {"thread_id": "fanin-audit-dry-run-async"}}, stream_mode="debug"
        ):
            collect(event)

    mode = "async" if _has_async_nodes(builder) else "sync"
    with _fake_chat_models() as faked:
        try:
            if mode == "sync":
                try:
                    for event in graph.stream(given, config, stream_mode="debug"):
                        collect(event)
                except Exception as exc:  # noqa: BLE001
                    if SYNC_REFUSED not in str(exc):
                        raise
                    writes.clear()
                    mode = "async"
            if mode == "async":
                import asyncio

                asyncio.run(run_async())
        except Exception as exc:  # noqa: BLE001 - the dry run's failure is itself a fact (e.g. InvalidUpdateError)
            first = str(exc).splitlines()[0][:200] if str(exc) else "(no message)"
            frames = pyinspect.getinnerframes(exc.__traceback__, context=0) if exc.__traceback__ else []
            at = f" (raised at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].function})" if frames else ""
            error = f"{type(exc).__name__}: {first}{at}"
    by_step: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for write in writes:
        by_step[str(write["step"])].setdefault(write["node"], [])
        by_step[str(write["step"])][write["node"]] = sorted(
            set(by_step[str(write["step"])][write["node"]]) | set(write["keys"])
        )
    note = (
        "ran the graph once on the given input with a fake chat model: every langchain_core BaseChatModel answered one fixed AIMessage;"
        " tools and other calls ran as written"
        if faked
        else "ran the graph once on the given input; langchain_core is not installed, so nothing was faked"
    )
    if mode == "async":
        note += "; run with astream (the graph has async nodes)"
    return {
        "writes": writes,
        "by_step": dict(by_step),
        "error": error,
        "fake_model": faked,
        "note": note,
        "mode": mode,
    }
