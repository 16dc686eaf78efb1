"""ADK 2.x Workflow: human input asked for inside a fan-out (google/adk-js #733 -> PR #760; adk-go #1568 has the
same shape), and code after a HITL node's `yield` (reported on google-adk 2.5.0).

START -> Ask and Sib -> JoinNode -> Collect. Ask (rerun_on_resume) yields a RequestInput; Sib finishes in a
forced order relative to the request. The user answers in a second turn. `n/a` before 2.0 (no
google.adk.workflow). Orders are forced with events the nodes set and `settle()`, never the clock.
"""

import asyncio
from typing import Any

from adk_kit import APP, USER, settle, user_message

from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from fanin.probe import Claim, Observer, harm, probe

JS_ISSUE = "https://github.com/google/adk-js/issues/733"
JS_PR = "https://github.com/google/adk-js/pull/760"
GO_ISSUE = "https://github.com/google/adk-go/issues/1568"


@probe(
    "adk/workflow/hitl-in-fan-out",
    title="START -> Ask and Sib -> Join -> Collect; Ask yields a RequestInput (Sib finishing after the request, and"
    " before it); the user answers in a second turn",
    claim=Claim(
        "A branch that asks for input pauses only itself: its sibling's result survives the pause, the sibling"
        " does not run again on resume, and the join fires once, with the answer and the sibling's output"
        " (adk-js #733, fixed by PR #760). Code after the RequestInput's yield does not run before the answer"
        " (reported on google-adk 2.5.0 to run in the same pass).",
        JS_ISSUE,
        expect={
            "value.orders.sib finishes after the request.join_inputs": [{"Ask": "answer=yes", "Sib": "sib"}],
            "value.orders.sib finishes after the request.runs_after_resume.Sib": 0,
        },
    ),
    sources=[JS_PR, GO_ISSUE],
)
async def test_hitl_in_fan_out(obs: Observer) -> None:
    Workflow, JoinNode, Edge, START, node = obs.need(
        "google.adk.workflow", "Workflow", "JoinNode", "Edge", "START", "node"
    )
    RequestInput = obs.need("google.adk.events", "RequestInput")
    respond = obs.need("google.adk.workflow.utils._workflow_hitl_utils", "create_request_input_response")

    async def one_order(sib_first: bool) -> dict:
        runs: dict[str, int] = {}
        join_inputs: list = []
        after_yield: list[str] = []
        asked, sib_done = asyncio.Event(), asyncio.Event()

        def count(name: str) -> None:
            runs[name] = runs.get(name, 0) + 1

        async def ask(ctx: Any, node_input: Any):  # type: ignore[no-untyped-def]  # a node: ADK reads a return hint as its output schema
            count("Ask")
            if ctx.resume_inputs:
                answer = next(iter(ctx.resume_inputs.values()))
                yield f"answer={answer.get('result') if isinstance(answer, dict) else answer}"
                return
            if sib_first:
                await sib_done.wait()
                await settle()  # Sib's output is handed on before Ask asks
            asked.set()
            yield RequestInput(interrupt_id="q1", message="proceed?")
            after_yield.append("ran before the answer")

        async def sib(node_input: Any) -> str:
            count("Sib")
            if not sib_first:
                await asked.wait()
            sib_done.set()
            return "sib"

        async def collect(node_input: Any) -> str:
            count("Collect")
            join_inputs.append(
                {k: node_input[k] for k in sorted(node_input)} if isinstance(node_input, dict) else node_input
            )
            return "collected"

        a, s, join = node(ask, name="Ask", rerun_on_resume=True), node(sib, name="Sib"), JoinNode(name="Join")
        workflow = Workflow(
            name="wf",
            edges=[
                Edge(from_node=START, to_node=a),
                Edge(from_node=START, to_node=s),
                Edge(from_node=a, to_node=join),
                Edge(from_node=s, to_node=join),
                Edge(from_node=join, to_node=node(collect, name="Collect")),
            ],
        )
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        runner = Runner(app_name=APP, node=workflow, session_service=service)

        async def turn(message: Any) -> list:
            return [e async for e in runner.run_async(user_id=USER, session_id="s1", new_message=message)]

        first = await obs.attempt_async(lambda: turn(user_message()))
        events = first.get("returned") or []
        asked_for = sorted({i for e in events for i in (getattr(e, "long_running_tool_ids", None) or ())})
        before = dict(runs)
        collected_before = len(join_inputs)
        answer = types.Content(role="user", parts=[respond("q1", {"result": "yes"})])
        second = await obs.attempt_async(lambda: turn(answer)) if asked_for else {"raises": "(nothing asked)"}
        return {
            "first_turn": "returned" if "returned" in first else first,
            "asked_for": asked_for,
            "runs_before_answer": dict(sorted(before.items())),
            "join_fired_before_answer": collected_before,
            "after_yield": after_yield[:1],
            "resume": "returned" if "returned" in second else second,
            "runs_after_resume": {k: runs.get(k, 0) - before.get(k, 0) for k in ("Ask", "Sib", "Collect")},
            "join_inputs": join_inputs,
        }

    orders = {
        "sib finishes after the request": await one_order(sib_first=False),
        "sib finishes before the request": await one_order(sib_first=True),
    }
    if not any(o["asked_for"] for o in orders.values()):
        obs.vacuous("Ask never asked for input")
    _record(obs, orders)


def _reading(seen: dict) -> tuple[str, str]:
    """One order's label and hazard: a raise, then the join's firing and inputs, then a sibling run again."""
    failed = next((t for t in (seen["first_turn"], seen["resume"]) if t != "returned"), None)
    if failed is not None:
        return f"raises {failed['raises']}"[:30], "loud"
    if seen["join_fired_before_answer"]:
        return "join fires before the answer", "silent"
    if seen["join_inputs"] != [{"Ask": "answer=yes", "Sib": "sib"}]:
        return "join gets other inputs", "silent"
    if seen["runs_after_resume"]["Sib"]:
        return "sibling runs again", "silent"
    return "sibling kept, join once", "safe"


def _record(obs: Observer, orders: dict) -> None:
    """One reading per order; the worst, with the code after the yield, is the hazard."""
    readings = {name: _reading(seen) for name, seen in orders.items()}
    # Code after the RequestInput's yield that runs before the answer acts without it (the 2.5.0 report: the
    # node approves its own action), and nothing says so.
    ran_on = any(seen["after_yield"] for seen in orders.values())
    worst = max([*readings.values(), ("", "silent" if ran_on else "safe")], key=lambda r: harm(r[1]))
    fan_in = max(readings.values(), key=lambda r: harm(r[1]))[0]
    same = len({text for text, _ in readings.values()}) == 1
    obs.record(
        {"orders": orders},
        label=(fan_in if same else "the two orders differ") + ("; yield runs on" if ran_on else ""),
        detail="; ".join(
            f"{name}: {readings[name][0]} (asked {seen['asked_for']}, before the answer ran {seen['runs_before_answer']},"
            f" the resume ran {seen['runs_after_resume']}, join got {seen['join_inputs']}, after the yield"
            f" {seen['after_yield'] or 'nothing ran'})"
            for name, seen in orders.items()
        ),
        hazard=worst[1],
    )
