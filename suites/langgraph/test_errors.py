"""A failing parallel branch: what happens to its siblings' writes."""

import operator
import threading
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

from fanin.probe import Claim, Observer, probe


@probe(
    "langgraph/errors/sibling-writes-on-failure",
    title="One of two parallel nodes raises after its sibling finished: are the sibling's writes applied?",
    claim=Claim(
        "Supersteps are transactional: if any node of a step raises, none of that step's updates are"
        " applied to the state; with a checkpointer the successful nodes' writes are kept as pending writes."
        " Here the sibling has returned before the other node raises (a sibling still running then is"
        " langgraph/errors/async-sibling-cancelled's case).",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#graphs",
        expect={"value.checkpoint_items": ["input"], "value.pending_items_writes": [["items", ["sibling"]]]},
    ),
    sources=["https://docs.langchain.com/oss/python/langgraph/persistence#pending-writes"],
)
def test_sibling_writes_on_failure(obs: Observer) -> None:
    MemorySaver: Any = obs.need("langgraph.checkpoint.memory", "MemorySaver")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    sibling_saved = threading.Event()
    waited_in_vain: list[str] = []

    class Saver(MemorySaver):
        def put_writes(self, *args: Any, **kwargs: Any) -> None:
            super().put_writes(*args, **kwargs)
            if ("items", ["sibling"]) in [tuple(w) for w in args[1]]:
                sibling_saved.set()

    def sibling(state: State) -> dict:
        return {"items": ["sibling"]}

    def failing(state: State) -> dict:
        if not sibling_saved.wait(10):
            waited_in_vain.append("the sibling's writes were never saved while the failing node waited")
        raise RuntimeError("branch failed")

    builder = StateGraph(State)
    builder.add_node("sibling", sibling)
    builder.add_node("failing", failing)
    builder.add_edge(START, "sibling")
    builder.add_edge(START, "failing")
    saver = Saver()
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "sibling-writes"}}

    outcome = obs.attempt(lambda: graph.invoke({"items": ["input"]}, config))
    if waited_in_vain:
        obs.vacuous(waited_in_vain[0])
    with obs.framework():
        saved = saver.get_tuple(config)
        snapshot = graph.get_state(config)
    committed = saved.checkpoint["channel_values"].get("items")
    pending = sorted([channel, value] for _, channel, value in saved.pending_writes if channel == "items")
    in_checkpoint = "sibling" in (committed or [])
    in_view = "sibling" in snapshot.values.get("items", [])
    if in_checkpoint:
        label = "sibling write committed"
    elif pending:
        label = "kept pending; get_state shows it" if in_view else "kept pending, not applied"
    else:
        label = "sibling write dropped"
    obs.record(
        {
            "run": outcome.get("raises", "returned"),
            "checkpoint_items": committed,
            "pending_items_writes": pending,
            "get_state_values": snapshot.values,
            "next": sorted(snapshot.next),
        },
        label=label,
        detail=f"run {outcome.get('raises', 'returned')}; checkpoint holds {committed}, pending {pending};"
        f" get_state().values shows {snapshot.values}, next {sorted(snapshot.next)}",
        hazard="silent" if in_checkpoint or not pending else "safe",
    )
