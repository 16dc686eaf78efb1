"""A scalar resume with two interrupts pending in one subgraph task (langgraph #8579, PR #8936).

#6108's rule: with several interrupts pending, `Command(resume=<scalar>)` is refused (their order is not
defined) and a map of interrupt id -> answer is required. #8579: two interrupts raised by two parallel nodes
of one subgraph are one task's write in the parent, and the scalar was accepted.
"""

import operator
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
    the data). Read from the state, not the invoke's output: 0.3 returns no `__interrupt__` from invoke.
    Where only one of the two is kept (0.2: the first of the two threads to raise), which one is thread timing
    (left or right between two runs of one cell), so it is named as one of them."""
    return sorted(str(i.value) for task in graph.get_state(config).tasks for i in task.interrupts)


def one_of(pending: list, still: list) -> tuple[list, list]:
    """Where the first run kept only one of the two interrupts, that one named as one of them (in both lists)."""
    if len(pending) != 1:
        return pending, still
    return ["one of left, right"], ["one of left, right" if name == pending[0] else name for name in still]


@probe(
    "langgraph/interrupt/scalar-resume-one-subgraph-task",
    title="A subgraph node whose two parallel nodes `left` and `right` each call interrupt(); the parent resumes"
    " with one scalar, Command(resume=\"yes\")",
    claim=Claim(
        "With two interrupts pending inside one subgraph task, a scalar resume is accepted: one of them (which"
        " one is not defined) gets the answer and the other stays pending, where the rule for several pending"
        " interrupts is to refuse a scalar (RuntimeError) and require a resume map (#8579; PR #8936 makes it"
        " refuse).",
        ISSUE,
        expect={"value.pending": ["left", "right"], "value.resume": {"raises": "RuntimeError"}},
    ),
    sources=[PR, RULE_PR],
)
def test_scalar_resume_one_subgraph_task(obs: Observer) -> None:
    Command, interrupt = obs.need("langgraph.types", "Command", "interrupt")

    class State(TypedDict):
        answers: Annotated[list, operator.add]

    def ask(name: str) -> Callable[[State], dict]:
        def run(state: State) -> dict:
            return {"answers": [f"{name}={interrupt(name)}"]}

        return run

    sub = StateGraph(State)
    for name in ("left", "right"):
        sub.add_node(name, ask(name))
        sub.add_edge(START, name)
    builder = StateGraph(State)
    builder.add_node("child", sub.compile())
    builder.add_edge(START, "child")
    graph = builder.compile(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "scalar"}}

    with obs.framework():
        graph.invoke({"answers": []}, config)
    pending = pending_values(graph, config)
    resumed = obs.attempt(lambda: graph.invoke(Command(resume="yes"), config))
    returned = resumed.get("returned")
    still = pending_values(graph, config)
    final = graph.get_state(config).values.get("answers") or []
    answered = sorted(set(pending) - set(still)) if returned is not None else []
    pending, still = one_of(pending, still)
    value = {
        "pending": pending,
        "resume": "returned" if returned is not None else {"raises": resumed["raises"]},
        "answered": answered,
        "still_pending": still,
        "answers": sorted(final),
    }
    if returned is None:
        label = f"scalar refused: {resumed['raises']}" if len(pending) > 1 else f"resume raises {resumed['raises']}"
        hazard = "loud"
    elif len(pending) > 1:
        label, hazard = f"scalar accepted, goes to {', '.join(value['answered']) or 'none'}", "silent"
    else:
        label, hazard = f"{len(pending)} interrupt(s) pending; resumed", "safe"
    obs.record(
        value,
        label=label,
        detail=f"pending after the first run: {pending}; the scalar resume "
        f"{'returned' if returned is not None else 'raises ' + resumed['raises']}; still pending {still};"
        f" answers {sorted(final)}",
        hazard=hazard,
    )
