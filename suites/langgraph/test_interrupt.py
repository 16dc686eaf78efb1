"""interrupt() inside parallel branches: what the siblings' writes become, and what runs again on resume."""

import operator
import threading
from typing import Annotated, TypedDict

from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, probe

INTERRUPTS_DOC = "https://docs.langchain.com/oss/python/langgraph/interrupts"
PENDING_WRITES_DOC = "https://docs.langchain.com/oss/python/langgraph/persistence#pending-writes"


@probe(
    "langgraph/interrupt/parallel-sibling",
    title="One of two parallel nodes calls interrupt() after its sibling returned; the run is resumed with"
    " Command(resume=...)",
    claim=Claim(
        "The writes of nodes that completed in the interrupted superstep are kept as pending writes: on"
        " resume only the interrupted node runs again (from its start), the sibling is not re-executed and"
        " its write is applied once.",
        PENDING_WRITES_DOC,
        expect={"value.runs.sibling": 1, "value.runs.asker": 2, "value.final": ["asker:yes", "join", "sibling"]},
    ),
    sources=[INTERRUPTS_DOC],
    backends=("memory", "sqlite", "postgres"),
    modes=("sync", "async"),
)
def test_parallel_sibling(obs: Observer) -> None:
    interrupt, Command = obs.need("langgraph.types", "interrupt", "Command")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    in_flight = threading.Barrier(2, timeout=10)
    sibling_returned = threading.Event()
    alone: list[str] = []
    runs = {"sibling": 0, "asker": 0, "join": 0}

    def sibling(state: State) -> dict:
        runs["sibling"] += 1
        if runs["sibling"] == 1:
            try:
                in_flight.wait()
            except threading.BrokenBarrierError:
                alone.append("sibling")
        sibling_returned.set()
        return {"items": ["sibling"]}

    def asker(state: State) -> dict:
        runs["asker"] += 1
        if runs["asker"] == 1:
            try:
                in_flight.wait()
            except threading.BrokenBarrierError:
                alone.append("asker")
            sibling_returned.wait(10)
        answer = interrupt("approve?")
        return {"items": [f"asker:{answer}"]}

    def join(state: State) -> dict:
        runs["join"] += 1
        return {"items": ["join"]}

    builder = StateGraph(State)
    builder.add_node("sibling", sibling)
    builder.add_node("asker", asker)
    builder.add_node("join", join)
    builder.add_edge(START, "sibling")
    builder.add_edge(START, "asker")
    builder.add_edge(["sibling", "asker"], "join")
    config = {"configurable": {"thread_id": "parallel-sibling"}}

    with lg_persist.checkpointer(obs) as saver:
        run = lg_persist.driven(obs, builder.compile(checkpointer=saver))
        first = obs.attempt(lambda: run.invoke({"items": []}, config)["items"])
        if alone:
            obs.vacuous(f"{alone[0]} was never in flight with its sibling")
        snapshot = run.get_state(config)
        interrupted = {
            "runs": dict(runs),
            "values": snapshot.values.get("items"),
            "next": sorted(snapshot.next),
            "interrupts": lg_persist.interrupts_of(snapshot),
            "pending": lg_persist.pending_of(run.saved(config), snapshot),
        }
        with obs.framework(value=lambda: {"interrupted": interrupted, "runs": runs}):
            final = run.invoke(Command(resume="yes"), config)["items"]
            after = run.get_state(config)
    sibling_writes = final.count("sibling")
    if runs["sibling"] > 1 or sibling_writes != 1:
        label = f"sibling ran ×{runs['sibling']}, written ×{sibling_writes}"
    else:
        label = "sibling kept, not re-run"
    obs.record(
        {
            "first_run": first.get("raises", first.get("returned")),
            "interrupted": interrupted,
            "runs": runs,
            "final": sorted(final),
            "open_interrupts_after_resume": lg_persist.interrupts_of(after),
        },
        label=label,
        detail=f"at the interrupt: values {interrupted['values']}, pending {interrupted['pending']}; after resume"
        f" runs {runs}, final {final}",
        hazard="safe" if runs["sibling"] == 1 and sibling_writes == 1 and "asker:yes" in final else "silent",
    )


@probe(
    "langgraph/interrupt/parallel-both",
    title="Two parallel nodes both call interrupt() in one superstep; one Command resumes both with a map of"
    " answers by interrupt id (a single value where interrupts have no id)",
    claim=Claim(
        "Interrupts raised by parallel nodes are collected together; Command(resume={interrupt_id: value})"
        " answers each one, each node receives its own answer, and resolved interrupts do not fire again.",
        "https://github.com/langchain-ai/langgraph/issues/5952",
        expect={"value.answers": {"a": ["for-a"], "b": ["for-b"]}, "value.open_interrupts_after_resume": []},
    ),
    sources=[
        INTERRUPTS_DOC,
        "https://github.com/langchain-ai/langgraph/blob/main/libs/langgraph/tests/test_pregel.py",
    ],
    backends=("memory", "sqlite", "postgres"),
    modes=("sync", "async"),
)
def test_parallel_both(obs: Observer) -> None:
    interrupt, Command = obs.need("langgraph.types", "interrupt", "Command")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    in_flight = threading.Barrier(2, timeout=10)
    a_asked = threading.Event()  # in every run, b calls interrupt() only after a's call: which of them a
    alone: list[str] = []  # resume value reaches must not depend on thread scheduling
    runs = {"a": 0, "b": 0, "join": 0}
    answers: dict[str, list] = {"a": [], "b": []}

    def asker(name: str):
        def node(state: State) -> dict:
            runs[name] += 1
            if runs[name] == 1:
                try:
                    in_flight.wait()
                except threading.BrokenBarrierError:
                    alone.append(name)
            if name == "b" and not a_asked.wait(10):
                alone.append("a never called interrupt() while b waited")
            try:
                answer = interrupt(f"question for {name}")
            finally:
                if name == "a":
                    a_asked.set()
            answers[name].append(lg_persist.plain(answer))
            return {"items": [f"{name}:{answer}"]}

        return node

    def join(state: State) -> dict:
        runs["join"] += 1
        return {"items": ["join"]}

    builder = StateGraph(State)
    builder.add_node("a", asker("a"))
    builder.add_node("b", asker("b"))
    builder.add_node("join", join)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge(["a", "b"], "join")
    config = {"configurable": {"thread_id": "parallel-both"}}

    with lg_persist.checkpointer(obs) as saver:
        run = lg_persist.driven(obs, builder.compile(checkpointer=saver))
        first = obs.attempt(lambda: run.invoke({"items": []}, config)["items"])
        if alone:
            obs.vacuous(f"{alone[0]} was never in flight with the other asker")
        snapshot = run.get_state(config)
        opened = lg_persist.interrupts_of(snapshot)
        ids = {task.name: lg_persist.interrupt_id(i) for task in snapshot.tasks for i in task.interrupts}
        if len(ids) == 2 and None not in ids.values() and len(set(ids.values())) == 2:
            style = "map by interrupt id"
            resume = Command(resume={ids[name]: f"for-{name}" for name in ids})
        else:
            style = "single value (interrupts carry no distinct id)"
            resume = Command(resume="for-both")
        runs_at_interrupt = dict(runs)
        a_asked.clear()
        with obs.framework(value=lambda: {"opened": opened, "resume": style, "runs": runs, "answers": answers}):
            output = run.invoke(resume, config)
            after = run.get_state(config)
        if alone:
            obs.vacuous(alone[0])
    final = output.get("items")
    again = lg_persist.interrupts_of(after)
    answered = sorted(name for name, got in answers.items() if got)
    reopened = sorted({value.rsplit(" ", 1)[-1] for _, value in again} & set(answered))
    unanswered = sorted(set(answers) - set(answered))
    wrong = {name: got for name, got in answers.items() if got and got not in ([f"for-{name}"], ["for-both"])}
    problems = [f"{', '.join(reopened)} reopened"] if reopened else []
    problems += [f"{', '.join(unanswered)} unanswered"] if unanswered else []
    problems += ["answers misrouted"] if wrong else []
    if problems:
        label = "; ".join(problems)
    elif runs["join"] != 1:
        label = f"join ×{runs['join']}"
    else:
        label = "each answered once" if style.startswith("map") else "one value answers both"
    obs.record(
        {
            "first_run": first.get("raises", first.get("returned")),
            "opened": opened,
            "resume": style,
            "runs_at_interrupt": runs_at_interrupt,
            "runs": runs,
            "answers": answers,
            "final": sorted(final or []),
            "open_interrupts_after_resume": again,
        },
        label=label,
        detail=f"interrupts {opened}; resumed with a {style}; answers {answers}, runs {runs}, final {final},"
        f" open after resume {again}",
        hazard="silent" if reopened or wrong or (not unanswered and runs["join"] != 1) else "safe",
    )


@probe(
    "langgraph/interrupt/send-workers",
    title="Three Send workers run in one superstep: j1 returns, then j2 and j3 call interrupt(); one Command"
    " resumes both: is the finished worker run again?",
    claim=Claim(
        "Workers that finished in the interrupted superstep keep their writes as pending writes and are not"
        " re-executed on resume (no duplicate write); each interrupted worker gets its own answer.",
        "https://github.com/langchain-ai/langgraph/issues/4028",
        expect={"value.runs": {"collect": 1, "j1": 1, "j2": 2, "j3": 2}, "value.final.j1": 1},
    ),
    sources=[
        "https://github.com/langchain-ai/langgraph/blob/main/libs/langgraph/tests/test_large_cases.py",
        PENDING_WRITES_DOC,
    ],
    backends=("memory", "sqlite", "postgres"),
    modes=("sync", "async"),
)
def test_send_workers(obs: Observer) -> None:
    interrupt, Command, Send = obs.need("langgraph.types", "interrupt", "Command", "Send")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    in_flight = threading.Barrier(3, timeout=10)
    j1_returned = threading.Event()
    j2_asked = threading.Event()  # in every run, j3 calls interrupt() only after j2's call (see parallel-both)
    alone: list[str] = []
    runs = {"j1": 0, "j2": 0, "j3": 0, "collect": 0}
    answers: dict[str, list] = {"j2": [], "j3": []}

    def worker(payload: dict) -> dict:
        job = payload["job"]
        runs[job] += 1
        if runs[job] == 1:
            try:
                in_flight.wait()
            except threading.BrokenBarrierError:
                alone.append(job)
        if job == "j1":
            j1_returned.set()
            return {"items": ["j1"]}
        j1_returned.wait(10)
        if job == "j3" and not j2_asked.wait(10):
            alone.append("j2 never called interrupt() while j3 waited")
        try:
            answer = interrupt(f"question for {job}")
        finally:
            if job == "j2":
                j2_asked.set()
        answers[job].append(lg_persist.plain(answer))
        return {"items": [f"{job}:{answer}"]}

    def collect(state: State) -> dict:
        runs["collect"] += 1
        return {}

    builder = StateGraph(State)
    builder.add_node("worker", worker)
    builder.add_node("collect", collect)
    builder.add_conditional_edges(START, lambda state: [Send("worker", {"job": j}) for j in ("j1", "j2", "j3")], ["worker"])
    builder.add_edge("worker", "collect")
    config = {"configurable": {"thread_id": "send-workers"}}

    with lg_persist.checkpointer(obs) as saver:
        run = lg_persist.driven(obs, builder.compile(checkpointer=saver))
        first = obs.attempt(lambda: run.invoke({"items": []}, config)["items"])
        if alone:
            obs.vacuous(f"{alone[0]} was never in flight with the other workers")
        snapshot = run.get_state(config)
        opened = lg_persist.interrupts_of(snapshot)
        by_job = {
            i.value.rsplit(" ", 1)[-1]: lg_persist.interrupt_id(i) for task in snapshot.tasks for i in task.interrupts
        }
        if len(by_job) == 2 and None not in by_job.values() and len(set(by_job.values())) == 2:
            style = "map by interrupt id"
            resume = Command(resume={by_job[job]: f"for-{job}" for job in by_job})
        else:
            style = "single value (interrupts carry no distinct id)"
            resume = Command(resume="for-both")
        interrupted = {
            "runs": dict(runs),
            "values": snapshot.values.get("items"),
            "pending": lg_persist.pending_of(run.saved(config), snapshot),
        }
        j2_asked.clear()
        with obs.framework(value=lambda: {"opened": opened, "resume": style, "runs": runs, "answers": answers}):
            output = run.invoke(resume, config)
            after = run.get_state(config)
        if alone:
            obs.vacuous(alone[0])
    final = output.get("items") or []
    counts = {item.split(":")[0]: final.count(item) for item in final}
    again = lg_persist.interrupts_of(after)
    answered = sorted(job for job, got in answers.items() if got)
    reopened = sorted({value.rsplit(" ", 1)[-1] for _, value in again} & set(answered))
    unanswered = sorted(set(answers) - set(answered))
    wrong = {job: got for job, got in answers.items() if got and got not in ([f"for-{job}"], ["for-both"])}
    rerun = runs["j1"] > 1 or counts.get("j1", 0) != 1
    problems = [f"j1 re-run ×{runs['j1']}" if runs["j1"] > 1 else f"j1 written ×{counts.get('j1', 0)}"] if rerun else []
    problems += [f"{', '.join(reopened)} reopened"] if reopened else []
    problems += [f"{', '.join(unanswered)} unanswered"] if unanswered else []
    problems += ["answers misrouted"] if wrong else []
    label = "; ".join(problems) if problems else "finished worker kept, not re-run"
    obs.record(
        {
            "first_run": first.get("raises", first.get("returned")),
            "opened": opened,
            "interrupted": interrupted,
            "resume": style,
            "runs": runs,
            "answers": answers,
            "final": counts,
            "open_interrupts_after_resume": again,
        },
        label=label,
        detail=f"at the interrupt: pending {interrupted['pending']}; resumed with a {style}; runs {runs}, answers"
        f" {answers}, final {final}, open after resume {again}",
        hazard="silent" if rerun or reopened or wrong else "safe",
    )
