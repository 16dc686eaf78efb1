"""A distribution's name as PyPI compares them (PEP 503: case and runs of `-_.` do not count).

fanin's own one-line definition, not `packaging.utils.canonicalize_name`: importing packaging.utils
imports packaging.tags and its platform probing, which was a fifth of a short command's start
(`audit`, `probe --here`, `cells`). Every harness module takes the name from here.
"""

from __future__ import annotations


def canonicalize_name(name: str) -> str:
    """`Google_ADK` and `google.adk` are `google-adk`."""
    value = name.lower().replace("_", "-").replace(".", "-")
    while "--" in value:
        value = value.replace("--", "-")
    return value
