"""A research graph in pydantic-graph's map-reduce shape: plan queries, search each at once, join, write.

The join is built with `initial=[]`, as the docs' first join example reads: one list object that every
run of this module-level graph starts from (pydantic_graph/join/shared-initial).
"""

from dataclasses import dataclass, field

from pydantic_graph import GraphBuilder, StepContext, reduce_list_append


@dataclass
class Research:
    topic: str = ""
    report: str = ""
    queries: list[str] = field(default_factory=list)


async def search_engine(query: str) -> str:
    """A stand-in for a search API call."""
    return f"result for {query}"


g = GraphBuilder(state_type=Research, input_type=str, output_type=str)


@g.step
async def plan(ctx: StepContext[Research, None, str]) -> list[str]:
    ctx.state.topic = ctx.inputs
    ctx.state.queries = [f"{ctx.inputs} overview", f"{ctx.inputs} risks", f"{ctx.inputs} costs"]
    return ctx.state.queries


@g.step
async def search(ctx: StepContext[Research, None, str]) -> str:
    return await search_engine(ctx.inputs)


@g.step
async def write_report(ctx: StepContext[Research, None, list[str]]) -> str:
    ctx.state.report = "\n".join(sorted(ctx.inputs))
    return ctx.state.report


collect = g.join(reduce_list_append, initial=[])
g.add(
    g.edge_from(g.start_node).to(plan),
    g.edge_from(plan).map().to(search),
    g.edge_from(search).to(collect),
    g.edge_from(collect).to(write_report),
    g.edge_from(write_report).to(g.end_node),
)
graph = g.build()
