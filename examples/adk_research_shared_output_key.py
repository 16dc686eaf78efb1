"""An ADK research fan-out whose researchers share one output_key — hazardous."""

from google.adk.agents import LlmAgent, ParallelAgent, SequentialAgent

researchers = [
    LlmAgent(
        name=f"researcher_{topic}", model="gemini-2.0-flash", instruction=f"Research {topic}.", output_key="findings"
    )
    for topic in ("pricing", "competitors")
]
root = SequentialAgent(
    name="research",
    sub_agents=[
        ParallelAgent(name="fan_out", sub_agents=researchers),
        LlmAgent(name="writer", model="gemini-2.0-flash", instruction="Write up {findings}."),
    ],
)
