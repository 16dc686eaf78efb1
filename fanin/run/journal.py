"""A cell run's journal: one JSON line per event, written as it happens, read back after a crash.

The plugin appends `start` before a probe runs and `observation` after it is recorded,
with one unbuffered `os.write` each, so the lines survive the process dying outright
(`os._exit`, a segfault, SIGKILL from the watchdog). The runner reads the journal to
learn which probe was running when the process died or hung, records that probe's
outcome, and starts pytest again for the probes that are left (`--fanin-resume`):
nothing already observed is lost or run twice.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fanin.model.results import Observation, ProbeInfo

START = "start"
OBSERVATION = "observation"
INTERRUPTED = "interrupted"
IMPORT_FAILED = "import-failed"
SAVED = "saved"  # the result set of the run was written
INCOMPLETE = "incomplete"  # pytest ended before every selected probe was observed: nothing written
COLLECTION_ERROR = "collection-error"  # a probe file did not load: a broken probe, nothing written


@dataclass
class State:
    """What a journal says: the observations made so far, and the probe in flight, if any."""

    probes: dict[str, ProbeInfo] = field(default_factory=dict)
    observations: dict[str, Observation] = field(default_factory=dict)
    running: str | None = None
    interrupted: str | None = None
    import_failed: str | None = None
    incomplete: str | None = None
    collection_error: str | None = None
    saved: bool = False
    lines: int = 0


def append(path: Path, event: str, **fields: Any) -> None:
    """One line, one unbuffered write: complete on disk before the call returns."""
    line = json.dumps({"event": event, **fields}, sort_keys=True, ensure_ascii=False) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def record_start(path: Path, observation_id: str, nodeid: str) -> None:
    append(path, START, id=observation_id, nodeid=nodeid, pid=os.getpid())


def record_observation(path: Path, observation_id: str, info: ProbeInfo | None, observation: Observation) -> None:
    probe_id = info.id if info else observation_id.split("[", 1)[0]
    append(
        path,
        OBSERVATION,
        id=observation_id,
        probe_id=probe_id,
        probe=info.to_json() if info else None,
        observation=observation.to_json(),
    )


def read(path: Path) -> State:
    """Replay the journal; a torn last line (the writer died mid-write) is ignored."""
    state = State()
    if not path.exists():
        return state
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        state.lines += 1
        event = entry.get("event")
        if event == SAVED:
            state.saved = True
        elif event == START:
            state.running = entry["id"]
        elif event == OBSERVATION:
            if entry.get("probe"):  # the runner records a crashed probe without its metadata
                state.probes[entry["probe_id"]] = ProbeInfo.from_json(entry["probe_id"], entry["probe"])
            state.observations[entry["id"]] = Observation.from_json(entry["observation"])
            if state.running == entry["id"]:
                state.running = None
        elif event == INTERRUPTED:
            state.interrupted = entry.get("reason", "interrupted")
        elif event == INCOMPLETE:
            state.incomplete = entry.get("reason", "incomplete")
        elif event == COLLECTION_ERROR:
            state.collection_error = entry.get("error", "collection error")
        elif event == IMPORT_FAILED:
            state.import_failed = entry.get("error", "import failed")
    return state
