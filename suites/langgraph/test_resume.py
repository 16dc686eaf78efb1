"""Resuming after a failed parallel branch."""

import operator
import threading
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, probe


@probe(
    "langgraph/resume/parallel-branch-failure",
    title="With a checkpointer, one parallel branch fails, then the run is resumed: which nodes run again?",
    claim=Claim(
        "Writes of nodes that completed in a failed superstep are saved as pending writes; on resume only"
        " the failed node runs again, the successful sibling is not re-executed. Here the sibling's writes are"
        " saved before the other node raises (sync nodes, MemorySaver).",
        "https://docs.langchain.com/oss/python/langgraph/persistence#pending-writes",
        expect={"value.runs_after_resume.ok": 1, "value.runs_after_resume.flaky": 2},
    ),
)
def test_parallel_branch_failure(obs: Observer) -> None:
    MemorySaver: Any = obs.need("langgraph.checkpoint.memory", "MemorySaver")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    ok_saved = threading.Event()
    waited_in_vain: list[str] = []
    runs = {"ok": 0, "flaky": 0, "join": 0}

    class Saver(MemorySaver):
        def put_writes(self, *args: Any, **kwargs: Any) -> None:
            super().put_writes(*args, **kwargs)
            if ("items", ["ok"]) in [tuple(w) for w in args[1]]:
                ok_saved.set()

    def ok(state: State) -> dict:
        runs["ok"] += 1
        return {"items": ["ok"]}

    def flaky(state: State) -> dict:
        runs["flaky"] += 1
        if runs["flaky"] == 1:
            if not ok_saved.wait(10):
                waited_in_vain.append("the sibling's writes were never saved while the failing node waited")
            raise RuntimeError("transient failure")
        return {"items": ["flaky"]}

    def join(state: State) -> dict:
        runs["join"] += 1
        return {"items": ["join"]}

    builder = StateGraph(State)
    builder.add_node("ok", ok)
    builder.add_node("flaky", flaky)
    builder.add_node("join", join)
    builder.add_edge(START, "ok")
    builder.add_edge(START, "flaky")
    builder.add_edge(["ok", "flaky"], "join")
    graph = builder.compile(checkpointer=Saver())
    config = {"configurable": {"thread_id": "resume"}}

    first = obs.attempt(lambda: graph.invoke({"items": []}, config))
    if waited_in_vain:
        obs.vacuous(waited_in_vain[0])
    after_failure = dict(runs)
    with obs.framework(value=lambda: {"runs_after_failure": after_failure, "runs": runs}):
        final = graph.invoke(None, config)
    rerun = runs["ok"] > 1
    obs.record(
        {"first_run": first.get("raises", "returned"), "runs_after_failure": after_failure, "runs_after_resume": runs, "final": final},
        label="sibling re-executed on resume" if rerun else "only the failed branch reruns",
        detail=f"runs after the failure {after_failure}, after resume {runs}; final {final['items']}",
        hazard="silent" if rerun else "safe",
    )


@probe(
    "langgraph/resume/sibling-saved-after-failure",
    title="With a checkpointer, one parallel branch fails first; the successful sibling finishes after the failure"
    " and its write is saved second; then the run is resumed: does the sibling run again, is its write kept?",
    claim=Claim(
        "Writes of nodes that completed in a failed superstep are saved as pending writes; on resume only"
        " the failed node runs again, the successful sibling is not re-executed. Here the failing node's error"
        " is saved first and the sibling's write after it (sync nodes; memory, SQLite and PostgreSQL savers).",
        "https://docs.langchain.com/oss/python/langgraph/persistence#pending-writes",
        expect={"value.saves": ["flaky: __error__", "ok: items"], "value.runs_after_resume.ok": 1},
    ),
    backends=("memory", "sqlite", "postgres"),
)
def test_sibling_saved_after_failure(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    ok_running = threading.Event()  # flaky raises only once ok is in flight
    error_saved = threading.Event()  # the saver holds flaky's error: ok may finish
    ok_saved = threading.Event()  # the saver holds ok's write
    saves: list[str] = []  # what reached the saver, in order (node: channel)
    stuck: list[str] = []
    runs = {"ok": 0, "flaky": 0, "join": 0}

    def ok(state: State) -> dict:
        runs["ok"] += 1
        if runs["ok"] == 1:
            ok_running.set()
            if not error_saved.wait(10):
                stuck.append("flaky's error never reached the saver while ok waited")
        return {"items": ["ok"]}

    def flaky(state: State) -> dict:
        runs["flaky"] += 1
        if runs["flaky"] == 1:
            if not ok_running.wait(10):
                stuck.append("ok was never in flight while flaky waited")
            raise RuntimeError("transient failure")
        return {"items": ["flaky"]}

    def join(state: State) -> dict:
        runs["join"] += 1
        return {"items": ["join"]}

    builder = StateGraph(State)
    builder.add_node("ok", ok)
    builder.add_node("flaky", flaky)
    builder.add_node("join", join)
    builder.add_edge(START, "ok")
    builder.add_edge(START, "flaky")
    builder.add_edge(["ok", "flaky"], "join")
    config = {"configurable": {"thread_id": "saved-after-failure"}}

    with lg_persist.checkpointer(obs) as saver:
        put_writes = saver.put_writes

        def watched(config: Any, writes: Any, task_id: str, *args: Any, **kwargs: Any) -> Any:
            """The real put_writes, then the gate: flaky's error releases ok, and this save (which the run's
            executor waits for before it shuts down) ends only once ok's write is saved too, so ok's save is
            never refused by a pool already shut down (the race langgraph/errors/sync-sibling-pending-writes
            observes); a save of anything else passes straight through."""
            saved = put_writes(config, writes, task_id, *args, **kwargs)
            channels = [channel for channel, _ in writes]
            if "__error__" in channels:
                saves.append("flaky: __error__")
                error_saved.set()
                if not ok_saved.wait(10):
                    stuck.append("ok's write never reached the saver after flaky's error")
            elif ("items", ["ok"]) in [tuple(write) for write in writes]:
                saves.append("ok: items")
                ok_saved.set()
            return saved

        saver.put_writes = watched
        graph = builder.compile(checkpointer=saver)
        first = obs.attempt(lambda: graph.invoke({"items": []}, config))
        if stuck:
            obs.vacuous(stuck[0])
        saved_at_failure = list(saves)
        snapshot = graph.get_state(config)
        pending = lg_persist.pending_of(graph.checkpointer.get_tuple(config), snapshot)
        after_failure = dict(runs)
        with obs.framework(value=lambda: {"saves": saved_at_failure, "runs_after_failure": after_failure, "runs": runs}):
            final = graph.invoke(None, config)["items"]
    rerun = runs["ok"] > 1
    lost = final.count("ok") != 1
    if rerun:
        label = "sibling re-executed on resume"
    elif lost:
        label = f"sibling's write kept {final.count('ok')} times, not re-run"
    else:
        label = "only the failed branch reruns"
    obs.record(
        {
            "saves": saved_at_failure,
            "first_run": first.get("raises", "returned"),
            "pending_at_failure": pending,
            "runs_after_failure": after_failure,
            "runs_after_resume": runs,
            "final": final,
        },
        label=label,
        detail=f"saved in the order {saved_at_failure}; pending at the failure {pending}; runs after the failure {after_failure},"
        f" after resume {runs}; final {final}",
        hazard="silent" if rerun or lost else "safe",
    )
