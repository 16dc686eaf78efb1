"""Parallel subagents writing the deep agent's `files` (the default in-state backend)."""

import importlib.util
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

import da_kit
from gates import ThreadTurns
from fanin.probe import Claim, Observer, probe

SUBAGENT_TESTS = (
    "https://github.com/langchain-ai/deepagents/blob/main/libs/deepagents/tests/unit_tests/test_subagents.py"
)
FILES_REDUCER = (
    "https://github.com/langchain-ai/deepagents/blob/main/libs/deepagents/deepagents/middleware/filesystem.py"
)


@probe(
    "deepagents/subagents/parallel-files",
    title="One writer subagent (create_agent with deepagents' FilesystemMiddleware) launched twice in one model"
    " message, A listed first, B second, B replying first: each writes a file of its own and one shared path,"
    " and edits one of two files the parent held before",
    claim=Claim(
        "A subagent's state updates other than messages, todos and structured_response are merged into the"
        " parent, and `files` has a merging reducer: every file a parallel subagent writes reaches the parent.",
        SUBAGENT_TESTS,
        expect={"value.own_files_kept": True, "value.edits_kept": {"A": True, "B": True}},
    ),
    sources=[FILES_REDUCER],
)
def test_parallel_files(obs: Observer) -> None:
    create_deep_agent = obs.need("deepagents", "create_deep_agent")
    # The parent's seeded files need deepagents' file-data helper: public in deepagents.backends.utils from
    # 0.2, before that the same function, private, beside the `files` reducer (the API under test is there).
    if importlib.util.find_spec("deepagents.backends") is not None:
        create_file_data = obs.need("deepagents.backends.utils", "create_file_data")
    else:
        create_file_data = obs.need("deepagents.middleware.filesystem", "_create_file_data")
    FilesystemMiddleware = obs.need("deepagents", "FilesystemMiddleware")
    create_agent = obs.need("langchain.agents", "create_agent")

    def edit(me: str) -> dict:
        return da_kit.tool_call(
            "edit_file",
            {"file_path": f"/{me}-edits.md", "old_string": "v0", "new_string": f"edited by {me}"},
            f"{me}-edit",
        )

    writes = {
        me: [
            da_kit.tool_call("write_file", {"file_path": f"/{me}-own.md", "content": me}, f"{me}-own"),
            da_kit.tool_call("write_file", {"file_path": "/same.md", "content": f"from {me}"}, f"{me}-same"),
            edit(me),
        ]
        for me in ("A", "B")
    }
    listed = ["A", "B"]
    turns = ThreadTurns(list(reversed(listed)))  # the writer listed last replies first
    tools_answered: dict[str, dict[str, str]] = {}

    def writer(messages: list[BaseMessage]) -> AIMessage:
        me = "A" if "writer A" in da_kit.task_of(messages) else "B"
        answered = da_kit.answered(messages)
        if not answered:
            return da_kit.calls(*writes[me])
        # Its file tools have answered: hold it until both writers are in flight, reply in turn.
        tools_answered[me] = answered
        turns.turn(me)
        return da_kit.say(f"writer {me} done")

    parent = da_kit.ScriptedModel(
        steps=[
            da_kit.calls(*(da_kit.task_call(f"task-{me}", "writer", f"You are writer {me}.") for me in listed)),
            da_kit.say("all done"),
        ]
    )
    # The writer is deepagents' own FilesystemMiddleware on a plain agent: the same `files` state and
    # tools as a declarative subagent, without the summarization middleware's per-call cost.
    runnable = create_agent(da_kit.ScriptedModel(respond=writer), middleware=[FilesystemMiddleware()])
    agent = create_deep_agent(
        model=parent, subagents=[{"name": "writer", "description": "writes files", "runnable": runnable}]
    )
    with obs.framework():
        # The parent's files before the fan-out: one file for each writer to edit.
        seeded = {f"/{me}-edits.md": create_file_data("v0") for me in listed}
        final = agent.invoke({"messages": [HumanMessage("write the files")], "files": seeded})
    obs.require_in_flight(turns)
    failed = {me: answered for me, answered in tools_answered.items() if set(answered.values()) != {"success"}}
    if sorted(tools_answered) != listed or failed:
        obs.vacuous(f"a writer's own file tools did not all succeed, so it had nothing to fan in: {tools_answered}")

    files = da_kit.file_texts(final.get("files"))
    own = all(files.get(f"/{me}-own.md") == me for me in listed)
    same = files.get("/same.md")
    edits = {me: files.get(f"/{me}-edits.md") == f"edited by {me}" for me in listed}
    winner = {"from A": "A", "from B": "B"}.get(same) if same is not None else None
    same_rule = "absent" if winner is None else "last listed" if winner == listed[-1] else "first listed"
    undone = [me for me, kept in edits.items() if not kept]
    reverted = [f"/{me}-edits.md" for me in undone if files.get(f"/{me}-edits.md") == "v0"]
    lost = [f"/{me}-own.md by {me}" for me in listed if files.get(f"/{me}-own.md") != me]
    lost += [f"/same.md by {me}" for me in listed if same != f"from {me}"]
    lost += [f"/{me}-edits.md edit by {me}" for me in undone]
    obs.record(
        {
            "files": files,
            "own_files_kept": own,
            "same_path": same_rule,
            "edits_kept": edits,
            "lost": lost,
            "listed": listed,
            "replied": list(turns.acted),
            "replies": sorted(da_kit.replies(final["messages"])),
        },
        label=f"same path: {same_rule}; edits lost: {','.join(undone) or 'none'}",
        detail=f"no error; own files {'both kept' if own else 'not both kept'}; /same.md holds {same!r} (listed {listed},"
        f" replied {list(turns.acted)}); edits of the parent's files kept {edits}"
        + (f"; {reverted} back to v0, the copy the sibling was given and returned untouched" if reverted else ""),
        hazard="silent" if lost else "safe",
    )
