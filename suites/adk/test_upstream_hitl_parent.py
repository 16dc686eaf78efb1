"""ADK 2.x Workflow: a `rerun_on_resume` parent whose dynamically run child asks for input (google/adk-js #733 ->
PR #760, the Python form; google/adk-go #1568 has the same shape): on resume, is the parent re-run on its own
input or on the human's reply, and do its finished children's results survive?

START -> supervisor (rerun_on_resume), which runs one `analyze` child per item of "alpha, beta, gamma" at once
(`ctx.run_node`, gathered); beta's child yields a RequestInput, alpha's and gamma's finish after the request and,
in the second order, before it. The user answers in a second turn. `n/a` before 2.0 (no google.adk.workflow).
Orders are forced with events the nodes set and `settle()`, never the clock.
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
ITEMS = "alpha, beta, gamma"
EXPECTED = [{"item": "alpha", "length": 5}, "yes", {"item": "gamma", "length": 5}]


@probe(
    "adk/workflow/hitl-rerun-parent",
    title='START -> supervisor (rerun_on_resume), which runs one `analyze` child per item of "alpha, beta, gamma"'
    " at once with ctx.run_node; beta's child yields a RequestInput (alpha and gamma finishing after the request,"
    " and before it); the user answers in a second turn",
    claim=Claim(
        "On resume, a rerun_on_resume parent whose ctx.run_node child paused is re-run on its original input, not"
        " on the human's reply: its finished children are answered from their first run (not run again), the"
        " asker's reply takes its place, and the parent returns every child's result (adk-js #733: before PR"
        " #760 the JavaScript parent got the reply as its input and silently dropped its other children).",
        JS_ISSUE,
        expect={"value.orders.others finish after the request.parent_results": [EXPECTED]},
    ),
    sources=[JS_PR, GO_ISSUE],
)
async def test_hitl_rerun_parent(obs: Observer) -> None:
    Workflow, Edge, START, node = obs.need("google.adk.workflow", "Workflow", "Edge", "START", "node")
    RequestInput = obs.need("google.adk.events", "RequestInput")
    respond = obs.need("google.adk.workflow.utils._workflow_hitl_utils", "create_request_input_response")

    async def one_order(others_first: bool) -> dict:
        runs: dict[str, int] = {}
        finished: list[str] = []
        parent_inputs: list = []
        parent_results: list = []
        asked, others_done = asyncio.Event(), asyncio.Event()

        async def analyze(ctx: Any, node_input: Any):  # type: ignore[no-untyped-def]  # a node: ADK reads a return hint as its output schema
            item = str(node_input)
            runs[item] = runs.get(item, 0) + 1
            if item == "beta":
                reply = (ctx.resume_inputs or {}).get("q-beta")
                if reply is not None:
                    yield reply.get("result") if isinstance(reply, dict) else reply
                    return
                if others_first:
                    await others_done.wait()
                    await settle()  # alpha's and gamma's outputs are handed on before beta asks
                finished.append("beta asked")
                asked.set()
                yield RequestInput(interrupt_id="q-beta", message="analyze beta?")
                return
            if not others_first:
                await asked.wait()
            finished.append(f"{item} finished")
            if sum(f.endswith("finished") for f in finished) == 2:
                others_done.set()
            yield {"item": item, "length": len(item)}

        worker = node(analyze, name="analyze")

        async def supervisor(ctx: Any, node_input: Any) -> Any:
            text = "".join(p.text or "" for p in node_input.parts) if hasattr(node_input, "parts") else node_input
            parent_inputs.append(text)
            results = await asyncio.gather(*(ctx.run_node(worker, item) for item in str(text).split(", ")))
            parent_results.append(list(results))
            return parent_results[-1]

        workflow = Workflow(
            name="wf", edges=[Edge(from_node=START, to_node=node(supervisor, name="supervisor", rerun_on_resume=True))]
        )
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        runner = Runner(app_name=APP, node=workflow, session_service=service)

        async def turn(message: Any) -> list:
            return [e async for e in runner.run_async(user_id=USER, session_id="s1", new_message=message)]

        first = await obs.attempt_async(lambda: turn(user_message(ITEMS)))
        events = first.get("returned") or []
        asked_for = sorted({i for e in events for i in (getattr(e, "long_running_tool_ids", None) or ())})
        before = dict(runs)
        answer = types.Content(role="user", parts=[respond("q-beta", {"result": "yes"})])
        second = await obs.attempt_async(lambda: turn(answer)) if asked_for else {"raises": "(nothing asked)"}
        again = sorted(
            {i for e in second.get("returned") or [] for i in (getattr(e, "long_running_tool_ids", None) or ())}
        )
        return {
            "first_turn": "returned" if "returned" in first else first,
            "asked_for": asked_for,
            "finish_order": finished,
            "runs_before_answer": dict(sorted(before.items())),
            "resume": "returned" if "returned" in second else second,
            "asked_again": again,
            "parent_inputs": parent_inputs,
            "runs_after_resume": {k: runs.get(k, 0) - before.get(k, 0) for k in ("alpha", "beta", "gamma")},
            "parent_results": parent_results,
        }

    orders = {
        "others finish after the request": await one_order(others_first=False),
        "others finish before the request": await one_order(others_first=True),
    }
    if not any(o["asked_for"] for o in orders.values()):
        obs.vacuous("beta's child never asked for input")
    readings = {name: _reading(seen) for name, seen in orders.items()}
    worst = max(readings.values(), key=lambda r: harm(r[1]))
    same = len({text for text, _ in readings.values()}) == 1
    obs.record(
        {"orders": orders},
        label=worst[0] if same else "the two orders differ",
        detail="; ".join(
            f"{name}: {readings[name][0]} (asked {seen['asked_for']}, finished {seen['finish_order']}, the parent got"
            f" {seen['parent_inputs']} and returned {seen['parent_results']}, the resume ran {seen['runs_after_resume']})"
            for name, seen in orders.items()
        ),
        hazard=worst[1],
    )


def _reading(seen: dict) -> tuple[str, str]:
    """One order's label and hazard: a raise, the parent re-run on the reply, asked again, results lost, a re-run."""
    failed = next((t for t in (seen["first_turn"], seen["resume"]) if t != "returned"), None)
    if failed is not None:
        return f"raises {failed['raises']}"[:30], "loud"
    inputs = seen["parent_inputs"]
    if len(inputs) > 1 and inputs[1] != inputs[0]:
        return "parent re-run on the reply", "silent"
    if seen["asked_again"]:
        return "asks again", "silent"
    if (seen["parent_results"] or [None])[-1] != EXPECTED:
        return "children's results lost", "silent"
    if any(n > 0 for n in seen["runs_after_resume"].values()):
        return "a child runs again", "silent"
    return "parent resumed on its input", "safe"
