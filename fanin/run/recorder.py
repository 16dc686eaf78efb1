"""The plugin's state for one pytest session: the reference, what each probe saw, and how it compared."""

from __future__ import annotations

import importlib.util
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fanin.model import compare
from fanin.model.results import PROBE_ERROR, Observation, ProbeInfo, ResultSet
from fanin.run import companions as companion_imports
from fanin.run import journal as journal_log


@dataclass
class Recorder:
    """Per-session state: the reference, what each probe saw, and how it compared."""

    cell: str
    framework: str | None
    reference: ResultSet | None
    reference_path: Path | None
    reference_error: str | None
    accept_new: bool
    probes: dict[str, ProbeInfo] = field(default_factory=dict)
    observations: dict[str, Observation] = field(default_factory=dict)
    changes: dict[str, compare.Change] = field(default_factory=dict)
    collected: set[str] = field(default_factory=set)  # every probe found, before -k/-m deselection
    collection_errors: list[str] = field(default_factory=list)  # files that did not load: a broken probe
    signals: list[str] = field(default_factory=list)  # SIGTERM/SIGINT received, in order: the run ends as interrupted
    failed_imports: companion_imports.FailedImports = field(default_factory=companion_imports.FailedImports)
    journal: Path | None = None
    resumed: journal_log.State = field(default_factory=journal_log.State)
    running: str | None = None
    started: float = field(default_factory=time.monotonic)
    # probe --here: the registry's companions by canonical name (requirement as written), and per observation
    # those it tried to import while they were not installed (the environment's gap, not the framework's).
    companions: dict[str, str] | None = None
    not_installed: dict[str, list[str]] = field(default_factory=dict)

    def vanished(self) -> list[str]:
        """Probes the reference holds that no longer exist in the suite: the reference is stale."""
        if self.reference is None:
            return []
        framework = self.framework or self.reference.framework
        return sorted(
            pid for pid in self.reference.observations if pid.startswith(f"{framework}/") and pid not in self.collected
        )


def missing_module(exc: BaseException) -> str | None:
    """The module a ModuleNotFoundError in the exception (its causes, an ExceptionGroup's members) names, when no
    distribution here provides it: this environment's gap (a transitive package not installed), not the framework's."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ModuleNotFoundError) and current.name:
            top = current.name.partition(".")[0]
            try:
                absent = importlib.util.find_spec(top) is None
            except (ImportError, ValueError):
                absent = True
            if absent:
                return current.name
        pending += [e for e in (current.__cause__, current.__context__) if e is not None]
        pending += [e for e in getattr(current, "exceptions", ()) if isinstance(e, BaseException)]
    return None


def probe_error(message: str, exc: BaseException | None) -> Observation:
    """A probe that broke (not the framework): its message and where it was raised, never a hazard; and the module
    it lacked, when a module this environment does not have stopped it (probe --here: not covered here)."""
    value: dict[str, Any] = {"error": message}
    if exc is not None:
        frames = traceback.extract_tb(exc.__traceback__)
        value["where"] = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
        absent = missing_module(exc)
        if absent is not None:
            value[compare.MISSING_MODULE] = absent
    return Observation(
        outcome=PROBE_ERROR, value=value, label="probe-error", detail=f"probe-error: {message}", hazard="n/a"
    )
