"""Parallel subagents with structured output (a `structured_response` in their state)."""

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel

import da_kit
from gates import ThreadTurns
from fanin.probe import Claim, Observer, probe

SUBAGENT_TESTS = (
    "https://github.com/langchain-ai/deepagents/blob/main/libs/deepagents/tests/unit_tests/test_subagents.py"
)


@probe(
    "deepagents/subagents/structured-response",
    title="The same subagent (create_agent with a ToolStrategy response_format) launched twice in one model"
    " message: two parallel `structured_response`s fan in",
    claim=Claim(
        "A subagent's structured_response has no reducer in the parent and is excluded from what it returns,"
        " so parallel subagents with structured output do not collide; each reply carries its own result.",
        SUBAGENT_TESTS,
        expect={"outcome": "ok", "value.parent_structured_response": None, "value.replies_carry_own_result": True},
    ),
    sources=["https://github.com/langchain-ai/deepagents/issues/527"],
)
def test_structured_response(obs: Observer) -> None:
    create_deep_agent = obs.need("deepagents", "create_deep_agent")
    create_agent = obs.need("langchain.agents", "create_agent")
    ToolStrategy = obs.need("langchain.agents.structured_output", "ToolStrategy")

    class Finding(BaseModel):
        """What one analyst found."""

        topic: str
        verdict: str

    topics = ["alpha", "beta"]
    turns = ThreadTurns(topics)

    def answer(messages: list[BaseMessage]) -> AIMessage:
        # Both runs of the analyst share this model: the reply depends only on the task it was given.
        topic = next(t for t in topics if t in messages[-1].content)
        turns.turn(topic)
        return da_kit.calls(
            da_kit.tool_call("Finding", {"topic": topic, "verdict": f"{topic} verdict"}, f"finding-{topic}")
        )

    analyst = create_agent(da_kit.ScriptedModel(steps=[answer, answer]), response_format=ToolStrategy(Finding))
    parent = da_kit.ScriptedModel(
        steps=[
            da_kit.calls(*(da_kit.task_call(f"task-{t}", "analyst", f"analyse {t}") for t in topics)),
            da_kit.say("all analysed"),
        ]
    )
    agent = create_deep_agent(
        model=parent, subagents=[{"name": "analyst", "description": "analyses one topic", "runnable": analyst}]
    )

    with obs.framework(value=lambda: {"analysts_replied": list(turns.acted)}):
        final = agent.invoke({"messages": [HumanMessage("analyse both")]})
    obs.require_in_flight(turns)
    replies = da_kit.replies(final["messages"])
    own = all(
        f"{t} verdict" in replies.get(f"task-{t}", "")
        and f"{[u for u in topics if u != t][0]} verdict" not in replies.get(f"task-{t}", "")
        for t in topics
    )
    kept = final.get("structured_response")
    kept = kept.model_dump() if isinstance(kept, BaseModel) else kept
    obs.record(
        {"parent_structured_response": kept, "replies_carry_own_result": own, "replies": sorted(replies)},
        label=("excluded; " if kept is None else "parent holds one; ")
        + ("each reply own result" if own else "replies mixed up"),
        detail=f"no error; the parent's structured_response: {kept}; each task reply carries its own analyst's"
        f" result: {own}",
        hazard="safe" if own and kept is None else "silent",
    )
