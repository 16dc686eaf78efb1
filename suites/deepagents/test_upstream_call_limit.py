"""Parallel subagents under langchain's ModelCallLimitMiddleware, on the parent and on the subagent spec: the
Python form of deepagentsjs #646 (InvalidUpdateError: two subagents' counters on one LastValue key in one step)
and its fix, PR #734 / #842 (each agent counts only its own calls; a subagent's counter must not rewind the
parent's budget).

The counters are `PrivateStateAttr` in langchain's Python middleware, so the probe also records whether a
subagent's own output carries them at all (the precondition of the collision). `n/a` where langchain has no
ModelCallLimitMiddleware or a subagent spec takes no `middleware`.
"""

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

import da_kit
from gates import ThreadTurns
from fanin.probe import Claim, Observer, probe

JS_ISSUE = "https://github.com/langchain-ai/deepagentsjs/issues/646"
JS_PR = "https://github.com/langchain-ai/deepagentsjs/pull/734"
JS_SCOPE_PR = "https://github.com/langchain-ai/deepagentsjs/pull/842"
COUNTERS = ("thread_model_call_count", "run_model_call_count")


@probe(
    "deepagents/subagents/call-limit-counters",
    title="Parent and subagent spec both use ModelCallLimitMiddleware; one parent model message launches two"
    " runs of the subagent, both in flight together",
    claim=Claim(
        "Parallel subagents do not write their model-call counters to the parent: the run returns, and the"
        " parent's counter counts only the parent's own model calls (deepagentsjs #646 reports"
        " InvalidUpdateError on a LastValue counter; PR #734 keeps the counters local to each agent).",
        JS_ISSUE,
        expect={"value.run": "returned", "value.parent_thread_count": 2},
    ),
    sources=[JS_PR, JS_SCOPE_PR],
)
def test_call_limit_counters(obs: Observer) -> None:
    create_deep_agent = obs.need("deepagents", "create_deep_agent")
    Limit = obs.need("langchain.agents.middleware", "ModelCallLimitMiddleware")
    SubAgent = obs.need("deepagents.middleware.subagents", "SubAgent")
    if "middleware" not in getattr(SubAgent, "__annotations__", {}):
        obs.not_applicable("a SubAgent spec takes no 'middleware' in this version")
    InMemorySaver = obs.need("langgraph.checkpoint.memory", "InMemorySaver")

    turns = ThreadTurns(["w2", "w1"])
    parent_calls: list[int] = []

    def worker(messages: list[BaseMessage]) -> AIMessage:
        if da_kit.task_of(messages) == "alone":  # the subagent invoked on its own, after the run
            return da_kit.say("alone done")
        me = "w1" if "worker 1" in da_kit.task_of(messages) else "w2"
        turns.turn(me)  # both runs in flight together, w2 replies first
        return da_kit.say(f"{me} done")

    def parent(messages: list[BaseMessage]) -> AIMessage:
        parent_calls.append(len(parent_calls) + 1)
        if not da_kit.replies(messages):
            return da_kit.calls(da_kit.task_call("task-w1", "worker", "worker 1"), da_kit.task_call("task-w2", "worker", "worker 2"))
        return da_kit.say("all done")

    spec: dict[str, Any] = {
        "name": "worker", "description": "works", "system_prompt": "work", "tools": [],
        "model": da_kit.ScriptedModel(respond=worker), "middleware": [Limit(thread_limit=50, run_limit=50)],
    }
    with obs.framework():
        agent = create_deep_agent(
            model=da_kit.ScriptedModel(respond=parent), middleware=[Limit(thread_limit=50, run_limit=50)],
            subagents=[spec], checkpointer=InMemorySaver(),
        )
    config = {"configurable": {"thread_id": "t1"}}
    run = obs.attempt(lambda: agent.invoke({"messages": [HumanMessage("go")]}, config))
    obs.require_in_flight(turns)
    stored = agent.get_state(config).values
    # The precondition: does a subagent built the same way hand its counters back in its output at all?
    with obs.framework():
        alone = create_deep_agent(
            model=da_kit.ScriptedModel(respond=worker), middleware=[Limit(thread_limit=50, run_limit=50)]
        ).invoke({"messages": [HumanMessage("alone")]})
    value = {
        "run": "returned" if "returned" in run else {"raises": run["raises"]},
        "parent_model_calls": len(parent_calls),
        "parent_thread_count": stored.get("thread_model_call_count"),
        "counters_in_subagent_output": sorted(k for k in COUNTERS if k in alone),
        "replies": sorted(da_kit.replies((run.get("returned") or {}).get("messages", []))),
    }
    if "raises" in run:
        label, hazard = run["raises"], "loud"
    elif value["parent_thread_count"] not in (None, len(parent_calls)):
        label, hazard = f"parent counter {value['parent_thread_count']} after {len(parent_calls)} calls", "silent"
    else:
        label, hazard = "each agent counts its own calls", "safe"
    obs.record(
        value,
        label=label,
        detail=f"run {'raises ' + run['raises'] if 'raises' in run else 'returns'}; the parent made"
        f" {len(parent_calls)} model calls and its thread_model_call_count reads {value['parent_thread_count']};"
        f" a subagent's own output carries {value['counters_in_subagent_output'] or 'no counter'}",
        hazard=hazard,
    )
