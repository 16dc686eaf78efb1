"""A process killed before its run's first durable checkpoint (langgraph #8764): what the thread holds after
the crash, per durability mode, and what a new process's resume makes of it.

Two workers forked as in test_upstream_durability (lg_procs): the first starts a run whose first step is `a`
and `b` in parallel, both held in flight, and is killed (SIGKILL) at a point the saves themselves define;
the second opens the same store, reads the thread and resumes it with `invoke(None)`.
"""

import os
import signal
import threading
from collections.abc import Callable
from typing import Any

import lg_procs

from fanin.probe import Claim, Observer, harm, probe

ISSUE = "https://github.com/langchain-ai/langgraph/issues/8764"
DOCS_PR = "https://github.com/langchain-ai/docs/pull/5899"
FIRST_STEP = -1  # the input checkpoint: the run's first save


def first_step_graph(runs: dict[str, int], hold: Callable[[], None]) -> Any:
    """START -> `a` and `b` in parallel -> `join` (a list edge); each node counts its runs in this process,
    and `a` and `b` call `hold()` before they return."""
    from langgraph.graph import START, StateGraph

    def node(name: str) -> Callable[..., dict]:
        def run(state: lg_procs.State) -> dict:
            runs[name] = runs.get(name, 0) + 1
            if name != "join":
                hold()
            return {"items": [name]}

        return run

    builder = StateGraph(lg_procs.State)
    for name in ("a", "b", "join"):
        builder.add_node(name, node(name))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge(["a", "b"], "join")
    return builder


def run_until_killed(target: str, thread: str, options: dict, plan: dict, hold_first: bool, conn: Any) -> None:
    """Start the run and report ("gated", ...) once the kill point is reached, then wait to be killed.

    The kill point: `a` and `b` both in flight and every checkpoint the mode saves before its first step
    (the input checkpoint and step 0's, under `plan["saves"]`) returned. With `hold_first` the input
    checkpoint is held at the start of its `put` instead (it never returns: the crash comes first), and a
    mode that waits for its checkpoints (`plan["step_waits"]`: sync) then never starts `a` and `b`."""
    runs: dict[str, int] = {}
    in_flight: list[str] = []
    both = threading.Event()
    held = threading.Event()
    saved = {FIRST_STEP: threading.Event(), 0: threading.Event()}
    never = threading.Event()
    started: list[Any] = []

    def hold() -> None:
        in_flight.append("x")
        if len(in_flight) == 2:
            both.set()
        never.wait(120)  # the parent kills this process long before; the bound only ends an orphan

    def on_put(metadata: dict, done: bool) -> None:
        step = metadata.get("step")
        if not done:
            started.append(step)
            if hold_first and step == FIRST_STEP:
                held.set()
                never.wait(120)
        elif step in saved:
            saved[step].set()

    hangs: list[str] = []

    def wait(event: threading.Event, what: str) -> None:
        if not event.wait(lg_procs.SAVE_GUARD):
            hangs.append(f"{what} did not come within {lg_procs.SAVE_GUARD:.0f} s")

    with lg_procs.saver("sqlite", target, on_put=on_put) as opened:
        graph = first_step_graph(runs, hold).compile(checkpointer=opened)
        config = {"configurable": {"thread_id": thread}}
        threading.Thread(target=lambda: graph.invoke({"items": []}, config, **options), daemon=True).start()
        if hold_first:
            wait(held, "the input checkpoint's save")
        elif plan["saves"]:
            wait(saved[FIRST_STEP], "the input checkpoint")
            wait(saved[0], "step 0's checkpoint")
        if not (hold_first and plan["step_waits"]):  # else a and b wait for the held save
            wait(both, "a and b in flight")
        conn.send(("gated", {"in_flight": len(in_flight), "saves_started": sorted(set(started)), "hangs": hangs}))
        never.wait(120)


def restart(target: str, thread: str, options: dict, conn: Any) -> None:
    """A new process on the same store: what the thread holds, then `invoke(None)` and what it ran."""
    runs: dict[str, int] = {}
    with lg_procs.saver("sqlite", target) as opened:
        graph = first_step_graph(runs, lambda: None).compile(checkpointer=opened)
        config = {"configurable": {"thread_id": thread}}
        snapshot = graph.get_state(config)
        found = {
            "checkpoints": len(list(graph.get_state_history(config))),
            "next": sorted(snapshot.next),
        }
        try:
            result = graph.invoke(None, config, **options)
            resumed: Any = "returned" if result else f"returned {result!r}"
        except Exception as exc:  # noqa: BLE001 - the framework's answer, reported to the parent
            resumed = {"raises": type(exc).__name__}
        final = graph.get_state(config).values
        conn.send(
            (
                "restarted",
                {
                    "found": found,
                    "resume": resumed,
                    "runs_on_restart": dict(sorted(runs.items())),
                    "final": sorted(final.get("items") or []) if final else None,
                },
            )
        )


def reading(seen: dict) -> tuple[str, str]:
    """What the restart shows: the run lost without a trace (silent: the thread reads as never invoked, and a
    resume's error, EmptyInputError, says only that), refused (loud), or finished."""
    if not seen["found"]["checkpoints"]:
        return "no trace of the run", "silent"
    if isinstance(seen["resume"], dict):
        return f"resume raises {seen['resume']['raises']}", "loud"
    if seen["final"] != ["a", "b", "join"]:
        return f"final {seen['final']}", "silent"
    return "resumed: a, b, join run", "safe"


@probe(
    "langgraph/durability/crash-before-first-checkpoint",
    title="START -> a and b in parallel -> join; the process is killed (SIGKILL) while a and b are in flight, once"
    " every checkpoint its mode saves before the first step has returned (and with the input checkpoint held in"
    " its save), under each durability mode; a new process reads the thread and resumes it",
    claim=Claim(
        "A crash before the first durable checkpoint leaves the thread exactly as if the run was never accepted:"
        " no checkpoint and no failure record (#8764). Durability `sync` commits the input and step-0"
        " checkpoints before the first node runs; `async` submits them but does not wait; `exit` saves nothing"
        " before the run exits (docs PR #5899).",
        ISSUE,
        expect={
            "value.settings.sync.saves-returned.found.checkpoints": 2,
            "value.settings.exit.saves-returned.found.checkpoints": 0,
            "value.settings.async.input-held.found.checkpoints": 0,
        },
    ),
    sources=[DOCS_PR],
    backends=("sqlite",),
)
def test_crash_before_first_checkpoint(obs: Observer) -> None:
    obs.need("langgraph.checkpoint.sqlite", "SqliteSaver")
    api, settings = lg_procs.durability_settings(obs)

    def crash_and_restart(name: str, options: dict, hold_first: bool) -> dict:
        target = str(obs.scratch / f"{name}-{'held' if hold_first else 'saved'}.sqlite")
        thread = "first-checkpoint"
        worker, pipe = lg_procs.fork(run_until_killed, target, thread, options, lg_procs.save_plan(name), hold_first)
        try:
            seen = lg_procs.ask(pipe, "gated", "the worker")
            if seen["hangs"]:
                obs.vacuous(f"{name}: {seen['hangs'][0]}")
        finally:
            os.kill(worker.pid, signal.SIGKILL)
            lg_procs.finish(worker, pipe)
        again, pipe = lg_procs.fork(restart, target, thread, options)
        try:
            after = lg_procs.ask(pipe, "restarted", "the restarted worker")
        finally:
            lg_procs.finish(again, pipe)
        return {"in_flight_at_kill": seen["in_flight"], "saves_started_before_kill": seen["saves_started"], **after}

    observed: dict[str, dict] = {}
    for name, options in settings.items():
        variants = {"saves-returned": False}
        if lg_procs.save_plan(name)["saves"]:  # a mode that saves nothing before exit has no save to hold
            variants["input-held"] = True
        observed[name] = {variant: crash_and_restart(name, options, hold) for variant, hold in variants.items()}
    readings = {(name, variant): reading(seen) for name, by in observed.items() for variant, seen in by.items()}
    for (name, variant), (text, _) in readings.items():
        observed[name][variant]["reading"] = text
    lost = [key for key, (text, _) in readings.items() if text == "no trace of the run"]
    obs.record(
        {"api": api, "settings": observed},
        label=f"{len(lost)} of {len(readings)} crashes leave no trace" if lost else "every crash leaves a trace",
        detail="; ".join(
            f"{name}/{variant}: {readings[(name, variant)][0]} ({seen['found']['checkpoints']} checkpoints,"
            f" restart ran {seen['runs_on_restart']})"
            for name, by in observed.items()
            for variant, seen in by.items()
        ),
        hazard=max((hazard for _, hazard in readings.values()), key=harm),
    )
