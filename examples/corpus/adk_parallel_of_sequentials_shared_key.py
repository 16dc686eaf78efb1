"""A ParallelAgent of SequentialAgents whose last steps share one output_key two levels down — hazardous.

`energy_summariser` and `transport_summariser` both store their reply under `summary`: the
branches run concurrently, the last to finish wins (adk/parallel-agent/same-key, adk/output-key/same-key).
"""

from google.adk.agents import LlmAgent, ParallelAgent, SequentialAgent

MODEL = "gemini-2.0-flash"


def pipeline(topic: str) -> SequentialAgent:
    return SequentialAgent(
        name=f"{topic}_pipeline",
        sub_agents=[
            LlmAgent(
                name=f"{topic}_researcher", model=MODEL, instruction=f"Research {topic}.", output_key=f"{topic}_raw"
            ),
            LlmAgent(
                name=f"{topic}_summariser", model=MODEL, instruction=f"Summarise {{{topic}_raw}}.", output_key="summary"
            ),
        ],
    )


root = SequentialAgent(
    name="research_pipeline",
    sub_agents=[
        ParallelAgent(name="parallel_research", sub_agents=[pipeline("energy"), pipeline("transport")]),
        LlmAgent(name="merger", model=MODEL, instruction="Merge {summary}.", output_key="report"),
    ],
)
