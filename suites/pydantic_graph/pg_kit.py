"""Helpers shared by the pydantic-graph probes.

Kept small on purpose: a probe's own function is its reproducer in the report, so
anything that decides what a probe observes stays in the probe. What lives here is
plumbing that every probe needs the same way:

- `api`: the parallel graph API (`GraphBuilder` with broadcast/map/join). It is
  `pydantic_graph.beta` in 1.x (from 1.5.0) and the top-level `pydantic_graph` in 2.x;
  releases before 1.5.0 have only the sequential `BaseNode` graph, and 1.5.0's beta
  imports `pydantic_ai`, which pydantic-graph does not depend on. Each is `n/a` with
  that reason, never a guess.
- `run`: one graph run on a fresh event loop (the graph API is async only).

No model is involved: pydantic-graph steps are plain async functions, so every
probe runs the real framework code end to end.
"""

from __future__ import annotations

import asyncio
import importlib
from types import SimpleNamespace
from typing import Any

_NAMES = ("GraphBuilder", "StepContext")
_REDUCERS = ("reduce_list_append", "reduce_sum", "reduce_dict_update")


def api(obs: Any) -> SimpleNamespace:
    """The builder API of this version as one namespace, or `n/a` with why it cannot be used."""
    try:
        beta = importlib.import_module("pydantic_graph.beta")
    except ModuleNotFoundError as exc:
        if exc.name != "pydantic_graph.beta":
            obs.not_applicable(
                f"pydantic_graph.beta exists but does not import with pydantic-graph alone: No module named {exc.name!r}"
            )
        beta = None
    if beta is not None:
        join = importlib.import_module("pydantic_graph.beta.join")
        return SimpleNamespace(
            **{name: getattr(beta, name) for name in _NAMES},
            **{name: getattr(join, name) for name in _REDUCERS},
            module="pydantic_graph.beta",
        )
    top = importlib.import_module("pydantic_graph")
    if not all(hasattr(top, name) for name in _NAMES):
        obs.not_applicable(
            "no parallel graph API in this version (neither pydantic_graph.beta nor pydantic_graph.GraphBuilder):"
            " only the sequential BaseNode graph, which runs one node at a time"
        )
    return SimpleNamespace(**{name: getattr(top, name) for name in (*_NAMES, *_REDUCERS)}, module="pydantic_graph")


def run(graph: Any, state: Any, inputs: Any = None) -> Any:
    """`graph.run(state=..., inputs=...)` on its own event loop; returns the graph's output."""
    return asyncio.run(graph.run(state=state, inputs=inputs))
