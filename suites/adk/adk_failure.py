"""What a failing ADK branch raises, and where its exception survives in what the run raised.

A kit, not a probe file: probes of several files use it, and `fanin repro` inlines kits into reproducers.
"""


class ChildFailure(Exception):
    """What a failing branch raises: a class of the probe's own, so the run's exception tells whether it is
    the child's (or a group holding it) or another one that ADK raised while ending the run."""


def where_the_child_failure_is(exc: BaseException) -> str:
    """Where the branch's ChildFailure survives in what the run raised: itself, inside a group, as the
    __cause__ or __context__ of another exception, or nowhere."""
    if isinstance(exc, ChildFailure):
        return "raised itself"
    if any(isinstance(inner, ChildFailure) for inner in getattr(exc, "exceptions", ())):
        return "inside the group"
    if isinstance(exc.__cause__, ChildFailure):
        return "as __cause__"
    seen, link = set(), exc.__context__
    while link is not None and id(link) not in seen:
        if isinstance(link, ChildFailure):
            return "as __context__"
        seen.add(id(link))
        link = link.__context__
    return "nowhere"
