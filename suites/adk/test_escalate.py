"""Escalation inside a ParallelAgent branch: what it stops (the siblings, an enclosing loop), which branch
writes land, whether the escalating event reaches the runner, and what the fan-in after it sees."""

from typing import Any, AsyncGenerator

from gates import Turns
from adk_kit import Event, EventActions, Step, run_once

from google.adk.agents import BaseAgent, LoopAgent, ParallelAgent, SequentialAgent

from fanin.probe import Claim, Observer, probe


class Gather(BaseAgent):
    """The fan-in step after the ParallelAgent: notes which result keys it finds, then writes `gathered`."""

    found: Any

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        keys = sorted(k for k in ctx.session.state if k.startswith("result_"))
        self.found.append(keys)
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={"gathered": ",".join(keys)}),
        )


LOOP_ITERATIONS = 3  # the nested branch's LoopAgent: escalation honoured stops it after one
RESULTS = ("result_a", "result_b", "result_c")  # one write per branch; gather is the fan-in that reads them


def summarize(events: list, log: list, found: list, state: dict, escalator: str) -> dict:
    """What the escalation did, as observed: who escalated and whether that event reached the runner
    (through every parent), how often the escalating agent ran (a LoopAgent around it stops after one
    iteration when it honours escalate), each sibling's fate, which branch writes landed in the session
    and which of them the fan-in saw."""
    fate = {name: what for name, what in log if name in ("b", "c")}
    landed = [k for k in RESULTS if state.get(k) is not None]
    return {
        "event_authors": [e.author for e in events if e.author != "user"],
        "escalated_by": [e.author for e in events if e.actions and e.actions.escalate],
        f"{escalator}_runs": sum(1 for name, what in log if name == escalator and what == "acted"),
        "siblings": {n: fate.get(n, "never started") for n in ("b", "c")},
        "writes_landed": landed,
        "gather_ran": bool(found),
        "gather_found": found[0] if found else None,
        "gather_missed": [k for k in RESULTS if k not in found[0]] if found else None,
        "final": {k: state.get(k) for k in (*RESULTS, "gathered")},
    }


def describe(value: dict, escalator: str, loop_iterations: int = 0) -> tuple[str, str, str]:
    """Label, detail and hazard from what the escalation did (`summarize`).

    The hazard is the fan-in's: a gather that ran without a branch's write (its sibling cancelled, or
    the write landing after the gather read) consumed partial results and nothing said so: silent.
    Escalation that is ignored, or that stops the pipeline before the fan-in, loses nothing the fan-in
    read: safe, told apart in the label (siblings' fate, the loop's iterations, whether the escalating
    event reached the runner).
    """
    cancelled = sorted(n for n, what in value["siblings"].items() if what == "cancelled")
    ran = sorted(n for n, what in value["siblings"].items() if what == "acted")
    siblings = "; ".join(
        [*([f"{','.join(cancelled)} cancelled"] if cancelled else []), *([f"{','.join(ran)} ran on"] if ran else [])]
    )
    missed = [k.removeprefix("result_") for k in value["gather_missed"] or []]
    gather = "gather skipped" if not value["gather_ran"] else f"gather lacks {','.join(missed)}" if missed else "gather got all"
    parts = [siblings or "no sibling ran", gather]
    if loop_iterations:
        parts.append(f"loop {value[f'{escalator}_runs']}/{loop_iterations}")
    if escalator not in value["escalated_by"]:
        parts.append("escalate lost")
    while len("; ".join(parts)) > 40:  # the label's limit: the siblings' fate is also in the detail
        parts.pop(0)
    late = [k for k in value["writes_landed"] if value["gather_ran"] and k not in value["gather_found"]]
    detail = (
        f"after the escalation: cancelled {','.join(cancelled) or 'none'}, ran on {','.join(ran) or 'none'}; "
        f"writes landed: {','.join(value['writes_landed']) or 'none'}; "
        + (
            f"gather runs and finds {','.join(value['gather_found']) or 'no result'}"
            + (f" ({','.join(late)} landed after it read)" if late else "")
            if value["gather_ran"]
            else "gather never runs"
        )
        + f"; escalating events seen by the runner: {','.join(value['escalated_by']) or 'none'}"
    )
    hazard = "silent" if value["gather_ran"] and missed else "safe"
    return "; ".join(parts), detail, hazard


@probe(
    "adk/escalate/direct-child",
    title="A direct ParallelAgent child escalates while its siblings are held: cancelled? does gather run?",
    claim=Claim(
        "When a sub-agent emits an event with actions.escalate = True, the ParallelAgent yields it and "
        "cancels the remaining sub-agents (the feature request; earlier versions let them run to completion).",
        "https://github.com/google/adk-python/issues/5104",
        expect={"value.siblings.b": "cancelled", "value.siblings.c": "cancelled"},
    ),
)
async def test_direct_child(obs: Observer) -> None:
    turns = Turns(["a", "b", "c"])
    log: list = []
    found: list = []
    branches = [
        Step(name="a", turns=turns, escalate=True, delta={"result_a": "A"}, log=log),
        Step(name="b", turns=turns, delta={"result_b": "B"}, log=log),
        Step(name="c", turns=turns, delta={"result_c": "C"}, log=log),
    ]
    root = SequentialAgent(
        name="pipeline", sub_agents=[ParallelAgent(name="fanout", sub_agents=branches), Gather(name="gather", found=found)]
    )
    with obs.framework():
        events, state = await run_once(root)
    obs.require_in_flight(turns)
    value = summarize(events, log, found, state, "a")
    label, detail, hazard = describe(value, "a")
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/escalate/nested-child",
    title="A grandchild (inside a LoopAgent branch) escalates while the other branches are held",
    claim=Claim(
        "adk-python stops a ParallelAgent only when the escalating event's author is a direct sub-agent; "
        "an escalation from deeper inside a branch ends that branch's loop and leaves the siblings running.",
        "https://github.com/google/adk-java/issues/1490",
        expect={"value.gather_found": ["result_a", "result_b", "result_c"]},
    ),
)
async def test_nested_child(obs: Observer) -> None:
    turns = Turns(["a", "b", "c"])
    log: list = []
    found: list = []
    # Branch a's turn ends when the loop ends (a loop may stop without resuming the escalating child).
    check = Step(name="a_check", turns=turns, gate="a", mark_done=False, escalate=True, delta={"result_a": "A"}, log=log)
    branches = [
        LoopAgent(
            name="a", max_iterations=LOOP_ITERATIONS, sub_agents=[check], after_agent_callback=lambda callback_context: turns.done("a")
        ),
        Step(name="b", turns=turns, delta={"result_b": "B"}, log=log),
        Step(name="c", turns=turns, delta={"result_c": "C"}, log=log),
    ]
    root = SequentialAgent(
        name="pipeline", sub_agents=[ParallelAgent(name="fanout", sub_agents=branches), Gather(name="gather", found=found)]
    )
    with obs.framework():
        events, state = await run_once(root)
    obs.require_in_flight(turns)
    value = summarize(events, log, found, state, "a_check")
    label, detail, hazard = describe(value, "a_check", loop_iterations=LOOP_ITERATIONS)
    obs.record(value, label=label, detail=f"{detail}; the loop ran its escalating child {value['a_check_runs']}×", hazard=hazard)
