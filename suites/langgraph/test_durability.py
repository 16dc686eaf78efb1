"""Failed parallel branches and durable checkpointers: what is kept, what runs again, what a later run sees."""

import inspect
import operator
from collections.abc import Callable
from typing import Annotated, Any, Optional, TypedDict

from langgraph.graph import START, StateGraph
from langgraph.pregel import Pregel

import lg_persist
from fanin.probe import Claim, Observer, probe

DURABILITY_DOC = "https://docs.langchain.com/oss/python/langgraph/durable-execution#durability-modes"


class _DurabilityState(TypedDict):
    items: Annotated[list, operator.add]


def _durability_graph(runs: dict[str, int], turns: Any) -> StateGraph:
    """test_durability_modes's graph: prep, then ok and flaky in parallel (flaky fails once), then join."""
    def prep(state: _DurabilityState) -> dict:
        runs["prep"] += 1
        return {"items": ["prep"]}

    def ok(state: _DurabilityState) -> dict:
        runs["ok"] += 1
        if runs["ok"] == 1:
            turns.arrive("ok")
        return {"items": ["ok"]}

    def flaky(state: _DurabilityState) -> dict:
        runs["flaky"] += 1
        if runs["flaky"] == 1:
            turns.arrive("flaky")
            raise RuntimeError("transient failure")
        return {"items": ["flaky"]}

    def join(state: _DurabilityState) -> dict:
        runs["join"] += 1
        return {"items": ["join"]}

    builder = StateGraph(_DurabilityState)
    for name, node in (("prep", prep), ("ok", ok), ("flaky", flaky), ("join", join)):
        builder.add_node(name, node)
    builder.add_edge(START, "prep")
    builder.add_edge("prep", "ok")
    builder.add_edge("prep", "flaky")
    builder.add_edge(["ok", "flaky"], "join")
    return builder


@probe(
    "langgraph/resume/durability-modes",
    title="prep, then `ok` and `flaky` in parallel, then join; flaky fails once after ok's update, and the run"
    " is resumed: under each durability mode (legacy checkpoint_during where that is the API)",
    claim=Claim(
        "Durability only changes when checkpoints are written (`exit`: when the run exits, `async`: while"
        " the next step runs, `sync`: before it): in every mode the completed sibling's write is kept as a"
        " pending write and only the failed node runs again on resume.",
        DURABILITY_DOC,
        expect={
            "value.settings.exit.runs_after_resume": {"flaky": 2, "join": 1, "ok": 1, "prep": 1},
            "value.settings.async.runs_after_resume": {"flaky": 2, "join": 1, "ok": 1, "prep": 1},
            "value.settings.sync.runs_after_resume": {"flaky": 2, "join": 1, "ok": 1, "prep": 1},
        },
    ),
    sources=["https://github.com/langchain-ai/langgraph/issues/8039"],
    backends=("memory", "sqlite", "postgres"),
    modes=("sync", "async"),
)
def test_durability_modes(obs: Observer) -> None:
    from gates import ThreadTurns

    def scenario(run_of: Callable[[StateGraph], lg_persist.driven], thread: str, options: dict) -> dict:
        runs = {"prep": 0, "ok": 0, "flaky": 0, "join": 0}
        turns = ThreadTurns(["ok", "flaky"])
        run = run_of(_durability_graph(runs, turns))
        config = {"configurable": {"thread_id": thread}}

        def on_chunk(chunk: tuple) -> None:
            mode, update = chunk
            if mode == "updates":
                for name in update:
                    turns.done(name)

        # "custom" beside "updates" makes the loop wait on its output queue too, so ok's update reaches
        # on_chunk (which releases flaky) even while the loop waits for flaky.
        failed = obs.attempt(
            lambda: run.stream({"items": []}, config, on_chunk, stream_mode=["updates", "custom"], **options)
        )
        obs.require_in_flight(turns)
        snapshot = run.get_state(config)
        kept = {
            "runs_after_failure": dict(runs),
            "values_at_failure": snapshot.values.get("items"),
            "next_at_failure": sorted(snapshot.next),
            "pending_at_failure": lg_persist.pending_of(run.saved(config), snapshot),
            "checkpoints_at_failure": len(run.history(config)),
        }
        resumed = obs.attempt(lambda: run.stream(None, config, stream_mode="updates", **options))
        return {
            "first_run": failed.get("raises", "returned"),
            **kept,
            "resume": resumed if "raises" in resumed else "returned",
            "runs_after_resume": runs,
            "final": run.get_state(config).values.get("items"),
        }

    with lg_persist.checkpointer(obs) as saver:

        def run_of(builder: StateGraph) -> lg_persist.driven:
            return lg_persist.driven(obs, builder.compile(checkpointer=saver))

        parameters = inspect.signature(Pregel.stream).parameters
        if "durability" in parameters:
            api = "durability"
            settings: dict[str, dict[str, Any]] = {mode: {"durability": mode} for mode in ("exit", "async", "sync")}
        elif "checkpoint_during" in parameters:
            api = "checkpoint_during (legacy: False ~ exit, True ~ async)"
            settings = {f"checkpoint_during={flag}": {"checkpoint_during": flag} for flag in (False, True)}
        else:
            obs.not_applicable("Pregel.stream has neither 'durability' nor the older 'checkpoint_during' parameter")
        observed: dict[str, dict] = {}
        with obs.framework(value=lambda: {"api": api, "settings": observed}):
            for name, options in settings.items():
                observed[name] = scenario(run_of, f"durability-{name}", options)

    reran = sorted(name for name, seen in observed.items() if seen["runs_after_resume"]["ok"] > 1)
    doubled = sorted(name for name, seen in observed.items() if (seen["final"] or []).count("ok") != 1)
    failed = sorted(name for name, seen in observed.items() if seen["resume"] != "returned")
    if failed:
        label = f"resume raises under {', '.join(failed)}"
    elif reran or doubled:
        label = f"ok re-runs under {', '.join(sorted(set(reran + doubled)))}"
    else:
        label = f"only flaky re-runs ({len(observed)} settings)"
    obs.record(
        {"api": api, "settings": observed},
        label=label,
        detail="; ".join(
            f"{name}: pending {seen['pending_at_failure']}, {seen['checkpoints_at_failure']} checkpoints at the"
            f" failure, runs after resume {seen['runs_after_resume']}, final {seen['final']}"
            for name, seen in observed.items()
        ),
        hazard="loud" if failed else "silent" if reran or doubled else "safe",
    )


@probe(
    "langgraph/resume/retry-policy",
    title="`ok` and `flaky` in parallel, flaky has a RetryPolicy and fails its first attempt after ok's"
    " update: is ok's write applied once?",
    claim=Claim(
        "A RetryPolicy retries only the failing node, inside the same superstep: the sibling is not re-run"
        " and its write reaches the join exactly once.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#add-retry-policies",
        expect={"value.runs": {"flaky": 2, "join": 1, "ok": 1}, "value.final": ["flaky", "join", "ok"]},
    ),
    sources=[
        "https://github.com/langchain-ai/langgraph/issues/2336",
        "https://github.com/langchain-ai/langgraph/blob/main/libs/langgraph/tests/test_retry.py",
    ],
    modes=("sync", "async"),
)
def test_retry_policy(obs: Observer) -> None:
    RetryPolicy = obs.need("langgraph.types", "RetryPolicy")
    from gates import ThreadTurns

    class State(TypedDict):
        items: Annotated[list, operator.add]

    class Transient(Exception):
        pass

    turns = ThreadTurns(["ok", "flaky"])
    runs = {"ok": 0, "flaky": 0, "join": 0}
    join_saw: list = []

    def ok(state: State) -> dict:
        runs["ok"] += 1
        if runs["ok"] == 1:
            turns.arrive("ok")
        return {"items": ["ok"]}

    def flaky(state: State) -> dict:
        runs["flaky"] += 1
        if runs["flaky"] == 1:
            turns.arrive("flaky")
            raise Transient("first attempt fails")
        return {"items": ["flaky"]}

    def join(state: State) -> dict:
        runs["join"] += 1
        join_saw.append(sorted(state["items"]))
        return {"items": ["join"]}

    builder = StateGraph(State)
    policy = RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False, retry_on=Transient)
    keyword = "retry_policy" if "retry_policy" in inspect.signature(builder.add_node).parameters else "retry"
    builder.add_node("ok", ok)
    builder.add_node("flaky", flaky, **{keyword: policy})
    builder.add_node("join", join)
    builder.add_edge(START, "ok")
    builder.add_edge(START, "flaky")
    builder.add_edge(["ok", "flaky"], "join")
    run = lg_persist.driven(obs, builder.compile())

    def on_chunk(chunk: tuple) -> None:
        mode, update = chunk
        if mode == "updates":
            for name in update:
                turns.done(name)

    with obs.framework(value=lambda: {"runs": runs, "join_saw": join_saw}):
        # "custom" beside "updates": the loop also wakes on its output queue, so ok's update reaches on_chunk
        # (which releases flaky) while the loop waits for flaky.
        chunks = run.stream({"items": []}, {}, on_chunk, stream_mode=["updates", "custom"])
    obs.require_in_flight(turns)
    final = sorted(
        item
        for mode, chunk in chunks
        if mode == "updates"
        for update in chunk.values()
        for item in (update or {}).get("items", [])
    )
    once = runs["ok"] == 1 and final.count("ok") == 1 and all(saw.count("ok") == 1 for saw in join_saw)
    obs.record(
        {"add_node_keyword": keyword, "runs": runs, "join_saw": join_saw, "final": final},
        label="sibling applied once" if once else f"sibling ran ×{runs['ok']}, written ×{final.count('ok')}",
        detail=f"runs {runs}; join saw {join_saw}; writes streamed {final}",
        hazard="safe" if once else "silent",
    )


@probe(
    "langgraph/resume/stale-from-previous-run",
    title="A second run on the same thread where branch b writes nothing: what does the join see of b's key?",
    claim=Claim(
        "State persists across runs of a thread: a key a branch does not write in this run keeps the value of"
        " the previous run, so the join cannot tell it from a fresh write.",
        "https://docs.langchain.com/oss/python/langgraph/persistence#threads",
        expect={"value.join_saw.run2.b_out": "b@1"},
    ),
    backends=("memory", "sqlite", "postgres"),
    modes=("sync", "async"),
)
def test_stale_from_previous_run(obs: Observer) -> None:
    class State(TypedDict):
        run: int
        a_out: Optional[str]
        b_out: Optional[str]

    join_saw: dict = {}

    def a(state: State) -> dict:
        return {"a_out": f"a@{state['run']}"}

    def b(state: State) -> dict:
        if state["run"] == 1:
            return {"b_out": "b@1"}
        return {}

    def join(state: State) -> dict:
        join_saw[f"run{state['run']}"] = {"a_out": state.get("a_out"), "b_out": state.get("b_out")}
        return {}

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_node("join", join)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge(["a", "b"], "join")
    config = {"configurable": {"thread_id": "stale"}}

    with lg_persist.checkpointer(obs) as saver:
        run = lg_persist.driven(obs, builder.compile(checkpointer=saver))
        with obs.framework(value=lambda: {"join_saw": join_saw}):
            run.invoke({"run": 1}, config)
            final = run.invoke({"run": 2}, config)
    stale = join_saw.get("run2", {}).get("b_out")
    obs.record(
        {"join_saw": join_saw, "final": final},
        label=f"run 2 join sees b_out={stale!r}",
        detail=f"join saw {join_saw}; b wrote nothing in run 2",
        hazard="silent" if stale == "b@1" else "safe",
    )
