"""ADK 2.x graph workflows: two parallel nodes of one Workflow write the same session state key.

`n/a` before 2.0 (no google.adk.workflow). The two branches are async function nodes held by gates:
both are in flight before either writes, then `market` writes and finishes, then `risk`.
"""

from typing import Any

from gates import Turns
from adk_kit import APP, FAN_IN_SAMPLE, USER, run_workflow

from google.adk.sessions import InMemorySessionService

from fanin.probe import Claim, Observer, probe


@probe(
    "adk/workflow/same-key",
    title="Workflow (START, (market, risk), JoinNode, collect): both parallel nodes set ctx.state['verdict']",
    claim=Claim(
        "A Workflow's parallel nodes share the session state; nothing merges two writes of one key, so the "
        "session keeps one of them (the node whose event is applied last) and the other is lost.",
        FAN_IN_SAMPLE,
        expect={"value.kept": "risk", "value.both_in_events": True},
    ),
)
async def test_workflow_same_key(obs: Observer) -> None:
    Workflow, JoinNode = obs.need("google.adk.workflow", "Workflow", "JoinNode")
    turns = Turns(["market", "risk"])

    def branch(name: str) -> Any:
        async def node(ctx: Any, node_input: Any) -> str:
            await turns.wait(name)
            ctx.state["verdict"] = name
            turns.done(name)
            return name

        node.__name__ = name
        return node

    def collect(node_input: Any) -> str:
        return "report"

    workflow = Workflow(
        name="wf", edges=[("START", (branch("market"), branch("risk")), JoinNode(name="join"), collect)]
    )
    service = InMemorySessionService()
    with obs.framework():
        _, stored = await run_workflow(workflow, service)
    obs.require_in_flight(turns)
    writes = [
        (str(e.node_info.path).split("/")[-1].split("@")[0], e.actions.state_delta["verdict"])
        for e in stored
        if e.actions is not None and "verdict" in (e.actions.state_delta or {})
    ]
    session = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    kept = session.state.get("verdict") if session is not None else None
    value = {
        "writes": writes,  # (the node its event's node_info.path names, the value)
        "both_in_events": sorted(v for _, v in writes) == ["market", "risk"],
        "kept": kept,
    }
    lost = sorted({v for _, v in writes} - {kept})
    obs.record(
        value,
        label=f"last writer kept ({kept}); {', '.join(lost)} lost" if lost else f"kept {kept}",
        detail=f"the stored events carry writes {writes}; the session keeps verdict={kept!r}",
        hazard="silent" if lost else "safe",
    )

