"""Did you mean: how every command refuses a name it does not know (a cell, a probe, a framework).

One rule everywhere: the closest known names (difflib, as Python's own "did you mean" does for
attributes), else where the whole list is; never every known name on one line.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# Where the whole list is, when no name is near.
LIST_CELLS = "`python -m fanin cells` lists the cells"
LIST_PROBES = "reference/REPORT.md lists the probes"


def close(given: str, known: Iterable[str], limit: int = 3) -> list[str]:
    """The known names nearest to `given`, best first (none when nothing is near)."""
    return difflib.get_close_matches(given, list(dict.fromkeys(known)), n=limit, cutoff=0.6)


def did_you_mean(given: str, known: Iterable[str], otherwise: str) -> str:
    """`; did you mean adk-1.15.1?` to end a refusal, or `; <otherwise>` (where the list is; "" for nothing) when nothing is near."""
    near = close(given, known)
    if not near:
        return f"; {otherwise}" if otherwise else ""
    names = near[0] if len(near) == 1 else ", ".join(near[:-1]) + f" or {near[-1]}"
    return f"; did you mean {names}?"
