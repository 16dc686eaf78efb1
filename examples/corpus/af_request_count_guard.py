"""The request fan-out in the shape of Agent Framework's sub_workflow_parallel_requests sample: the distributor
sends one message per request it is given, then tells the collector how many it sent (`len(requests)`), and the
collector refuses a count that is not positive. That raise fires only when the distributor sent no request,
so no supplier runs beside it: a guard, not a failing sibling. The collector empties its list when it yields.
No hazard.
"""

from dataclasses import dataclass

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler


@dataclass
class Quote:
    source: str
    price: float


class Distributor(Executor):
    @handler
    async def distribute(self, requests: list[str], ctx: WorkflowContext[str | int]) -> None:
        for item in requests:
            await ctx.send_message(item)
        await ctx.send_message(len(requests))  # how many responses the collector waits for


class Supplier(Executor):
    def __init__(self, id: str, markup: float) -> None:
        super().__init__(id=id)
        self.markup = markup

    @handler
    async def quote(self, item: str, ctx: WorkflowContext[Quote]) -> None:
        await ctx.send_message(Quote(self.id, len(item) * self.markup))


class QuoteCollector(Executor):
    def __init__(self, id: str) -> None:
        super().__init__(id=id)
        self.expected = 0
        self.quotes: list[Quote] = []

    @handler
    async def expect(self, count: int, ctx: WorkflowContext) -> None:
        if count <= 0:
            raise ValueError("the collector needs a positive count")
        self.expected = count

    @handler
    async def collect(self, quote: Quote, ctx: WorkflowContext[str, str]) -> None:
        self.quotes.append(quote)
        if len(self.quotes) == self.expected:
            best = min(self.quotes, key=lambda q: q.price)
            self.quotes = []
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
