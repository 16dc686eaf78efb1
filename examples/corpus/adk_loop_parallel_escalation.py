"""A story loop whose critic escalates with exit_loop, with a ParallelAgent inside the loop — hazardous.

The escalation ends the loop from inside it while a ParallelAgent shares the loop
(adk/parallel-agent/in-loop: silent in the reference).
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
