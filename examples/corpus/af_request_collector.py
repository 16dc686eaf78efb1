"""A request fan-out in the shape of Agent Framework's parallel-requests samples: a distributor sends each
request to its handler over its own edge and tells the collector how many to expect; the collector appends
each response to an attribute and yields once it holds them all. Separate edges are right for it (it counts,
agent_framework/join/separate-edges does not apply), and its two raises cannot fire in one run (a limit fixed
when it is built, a guard against more responses than expected). But the workflow is built once at module
level and the collector never empties its list: run 2 starts with run 1's responses, never reaches the
count, and yields nothing (agent_framework/runs/executor-state-kept).
"""

from dataclasses import dataclass

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler


@dataclass
class Quote:
    source: str
    price: float


class Distributor(Executor):
    @handler
    async def distribute(self, item: str, ctx: WorkflowContext[str | int]) -> None:
        await ctx.send_message(item)
        await ctx.send_message(2)  # the number of responses the collector waits for


class Supplier(Executor):
    def __init__(self, id: str, markup: float) -> None:
        super().__init__(id=id)
        self.markup = markup

    @handler
    async def quote(self, item: str, ctx: WorkflowContext[Quote]) -> None:
        await ctx.send_message(Quote(self.id, len(item) * self.markup))


class QuoteCollector(Executor):
    def __init__(self, id: str, limit: int = 10) -> None:
        super().__init__(id=id)
        self.limit = limit
        self.expected = 0
        self.quotes: list[Quote] = []

    @handler
    async def expect(self, count: int, ctx: WorkflowContext) -> None:
        if self.limit < 1:
            raise ValueError("the collector needs a positive limit")
        self.expected = count

    @handler
    async def collect(self, quote: Quote, ctx: WorkflowContext[str, str]) -> None:
        self.quotes.append(quote)
        if len(self.quotes) == self.expected:
            best = min(self.quotes, key=lambda q: q.price)
            await ctx.yield_output(f"best quote: {best.source} at {best.price}")
        elif len(self.quotes) > self.expected:
            raise ValueError("more quotes than requests")


distributor = Distributor(id="distributor")
north, south = Supplier("north", 1.1), Supplier("south", 0.9)
collector = QuoteCollector(id="collector")

workflow = (
    WorkflowBuilder(start_executor=distributor)
    .add_edge(distributor, north)
    .add_edge(distributor, south)
    .add_edge(distributor, collector)
    .add_edge(north, collector)
    .add_edge(south, collector)
    .build()
)
