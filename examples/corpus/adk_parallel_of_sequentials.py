"""A ParallelAgent of SequentialAgents (research → summarise per topic), every output_key distinct — safe.

Then a merger reads all summaries. (The deprecated-ParallelAgent note applies where the
installed version deprecates it; it is not a fan-in hazard.)
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
                name=f"{topic}_summariser",
                model=MODEL,
                instruction=f"Summarise {{{topic}_raw}}.",
                output_key=f"{topic}_summary",
            ),
        ],
    )


root = SequentialAgent(
    name="research_pipeline",
    sub_agents=[
        ParallelAgent(name="parallel_research", sub_agents=[pipeline("energy"), pipeline("transport")]),
        LlmAgent(
            name="merger",
            model=MODEL,
            instruction="Merge {energy_summary} and {transport_summary}.",
            output_key="report",
        ),
    ],
)
