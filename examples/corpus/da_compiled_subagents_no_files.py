"""A deep agent whose named subagents are compiled agents with no file tools and no files state — see below.

The two CompiledSubAgents carry only `messages`: their parallel calls cannot touch the parent's
files. (deepagents still adds its general-purpose subagent, which has file tools; the audit may
name that, and only that.)
"""

from deepagents import CompiledSubAgent, create_deep_agent
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage


def fake():
    return GenericFakeChatModel(messages=iter([AIMessage("done")]))


def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


agent = create_deep_agent(
    model=fake(),
    system_prompt="Ask your searchers in parallel.",
    subagents=[
        CompiledSubAgent(name="searcher-a", description="searches", runnable=create_agent(fake(), tools=[search])),
        CompiledSubAgent(name="searcher-b", description="searches", runnable=create_agent(fake(), tools=[search])),
    ],
)
