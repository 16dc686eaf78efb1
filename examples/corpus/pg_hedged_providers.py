"""A hedged request: the question goes to two model providers at once and both are edged to the end node.

No join: the first provider to answer ends the run and the other is cancelled, its answer lost with no
error (pydantic_graph/end/first-end-wins).
"""

from dataclasses import dataclass

from pydantic_graph import GraphBuilder, StepContext


@dataclass
class Empty:
    pass


async def call_provider(name: str, prompt: str) -> str:
    """A stand-in for a provider's API."""
    return f"{name}: {prompt}"


g = GraphBuilder(state_type=Empty, input_type=str, output_type=str)


@g.step
async def primary(ctx: StepContext[Empty, None, str]) -> str:
    return await call_provider("primary", ctx.inputs)


@g.step
async def fallback(ctx: StepContext[Empty, None, str]) -> str:
    return await call_provider("fallback", ctx.inputs)


g.add(
    g.edge_from(g.start_node).to(primary, fallback),
    g.edge_from(primary, fallback).to(g.end_node),
)
graph = g.build()
