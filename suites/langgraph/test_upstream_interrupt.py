"""interrupt() at fan-in as users report it upstream: parallel tool calls in one ToolNode task, and a resume
map whose id matches no pending interrupt."""

import asyncio
import operator
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, harm, probe

MISROUTED_ISSUE = "https://github.com/langchain-ai/langgraph/issues/6533"
UNKNOWN_ID_ISSUE = "https://github.com/langchain-ai/langgraph/issues/8836"
MAX_RESUMES = 3


def _tools_scenario(obs: Observer, api: SimpleNamespace, order: str, form: str) -> dict:
    """One run of test_parallel_tools_one_node: a's interrupt first or b's, resumed by one value or by ids."""
    interrupt, Command, ToolNode, MemorySaver = api.interrupt, api.Command, api.ToolNode, api.MemorySaver
    AIMessage, tool = api.AIMessage, api.tool

    class State(TypedDict):
        messages: Annotated[list, api.add_messages]

    first, second = ("a", "b") if order == "a-first" else ("b", "a")
    answers: dict[str, list] = {"a": [], "b": []}
    # the first tool's interrupt() call has returned or raised; an asyncio.Event in async mode (made on
    # the run's loop), where the tools are coroutines so that the loop, not thread timing, orders them
    gate: list = []
    stuck: list[str] = []

    def asked() -> Any:
        if not gate:
            gate.append(asyncio.Event() if obs.mode == "async" else threading.Event())
        return gate[0]

    def ask(name: str) -> str:
        try:
            got = interrupt(f"question for {name}")
        finally:
            if name == first:
                asked().set()
        answers[name].append(lg_persist.plain(got))
        return f"{name} got {got}"

    def asker(name: str) -> Any:
        if obs.mode == "async":

            async def body() -> str:
                if name == second:
                    try:
                        await asyncio.wait_for(asked().wait(), 10)
                    except asyncio.TimeoutError:
                        stuck.append(f"{first}'s interrupt() never ran while {second} waited")
                return ask(name)

        else:

            def body() -> str:  # type: ignore[misc]
                if name == second and not asked().wait(10):
                    stuck.append(f"{first}'s interrupt() never ran while {second} waited")
                return ask(name)

        body.__name__ = f"ask_{name}"
        body.__doc__ = f"Ask the user on behalf of {name}."
        return tool(body)

    def agent(state: State) -> dict:
        calls = [{"name": f"ask_{name}", "args": {}, "id": f"call_{name}"} for name in ("a", "b")]
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([asker("a"), asker("b")]))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    run = lg_persist.driven(obs, builder.compile(checkpointer=MemorySaver()))
    config = {"configurable": {"thread_id": f"{order}-{form}"}}
    names: dict[str, str] = {}  # interrupt id -> "id1", "id2", ... by first appearance (ids vary run to run)

    def listed() -> list:
        rows = []
        for task in run.get_state(config).tasks:
            for item in task.interrupts:
                raw = lg_persist.interrupt_id(item)
                if raw is not None and raw not in names:
                    names[raw] = f"id{len(names) + 1}"
                rows.append({"value": lg_persist.plain(item.value), "id": names.get(raw) if raw else None, "raw": raw})
        return rows

    gate.clear()
    with obs.framework():
        run.invoke({"messages": []}, config)
    if stuck:
        obs.vacuous(stuck[0])
    opened = listed()
    if form == "interrupt_id" and any(row["raw"] is None for row in opened):
        return {
            "first_listed": sorted(str(row["value"]) for row in opened),
            "n/a": "the interrupts carry no id in this version",
        }
    resumes: list[dict] = []
    misrouted: list[str] = []  # an answer sent for one tool's interrupt that another tool received
    for number in range(1, MAX_RESUMES + 1):
        waiting = listed()
        if not waiting:
            break
        tools = [str(row["value"])[-1] for row in waiting]  # "question for a" -> "a"
        if form == "single":
            resume = Command(resume=f"answer-{number}")
            sent = {"value": f"answer-{number}"}
            # one listed interrupt: the value answers it; with both listed a single value addresses neither
            meant = {tools[0]: f"answer-{number}"} if len(tools) == 1 else {}
        else:
            mapping = {row["raw"]: f"for-{tool_name}" for row, tool_name in zip(waiting, tools)}
            resume = Command(resume=mapping)
            sent = {names.get(key, "none"): value for key, value in mapping.items()}
            meant = {tool_name: f"for-{tool_name}" for tool_name in tools}
        before = {name: len(got) for name, got in answers.items()}
        gate.clear()
        got = obs.attempt(lambda: run.invoke(resume, config))
        if stuck:
            obs.vacuous(stuck[0])
        shown = [[r["value"], r["id"]] for r in waiting]
        if "raises" in got:
            resumes.append({"listed": shown, "sent": sent, "raises": got["raises"]})
            break
        delivered = {name: answers[name][before[name] :] for name in answers if answers[name][before[name] :]}
        wrong = sorted(
            f"{value} -> {name}"
            for name, values in delivered.items()
            for value in values
            for owner, meant_value in meant.items()
            if value == meant_value and owner != name
        )
        misrouted.extend(wrong)
        resumes.append({"listed": shown, "sent": sent, "delivered": delivered, "misrouted": wrong})
    state = run.get_state(config)
    tool_messages = sorted(m.content for m in state.values.get("messages", []) if m.type == "tool")
    ids = [row["id"] for row in opened]
    return {
        "first_listed": sorted(str(row["value"]) for row in opened),
        "resumes": resumes,
        "answers": answers,
        "tool_messages": tool_messages,
        "open_at_end": sorted(str(row["value"]) for row in listed()),
        "ids_seen": len(names),
        "first_ids_distinct": len(set(ids)) == len(ids) and None not in ids,
        "misrouted": sorted(set(misrouted)),
        "unanswered": sorted(name for name in ("a", "b") if not any(f"{name} got" in m for m in tool_messages)),
    }


@probe(
    "langgraph/interrupt/parallel-tools-one-node",
    title="An AI message calls two tools at once; a ToolNode runs both in one task and each tool calls interrupt()"
    " (a's call first, then b's, and the other way round; sync tools, async tools in async mode); resumed by one"
    " value and by a map of interrupt ids",
    claim=Claim(
        "Each interrupt() of parallel tool calls gets its own id, both are listed, and"
        " Command(resume={id: value}) gives each tool the value sent for its own interrupt.",
        "https://github.com/langchain-ai/langgraph/issues/6626",
        expect={
            "value.a-first.interrupt_id.misrouted": [],
            "value.a-first.interrupt_id.unanswered": [],
            "value.b-first.interrupt_id.misrouted": [],
            "value.a-first.interrupt_id.first_listed": ["question for a", "question for b"],
        },
    ),
    sources=[
        MISROUTED_ISSUE,
        "https://github.com/langchain-ai/langgraph/issues/6624",
        "https://github.com/langchain-ai/langgraph/issues/6626",
    ],
    modes=("sync", "async"),
)
def test_parallel_tools_one_node(obs: Observer) -> None:
    interrupt, Command = obs.need("langgraph.types", "interrupt", "Command")
    ToolNode = obs.need("langgraph.prebuilt", "ToolNode")
    MemorySaver = obs.need("langgraph.checkpoint.memory", "MemorySaver")
    add_messages = obs.need("langgraph.graph.message", "add_messages")
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    api = SimpleNamespace(
        interrupt=interrupt, Command=Command, ToolNode=ToolNode, MemorySaver=MemorySaver, AIMessage=AIMessage, tool=tool
    )
    api.add_messages = add_messages
    forms = ("single", "interrupt_id")
    seen = {order: {form: _tools_scenario(obs, api, order, form) for form in forms} for order in ("a-first", "b-first")}
    ran = [s for forms in seen.values() for s in forms.values() if "n/a" not in s]
    by_id = [s for s in (seen[order]["interrupt_id"] for order in seen) if "n/a" not in s]
    raised = any("raises" in r for s in ran for r in s["resumes"])
    misrouted = any(s["misrouted"] for s in ran)
    unanswered = any(s["unanswered"] for s in ran)
    shared = any(s["ids_seen"] < 2 for s in by_id)
    listed_one = any(len(s["first_listed"]) < 2 for s in ran)
    if misrouted:
        label = "an answer reaches the other tool"
    elif unanswered:
        label = "a tool is never answered"
    elif raised:
        label = "a resume raises"
    elif not by_id:
        label = "no interrupt ids; one listed at a time"
    elif shared:
        label = "one id shared; answered one at a time"
    elif listed_one:
        label = "distinct ids; listed one at a time"
    else:
        label = "distinct ids, both listed"
    differs = {(bool(s["misrouted"]), bool(s["unanswered"])) for s in ran}
    obs.record(
        seen,
        label=label,
        detail="; ".join(
            f"{order}/{form}: n/a ({s['n/a']})"
            if "n/a" in s
            else f"{order}/{form}: listed {s['first_listed']}, {s['ids_seen']} ids, resumes {len(s['resumes'])},"
            f" answers {s['answers']}, open {s['open_at_end']}"
            for order, forms in seen.items()
            for form, s in forms.items()
        ),
        hazard="silent"
        if misrouted or unanswered
        else "loud"
        if raised
        else "order-coupled"
        if len(differs) > 1
        else "safe",
    )


@probe(
    "langgraph/interrupt/resume-unknown-id",
    title="Command(resume={key: value}) whose key matches no pending interrupt: one interrupt pending (a 32-hex key,"
    " a plain key), and two parallel nodes pending (an unknown hex key only; a known id beside an unknown one)",
    claim=Claim(
        "A resume map is matched against the pending interrupts' ids: an id that matches no pending interrupt"
        " is refused with an error rather than dropped, and a known id beside it answers its own interrupt.",
        UNKNOWN_ID_ISSUE,
        expect={
            "value.one-pending.hex-key.outcome": "raises",
            "value.two-pending.known-and-unknown.answers": {"a": ["for-a"], "b": []},
        },
    ),
    sources=[UNKNOWN_ID_ISSUE, "https://docs.langchain.com/oss/python/langgraph/interrupts"],
    backends=("memory", "sqlite", "postgres"),
)
def test_resume_unknown_id(obs: Observer) -> None:
    interrupt, Command = obs.need("langgraph.types", "interrupt", "Command")

    class State(TypedDict):
        items: Annotated[list, operator.add]

    unknown = "0123456789abcdef0123456789abcdef"  # 32 hex digits: the shape of an interrupt id, pending nowhere

    def scenario(run_of: Callable[[StateGraph], lg_persist.driven], shape: str, case: str) -> dict:
        answers: dict[str, list] = {"a": [], "b": []}
        in_flight = threading.Barrier(2 if shape == "two-pending" else 1, timeout=10)
        a_asked = threading.Event()  # b asks only after a has asked: the listing order never depends on threads
        alone: list[str] = []

        def asker(name: str) -> Callable[..., dict]:
            def node(state: State) -> dict:
                if not answers[name]:
                    try:
                        in_flight.wait()
                    except threading.BrokenBarrierError:
                        alone.append(f"{name} was never in flight with its sibling")
                if name == "b" and not a_asked.wait(10):
                    alone.append("a never called interrupt() while b waited")
                try:
                    got = interrupt(f"question for {name}")
                finally:
                    if name == "a":
                        a_asked.set()
                answers[name].append(lg_persist.plain(got))
                return {"items": [f"{name}:{got}"]}

            return node

        builder = StateGraph(State)
        builder.add_node("a", asker("a"))
        builder.add_edge(START, "a")
        if shape == "two-pending":
            builder.add_node("b", asker("b"))
            builder.add_edge(START, "b")
        run = run_of(builder)
        config = {"configurable": {"thread_id": f"{shape}-{case}"}}
        with obs.framework():
            run.invoke({"items": []}, config)
        if alone:
            obs.vacuous(alone[0])
        pending = [(task.name, i) for task in run.get_state(config).tasks for i in task.interrupts]
        known = {name: lg_persist.interrupt_id(i) for name, i in pending}
        if case == "hex-key" or case == "unknown-only":
            mapping = {unknown: "for-nobody"}
        elif case == "plain-key":
            mapping = {"approved": "yes"}
        else:
            a_id = known.get("a")
            if a_id is None:
                return {"opened": sorted(known), "n/a": "the interrupts carry no id in this version"}
            mapping = {a_id: "for-a", unknown: "for-b"}
        a_asked.set() if shape == "one-pending" else a_asked.clear()
        got = obs.attempt(lambda: run.invoke(Command(resume=mapping), config))
        if alone:
            obs.vacuous(alone[0])
        snapshot = run.get_state(config)
        returned: dict = got["returned"] if isinstance(got.get("returned"), dict) else {}
        return {
            "opened": sorted(known),
            "outcome": "raises" if "raises" in got else "returned",
            "raises": got.get("raises"),
            "answers": answers,
            "open_after": lg_persist.interrupts_of(snapshot),  # get_state(): its tasks' interrupts
            # what else lists the open interrupts after the resume: the snapshot's own list (0.4+), and the
            # resume's return value (`__interrupt__`, where invoke returns it)
            "snapshot_interrupts_after": sorted(lg_persist.plain(i.value) for i in getattr(snapshot, "interrupts", ())),
            "returned_interrupts": sorted(lg_persist.plain(i.value) for i in returned.get("__interrupt__", ())),
            "items": sorted(snapshot.values.get("items") or []),
        }

    cases = {"one-pending": ("hex-key", "plain-key"), "two-pending": ("unknown-only", "known-and-unknown")}
    with lg_persist.checkpointer(obs) as saver:

        def run_of(builder: StateGraph) -> lg_persist.driven:
            return lg_persist.driven(obs, builder.compile(checkpointer=saver))

        seen = {shape: {case: scenario(run_of, shape, case) for case in names} for shape, names in cases.items()}

    readings = {f"{shape}/{case}": _unknown_id_reading(case, s) for shape, by in seen.items() for case, s in by.items()}
    for shape, by in seen.items():
        for case, s in by.items():
            s["reading"] = readings[f"{shape}/{case}"][0]
    hazard = max((h for _, h in readings.values()), key=lambda h: (harm(h), h != "n/a"))  # n/a only when all are
    hex_reading = readings["one-pending/hex-key"][0]
    obs.record(
        seen,
        label=f"hex key: {hex_reading}"[:40],
        detail="; ".join(f"{name}: {text}" for name, (text, _) in readings.items()),
        hazard="safe" if hazard == "n/a" else hazard,
    )


def _unknown_id_reading(case: str, s: dict) -> tuple[str, str]:
    """(what became of the unknown key, hazard). A value that reaches no node while the resume returns
    without an error is lost (silent), even though the interrupt stays listed: sending the same map
    again is ignored again, so only a caller that checks `__interrupt__` after every resume notices."""
    if "n/a" in s:
        return "n/a", "n/a"
    if s["outcome"] == "raises":
        return f"refused ({s['raises']})", "loud"
    if case == "plain-key":  # no id at all: a dict is a resume value like any other
        return ("delivered as the value", "safe") if s["answers"]["a"] else ("dropped", "silent")
    got = [value for values in s["answers"].values() for value in values]
    if case == "known-and-unknown":
        if s["answers"]["b"]:
            return "unknown id answered b", "silent"
        if s["answers"]["a"] != ["for-a"]:
            return "known id not delivered", "silent"
        return "unknown id dropped, b still open", "silent"
    if got:
        return "delivered as the value", "safe"
    return "ignored, interrupt still open", "silent"
