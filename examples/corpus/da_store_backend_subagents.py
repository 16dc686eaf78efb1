"""A deep agent whose files live in a LangGraph store (StoreBackend), not in graph state: parallel `task`
calls write through the store, so no subagent hands back a copy of `files` for the fan-in to fold.
"""

from deepagents import create_deep_agent
from deepagents.backends import StoreBackend
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.store.memory import InMemoryStore

STORE = InMemoryStore()


def fake():
    return GenericFakeChatModel(messages=iter([AIMessage("done")]))


def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


agent = create_deep_agent(
    model=fake(),
    tools=[search],
    system_prompt="Research each question with a subagent, in parallel, and keep notes in files.",
    subagents=[
        {
            "name": "researcher",
            "description": "researches one question",
            "system_prompt": "Research it.",
            "tools": [search],
        },
    ],
    backend=StoreBackend(namespace=lambda runtime: ("notes", "filesystem"), store=STORE),
    store=STORE,
)
