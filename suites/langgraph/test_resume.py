"""Resuming after a failed parallel branch."""

import operator
import threading
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

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
