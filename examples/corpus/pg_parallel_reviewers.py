"""A code-review graph: three reviewers broadcast from the start, each records its notes and a verdict.

Notes go to `ctx.state.notes[<reviewer>]`, a key of their own (kept); the verdict goes to one field,
`ctx.state.verdict`, that all three set: the last reviewer to finish decides it
(pydantic_graph/same-key/last-writer). The join merges dicts keyed by reviewer (safe).
"""

from dataclasses import dataclass, field

from pydantic_graph import GraphBuilder, StepContext, reduce_dict_update


@dataclass
class Review:
    diff: str = ""
    verdict: str = "pending"
    notes: dict[str, str] = field(default_factory=dict)


async def ask_model(prompt: str) -> str:
    """A stand-in for a chat-model call."""
    return "approve" if "test" in prompt else "request changes"


g = GraphBuilder(state_type=Review, input_type=str, output_type=dict)


@g.step
async def security(ctx: StepContext[Review, None, str]) -> dict[str, str]:
    answer = await ask_model(f"security review: {ctx.inputs}")
    ctx.state.notes["security"] = answer
    ctx.state.verdict = answer
    return {"security": answer}


@g.step
async def style(ctx: StepContext[Review, None, str]) -> dict[str, str]:
    answer = await ask_model(f"style review: {ctx.inputs}")
    ctx.state.notes["style"] = answer
    ctx.state.verdict = answer
    return {"style": answer}


@g.step
async def tests(ctx: StepContext[Review, None, str]) -> dict[str, str]:
    answer = await ask_model(f"test review: {ctx.inputs}")
    ctx.state.notes["tests"] = answer
    ctx.state.verdict = answer
    return {"tests": answer}


merged = g.join(reduce_dict_update, initial_factory=dict)
g.add(
    g.edge_from(g.start_node).to(security, style, tests),
    g.edge_from(security, style, tests).to(merged),
    g.edge_from(merged).to(g.end_node),
)
graph = g.build()
