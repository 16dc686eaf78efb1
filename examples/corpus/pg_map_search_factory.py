"""The same research map-reduce built right: `initial_factory=list`, and searches that append their sources.

Every search appends to `ctx.state.sources` in place: every source is kept, in the order the searches
ran (order-coupled, not lost); the join's list starts empty in every run.
"""

from dataclasses import dataclass, field

from pydantic_graph import GraphBuilder, StepContext, reduce_list_append


@dataclass
class Research:
    topic: str = ""
    report: str = ""
    sources: list[str] = field(default_factory=list)


async def search_engine(query: str) -> tuple[str, str]:
    """A stand-in for a search API call: (snippet, url)."""
    return f"result for {query}", f"https://example.invalid/{query.replace(' ', '-')}"


g = GraphBuilder(state_type=Research, input_type=str, output_type=str)


@g.step
async def plan(ctx: StepContext[Research, None, str]) -> list[str]:
    ctx.state.topic = ctx.inputs
    return [f"{ctx.inputs} overview", f"{ctx.inputs} risks", f"{ctx.inputs} costs"]


@g.step
async def search(ctx: StepContext[Research, None, str]) -> str:
    snippet, url = await search_engine(ctx.inputs)
    ctx.state.sources.append(url)
    return snippet


@g.step
async def write_report(ctx: StepContext[Research, None, list[str]]) -> str:
    ctx.state.report = "\n".join(sorted(ctx.inputs))
    return ctx.state.report


collect = g.join(reduce_list_append, initial_factory=list)
g.add(
    g.edge_from(g.start_node).to(plan),
    g.edge_from(plan).map().to(search),
    g.edge_from(search).to(collect),
    g.edge_from(collect).to(write_report),
    g.edge_from(write_report).to(g.end_node),
)
graph = g.build()
