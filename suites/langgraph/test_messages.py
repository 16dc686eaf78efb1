"""add_messages as the reducer of parallel writes."""

from typing import Annotated, TypedDict

from langgraph.graph import START, StateGraph

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

    def speaker(name: str):
        def node(state: State, config) -> dict:
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
        if len(set(steps.values())) != 1 or len(steps) != 2:
            obs.vacuous(f"the speakers did not share one superstep: {steps}")
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
