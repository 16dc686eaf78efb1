"""Two agent executors run in one superstep and keep a shared token budget: each reads `tokens_spent`,
awaits its model call, and sets the sum (agent_framework/same-key/read-modify-write). The planner raises
on an empty answer while the critic is in flight (agent_framework/errors/failing-sibling).
"""

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler


async def ask_model(prompt: str) -> tuple[str, int]:
    """A stand-in for a chat-model call: (answer, tokens)."""
    return f"answer to {prompt}", len(prompt)


class Start(Executor):
    @handler
    async def start(self, task: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("tokens_spent", 0)
        await ctx.send_message(task)


class Planner(Executor):
    @handler
    async def plan(self, task: str, ctx: WorkflowContext[str]) -> None:
        spent = ctx.get_state("tokens_spent")
        answer, tokens = await ask_model(f"plan: {task}")
        if not answer:
            raise RuntimeError("the planner's model returned nothing")
        ctx.set_state("tokens_spent", spent + tokens)
        await ctx.send_message(answer)


class Critic(Executor):
    @handler
    async def critique(self, task: str, ctx: WorkflowContext[str]) -> None:
        spent = ctx.get_state("tokens_spent")
        answer, tokens = await ask_model(f"critique: {task}")
        ctx.set_state("tokens_spent", spent + tokens)
        await ctx.send_message(answer)


class Report(Executor):
    @handler
    async def report(self, parts: list[str], ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(f"{parts} ({ctx.get_state('tokens_spent')} tokens)")


start, planner, critic, report = Start(id="start"), Planner(id="planner"), Critic(id="critic"), Report(id="report")
workflow = (
    WorkflowBuilder(start_executor=start)
    .add_fan_out_edges(start, [planner, critic])
    .add_fan_in_edges([planner, critic], report)
    .build()
)
