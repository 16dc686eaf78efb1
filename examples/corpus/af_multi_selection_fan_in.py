"""The email sample's multi-selection shape: an analyzer routes a long email to both the summarizer and
the spam checker, a short one to the spam checker only, and a fan-in waits for both before storing.
A short email leaves the fan-in waiting: the run ends idle, nothing stored, no error
(agent_framework/join/unselected-branch), and the spam verdict joins the next run's summary
(agent_framework/join/stale-arrival-next-run).
"""

from agent_framework import WorkflowBuilder, WorkflowContext, executor


@executor(id="analyze")
async def analyze(email: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(email)


@executor(id="summarize")
async def summarize(email: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(f"summary: {email[:40]}")


@executor(id="check_spam")
async def check_spam(email: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message("spam" if "winner" in email else "ham")


@executor(id="store")
async def store(results: list[str], ctx: WorkflowContext[str, list[str]]) -> None:
    await ctx.yield_output(results)


def route(email: str, targets: list[str]) -> list[str]:
    """Long emails are summarised too; short ones only checked."""
    return targets if len(email) > 200 else [targets[1]]


workflow = (
    WorkflowBuilder(start_executor=analyze)
    .add_multi_selection_edge_group(analyze, [summarize, check_spam], selection_func=route)
    .add_fan_in_edges([summarize, check_spam], store)
    .build()
)
