"""interrupt() inside parallel branches: what the siblings' writes become, and what runs again on resume."""

import operator
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, harm, probe

INTERRUPTS_DOC = "https://docs.langchain.com/oss/python/langgraph/interrupts"
PENDING_WRITES_DOC = "https://docs.langchain.com/oss/python/langgraph/persistence#pending-writes"


def fan_in(schema: type, branches: dict[str, Callable], runs: dict[str, int]) -> StateGraph:
    """The shape the parallel interrupt probes ask in: START fans out to `branches`, a list edge joins them.

    The join counts its runs in `runs["join"]` and appends "join" to `items`.
    """

    def join(state: Any) -> dict:  # Any, not a schema class: the graph's own schema is its input
        runs["join"] += 1
        return {"items": ["join"]}

    builder = StateGraph(schema)
    for name, node in branches.items():
        builder.add_node(name, node)
    builder.add_node("join", join)
    for name in branches:
        builder.add_edge(START, name)
    builder.add_edge(list(branches), "join")
    return builder


@probe(
    "langgraph/interrupt/parallel-sibling",
    title="One of two parallel nodes calls interrupt() after its sibling returned; the run is resumed with"
    " Command(resume=...)",
    claim=Claim(
        "The writes of nodes that completed in the interrupted superstep are kept as pending writes: on"
        " resume only the interrupted node runs again (from its start), the sibling is not re-executed and"
        " its write is applied once. Here one interrupt is open, so one resume value answers it (the resume"
        " forms that address interrupts by id matter with several: langgraph/interrupt/parallel-both).",
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

    builder = fan_in(State, {"sibling": sibling, "asker": asker}, runs)
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


def _two_askers(interrupt: Any) -> SimpleNamespace:
    """test_parallel_both's graph: a and b both call interrupt() in one superstep (b after a), every run counted."""

    class State(TypedDict):
        items: Annotated[list, operator.add]

    in_flight = threading.Barrier(2, timeout=10)
    a_asked = threading.Event()  # b calls interrupt() only after a's call whenever a runs: which of them a
    alone: list[str] = []  # single resume value reaches must not depend on thread scheduling
    runs: dict[str, int] = {}
    answers: dict[str, list] = {}

    def asker(name: str) -> Callable[..., dict]:
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
            if isinstance(answer, dict):  # a whole resume map handed to the node as its answer
                answer = f"map of {sorted(map(str, answer.values()))}"
            answers[name].append(lg_persist.plain(answer))
            return {"items": [f"{name}:{answer}"]}

        return node

    builder = fan_in(State, {"a": asker("a"), "b": asker("b")}, runs)
    return SimpleNamespace(builder=builder, runs=runs, answers=answers, alone=alone, a_asked=a_asked)


RESUME_FORMS = ("single", "task_id", "interrupt_id")  # Command(resume=value), {task id: value}, {interrupt id: value}
MAX_RESUMES = 3  # two askers need at most two resumes that each deliver an answer; a third shows what is left


@probe(
    "langgraph/interrupt/parallel-both",
    title="Two parallel nodes both call interrupt() in one superstep; the run is resumed in each form the version"
    " accepts (one value, a map by task id, a map by interrupt id), again while interrupts stay open",
    claim=Claim(
        "Interrupts raised by parallel nodes are collected together; Command(resume={interrupt_id: value})"
        " answers each one, each node receives its own answer, and resolved interrupts do not fire again.",
        "https://github.com/langchain-ai/langgraph/issues/5952",
        expect={
            "value.forms.interrupt_id.answers": {"a": ["for-a"], "b": ["for-b"]},
            "value.forms.interrupt_id.open_at_end": [],
        },
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

    made = _two_askers(interrupt)
    builder, runs, answers, alone, a_asked = made.builder, made.runs, made.answers, made.alone, made.a_asked

    forms: dict[str, dict] = {}
    with lg_persist.checkpointer(obs) as saver:
        run = lg_persist.driven(obs, builder.compile(checkpointer=saver))
        for form in RESUME_FORMS:
            runs.clear()
            runs.update({"a": 0, "b": 0, "join": 0})
            answers.clear()
            answers.update({"a": [], "b": []})
            a_asked.clear()
            config = {"configurable": {"thread_id": f"parallel-both-{form}"}}
            with obs.framework(value=lambda: {"form": form, "runs": runs, "answers": answers}):
                first = run.invoke({"items": []}, config)["items"]  # an error before any interrupt ends the probe
            if alone:
                obs.vacuous(f"{alone[0]} was never in flight with the other asker")
            snapshot = run.get_state(config)
            opened = lg_persist.interrupts_of(snapshot)
            result: dict = {"first_run": first, "opened": opened}
            if form == "interrupt_id":
                ids = [lg_persist.interrupt_id(i) for task in snapshot.tasks for i in task.interrupts]
                if len(ids) != 2 or None in ids or len(set(ids)) != 2:
                    forms[form] = {**result, "n/a": "the interrupts carry no distinct id in this version"}
                    continue
            resumes: list[dict] = []
            for number in range(1, MAX_RESUMES + 1):
                waiting = [task for task in snapshot.tasks if task.interrupts]
                if not waiting:
                    break
                if form == "single":
                    sent: dict = {task.name: f"answer-{number}" for task in waiting}
                    resume = Command(resume=f"answer-{number}")
                elif form == "task_id":
                    sent = {task.name: f"for-{task.name}" for task in waiting}
                    resume = Command(resume={task.id: f"for-{task.name}" for task in waiting})
                else:
                    sent = {task.name: f"for-{task.name}" for task in waiting}
                    resume = Command(
                        resume={lg_persist.interrupt_id(i): f"for-{task.name}" for task in waiting for i in task.interrupts}
                    )
                # a node whose write is already pending does not run again: b must not wait for it
                pending = lg_persist.pending_of(run.saved(config), snapshot)
                if any(writer == "a" and channel == "items" for writer, channel, _ in pending):
                    a_asked.set()
                else:
                    a_asked.clear()
                before = {name: len(got) for name, got in answers.items()}
                got = obs.attempt(lambda: run.invoke(resume, config))
                if alone:
                    obs.vacuous(alone[0])
                if "raises" in got:
                    resumes.append({"sent": sent, "raises": got["raises"]})
                    break
                snapshot = run.get_state(config)
                delivered = {name: answers[name][before[name]:] for name in answers if answers[name][before[name]:]}
                resumes.append({"sent": sent, "delivered": delivered, "open_after": lg_persist.interrupts_of(snapshot)})
                if not delivered:
                    break  # nothing reached any node: another resume in this form would do the same
            final = snapshot.values.get("items") or []
            forms[form] = {
                **result,
                "resumes": resumes,
                "runs": dict(runs),
                "answers": {name: list(got) for name, got in answers.items()},
                "final": sorted(final),
                "open_at_end": lg_persist.interrupts_of(snapshot),
                "next_at_end": sorted(snapshot.next),
            }

    graded = {form: _grade_resume_form(form, forms[form]) for form in RESUME_FORMS}
    accepted = [hazard for _, hazard, _ in (graded[form] for form in RESUME_FORMS) if hazard is not None]
    if accepted:
        hazard = max(accepted, key=harm)
    else:  # no form is accepted: every resume raises, or none reaches a node
        hazard = "loud" if any(r.get("raises") for f in forms.values() for r in f.get("resumes", [])) else "silent"
    for form in RESUME_FORMS:
        forms[form]["reading"] = graded[form][0]
    obs.record(
        {"forms": forms},
        label=_forms_label({form: graded[form][0] for form in RESUME_FORMS}),
        detail="; ".join(
            f"{form}: {graded[form][0]} ({graded[form][2]})" for form in RESUME_FORMS
        ),
        hazard=hazard,
    )


_FORM_SHORT = {"single": "value", "task_id": "task", "interrupt_id": "id"}


def _forms_label(readings: dict[str, str]) -> str:
    """`resumes value:2 task:1 id:n/a`: resumes each form needed to answer both, or what went wrong."""
    parts = [f"{_FORM_SHORT[form]}:{reading.split(' ')[0]}" for form, reading in readings.items()]
    label = "resumes " + " ".join(parts)
    return label if len(label) <= 40 else " ".join(parts)[:40]
def _grade_resume_form(form: str, seen: dict) -> tuple[str, str | None, str]:
    """(short reading, hazard or None when the version does not accept this form, what happened).

    A form is accepted when a resume delivered an answer to a node (a form whose first resume raises is
    refused: the error is recorded, the probe's hazard is the worst accepted form's, loud when none is
    accepted). Nothing is lost that a later resume
    delivers; a write is lost when a sent answer never reaches its node, reaches the other node, or is
    written twice, or when the join does not run exactly once after every interrupt is answered."""
    if "n/a" in seen:
        return "n/a", None, seen["n/a"]
    resumes = seen["resumes"]
    if not resumes:
        return "none", None, f"no interrupt to resume (first run {seen['first_run']})"
    if "raises" in resumes[0]:
        return "raises", None, f"refused: the first resume raises {resumes[0]['raises']}"
    if not resumes[0]["delivered"]:
        return "ignored", None, f"the resume reached no node; open after it {resumes[0]['open_after']}"
    story = [
        f"resume {n}: " + (f"raises {r['raises']}" if "raises" in r else f"delivered {r['delivered']}, open {r['open_after']}")
        for n, r in enumerate(seen["resumes"], 1)
    ]
    story.append(f"runs {seen['runs']}, final {seen['final']}")
    text = "; ".join(story)
    if any("raises" in r for r in resumes):
        return "raises", "loud", text
    answers = seen["answers"]
    final = seen["final"]
    misrouted = any(
        got not in (f"for-{name}",) and not str(got).startswith("answer-") for name, values in answers.items() for got in values
    )
    doubled = any(len(set(map(str, values))) > 1 for values in answers.values()) or any(
        final.count(item) > 1 for item in final
    )
    finished = not seen["open_at_end"] and not seen["next_at_end"]
    unanswered = [name for name, values in answers.items() if not values]
    if misrouted:
        return "misrouted", "silent", text
    if doubled:
        return "re-asked", "silent", text
    if not finished or unanswered:
        return "lost", "silent", text
    if seen["runs"]["join"] != 1:
        return f"join×{seen['runs']['join']}", "silent", text
    return f"{len(resumes)} resume" + ("s" if len(resumes) > 1 else ""), "safe", text


def _send_workers(interrupt: Any, Send: Any) -> SimpleNamespace:
    """test_send_workers's graph: j1 returns, j2 and j3 call interrupt() (j3 after j2), every run counted."""

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
    return SimpleNamespace(builder=builder, runs=runs, answers=answers, alone=alone, j2_asked=j2_asked)


@probe(
    "langgraph/interrupt/send-workers",
    title="Three Send workers run in one superstep: j1 returns, then j2 and j3 call interrupt(); a Command"
    " resumes them (again while an interrupt stays open): is the finished worker run again?",
    claim=Claim(
        "Workers that finished in the interrupted superstep keep their writes as pending writes and are not"
        " re-executed on resume (no duplicate write); each interrupted worker gets its own answer. Here the"
        " resume is a map by interrupt id where interrupts carry ids (0.4+), else one value; every form on"
        " two askers is langgraph/interrupt/parallel-both.",
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

    made = _send_workers(interrupt, Send)
    builder, runs, answers, alone, j2_asked = made.builder, made.runs, made.answers, made.alone, made.j2_asked
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
        resumes = 0
        while True:  # resume again while an interrupt stays open and the last resume answered someone
            delivered_before = sum(len(got) for got in answers.values())
            # A raise (RuntimeError from interrupt() on Python 3.10 async) cancels the sibling workers wherever their
            # threads are: how often each had started then is the threads' timing, not the framework's, so not kept.
            with obs.framework(value=lambda: {"opened": opened, "resume": style, "answers": answers}):
                output = run.invoke(resume, config)
                after = run.get_state(config)
            resumes += 1
            if alone:
                obs.vacuous(alone[0])
            still_open = [i for task in after.tasks for i in task.interrupts]
            if not still_open or resumes == MAX_RESUMES or sum(map(len, answers.values())) == delivered_before:
                break
            by_job = {i.value.rsplit(" ", 1)[-1]: lg_persist.interrupt_id(i) for i in still_open}
            if style.startswith("map"):
                resume = Command(resume={by_job[job]: f"for-{job}" for job in by_job})
            pending = lg_persist.pending_of(run.saved(config), after)
            if any(channel == "items" and "j2:" in str(value) for _, channel, value in pending):
                j2_asked.set()  # j2's write is pending: it does not run again, so j3 must not wait for it
            else:
                j2_asked.clear()
    final = output.get("items") or []
    counts = {item.split(":")[0]: final.count(item) for item in final}
    again = lg_persist.interrupts_of(after)
    answered = sorted(job for job, got in answers.items() if got)
    reopened = sorted(job for job, got in answers.items() if len(got) > 1)  # answered, then asked again
    unanswered = sorted(set(answers) - set(answered))
    wrong = {job: got for job, got in answers.items() if got and got not in ([f"for-{job}"], ["for-both"])}
    rerun = runs["j1"] > 1 or counts.get("j1", 0) != 1
    problems = [f"j1 re-run ×{runs['j1']}" if runs["j1"] > 1 else f"j1 written ×{counts.get('j1', 0)}"] if rerun else []
    problems += [f"{', '.join(reopened)} asked again"] if reopened else []
    problems += [f"{', '.join(unanswered)} unanswered"] if unanswered else []
    problems += ["answers misrouted"] if wrong else []
    kept = "finished worker kept, not re-run" if resumes == 1 else f"j1 kept, not re-run; {resumes} resumes"
    label = "; ".join(problems) if problems else kept
    folded = [item.split(":")[0] for item in final]  # the order the superstep folded the workers' writes in
    if folded != ["j1", "j2", "j3"]:  # not the Send list's order (the first problem only: a label is short)
        label = f"{problems[0] if problems else 'kept, not re-run'}; folded {','.join(folded)}"
    obs.record(
        {
            "first_run": first.get("raises", first.get("returned")),
            "opened": opened,
            "interrupted": interrupted,
            "resume": style,
            "resumes": resumes,
            "runs": runs,
            "answers": answers,
            "final": counts,
            "folded": folded,
            "open_interrupts_after_resume": again,
        },
        label=label,
        detail=f"at the interrupt: pending {interrupted['pending']}; resumed {resumes}x with a {style}; runs {runs},"
        f" answers {answers}, final {final}, open after the last resume {again}",
        hazard="silent" if rerun or reopened or wrong or unanswered else "safe",
    )


@probe(
    "langgraph/interrupt/single-node",
    title="One node, alone in its superstep, calls interrupt(); the run is resumed with Command(resume=...): the"
    " non-parallel control of the parallel interrupt probes (as a plain def node, and in async mode also as an"
    " async def node)",
    claim=Claim(
        "A node calls interrupt(value) to pause; the run is resumed with Command(resume=answer) and interrupt()"
        " returns the answer. The call needs the runnable context, which async execution before Python 3.11"
        " does not propagate to the node's task.",
        INTERRUPTS_DOC,
        expect={"value.forms.def.final": ["asker:yes"], "value.forms.def.runs": 2},
    ),
    modes=("sync", "async"),
)
def test_single_node(obs: Observer) -> None:
    """Memory only: the interrupt needs no checkpointer read before `get_config()`, which is where Python 3.10's
    async failure happens; the parallel interrupt probes' sqlite and postgres variants show it on every backend."""
    interrupt, Command = obs.need("langgraph.types", "interrupt", "Command")
    from langgraph.checkpoint.memory import MemorySaver

    class State(TypedDict):
        items: Annotated[list, operator.add]

    def build(form: str, runs: list) -> object:
        def asker(state: State) -> dict:
            runs.append("asker")
            return {"items": [f"asker:{interrupt('approve?')}"]}

        async def async_asker(state: State) -> dict:
            runs.append("asker")
            return {"items": [f"asker:{interrupt('approve?')}"]}

        builder = StateGraph(State)
        builder.add_node("asker", asker if form == "def" else async_asker)
        builder.add_edge(START, "asker")
        return builder.compile(checkpointer=MemorySaver())

    forms_here = ("def",) if obs.mode == "sync" else ("def", "async def")
    forms: dict[str, dict] = {}
    for form in forms_here:
        runs: list = []
        run = lg_persist.driven(obs, build(form, runs))
        config = {"configurable": {"thread_id": f"single-node-{form}"}}
        first = obs.attempt(lambda: run.invoke({"items": []}, config))
        if "raises" in first:
            forms[form] = {"first_run": {"raises": first["raises"]}, "runs": len(runs)}
            continue
        opened = lg_persist.interrupts_of(run.get_state(config))
        resumed = obs.attempt(lambda: run.invoke(Command(resume="yes"), config))
        forms[form] = {
            "first_run": "paused" if opened else "returned",
            "opened": opened,
            "resume": {"raises": resumed["raises"]} if "raises" in resumed else "returned",
            "runs": len(runs),
            "final": sorted((resumed.get("returned") or {}).get("items") or []),
        }
    raised = sorted({f[step]["raises"] for f in forms.values() for step in ("first_run", "resume")
                     if isinstance(f.get(step), dict)})
    answered = all(f.get("final") == ["asker:yes"] for f in forms.values())
    obs.record(
        {"forms": forms},
        label=f"raises {', '.join(raised)}" if raised else "answered" if answered else "answer lost",
        detail="; ".join(
            f"{form} node: first run "
            + (f"raises {f['first_run']['raises']}" if isinstance(f["first_run"], dict) else f["first_run"])
            + (f", resume {'returns' if f['resume'] == 'returned' else 'raises ' + f['resume']['raises']}, final"
               f" {f['final']}" if "resume" in f else "")
            + f", node ran ×{f['runs']}"
            for form, f in forms.items()
        ),
        hazard="loud" if raised else "safe" if answered else "silent",
        outcome=f"raises:{raised[0]}" if raised else "ok",
    )
