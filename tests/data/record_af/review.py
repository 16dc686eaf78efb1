"""A small app in the shape of Agent Framework's fan-out/fan-in sample: a dispatcher sends a document to two
reviewers in one superstep, an aggregator joins them. Both reviewers record their verdict under one key; each
escalates under a second key only for its own kind of document. Built by a factory, as real apps build it."""

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler


class Dispatch(Executor):
    @handler
    async def dispatch(self, document: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("document", document)
        await ctx.send_message(document)


class Reviewer(Executor):
    def __init__(self, id: str, watches: str) -> None:
        super().__init__(id=id)
        self.watches = watches

    @handler
    async def review(self, document: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("verdict", f"{self.id}: ok")
        if self.watches in document:
            ctx.set_state("escalation", self.id)
        await ctx.send_message(self.id)


class Aggregate(Executor):
    @handler
    async def aggregate(self, done: list[str], ctx: WorkflowContext[str, dict]) -> None:
        await ctx.yield_output({"verdict": ctx.get_state("verdict"), "escalation": ctx.get_state("escalation")})


def build_workflow():
    dispatch = Dispatch(id="dispatch")
    reviewers = [Reviewer("legal", "contract"), Reviewer("security", "password")]
    aggregate = Aggregate(id="aggregate")
    builder = WorkflowBuilder(start_executor=dispatch)
    return builder.add_fan_out_edges(dispatch, reviewers).add_fan_in_edges(reviewers, aggregate).build()
