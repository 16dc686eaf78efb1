"""The conditional-edges sample's shape: a spam detector, then one of two handlers chosen by complementary
edge conditions. Both handlers set the shared-state key `result`, but only one runs per email: no fan-in.
"""

from dataclasses import dataclass

from agent_framework import WorkflowBuilder, WorkflowContext, executor


@dataclass
class Detection:
    is_spam: bool
    email: str


@executor(id="detect")
async def detect(email: str, ctx: WorkflowContext[Detection]) -> None:
    await ctx.send_message(Detection("winner" in email.lower(), email))


@executor(id="respond")
async def respond(detection: Detection, ctx: WorkflowContext[str, str]) -> None:
    ctx.set_state("result", f"drafted a reply to {detection.email[:20]}")
    await ctx.yield_output(ctx.get_state("result"))


@executor(id="quarantine")
async def quarantine(detection: Detection, ctx: WorkflowContext[str, str]) -> None:
    ctx.set_state("result", "moved to spam")
    await ctx.yield_output(ctx.get_state("result"))


workflow = (
    WorkflowBuilder(start_executor=detect)
    .add_edge(detect, respond, condition=lambda d: not d.is_spam)
    .add_edge(detect, quarantine, condition=lambda d: d.is_spam)
    .build()
)
