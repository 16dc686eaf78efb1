"""A scalar resume with two interrupts pending in one subgraph task (langgraph #8579, PR #8936).

#6108's rule: with several interrupts pending, `Command(resume=<scalar>)` is refused (their order is not
defined) and a map of interrupt id -> answer is required. #8579: two interrupts raised by two parallel nodes
of one subgraph are one task's write in the parent, and the scalar was accepted.
"""

import operator
import threading
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import START, StateGraph

from fanin.probe import Claim, Observer, probe

ISSUE = "https://github.com/langchain-ai/langgraph/issues/8579"
PR = "https://github.com/langchain-ai/langgraph/pull/8936"
RULE_PR = "https://github.com/langchain-ai/langgraph/pull/6158"


def pending_values(graph: Any, config: dict) -> list:
    """The values of the interrupts the thread's pending tasks hold, sorted (their order is the question, not
    the data). Read from the state, not the invoke's output: 0.3 returns no `__interrupt__` from invoke."""
    return sorted(str(i.value) for task in graph.get_state(config).tasks for i in task.interrupts)


def one_of(pending: list, still: list) -> tuple[list, list]:
    """Where the first run kept only one of the two interrupts (0.2), that one named as one of them (in both
    lists): which it keeps is thread timing even with the askers gated (a re-run of one cell kept the first
    asker's, the next the second's: whether the runner takes the first GraphInterrupt before the second
    thread raises), so it is not data."""
    if len(pending) != 1:
        return pending, still
    return ["one of left, right"], ["one of left, right" if name == pending[0] else name for name in still]


ORDERS = (("left", "right"), ("right", "left"))  # which of the two calls interrupt() first, in every run


class AskInOrder:
    """`interrupt(name)` where the second asker calls it only after the first's call has returned or raised.
    Which pending interrupt a scalar reaches (and, in 0.2, which one is kept) is the first call to consume it,
    so the thread that calls first decides; this gate forces it instead of thread scheduling. `next_run()`
    re-arms it before each invoke."""

    def __init__(self, interrupt: Callable[[str], Any], first: str) -> None:
        self.interrupt, self.first = interrupt, first
        self.first_asked = threading.Event()

    def next_run(self) -> None:
        self.first_asked = threading.Event()

    def __call__(self, name: str) -> Any:
        asked = self.first_asked
        if name != self.first and not asked.wait(10):
            raise TimeoutError(f"{self.first} never called interrupt() while {name} waited")
        try:
            return self.interrupt(name)
        finally:
            if name == self.first:
                asked.set()


def scalar_resume(obs: Observer, first: str) -> dict:
    """One thread: both subgraph nodes ask (`first` before the other), then one `Command(resume="yes")`."""
    Command, interrupt = obs.need("langgraph.types", "Command", "interrupt")
    ask = AskInOrder(interrupt, first)

    class State(TypedDict):
        answers: Annotated[list, operator.add]

    def node(name: str) -> Callable[[State], dict]:
        def run(state: State) -> dict:
            return {"answers": [f"{name}={ask(name)}"]}

        return run

    sub = StateGraph(State)
    for name in ("left", "right"):
        sub.add_node(name, node(name))
        sub.add_edge(START, name)
    builder = StateGraph(State)
    builder.add_node("child", sub.compile())
    builder.add_edge(START, "child")
    graph = builder.compile(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": f"scalar-{first}-first"}}

    with obs.framework():
        graph.invoke({"answers": []}, config)
    pending = pending_values(graph, config)
    ask.next_run()
    resumed = obs.attempt(lambda: graph.invoke(Command(resume="yes"), config))
    returned = resumed.get("returned")
    still = pending_values(graph, config)
    final = graph.get_state(config).values.get("answers") or []
    pending, still = one_of(pending, still)
    answered = sorted(set(pending) - set(still)) if returned is not None else []
    return {
        "pending": pending,
        "resume": "returned" if returned is not None else {"raises": resumed["raises"]},
        "answered": answered,
        "still_pending": still,
        "answers": sorted(final),
    }


def grade(cases: dict[str, dict]) -> tuple[str, str]:
    """Label and hazard from both forced orders: a scalar accepted with two pending is silent (which one it
    reaches is then named per order), a refusal loud, a lone pending interrupt resumed safe."""
    if any(case["resume"] != "returned" for case in cases.values()):
        raised = sorted({case["resume"]["raises"] for case in cases.values() if case["resume"] != "returned"})
        two = all(len(case["pending"]) > 1 for case in cases.values())
        return (f"scalar refused: {', '.join(raised)}" if two else f"resume raises {', '.join(raised)}"), "loud"
    if all(len(case["pending"]) > 1 for case in cases.values()):
        reached = {first: case["answered"] for first, case in cases.items()}
        if all(answered == [first] for first, answered in reached.items()):
            return "scalar accepted, first asker gets it", "silent"
        if len({tuple(answered) for answered in reached.values()}) == 1:
            return f"scalar accepted, goes to {', '.join(next(iter(reached.values()))) or 'none'}", "silent"
        return "scalar accepted, not the first asker", "silent"
    return "one interrupt pending; resumed", "safe"


@probe(
    "langgraph/interrupt/scalar-resume-one-subgraph-task",
    title="A subgraph node whose two parallel nodes `left` and `right` each call interrupt(), one before the"
    ' other (both orders forced); the parent resumes with one scalar, Command(resume="yes")',
    claim=Claim(
        "With two interrupts pending inside one subgraph task, a scalar resume is accepted: the node that calls"
        " interrupt() first on the resume gets the answer and the other stays pending, where the rule for"
        " several pending interrupts is to refuse a scalar (RuntimeError) and require a resume map (#8579;"
        " PR #8936 makes it refuse).",
        ISSUE,
        expect={
            "value.left_first.pending": ["left", "right"],
            "value.left_first.resume": {"raises": "RuntimeError"},
        },
    ),
    sources=[PR, RULE_PR],
)
def test_scalar_resume_one_subgraph_task(obs: Observer) -> None:
    cases = {f"{first}_first": scalar_resume(obs, first) for first, _ in ORDERS}
    label, hazard = grade({key.removesuffix("_first"): case for key, case in cases.items()})
    obs.record(
        cases,
        label=label,
        detail="; ".join(
            f"{key.replace('_', ' ')}: pending {case['pending']}, the scalar resume "
            f"{'returned' if case['resume'] == 'returned' else 'raises ' + case['resume']['raises']},"
            f" still pending {case['still_pending']}, answers {case['answers']}"
            for key, case in cases.items()
        ),
        hazard=hazard,
    )
