"""add_messages as the reducer of parallel writes."""

from collections.abc import Callable
from typing import Annotated, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

import lg_modes
from fanin.probe import Claim, Observer, probe


@probe(
    "langgraph/messages/id-collision",
    title="Two parallel nodes emit a message with the same id via add_messages; then one node is renamed",
    claim=Claim(
        "add_messages merges by id: a message whose id is already present replaces it. Two parallel"
        " messages with one id leave one survivor, chosen by the fold order.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#messagesstate",
        expect={"value.alpha + beta[1]": "(absent)"},
    ),
)
def test_id_collision(obs: Observer) -> None:
    add_messages = obs.need("langgraph.graph.message", "add_messages")
    from langchain_core.messages import AIMessage

    from lg_kit import message_view

    class State(TypedDict):
        messages: Annotated[list, add_messages]

    steps: dict[str, int] = {}

    def speaker(name: str) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"messages": [AIMessage(content=f"from {name}", id="answer-1")]}

        return node

    def run(first: str, second: str) -> list:
        builder = StateGraph(State)
        builder.add_node(first, speaker(first))
        builder.add_node(second, speaker(second))
        builder.add_edge(START, first)
        builder.add_edge(START, second)
        steps.clear()
        messages = builder.compile().invoke({"messages": []})["messages"]
        obs.require_same_step(steps, expected=2, what="speakers")
        return [message_view(m) for m in messages]

    with obs.framework():
        runs = {"alpha + beta": run("alpha", "beta"), "zeta + beta (alpha renamed)": run("zeta", "beta")}
    survivors = [[m["content"] for m in messages] for messages in runs.values()]
    lost = any(len(s) < 2 for s in survivors)
    flipped = survivors[0] != survivors[1]
    obs.record(
        runs,
        label=f"{survivors[0][0]} wins; renamed: {survivors[1][0]}" if lost else "both kept",
        detail=f"one message survives per run: {survivors}; the rename {'flips' if flipped else 'keeps'} the survivor"
        if lost
        else f"both messages kept: {survivors}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "langgraph/messages/remove-in-parallel",
    title="RemoveMessage from one branch while a sibling appends (add_messages), in one superstep: a present id,"
    " an absent id, and the id the sibling is adding (remover folded first, then last)",
    claim=Claim(
        "add_messages deletes the message whose id a RemoveMessage names and raises ValueError for an id that"
        " is not in the list; parallel writes are folded one after another, so removing a message a sibling"
        " adds in the same superstep depends on which write is folded first.",
        "https://langchain-ai.github.io/langgraph/how-tos/memory/delete-messages/",
        expect={
            "value.remove m2, sibling appends m3.returned": ["m1", "m3"],
            "value.remove an absent id, sibling appends m3.raises": "ValueError",
        },
    ),
    sources=["https://docs.langchain.com/oss/python/langgraph/graph-api#messagesstate"],
    modes=("sync", "async"),
)
def test_remove_in_parallel(obs: Observer) -> None:
    add_messages = obs.need("langgraph.graph.message", "add_messages")
    RemoveMessage = obs.need("langchain_core.messages", "RemoveMessage")
    from langchain_core.messages import AIMessage, HumanMessage

    class State(TypedDict):
        messages: Annotated[list, add_messages]

    def run(remover: str, remove_id: str) -> dict:
        steps: dict[str, int] = {}

        def node(name: str, update: list) -> Callable[..., dict]:
            def act(state: State, config: RunnableConfig) -> dict:
                steps[name] = config["metadata"]["langgraph_step"]
                return {"messages": update}

            return act

        builder = StateGraph(State)
        builder.add_node(remover, lg_modes.node(obs, node(remover, [RemoveMessage(id=remove_id)])))
        builder.add_node("m_append", lg_modes.node(obs, node("m_append", [AIMessage(content="new", id="m3")])))
        builder.add_edge(START, remover)
        builder.add_edge(START, "m_append")
        seed = [HumanMessage(content="question", id="m1"), AIMessage(content="draft", id="m2")]
        outcome = obs.attempt(
            lambda: [m.id for m in lg_modes.invoke(obs, builder.compile(), {"messages": seed})["messages"]]
        )
        obs.require_same_step(steps, expected=2, what="remover and the appender")
        return outcome

    with obs.framework():
        cases = {
            "remove m2, sibling appends m3": run("a_remove", "m2"),
            "remove an absent id, sibling appends m3": run("a_remove", "absent"),
            "remove m3 as the sibling adds it, remover folded first": run("a_remove", "m3"),
            "remove m3 as the sibling adds it, remover folded last": run("z_remove", "m3"),
        }

    def shown(outcome: dict) -> str:
        return f"raises {outcome['raises']}" if "raises" in outcome else "[" + ", ".join(outcome["returned"]) + "]"

    def short(outcome: dict) -> str:
        return "raises" if "raises" in outcome else ",".join(outcome["returned"])

    plain, absent, first, last = cases.values()
    both_applied = plain.get("returned") == ["m1", "m3"]
    lost_silently = not both_applied and "raises" not in plain
    label = f"absent: {short(absent)}; same-step: {short(first)}/{short(last)}"
    obs.record(
        cases,
        label=f"remove + append: {short(plain)}" if lost_silently or len(label) > 40 else label,
        detail="; ".join(f"{case}: {shown(outcome)}" for case, outcome in cases.items()),
        hazard="silent"
        if lost_silently
        else "order-coupled"
        if first != last
        else "loud"
        if any("raises" in outcome for outcome in cases.values())
        else "safe",
    )
