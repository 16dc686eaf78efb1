"""What the live-thread probes (`<framework>/upgrade/*`) share: the labels every one of them can end with.

Each fits the result schema's label limit (fanin.model.results.LABEL_LIMIT, 40 characters): a longer one made
the observation a probe-error, so the fallback of a resume that differed from the control in no named way, or an
error class with a long name, lost the observation instead of recording it (the name stays in the value).
"""

from __future__ import annotations

from fanin.model.results import LABEL_LIMIT


def same(store: str) -> str:
    """The resume across releases did what the same release's resume did."""
    return f"resumes as a {store} it wrote itself"


def raised(what: str, name: str) -> str:
    """`what` ("the resume", "reading the state") raised `name` across releases only; the class, where it fits."""
    label = f"{what} raised {name}"
    return label if len(label) <= LABEL_LIMIT else f"{what} raised"


def unlike(store: str) -> str:
    """The two resumes differ in nothing a probe names: the value holds both."""
    return f"resumes unlike a {store} it wrote"
