"""`fanin record` for LangGraph: which task wrote which key in which superstep, in every run a test suite makes.

Installed in the user's own test process (fanin.project.record_plugin), it wraps two names and
changes nothing they do: `apply_writes` where the Pregel loop calls it (each superstep's tasks and
their writes, before they are applied) and `Pregel.stream` / `astream` (the graph a run belongs
to, for the audit's static facts). A run is one Pregel loop (its channels mapping); a subgraph's
run is its own loop, named by its checkpoint namespace. Anything the recording cannot read is
left out of the record, never raised into the user's test.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

LOOP_MODULES = ("langgraph.pregel._loop", "langgraph.pregel.loop")  # 1.x, then 0.2-0.6
HIDDEN = ("__", "branch:")  # the framework's own channels: pending sends, routing, interrupts


class Recording:
    """Every run seen, by its loop; the graphs that ran, by their channel names."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: dict[int, dict[str, Any]] = {}
        self.held: list[Any] = []  # the loops' channel mappings, alive until the end: their ids stay unique
        self.graphs: dict[frozenset[str], Any] = {}
        self.test = ""  # the pytest node id running now (set by the plugin)
        self.errors: list[str] = []

    def saw_graph(self, graph: Any) -> None:
        try:
            key = frozenset(_loop_channels(graph))
        except Exception:  # noqa: BLE001 - not a graph we can name: its runs are still recorded
            return
        with self.lock:
            self.graphs.setdefault(key, graph)

    def saw_step(self, channels: Any, tasks: Any) -> None:
        try:
            rows = []
            for task in list(tasks):
                metadata = (getattr(task, "config", None) or {}).get("metadata") or {}
                keys = sorted(
                    {str(w[0]) for w in getattr(task, "writes", ()) or () if not str(w[0]).startswith(HIDDEN)}
                )
                rows.append(
                    {
                        "step": metadata.get("langgraph_step", -1),
                        "node": str(getattr(task, "name", "?")),
                        "task": str(getattr(task, "id", "")),
                        "keys": keys,
                        "namespace": str(metadata.get("langgraph_checkpoint_ns") or ""),
                    }
                )
            with self.lock:
                run = self.runs.get(id(channels))
                if run is None:
                    self.held.append(channels)
                    run = self.runs[id(channels)] = {"channels": sorted(channels), "test": self.test, "writes": []}
                run["writes"].extend(rows)
        except Exception as exc:  # noqa: BLE001 - recording never breaks the user's run
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])


def _loop_channels(graph: Any) -> list[str]:
    """The channel names a run's loop holds: the graph's channels without its managed values (`remaining_steps` of
    a prebuilt agent's state is a class, or a spec, there, and the loop keeps those apart), so its runs are named."""
    return [
        str(name)
        for name, channel in graph.channels.items()
        if not isinstance(channel, type) and hasattr(channel, "checkpoint")
    ]


def install(recording: Recording) -> list[str]:
    """Wrap the loop's apply_writes and Pregel's stream/astream; the names wrapped (none: LangGraph lacks them)."""
    wrapped = []
    for name in LOOP_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        original = getattr(module, "apply_writes", None)
        if original is None or getattr(original, "fanin_recording", False):
            continue

        def apply_writes(checkpoint: Any, channels: Any, tasks: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            tasks = list(tasks)
            recording.saw_step(channels, tasks)
            return _original(checkpoint, channels, tasks, *args, **kwargs)

        apply_writes.fanin_recording = True  # type: ignore[attr-defined]
        module.apply_writes = apply_writes  # type: ignore[attr-defined]
        wrapped.append(f"{name}.apply_writes")
    try:
        from langgraph.pregel import Pregel
    except ImportError:
        return wrapped
    for method in ("stream", "astream"):
        original = getattr(Pregel, method, None)
        if original is None or getattr(original, "fanin_recording", False):
            continue

        def entry(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            recording.saw_graph(self)
            return _original(self, *args, **kwargs)

        entry.fanin_recording = True  # type: ignore[attr-defined]
        setattr(Pregel, method, entry)
        wrapped.append(f"Pregel.{method}")
    return wrapped


def runs_by_graph(recording: Recording) -> list[tuple[Any, list[dict[str, Any]]]]:
    """Each graph that ran (None where it could not be named) with its runs, outermost first."""
    grouped: dict[frozenset[str], list[dict[str, Any]]] = {}
    for run in recording.runs.values():
        grouped.setdefault(frozenset(run["channels"]), []).append(run)
    ordered = sorted(grouped.items(), key=lambda item: (min(w["namespace"].count("|") for r in item[1] for w in r["writes"] or [{"namespace": ""}]), sorted(item[0])))
    return [(recording.graphs.get(key), runs) for key, runs in ordered]
