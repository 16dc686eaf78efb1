"""A support triage graph: classify, then a decision routes to one handler; no fork, so nothing fans in."""

from dataclasses import dataclass

from pydantic_graph import GraphBuilder, StepContext


@dataclass
class Ticket:
    category: str = ""
    reply: str = ""


g = GraphBuilder(state_type=Ticket, input_type=str, output_type=str)


@g.step
async def classify(ctx: StepContext[Ticket, None, str]) -> str:
    ctx.state.category = "billing" if "invoice" in ctx.inputs else "tech"
    return ctx.state.category


@g.step
async def billing(ctx: StepContext[Ticket, None, str]) -> str:
    ctx.state.reply = "billing will contact you"
    return ctx.state.reply


@g.step
async def tech(ctx: StepContext[Ticket, None, str]) -> str:
    ctx.state.reply = "try turning it off and on"
    return ctx.state.reply


g.add(
    g.edge_from(g.start_node).to(classify),
    g.edge_from(classify).to(
        g.decision().branch(g.match(str, matches=lambda c: c == "billing").to(billing)).branch(g.match(str).to(tech))
    ),
    g.edge_from(billing, tech).to(g.end_node),
)
graph = g.build()
