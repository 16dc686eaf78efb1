"""A small app in the shape of a user's ADK 2.x Workflow: a planner, two searches run in parallel, a JoinNode,
a writer. Function nodes take the context and write session state through `ctx.state`."""

from typing import Any

from google.adk.workflow import JoinNode, Workflow


def plan(ctx: Any, node_input: Any) -> str:
    ctx.state["topic"] = "fan-in"
    return "fan-in"


async def search_web(ctx: Any, node_input: Any) -> dict:
    # Both searches note where they looked under one key: the last to be applied wins.
    ctx.state["sources"] = "the web"
    if ctx.state.get("strict") == "web":
        ctx.state["flag"] = "web"  # only in its own case: a test that reaches one never reaches the other
    return {"hits": 3}


async def search_papers(ctx: Any, node_input: Any) -> dict:
    ctx.state["sources"] = "papers"
    if ctx.state.get("strict") == "papers":
        ctx.state["flag"] = "papers"
    return {"hits": 2}


def write(ctx: Any, node_input: Any) -> str:
    ctx.state["topic"] = "fan-in, written up"  # after plan, never beside it
    ctx.state["report"] = f"{sorted(node_input)}"
    return "done"


def build() -> Workflow:
    """A new Workflow per call, as a test fixture builds one."""
    return Workflow(
        name="research",
        edges=[("START", plan, (search_web, search_papers), JoinNode(name="gather"), write)],
    )
