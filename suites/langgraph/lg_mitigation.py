"""What the LangGraph mitigation probes share besides the verdict (`mitigation.judge`, one for every kit):
the two namings every scenario runs under, and how a write is found in a final state.
"""

from collections import Counter
from typing import Any


# The same two writers under both namings: node name -> the writer's role (what it writes).
NAMINGS = {"a writes A, b writes B": {"a": "A", "b": "B"}, "a writes B, b writes A": {"a": "B", "b": "A"}}


def kept_of(made: dict[str, Any], final_items: list) -> list[str]:
    """The writes (`node:item`) whose item is in `final_items`, counting repeats (two equal writes need two copies)."""
    left = Counter(map(repr, final_items))
    kept = []
    for node, item in made.items():
        if left[repr(item)] > 0:
            left[repr(item)] -= 1
            kept.append(f"{node}:{item}")
    return kept
