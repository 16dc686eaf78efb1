"""A deep agent with two research subagents that write files (deepagents' default file tools) — hazardous.

The main agent may call `task` for both in one message; parallel subagents writing the
in-state `files` lose edits of the same path (deepagents/subagents/parallel-files: silent).
"""

from deepagents import create_deep_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

model = GenericFakeChatModel(messages=iter([AIMessage("done")]))

agent = create_deep_agent(
    model=model,
    system_prompt="Research the question with your subagents, in parallel, and write report.md.",
    subagents=[
        {
            "name": "market-researcher",
            "description": "Researches markets; writes notes to files.",
            "system_prompt": "Research markets. Save notes with write_file.",
        },
        {
            "name": "tech-researcher",
            "description": "Researches technology; writes notes to files.",
            "system_prompt": "Research technology. Save notes with write_file.",
        },
    ],
)
