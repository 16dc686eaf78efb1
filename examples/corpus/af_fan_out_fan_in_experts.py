"""Agent Framework's fan-out/fan-in sample shape: a dispatcher sends the prompt to three experts at once,
a fan-in edge group hands their answers to an aggregator. Results travel as messages, not shared state:
nothing is lost; the aggregator's list follows the fan-in's declaration order (order-coupled).
"""

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler


async def ask_model(role: str, prompt: str) -> str:
    """A stand-in for a chat-model call."""
    return f"{role}: {prompt}"


class Dispatcher(Executor):
    @handler
    async def dispatch(self, prompt: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(prompt)


class Expert(Executor):
    def __init__(self, id: str, role: str) -> None:
        super().__init__(id=id)
        self.role = role

    @handler
    async def answer(self, prompt: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(await ask_model(self.role, prompt))


class Aggregator(Executor):
    @handler
    async def combine(self, answers: list[str], ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output("\n".join(sorted(answers)))


dispatcher = Dispatcher(id="dispatcher")
researcher = Expert("researcher", "market research")
marketer = Expert("marketer", "marketing")
legal = Expert("legal", "legal review")
aggregator = Aggregator(id="aggregator")

workflow = (
    WorkflowBuilder(start_executor=dispatcher)
    .add_fan_out_edges(dispatcher, [researcher, marketer, legal])
    .add_fan_in_edges([researcher, marketer, legal], aggregator)
    .build()
)
