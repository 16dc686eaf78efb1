"""The Functional API: @task futures fanned back in by an @entrypoint."""

from collections.abc import Callable
from typing import Any

import lg_modes
from fanin.probe import Claim, Observer, probe

FUNCTIONAL_DOC = "https://docs.langchain.com/oss/python/langgraph/use-functional-api#parallel-execution"
UPSTREAM_TESTS = "https://github.com/langchain-ai/langgraph/blob/f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f/libs/langgraph/tests"

# How long a task held in flight waits for a cancellation before it gives up and finishes: a deadlock
# breaker, never an ordering. Threads cannot be cancelled, so in sync mode it is the only way out when the
# runner waits for running tasks (kept short); in async mode a cancellation normally ends the wait at once,
# and the long patience keeps a slow machine from mistaking a late cancellation for a finished task.
HOLD_PATIENCE = {"sync": 0.25, "async": 2.0}


def _caught_task_error(obs: Observer, entrypoint: Any, task: Any) -> dict:
    """test_task_fan_in's second case: task b raises, and the entrypoint catches it where it resolves b's future."""

    def work(name: str) -> str:
        if name == "b":
            raise ValueError("task b failed")
        return name

    work_task = task(work)
    if obs.mode == "async":

        @entrypoint()
        async def fan_in(names: list) -> list:
            futures = [work_task(name) for name in names]
            results = []
            for future in futures:
                try:
                    results.append(await future)
                except ValueError as exc:
                    results.append(f"caught {type(exc).__name__}")
            return results

    else:

        @entrypoint()
        def fan_in(names: list) -> list:
            futures = [work_task(name) for name in names]
            results = []
            for future in futures:
                try:
                    results.append(future.result())
                except ValueError as exc:
                    results.append(f"caught {type(exc).__name__}")
            return results

    return obs.attempt(lambda: lg_modes.invoke(obs, fan_in, ["a", "b", "c"]))


@probe(
    "langgraph/functional/task-fan-in",
    title="An @entrypoint fans out three @task futures: results when they finish c, b, a; one task raising"
    " (caught by the entrypoint; uncaught while its siblings are in flight)",
    claim=Claim(
        "Tasks return futures that run in parallel and are resolved by the entrypoint, so results come back in"
        " the order the entrypoint collects them, and a task's exception is raised where its future is"
        " resolved: an entrypoint that catches it returns the other results. Async tasks are cancelled like"
        " any asyncio task (LangGraph's test_imp_task_cancel).",
        FUNCTIONAL_DOC,
        expect={
            "value.finish c, b, a.returned": ["a", "b", "c"],
            "value.b raises, the entrypoint catches it.returned": ["a", "caught ValueError", "c"],
        },
    ),
    sources=[f"{UPSTREAM_TESTS}/test_pregel_async.py#L2407", f"{UPSTREAM_TESTS}/test_pregel.py#L1269"],
    modes=("sync", "async"),
)
def test_task_fan_in(obs: Observer) -> None:
    entrypoint, task = obs.need("langgraph.func", "entrypoint", "task")

    def fan_in_graph(work: Callable[[str], Any], collect: Callable[[dict], Any]) -> Any:
        """An entrypoint that calls `work` for each name, then hands the futures to `collect`."""
        if obs.mode == "async":

            @entrypoint()
            async def fan_in(names: list) -> list:
                futures = {name: work(name) for name in names}
                return [await step for step in collect(futures)]

        else:

            @entrypoint()
            def fan_in(names: list) -> list:
                futures = {name: work(name) for name in names}
                return [step.result() for step in collect(futures)]

        return fan_in

    def finish_order() -> dict:
        gate = lg_modes.Gate(obs, ["c", "b", "a"])

        def work(name: str) -> str:
            return name

        updates: list = []

        def release(chunk: tuple[str, Any]) -> None:
            mode, data = chunk
            if mode == "updates":
                for node, value in data.items():
                    updates.append({node: value})
                    if node == "work":
                        gate.finished(value)

        graph = fan_in_graph(task(gate.node(lambda name: name, work)), lambda futures: futures.values())
        chunks = lg_modes.stream(obs, graph, ["a", "b", "c"], stream_mode=["updates", "values"], on_chunk=release)
        obs.require_in_flight(gate)
        if gate.acted != ["c", "b", "a"]:
            obs.vacuous(f"the tasks finished as {gate.acted}")
        return {"finished": gate.acted, "updates": updates, "returned": [d for m, d in chunks if m == "values"][-1]}

    def in_flight() -> dict:
        hold = lg_modes.Hold(obs, ["a", "b", "c"], held=["a", "c"], patience=HOLD_PATIENCE[obs.mode])

        def work(name: str) -> str:
            if name == "b":
                raise ValueError("task b failed")
            return name

        # the entrypoint resolves b's future first, while a and c are still held in flight
        graph = fan_in_graph(task(hold.node(lambda name: name, work)), lambda futures: [futures["b"], futures["a"]])
        at_return: dict = {}
        outcome = obs.attempt(
            lambda: lg_modes.invoke(obs, graph, ["a", "b", "c"], on_return=lambda: at_return.update(hold.fates))
        )
        obs.require_in_flight(hold)
        fates = {name: at_return.get(name, "still in flight") for name in ["a", "c"]}
        return {**outcome, "held tasks when the run ended": fates}

    with obs.framework():
        cases = {
            "finish c, b, a": finish_order(),
            "b raises, the entrypoint catches it": _caught_task_error(obs, entrypoint, task),
            "b raises while a and c are in flight": in_flight(),
        }
    ordered, handled, failing = cases.values()
    by_call = ordered["returned"] == ["a", "b", "c"]
    contained = "returned" in handled
    fates = set(failing["held tasks when the run ended"].values())
    fate = {
        "cancelled": "in-flight tasks cancelled",
        "finished": "run waits for in-flight tasks",
        "still in flight": "in-flight tasks left running",
    }.get(fates.pop() if len(fates) == 1 else "", "in-flight tasks: mixed")
    if not by_call:
        label = "results in finish order"
    elif not contained:
        label = "caught task error still fails run"
    else:
        label = f"error: {fate}"
    obs.record(
        cases,
        label=label,
        detail=f"results {ordered['returned']} (tasks finished {ordered['finished']});"
        f" caught error: {handled}; uncaught error with a and c in flight:"
        f" {failing.get('raises', 'no error')}, {fate} ({failing['held tasks when the run ended']})",
        hazard="nondeterministic" if not by_call else "loud" if not contained else "safe",
    )
