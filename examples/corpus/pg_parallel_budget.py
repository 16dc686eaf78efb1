"""Two agents run at once on one question and keep a shared token budget in the graph state.

Each reads `ctx.state.tokens_used`, awaits its model call, then writes the sum back: a read, an await
and a write, so one agent's tokens are lost (pydantic_graph/same-key/read-modify-write). The call
counter is `+= 1` with no await between read and write: the event loop serialises it (safe). An
agent that gets an empty answer raises while its sibling is in flight (pydantic_graph/errors/failing-sibling).
"""

from dataclasses import dataclass

from pydantic_graph import GraphBuilder, StepContext, reduce_list_append


@dataclass
class Budget:
    tokens_used: int = 0
    calls: int = 0


async def ask_model(prompt: str) -> tuple[str, int]:
    """A stand-in for a chat-model call: (answer, tokens)."""
    return f"answer to {prompt}", len(prompt)


g = GraphBuilder(state_type=Budget, input_type=str, output_type=list)


@g.step
async def optimist(ctx: StepContext[Budget, None, str]) -> str:
    ctx.state.calls += 1
    used = ctx.state.tokens_used
    answer, tokens = await ask_model(f"best case: {ctx.inputs}")
    if not answer:
        raise ValueError("the model returned nothing")
    ctx.state.tokens_used = used + tokens
    return answer


@g.step
async def pessimist(ctx: StepContext[Budget, None, str]) -> str:
    ctx.state.calls += 1
    used = ctx.state.tokens_used
    answer, tokens = await ask_model(f"worst case: {ctx.inputs}")
    ctx.state.tokens_used = used + tokens
    return answer


answers = g.join(reduce_list_append, initial_factory=list)
g.add(
    g.edge_from(g.start_node).to(optimist, pessimist),
    g.edge_from(optimist, pessimist).to(answers),
    g.edge_from(answers).to(g.end_node),
)
graph = g.build()
