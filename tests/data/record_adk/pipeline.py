"""A small app in the shape of a user's ADK project: researchers in a ParallelAgent, a synthesiser after them,
a custom agent that runs a reviewer only when asked; each LlmAgent's model is the app's own setting."""

from collections.abc import AsyncGenerator

from google.adk.agents import BaseAgent, LlmAgent, ParallelAgent, SequentialAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

MODEL = "gemini-2.5-flash"


def note_source(callback_context: CallbackContext) -> None:
    # Both researchers record where they looked under one key: the last branch to finish wins.
    callback_context.state["sources"] = f"{callback_context.agent_name} looked here"


def flag_if_strict(callback_context: CallbackContext) -> None:
    # Each researcher raises a flag only in its own case: a test that reaches one never reaches the other.
    if callback_context.state.get("strict") == callback_context.agent_name:
        callback_context.state["flag"] = callback_context.agent_name


researcher_web = LlmAgent(
    name="researcher_web",
    model=MODEL,
    instruction="Research the topic on the web.",
    output_key="web_notes",
    after_agent_callback=[note_source, flag_if_strict],
)
researcher_papers = LlmAgent(
    name="researcher_papers",
    model=MODEL,
    instruction="Research the topic in papers.",
    output_key="paper_notes",
    after_agent_callback=[note_source, flag_if_strict],
)
synthesiser = LlmAgent(
    name="synthesiser",
    model=MODEL,
    instruction="Write a report from {web_notes} and {paper_notes}.",
    output_key="report",
)
reviewer = LlmAgent(name="reviewer", model=MODEL, instruction="Review the report.", output_key="review")


class ReviewGate(BaseAgent):
    """Runs the reviewer only when the session asks for a review."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        if ctx.session.state.get("needs_review"):
            async for event in self.sub_agents[0].run_async(ctx):
                yield event


root_agent = SequentialAgent(
    name="research_pipeline",
    sub_agents=[
        ParallelAgent(name="research", sub_agents=[researcher_web, researcher_papers]),
        synthesiser,
        ReviewGate(name="review_gate", sub_agents=[reviewer]),
    ],
)
