"""DeltaChannel at fan-in as users report it upstream: parallel writes replayed from a checkpointer, and an
Overwrite beside other writes in the same superstep."""

from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, probe

REPLAY_ISSUE = "https://github.com/langchain-ai/langgraph/issues/8382"
WRITERS = ["w1", "w2", "w3", "w4", "w5"]
MAX_THREADS = 20


def _extend(state: list, writes: list) -> list:
    """Batching-invariant (as DeltaChannel requires) but order-sensitive: a list keeps the order it got."""
    out = list(state)
    for write in writes:
        out.extend(write)
    return out


def _delta_writers(State: Any, Overwrite: Any, steps: dict[str, int], overwrite: bool) -> StateGraph:
    """test_delta_channel_parallel's graph: prep, the writers in one superstep (w3 an Overwrite when asked), join."""

    def writer(name: str, value: object) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"items": value}

        return node

    builder = StateGraph(State)
    builder.add_node("prep", lambda state: {"items": ["prep"]})
    for name in WRITERS:
        builder.add_node(name, writer(name, Overwrite(["over"]) if overwrite and name == "w3" else [name]))
        builder.add_edge("prep", name)
    builder.add_node("join", lambda state: {"items": ["join"]})
    builder.add_edge(START, "prep")
    builder.add_edge(WRITERS, "join")
    return builder


@probe(
    "langgraph/reducers/delta-channel-parallel",
    title="prep, then five parallel writers append to a DeltaChannel list (then the same with w3 returning"
    " Overwrite), then a join: the value invoke returned, the value get_state rebuilds from the saver, and the"
    " thread continued",
    claim=Claim(
        "A DeltaChannel stores no value at ordinary checkpoints and rebuilds it by replaying the saved writes"
        " through its reducer; the rebuilt value equals the live one (LangGraph's stated invariant), so a"
        " parallel superstep reads back, and continues, in the order invoke returned it.",
        "https://github.com/langchain-ai/langgraph/pull/7586",
        expect={
            "value.appends.rebuilt_differs_seen": False,
            "value.appends.continued_keeps_live": True,
            "value.overwrite.rebuilt_differs_seen": False,
        },
    ),
    sources=[
        REPLAY_ISSUE,
        "https://github.com/langchain-ai/langgraph/pull/8544",
        "https://github.com/langchain-ai/langgraph/pull/8124",
        "https://github.com/langchain-ai/langgraph/pull/8125",
        "https://github.com/langchain-ai/langgraph/pull/8526",
    ],
    backends=("memory", "sqlite", "postgres"),
    repetition=True,
)
def test_delta_channel_parallel(obs: Observer) -> None:
    DeltaChannel = obs.need("langgraph.channels", "DeltaChannel")
    Overwrite = obs.need("langgraph.types", "Overwrite")

    class State(TypedDict):
        items: Annotated[list, DeltaChannel(_extend)]

    steps: dict[str, int] = {}

    def scenario(run: lg_persist.driven, case: str) -> dict:
        """Each thread pauses before the join: invoke's return is the live value, get_state's the rebuilt one."""
        # The replay order follows the saved task ids (hashes of a time-based checkpoint id), so whether it
        # matches the live order is a fresh draw for every thread. Stopping rule: until one thread's rebuilt
        # value differs from its live one, else MAX_THREADS threads. With five writers, a replay in an order
        # unrelated to the live one matches it by luck with probability 1/120 per thread (1/6 for where the
        # Overwrite lands), so twenty threads without a difference leave a chance below 3e-16 of missing one.
        live_values, threads, differs, content_kept, continued_keeps_live = [], 0, False, True, True
        while threads < MAX_THREADS and not differs:
            config = {"configurable": {"thread_id": f"{case}-{threads}"}}
            threads += 1
            steps.clear()
            with obs.framework():
                live = run.invoke({"items": []}, config)["items"]
            obs.require_same_step(steps, expected=len(WRITERS))
            rebuilt = run.get_state(config).values.get("items") or []
            continued = run.invoke(None, config)["items"]
            live_values.append(live)
            if rebuilt != live:
                differs = True
            content_kept = content_kept and sorted(rebuilt) == sorted(live)
            continued_keeps_live = continued_keeps_live and continued == live + ["join"]
        same_live = all(value == live_values[0] for value in live_values)
        return {
            "live": live_values[0] if same_live else sorted(map(str, live_values)),
            "rebuilt_differs_seen": differs,
            "rebuilt_content_kept": content_kept,
            "continued_keeps_live": continued_keeps_live,
            "max_threads": MAX_THREADS,
            "stopping_rule": "until a rebuilt value differs from its live one, else 20 threads",
        }

    with lg_persist.checkpointer(obs) as saver:
        seen = {}
        for case, overwrite in (("appends", False), ("overwrite", True)):
            graph = _delta_writers(State, Overwrite, steps, overwrite).compile(checkpointer=saver, interrupt_before=["join"])
            seen[case] = scenario(lg_persist.driven(obs, graph), case)
    appends, over = seen["appends"], seen["overwrite"]
    dropped = sorted(name for name in WRITERS if name != "w3" and name not in map(str, over["live"]))
    over["appends_dropped"] = dropped
    lost = not appends["rebuilt_content_kept"] or not over["rebuilt_content_kept"]
    varies = appends["rebuilt_differs_seen"] or over["rebuilt_differs_seen"]
    if lost:
        label = "replay loses writes"
    elif varies:
        label = "replay reorders"
    else:
        label = "replay = live"
    if dropped:
        label += "; Overwrite drops appends"
    obs.record(
        seen,
        label=label,
        # The detail names no example of a reordering: which order a replay takes is a fresh draw per thread, and a
        # quoted draw would move the detail on every run.
        detail=f"appends: live {appends['live']}, rebuilt differs {appends['rebuilt_differs_seen']},"
        f" continued keeps live {appends['continued_keeps_live']};"
        f" Overwrite by w3: live {over['live']}, appends dropped {dropped}, rebuilt differs"
        f" {over['rebuilt_differs_seen']}",
        # lost or dropped writes without an error: silent; the same writes read back in an order that changes
        # with the run's task ids: nondeterministic
        hazard="silent" if lost or dropped else "nondeterministic" if varies else "safe",
    )
