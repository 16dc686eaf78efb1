"""Parallel subagents in the shapes users reported upstream: subagents with skills, and one of two parallel
subagents interrupted for approval.

deepagents #923's InvalidUpdateError needs a subagent whose output carries `skills_metadata` (two parallel
`task` results would then write that LastValue key in one step). The skills probe therefore also records
whether the subagent's own output carries it: langchain's `PrivateStateAttr` omits it from the output
schema, and where it is omitted the parallel return has nothing to collide on.
"""

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

import da_kit
from gates import ThreadTurns
from fanin.probe import Claim, Observer, probe

SKILLS_ISSUE = "https://github.com/langchain-ai/deepagents/issues/923"
SKILLS_PR = "https://github.com/langchain-ai/deepagents/pull/954"
INTERRUPT_ISSUE = "https://github.com/langchain-ai/deepagents/issues/420"

SKILL = "---\nname: {name}\ndescription: the {name} skill\n---\n# {name}\nDo it the {name} way.\n"


def skill_names(messages: list[BaseMessage], names: tuple[str, ...] = ("parent-skill", "worker-skill")) -> list:
    """The skills named in the system prompt a model call was given."""
    system = " ".join(str(m.content) for m in messages if getattr(m, "type", None) == "system")
    return [name for name in names if name in system]


@probe(
    "deepagents/subagents/skills-metadata",
    title="A parent with skill parent-skill launches, in one model message, two runs of a subagent built"
    " with create_deep_agent and skill worker-skill (skills in the parent's in-state files)",
    claim=Claim(
        "Parallel subagents with skills return to the parent without a state merge error: skills_metadata is"
        " excluded from what a subagent passes in and returns, each agent loading its own skills"
        " (deepagents #923 reports InvalidUpdateError at key 'skills_metadata' on 0.3.8; PR #954 excludes it).",
        SKILLS_ISSUE,
        expect={"value.run": "returned", "value.worker_prompt_skills": {"w1": ["worker-skill"], "w2": ["worker-skill"]}},
    ),
    sources=[SKILLS_PR],
)
def test_skills_metadata(obs: Observer) -> None:
    create_deep_agent = obs.need("deepagents", "create_deep_agent")
    obs.need_parameter(create_deep_agent, "skills", "deepagents.create_deep_agent")
    create_file_data = obs.need("deepagents.backends.utils", "create_file_data")

    turns = ThreadTurns(["w2", "w1"])
    worker_saw: dict = {}
    parent_saw: list = []

    def worker(messages: list[BaseMessage]) -> AIMessage:
        if da_kit.task_of(messages) == "alone":  # the subagent invoked on its own, after the run
            return da_kit.say("alone done")
        me = "w1" if "worker 1" in da_kit.task_of(messages) else "w2"
        worker_saw[me] = skill_names(messages)
        turns.turn(me)  # both runs in flight together, w2 replies first
        return da_kit.say(f"{me} done")

    def parent(messages: list[BaseMessage]) -> AIMessage:
        parent_saw.append(skill_names(messages))
        if not da_kit.replies(messages):
            return da_kit.calls(da_kit.task_call("task-w1", "worker", "worker 1"), da_kit.task_call("task-w2", "worker", "worker 2"))
        return da_kit.say("all done")

    with obs.framework():
        sub = create_deep_agent(model=da_kit.ScriptedModel(respond=worker), skills=["/skills/worker/"])
        agent = create_deep_agent(
            model=da_kit.ScriptedModel(respond=parent), skills=["/skills/parent/"],
            subagents=[{"name": "worker", "description": "works with its skill", "runnable": sub}],
        )
    files = {f"/skills/{who}/{who}-skill/SKILL.md": create_file_data(SKILL.format(name=f"{who}-skill"))
             for who in ("parent", "worker")}
    run = obs.attempt(lambda: agent.invoke({"messages": [HumanMessage("go")], "files": files}))
    obs.require_in_flight(turns)
    if sorted(worker_saw) != ["w1", "w2"]:
        obs.vacuous(f"not both subagent runs reached their model: {sorted(worker_saw)}")
    final = run.get("returned") or {}
    state_skills = final.get("skills_metadata")
    # The precondition of #923's error: does a subagent hand skills_metadata back in its output at all?
    with obs.framework():
        alone = sub.invoke({"messages": [HumanMessage("alone")], "files": files})
    value = {
        "run": "returned" if "returned" in run else {"raises": run["raises"]},
        "skills_metadata_in_subagent_output": "skills_metadata" in alone,
        "worker_prompt_skills": {k: worker_saw[k] for k in sorted(worker_saw)},
        "parent_prompt_skills": parent_saw,
        "parent_state_skills": None if state_skills is None else sorted(s["name"] for s in state_skills),
        "replies": sorted(da_kit.replies(final.get("messages", []))),
    }
    wrong_skills = sorted(k for k, v in worker_saw.items() if v != ["worker-skill"])
    parent_wrong = any(seen != ["parent-skill"] for seen in parent_saw)
    if "raises" in run:
        label, hazard = run["raises"], "loud"
    elif wrong_skills or parent_wrong:
        label, hazard = "skills crossed" + (": subagents see the parent's" if wrong_skills else ""), "silent"
    else:
        label, hazard = "each agent its own skills", "safe"
    obs.record(
        value,
        label=label,
        detail=f"run {'raises ' + run['raises'] if 'raises' in run else 'returns'}; the subagent runs' system prompts"
        f" name {value['worker_prompt_skills']}, the parent's calls {parent_saw}; the parent's state skills_metadata"
        f" holds {value['parent_state_skills']}; the subagent's own output "
        f"{'carries' if value['skills_metadata_in_subagent_output'] else 'omits'} skills_metadata",
        hazard=hazard,
    )


@probe(
    "deepagents/subagents/parallel-interrupt",
    title="One parent model message: task(approver), task(plain) and a plain tool `count`; the approver's tool"
    " `risky` needs approval (interrupt_on). Approve, resume: what runs again?",
    claim=Claim(
        "deepagents #420 asks how to keep an interrupt inside one subagent from re-running the whole tool step"
        " on resume: the sibling subagent and the plain tool called in the same model message run again, and so"
        " does the interrupted subagent up to its interrupt.",
        INTERRUPT_ISSUE,
        expect={"value.runs_after_resume.plain_model_calls": 1, "value.runs_after_resume.count_runs": 1},
    ),
)
def test_parallel_interrupt(obs: Observer) -> None:
    create_deep_agent = obs.need("deepagents", "create_deep_agent")
    obs.need_parameter(create_deep_agent, "interrupt_on", "deepagents.create_deep_agent")
    InMemorySaver = obs.need("langgraph.checkpoint.memory", "InMemorySaver")
    Command = obs.need("langgraph.types", "Command")

    runs = {"approver_model_calls": 0, "risky_runs": 0, "plain_model_calls": 0, "count_runs": 0}
    ran_with: list[int] = []  # the n each risky run was given: the approved call's, or a regenerated one's
    turns = ThreadTurns(["approver", "plain"])

    def risky(n: int) -> str:
        """A tool that needs a human's approval."""
        runs["risky_runs"] += 1
        ran_with.append(n)
        return f"did {n}"

    def count() -> str:
        """A plain tool of the parent."""
        runs["count_runs"] += 1
        return "counted"

    def approver(messages: list[BaseMessage]) -> AIMessage:
        runs["approver_model_calls"] += 1
        if not da_kit.answered(messages):
            turns.turn("approver")
            n = runs["approver_model_calls"]  # each call the model makes is a new one: risky(n=1), risky(n=2), ...
            return da_kit.calls(da_kit.tool_call("risky", {"n": n}, f"risky-{n}"))
        return da_kit.say("approver done")

    def plain(messages: list[BaseMessage]) -> AIMessage:
        runs["plain_model_calls"] += 1
        turns.turn("plain")
        return da_kit.say("plain done")

    def parent(messages: list[BaseMessage]) -> AIMessage:
        if not da_kit.replies(messages):
            return da_kit.calls(
                da_kit.task_call("task-approver", "approver", "do the risky thing"),
                da_kit.task_call("task-plain", "plain", "do the plain thing"),
                da_kit.tool_call("count", {}, "count-1"),
            )
        return da_kit.say("all done")

    agent = create_deep_agent(
        model=da_kit.ScriptedModel(respond=parent),
        tools=[count],
        subagents=[
            {"name": "approver", "description": "needs approval", "system_prompt": "approve", "tools": [risky],
             "model": da_kit.ScriptedModel(respond=approver), "interrupt_on": {"risky": True}},
            {"name": "plain", "description": "plain work", "system_prompt": "plain", "tools": [],
             "model": da_kit.ScriptedModel(respond=plain)},
        ],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t1"}}
    with obs.framework():
        first = agent.invoke({"messages": [HumanMessage("go")]}, config)
    obs.require_in_flight(turns)
    before = dict(runs)
    pending = list(agent.get_state(config).interrupts) if hasattr(agent.get_state(config), "interrupts") else []
    interrupts = first.get("__interrupt__", []) if isinstance(first, dict) else []
    if not interrupts and not pending:
        obs.vacuous(f"the approver's tool never interrupted (runs: {before})")
    with obs.framework():
        final = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    after = {k: runs[k] - before[k] for k in runs}
    approved = _risky_args(interrupts or pending)
    replies = da_kit.replies(final.get("messages", []))
    value = {
        "runs_before_resume": before,
        "runs_after_resume": after,
        "interrupts_pending": len(interrupts or pending),
        "replies": {k: replies[k] for k in sorted(replies)},
        "still_interrupted": bool(final.get("__interrupt__")),
        "approved_n": approved,  # the n of the call the approval was asked for
        "risky_ran_with": ran_with,
    }
    rerun = [k.replace("_model_calls", "").replace("_runs", "") for k in ("plain_model_calls", "count_runs") if after[k]]
    approver_again = after["approver_model_calls"] > 1  # 1 = its reply after the approved tool ran
    done = not value["still_interrupted"] and replies.get("task-approver") == "approver done"
    label = ("re-runs " + ", ".join(rerun + (["approver from the start"] if approver_again else []))
             if rerun or approver_again else "only the approver resumes")
    regenerated = [n for n in ran_with if n not in approved]
    if regenerated:  # the approval was spent on a call the human never saw
        label = f"approved risky(n={', '.join(map(str, approved))}), ran risky(n={', '.join(map(str, regenerated))})"
    obs.record(
        value,
        label=label if done else label + "; not completed",
        detail=f"before the resume: {before}; the resume adds {after}; the approver "
        f"{'finishes' if done else 'does not finish'}; the approval was asked for risky(n={approved}),"
        f" risky ran {runs['risky_runs']}x in all, with n={ran_with}",
        # Work that already finished runs again, or an approved call is replaced by another (a side effect
        # repeated or never approved, nobody told); the answers are kept.
        hazard="silent" if rerun or approver_again or regenerated or not done or runs["risky_runs"] > 1 else "safe",
    )


def _risky_args(interrupts: list) -> list:
    """The n of every `risky` call the pending interrupts ask approval for (their values hold the tool calls'
    args: `action_requests` from 0.2, a list of HumanInterrupts with `action_request` in 0.1)."""
    found: list = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("args"), dict) and "n" in value["args"]:
                found.append(value["args"]["n"])
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    for interrupt in interrupts:
        walk(getattr(interrupt, "value", interrupt))
    return found
