"""A map-reduce in the shape of Agent Framework's map-reduce sample, with one change real code makes:
the mappers keep their partial word counts in shared state under one key, `partial_counts`, instead of
one key per mapper. They run in one superstep, so the last to finish wins (agent_framework/same-key/last-writer).
"""

from collections import Counter

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler


class Split(Executor):
    @handler
    async def split(self, text: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("text", text)
        await ctx.send_message(text)


class Mapper(Executor):
    def __init__(self, id: str, part: int) -> None:
        super().__init__(id=id)
        self.part = part

    @handler
    async def count(self, text: str, ctx: WorkflowContext[str]) -> None:
        words = text.split()[self.part :: 2]
        ctx.set_state("partial_counts", dict(Counter(words)))
        await ctx.send_message(self.id)


class Reduce(Executor):
    @handler
    async def reduce(self, done: list[str], ctx: WorkflowContext[str, dict]) -> None:
        await ctx.yield_output(ctx.get_state("partial_counts"))


split = Split(id="split")
mappers = [Mapper("mapper_0", 0), Mapper("mapper_1", 1)]
reduce = Reduce(id="reduce")

workflow = (
    WorkflowBuilder(start_executor=split).add_fan_out_edges(split, mappers).add_fan_in_edges(mappers, reduce).build()
)
