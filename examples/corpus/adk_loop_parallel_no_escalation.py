"""A story loop: LoopAgent(max_iterations=3) over a ParallelAgent of two drafters and a critic, no escalation — safe.

Nothing below the loop escalates (no exit_loop tool, no escalate=True): the loop simply runs its
three iterations, and the parallel drafters write distinct keys. The cited probe
(adk/parallel-agent/in-loop) needs an escalation, which this tree lacks.
"""

from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent

MODEL = "gemini-2.0-flash"

drafters = ParallelAgent(
    name="drafters",
    sub_agents=[
        LlmAgent(name="plot_writer", model=MODEL, instruction="Extend the plot.", output_key="plot"),
        LlmAgent(name="character_writer", model=MODEL, instruction="Extend the characters.", output_key="characters"),
    ],
)
critic = LlmAgent(name="critic", model=MODEL, instruction="Critique {plot} and {characters}.", output_key="critique")
root = SequentialAgent(
    name="story_team",
    sub_agents=[LoopAgent(name="writers_room", sub_agents=[drafters, critic], max_iterations=3)],
)
