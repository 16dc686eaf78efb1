"""Worker processes for the LangGraph probes that need more than one process on one durable store.

Forked, not exec'd (as the ADK session workers): a fork starts with LangGraph already imported, and
shares nothing with its parent but the database. The parent closes its own connections before it forks;
a worker opens its own saver on the store (`sqlite`: a file path, `postgres`: a DSN), talks to the parent
over a `Pipe` in plain data, and reports a defect of its own as ("worker-error", traceback). A poll
timeout in the parent only catches a broken worker; every order is decided by messages.
"""

from __future__ import annotations

import inspect
import multiprocessing
import operator
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel


class State(TypedDict):
    items: Annotated[list, operator.add]


def fork(target: Callable[..., None], *args: Any) -> tuple[Any, Any]:
    """Start `target(*args, conn)` in a forked process; returns (process, the parent's end of its pipe)."""
    context = multiprocessing.get_context("fork")
    parent_end, child_end = context.Pipe()
    process = context.Process(target=_main, args=(target, args, child_end), daemon=True)
    process.start()
    child_end.close()
    return process, parent_end


def ask(pipe: Any, expected: str, who: str) -> Any:
    """The next message of a worker (`expected` kind); a poll timeout only catches a broken worker."""
    if not pipe.poll(60):
        raise RuntimeError(f"{who} sent nothing for 60 s (a broken worker)")
    kind, payload = pipe.recv()
    if kind == "worker-error":
        raise RuntimeError(f"{who} failed:\n{payload}")
    if kind != expected:
        raise RuntimeError(f"{who} said {kind} ({payload}), expected {expected}")
    return payload


def finish(process: Any, pipe: Any) -> None:
    """Wait for a worker to end (it has said everything), then close the parent's end of its pipe."""
    process.join(30)
    pipe.close()


def _main(target: Callable[..., None], args: tuple, conn: Any) -> None:
    try:
        target(*args, conn)
    except BaseException:  # noqa: BLE001 - a defect of the worker itself: the parent turns it into probe-error
        conn.send(("worker-error", traceback.format_exc()))
    finally:
        conn.close()


@contextmanager
def saver(
    backend: str,
    target: str,
    on_put_writes: Callable[[list], None] | None = None,
    on_get_tuple: Callable[[Any], None] | None = None,
    on_put: Callable[[dict, bool], None] | None = None,
) -> Iterator[Any]:
    """The sync saver of `backend` on `target`, set up; `on_put_writes(writes)` runs after each put_writes
    returns, `on_get_tuple(found)` after each get_tuple, `on_put(metadata, saved)` before (False) and after
    (True) each put of a checkpoint."""
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver as Base
    else:
        from langgraph.checkpoint.postgres import PostgresSaver as Base

    class Hooked(Base):
        def put_writes(self, config: Any, writes: Any, task_id: str, *args: Any, **kwargs: Any) -> None:
            super().put_writes(config, writes, task_id, *args, **kwargs)
            if on_put_writes is not None:
                on_put_writes(list(writes))

        def put(self, config: Any, checkpoint: Any, metadata: Any, *args: Any, **kwargs: Any) -> Any:
            if on_put is not None:
                on_put(dict(metadata or {}), False)
            stored = super().put(config, checkpoint, metadata, *args, **kwargs)
            if on_put is not None:
                on_put(dict(metadata or {}), True)
            return stored

        def get_tuple(self, config: Any) -> Any:
            found = super().get_tuple(config)
            if on_get_tuple is not None:
                on_get_tuple(found)
            return found

    with Hooked.from_conn_string(target) as opened:
        opened.setup()
        yield opened


def parallel_graph(runs: dict[str, int], steps: dict[str, int], hold_slow: Callable[[], None]) -> Any:
    """prep, then `fast` and `slow` in parallel, then `join` (a list-edge barrier); each node counts its runs
    in this process and `slow` calls `hold_slow()` before it returns."""
    from langgraph.graph import START, StateGraph

    def node(name: str) -> Callable[..., dict]:
        def run(state: State, config: RunnableConfig) -> dict:
            runs[name] = runs.get(name, 0) + 1
            steps[name] = config["metadata"]["langgraph_step"]
            if name == "slow":
                hold_slow()
            return {"items": [name]}

        return run

    builder = StateGraph(State)
    for name in ("prep", "fast", "slow", "join"):
        builder.add_node(name, node(name))
    builder.add_edge(START, "prep")
    builder.add_edge("prep", "fast")
    builder.add_edge("prep", "slow")
    builder.add_edge(["fast", "slow"], "join")
    return builder


SAVE_GUARD = 60.0  # seconds a worker waits for a save its mode makes: only a hang guard, never an order


def run_until_killed(backend: str, target: str, thread: str, options: dict, plan: dict, hold_checkpoint: bool, conn: Any) -> None:
    """Run the graph until `fast` has finished while `slow` is held in flight, then report and wait to be killed.

    The kill point is defined by the saves themselves, observed in the saver, never by a clock. `plan` says
    what the mode does before the run exits (from the framework's source and docs): `saves` (async, sync,
    checkpoint_during=True, the pre-durability default) saves prep's write, each checkpoint up to the one
    after prep (puts are chained: each starts once the one before it has returned) and fast's write; without it (exit, checkpoint_during=False) nothing is saved
    until the run exits. `step_waits` (sync) runs no step before the previous checkpoint is saved. The
    worker reports once every save its mode makes up to that point has returned: with `hold_checkpoint`
    the checkpoint after prep is held at the start of its `put` (it never returns: the crash comes first),
    and under `step_waits` fast then never starts. A save that never comes within SAVE_GUARD is reported
    as a hang (the parent makes the run vacuous)."""
    runs: dict[str, int] = {}
    steps: dict[str, int] = {}
    slow_in_flight = threading.Event()
    fast_finished = threading.Event()
    saved = {name: threading.Event() for name in ("prep", "fast", "checkpoint")}
    checkpoint_held = threading.Event()
    never = threading.Event()
    started: list[str] = []  # every save the saver began, in order

    def hold_slow() -> None:
        slow_in_flight.set()
        never.wait(120)  # the parent kills this process long before; the bound only ends an orphan

    def on_put_writes(writes: list) -> None:
        for name in ("prep", "fast"):
            if ("items", [name]) in [tuple(write) for write in writes]:
                saved[name].set()

    def on_put(metadata: dict, done: bool) -> None:
        step = metadata.get("step")
        if not done:
            started.append(f"put(step {step})")
        if "prep" not in steps or step != steps["prep"]:
            return
        if done:
            saved["checkpoint"].set()
        elif hold_checkpoint:
            checkpoint_held.set()
            never.wait(120)

    def on_chunk(mode: str, chunk: Any) -> None:
        if mode == "updates" and "fast" in (chunk or {}):
            fast_finished.set()

    hangs: list[str] = []

    def wait(event: threading.Event, what: str) -> bool:
        if not event.wait(SAVE_GUARD):
            hangs.append(f"{what} did not come within {SAVE_GUARD:.0f} s")
        return event.is_set()

    with saver(backend, target, on_put_writes, on_put=on_put) as opened:
        graph = parallel_graph(runs, steps, hold_slow).compile(checkpointer=opened)
        config = {"configurable": {"thread_id": thread}}

        def drive() -> None:
            # "custom" beside "updates": fast's update arrives while the framework still waits for slow
            for mode, chunk in graph.stream({"items": []}, config, stream_mode=["updates", "custom"], **options):
                on_chunk(mode, chunk)

        threading.Thread(target=drive, daemon=True).start()
        if plan["saves"]:
            wait(saved["prep"], "the save of prep's write")
            wait(checkpoint_held if hold_checkpoint else saved["checkpoint"], "the checkpoint after prep")
        if not (hold_checkpoint and plan["step_waits"]):  # else the step of fast waits for the held save
            wait(fast_finished, "fast's update")
            wait(slow_in_flight, "slow in flight")
            if plan["saves"]:
                wait(saved["fast"], "the save of fast's write")
        report = {
            "fast_finished": fast_finished.is_set(),
            "slow_in_flight": slow_in_flight.is_set(),
            "fast_saved": saved["fast"].is_set(),
            "checkpoint_saved": saved["checkpoint"].is_set(),
            "checkpoint_held": checkpoint_held.is_set(),
            "saves_started": sorted(set(started)),
            "hangs": hangs,
        }
        conn.send(("gated", {"runs": dict(sorted(runs.items())), "steps": dict(sorted(steps.items())), **report}))
        never.wait(120)


def restart(backend: str, target: str, thread: str, options: dict, conn: Any) -> None:
    """A new process on the same store: what the thread holds, then a resume (`invoke(None)`) and what ran."""
    from lg_persist import pending_of

    runs: dict[str, int] = {}
    steps: dict[str, int] = {}
    with saver(backend, target) as opened:
        graph = parallel_graph(runs, steps, lambda: None).compile(checkpointer=opened)
        config = {"configurable": {"thread_id": thread}}
        snapshot = graph.get_state(config)
        found = {
            "values": snapshot.values.get("items") if snapshot.values else None,
            "next": sorted(snapshot.next),
            "pending": pending_of(opened.get_tuple(config), snapshot),
            "checkpoints": len(list(graph.get_state_history(config))),
        }
        try:
            result = graph.invoke(None, config, **options)
            resumed: Any = "returned"
            returned = sorted(result.get("items") or []) if isinstance(result, dict) else None
        except Exception as exc:  # noqa: BLE001 - the framework's answer, reported to the parent
            resumed, returned = {"raises": type(exc).__name__}, None
        final = graph.get_state(config).values
        conn.send(
            (
                "restarted",
                {
                    "found": found,
                    "resume": resumed,
                    "runs_on_restart": dict(sorted(runs.items())),
                    "returned": returned,
                    "final": sorted(final.get("items") or []) if final else None,
                },
            )
        )


# --- two processes, one thread (langgraph/threads/two-processes-one-thread) ------------------------


def one_step_graph(name: str, before_work: Callable[[], None] | None = None) -> Any:
    """START -> work -> END; `work` appends `<name>:work` (the worker's own node write), after `before_work()`."""
    from langgraph.graph import START, StateGraph

    def work(state: State) -> dict:
        if before_work is not None:
            before_work()
        return {"items": [f"{name}:work"]}

    builder = StateGraph(State)
    builder.add_node("work", work)
    builder.add_edge(START, "work")
    return builder


def seed(backend: str, target: str, thread: str, conn: Any) -> None:
    """Give the thread its first checkpoint, the one both workers will continue."""
    with saver(backend, target) as opened:
        result = one_step_graph("seed").compile(checkpointer=opened).invoke({"items": ["seed"]}, {"configurable": {"thread_id": thread}})
        conn.send(("seeded", sorted(result["items"])))


def invoke_when_told(backend: str, target: str, thread: str, name: str, hold_work: bool, conn: Any) -> None:
    """Invoke the thread with this worker's input; after the run has read the thread's latest checkpoint (its
    first get_tuple), report ("read", what it read) and wait for "go" before anything is written. With
    `hold_work`, its node reports ("working", None) once the run's first checkpoints are saved and waits for
    "finish" before it writes (the run is half done: another run can start in the middle of it)."""
    read: list = []
    saved = threading.Event()  # a checkpoint of this run (its input, first) has been saved

    def before_work() -> None:
        if hold_work:
            if not saved.wait(60):
                raise RuntimeError("no checkpoint of the run was saved within 60 s")
            conn.send(("working", None))
            if conn.recv() != "finish":
                raise RuntimeError("the parent did not say finish")

    def on_read(found: Any) -> None:
        if read:
            return
        read.append(found)
        conn.send(("read", {"checkpoint": found.checkpoint["id"] if found else None}))
        if conn.recv() != "go":
            raise RuntimeError("the parent did not say go")

    def on_put(metadata: dict, done: bool) -> None:
        if done:
            saved.set()

    with saver(backend, target, on_get_tuple=on_read, on_put=on_put) as opened:
        graph = one_step_graph(name, before_work).compile(checkpointer=opened)
        try:
            result = graph.invoke({"items": [f"from-{name}"]}, {"configurable": {"thread_id": thread}})
            conn.send(("done", {"returned": sorted(result["items"])}))
        except Exception as exc:  # noqa: BLE001 - the framework's answer, reported to the parent
            conn.send(("done", {"raises": type(exc).__name__}))


def read_thread(backend: str, target: str, thread: str, conn: Any) -> None:
    """What the thread holds once both workers are done: the latest state, and which of its checkpoints the
    latest one's history (its chain of parents) still reaches."""
    with saver(backend, target) as opened:
        graph = one_step_graph("reader").compile(checkpointer=opened)
        config = {"configurable": {"thread_id": thread}}
        chain = []  # the latest checkpoint and its parents, followed link by link
        found = opened.get_tuple(config)
        while found is not None:
            chain.append(found.config["configurable"]["checkpoint_id"])
            found = opened.get_tuple(found.parent_config) if found.parent_config else None
        every = [t.config["configurable"]["checkpoint_id"] for t in opened.list(config)]
        latest = graph.get_state(config).values
        conn.send(
            (
                "state",
                {
                    "latest": sorted(latest.get("items") or []) if latest else None,
                    "checkpoints": len(every),
                    "unreachable_from_latest": len(set(every) - set(chain)),
                },
            )
        )


def durability_settings(obs: Any) -> tuple[str, dict[str, dict]]:
    """(the API, {setting name: stream/invoke keyword arguments}) the installed Pregel.stream offers."""
    parameters = inspect.signature(Pregel.stream).parameters
    if "durability" in parameters:
        return "durability", {mode: {"durability": mode} for mode in ("exit", "async", "sync")}
    if "checkpoint_during" in parameters:
        return "checkpoint_during (legacy: False ~ exit, True ~ async)", {
            f"checkpoint_during={flag}": {"checkpoint_during": flag} for flag in (False, True)
        }
    return "none (a checkpoint after every step)", {"default": {}}


def save_plan(name: str) -> dict[str, bool]:
    """Which saves a setting makes before the run exits, as the framework's loop does it (lg_procs waits
    for exactly these): exit and checkpoint_during=False checkpoint only when the run exits and save a
    task's writes only for Send; every other setting saves each checkpoint and each task's writes in the
    background; only `sync` waits for a step's checkpoint before it runs the next step."""
    return {"saves": name not in ("exit", "checkpoint_during=False"), "step_waits": name == "sync"}
