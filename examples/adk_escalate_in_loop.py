"""A ParallelAgent inside a LoopAgent whose direct child can escalate (exit_loop) — hazardous."""

from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent
from google.adk.tools import exit_loop

checker = LlmAgent(
    name="checker", model="gemini-2.0-flash", instruction="Stop when done.", tools=[exit_loop], output_key="check"
)
drafter = LlmAgent(name="drafter", model="gemini-2.0-flash", instruction="Draft.", output_key="draft")
root = LoopAgent(
    name="refine", max_iterations=3, sub_agents=[ParallelAgent(name="round", sub_agents=[drafter, checker])]
)
