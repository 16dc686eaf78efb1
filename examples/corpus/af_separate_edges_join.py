"""A lookup workflow: the question fans out to a web search and to a database lookup that is enriched in a
second step; both results go to `summarize` over separate add_edge calls instead of one fan-in group, so
`summarize` runs once per message, first with the web result alone (agent_framework/join/separate-edges).
"""

from agent_framework import WorkflowBuilder, WorkflowContext, executor


@executor(id="start")
async def start(question: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(question)


@executor(id="web_search")
async def web_search(question: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(f"web: {question}")


@executor(id="db_lookup")
async def db_lookup(question: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(f"db: {question}")


@executor(id="enrich")
async def enrich(row: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(f"{row} (enriched)")


@executor(id="summarize")
async def summarize(result: str, ctx: WorkflowContext[str, str]) -> None:
    await ctx.yield_output(f"summary of {result}")


workflow = (
    WorkflowBuilder(start_executor=start)
    .add_fan_out_edges(start, [web_search, db_lookup])
    .add_edge(db_lookup, enrich)
    .add_edge(web_search, summarize)
    .add_edge(enrich, summarize)
    .build()
)
