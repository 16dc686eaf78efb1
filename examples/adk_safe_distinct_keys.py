"""An ADK fan-out with one output_key per branch and a merging step after it — not flagged."""

from google.adk.agents import LlmAgent, ParallelAgent, SequentialAgent

root = SequentialAgent(
    name="research",
    sub_agents=[
        ParallelAgent(
            name="fan_out",
            sub_agents=[
                LlmAgent(name="pricing", model="gemini-2.0-flash", instruction="Pricing.", output_key="pricing"),
                LlmAgent(name="competitors", model="gemini-2.0-flash", instruction="Rivals.", output_key="competitors"),
            ],
        ),
        LlmAgent(name="writer", model="gemini-2.0-flash", instruction="Merge {pricing} and {competitors}."),
    ],
)
