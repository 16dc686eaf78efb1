"""The multi-selection email shape, mitigated: the selection sends to every target and the summarizer
sends a `skipped` marker for a short email, so the fan-in fires once per run.
"""

from agent_framework import WorkflowBuilder, WorkflowContext, executor


@executor(id="analyze")
async def analyze(email: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(email)


@executor(id="summarize")
async def summarize(email: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(f"summary: {email[:40]}" if len(email) > 200 else "skipped")


@executor(id="check_spam")
async def check_spam(email: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message("spam" if "winner" in email else "ham")


@executor(id="store")
async def store(results: list[str], ctx: WorkflowContext[str, list[str]]) -> None:
    await ctx.yield_output([r for r in results if r != "skipped"])


workflow = (
    WorkflowBuilder(start_executor=analyze)
    .add_multi_selection_edge_group(
        analyze, [summarize, check_spam], selection_func=lambda email, targets: list(targets)
    )
    .add_fan_in_edges([summarize, check_spam], store)
    .build()
)
