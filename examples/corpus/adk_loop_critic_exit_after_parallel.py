"""A story loop whose critic calls exit_loop after a ParallelAgent of drafters — safe (the documented pattern).

The critic is the loop's own child, a sibling of the ParallelAgent that runs after it: by the time
it escalates, both drafters have finished, and the escalation ends the loop as intended. The
cited probe (adk/parallel-agent/in-loop) needs the escalation inside a branch of the ParallelAgent,
which this tree lacks. Checked on adk 2.13.0 with model-free agents of this shape: the drafters
ran every iteration, the loop ended at the critic's escalation, the agent after the loop ran.
"""

from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.tools import exit_loop

MODEL = "gemini-2.0-flash"

drafters = ParallelAgent(
    name="drafters",
    sub_agents=[
        LlmAgent(name="plot_writer", model=MODEL, instruction="Extend the plot.", output_key="plot"),
        LlmAgent(name="character_writer", model=MODEL, instruction="Extend the characters.", output_key="characters"),
    ],
)
critic = LlmAgent(
    name="critic",
    model=MODEL,
    instruction="If {plot} is done call exit_loop.",
    tools=[exit_loop],
    output_key="critique",
)
root = SequentialAgent(
    name="story_team",
    sub_agents=[LoopAgent(name="writers_room", sub_agents=[drafters, critic], max_iterations=5)],
)
