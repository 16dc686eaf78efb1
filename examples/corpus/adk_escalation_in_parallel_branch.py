"""A loop over a ParallelAgent whose first branch is a SequentialAgent ending in a checker that calls exit_loop — hazardous.

The escalating agent is not a direct child of the ParallelAgent but a step of its branch. The
loop containing a ParallelAgent with an escalation below it is adk/parallel-agent/in-loop (silent).
"""

from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.tools import exit_loop

MODEL = "gemini-2.0-flash"

quality_branch = SequentialAgent(
    name="quality_branch",
    sub_agents=[
        LlmAgent(name="tester", model=MODEL, instruction="Test the code.", output_key="test_report"),
        LlmAgent(
            name="checker", model=MODEL, instruction="If {test_report} passes, call exit_loop.", tools=[exit_loop]
        ),
    ],
)
docs_branch = LlmAgent(name="doc_writer", model=MODEL, instruction="Document the code.", output_key="docs")
root = LoopAgent(
    name="refine",
    max_iterations=4,
    sub_agents=[
        LlmAgent(name="coder", model=MODEL, instruction="Improve the code.", output_key="code"),
        ParallelAgent(name="review", sub_agents=[quality_branch, docs_branch]),
    ],
)
