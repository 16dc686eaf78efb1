"""Rounds of drafting: a LoopAgent over a ParallelAgent whose branches are refine loops ending in exit_loop — hazardous.

Each branch refines its own draft in an inner LoopAgent whose checker calls exit_loop. An
escalation inside a nested LoopAgent ends every enclosing LoopAgent (google/adk-python#2808):
the first branch whose checker is satisfied ends the outer `rounds` loop after one round, and
the editor after the fan-out never runs (adk/parallel-agent/in-loop, inner_loop variant: silent
in the reference).
"""

from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.tools import exit_loop

MODEL = "gemini-2.0-flash"


def refine(topic: str) -> LoopAgent:
    return LoopAgent(
        name=f"refine_{topic}",
        max_iterations=3,
        sub_agents=[
            LlmAgent(name=f"{topic}_writer", model=MODEL, instruction=f"Improve the {topic}.", output_key=topic),
            LlmAgent(
                name=f"{topic}_checker",
                model=MODEL,
                instruction=f"If {{{topic}}} is good enough call exit_loop.",
                tools=[exit_loop],
                output_key=f"{topic}_review",
            ),
        ],
    )


root = SequentialAgent(
    name="book",
    sub_agents=[
        LoopAgent(
            name="rounds",
            max_iterations=3,
            sub_agents=[
                ParallelAgent(name="drafts", sub_agents=[refine("plot"), refine("characters")]),
                LlmAgent(name="editor", model=MODEL, instruction="Edit {plot} and {characters}.", output_key="chapter"),
            ],
        ),
        LlmAgent(name="publisher", model=MODEL, instruction="Publish {chapter}.", output_key="published"),
    ],
)
