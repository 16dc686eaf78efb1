"""The cyclic garbage collector paused while a report is built and rendered.

A report keeps every result set it reads alive until it is written, and allocates hundreds of
thousands of small containers (a 10x catalogue: a third of a million JSON objects, then the
views made from them): each automatic collection walks all of them again, which made loading
the result sets alone 3x slower than parsing them and a third of a 10x report's time. Nothing
made here is garbage before the report is done (what is, is freed by reference counting), so
the collector is paused for the render and resumed, as it was, at the end.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def paused() -> Iterator[None]:
    """Within the block no automatic collection runs; the collector is left as it was (nesting is fine)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def while_paused(function: Callable[P, R]) -> Callable[P, R]:
    """`function` runs with the collector paused."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with paused():
            return function(*args, **kwargs)

    return wrapper
