"""Helpers shared by the LangGraph probes.

Kept small on purpose: a probe's own function is its reproducer in the report, so
anything that decides what a probe observes stays in the probe. What lives here is
plumbing that several probes need the same way:

- `message_view`: a langchain message as plain data (type, id, content).
"""

from typing import Any


def message_view(message: Any) -> dict:
    """A langchain message as plain data: its type, id and content."""
    return {"type": message.type, "id": message.id, "content": message.content}
