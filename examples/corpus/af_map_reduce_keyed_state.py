"""The same map-reduce as the sample writes it: each mapper writes a shared-state key of its own,
read back by the reducer after the fan-in. Distinct keys: nothing is lost.
"""

from collections import Counter

from agent_framework import WorkflowBuilder, WorkflowContext, executor


@executor(id="split")
async def split(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text)


@executor(id="count_even")
async def count_even(text: str, ctx: WorkflowContext[str]) -> None:
    ctx.set_state("counts_even", dict(Counter(text.split()[0::2])))
    await ctx.send_message("count_even")


@executor(id="count_odd")
async def count_odd(text: str, ctx: WorkflowContext[str]) -> None:
    ctx.set_state("counts_odd", dict(Counter(text.split()[1::2])))
    await ctx.send_message("count_odd")


@executor(id="reduce")
async def reduce(done: list[str], ctx: WorkflowContext[str, dict]) -> None:
    total = Counter(ctx.get_state("counts_even")) + Counter(ctx.get_state("counts_odd"))
    await ctx.yield_output(dict(total))


workflow = (
    WorkflowBuilder(start_executor=split)
    .add_fan_out_edges(split, [count_even, count_odd])
    .add_fan_in_edges([count_even, count_odd], reduce)
    .build()
)
