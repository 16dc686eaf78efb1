"""A support router in the switch-case sample's shape: classify, then exactly one handler runs, and every
handler has its own edge to `reply`. Only one message reaches `reply` per run: nothing fans in.
"""

from agent_framework import Case, Default, WorkflowBuilder, WorkflowContext, executor


@executor(id="classify")
async def classify(ticket: str, ctx: WorkflowContext[str]) -> None:
    ctx.set_state("ticket", ticket)
    await ctx.send_message("billing" if "invoice" in ticket else "tech" if "error" in ticket else "other")


@executor(id="billing")
async def billing(kind: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message("billing will contact you")


@executor(id="tech")
async def tech(kind: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message("please send the logs")


@executor(id="general")
async def general(kind: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message("thanks, we will get back to you")


@executor(id="reply")
async def reply(text: str, ctx: WorkflowContext[str, str]) -> None:
    await ctx.yield_output(f"{ctx.get_state('ticket')}: {text}")


workflow = (
    WorkflowBuilder(start_executor=classify)
    .add_switch_case_edge_group(
        classify,
        [
            Case(condition=lambda k: k == "billing", target=billing),
            Case(condition=lambda k: k == "tech", target=tech),
            Default(target=general),
        ],
    )
    .add_edge(billing, reply)
    .add_edge(tech, reply)
    .add_edge(general, reply)
    .build()
)
