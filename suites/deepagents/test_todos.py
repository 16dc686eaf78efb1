"""Parallel subagents that each keep a todo list (write_todos)."""

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

import da_kit
from gates import ThreadTurns
from fanin.probe import Claim, Observer, probe

SUBAGENT_TESTS = (
    "https://github.com/langchain-ai/deepagents/blob/main/libs/deepagents/tests/unit_tests/test_subagents.py"
)


@probe(
    "deepagents/subagents/parallel-todos",
    title="One planner subagent (create_agent with TodoListMiddleware) launched twice in one model message;"
    " each run writes its own todo list; the parent wrote its own list first where it has write_todos",
    claim=Claim(
        "`todos` has no reducer, so it is excluded from what a subagent returns: parallel subagents can each"
        " use write_todos without an InvalidUpdateError, and their lists do not reach the parent.",
        SUBAGENT_TESTS,
        expect={"outcome": "ok", "value.subagent_todos_in_parent": []},
    ),
    sources=["https://github.com/langchain-ai/deepagents/issues/96"],
)
def test_parallel_todos(obs: Observer) -> None:
    create_deep_agent = obs.need("deepagents", "create_deep_agent")
    create_agent = obs.need("langchain.agents", "create_agent")
    TodoListMiddleware = obs.need("langchain.agents.middleware", "TodoListMiddleware")

    parts = ["A", "B"]
    turns = ThreadTurns(parts)
    tools_answered: dict[str, dict[str, str]] = {}

    def planner(messages: list[BaseMessage]) -> AIMessage:
        me = next(part for part in parts if f"part {part}" in da_kit.task_of(messages))
        answered = da_kit.answered(messages)
        if not answered:
            todos = [{"content": f"{me}: step {i}", "status": "pending"} for i in (1, 2)]
            return da_kit.calls(da_kit.tool_call("write_todos", {"todos": todos}, f"todos-{me}"))
        # Its write_todos has answered: hold it until both planners are in flight, then let it end.
        tools_answered[me] = answered
        turns.turn(me)
        return da_kit.say(f"part {me} planned")

    runnable = create_agent(da_kit.ScriptedModel(respond=planner), middleware=[TodoListMiddleware()])
    parent = da_kit.ScriptedModel(steps=[])
    agent = create_deep_agent(
        model=parent, subagents=[{"name": "planner", "description": "plans one part", "runnable": runnable}]
    )
    # Versions whose deep agent has write_todos (a `todos` channel) plan first: the parent's own list.
    has_todos = "todos" in agent.channels
    parent_todos = [{"content": "parent: coordinate", "status": "in_progress"}]
    own_plan = (
        [da_kit.calls(da_kit.tool_call("write_todos", {"todos": parent_todos}, "parent-todos"))] if has_todos else []
    )
    parent.play(
        [
            *own_plan,
            da_kit.calls(*(da_kit.task_call(f"task-{part}", "planner", f"Plan part {part}.") for part in parts)),
            da_kit.say("all planned"),
        ]
    )

    with obs.framework(value=lambda: {"planners_answered": tools_answered, "parent_has_todos_channel": has_todos}):
        final = agent.invoke({"messages": [HumanMessage("plan it")]})
    obs.require_in_flight(turns)
    if sorted(tools_answered) != parts or any(set(a.values()) != {"success"} for a in tools_answered.values()):
        obs.vacuous(f"not every planner's write_todos succeeded: {tools_answered}")
    after = final.get("todos")
    arrived = sorted({item["content"].split(":")[0] for item in after or []} & set(parts))
    replies = sorted(da_kit.replies(final["messages"]))
    if not arrived:
        label = (
            "kept private; parent's list kept"
            if after == parent_todos
            else "kept private; parent has no todos"
            if not has_todos
            else "kept private; parent's list changed"
        )
    elif len(arrived) == 1:
        label = f"last write wins: {arrived[0]}"
    else:
        label = "merged"
    obs.record(
        {
            "parent_has_todos_channel": has_todos,
            "parent_todos_after": after,
            "subagent_todos_in_parent": arrived,
            "replies": replies,
        },
        label=label,
        detail=f"no error; both planners wrote their todos; the parent's todos afterwards: {after}"
        f" (the deep agent has a todos channel: {has_todos}); replies that reached the parent: {replies}",
        hazard="silent" if len(arrived) == 1 or (has_todos and after != parent_todos) else "safe",
    )
