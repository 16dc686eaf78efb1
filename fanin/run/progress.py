"""Progress of a matrix run as its cells finish: done of total, the cells running, and what is left.

The estimate comes from each cell's recorded `run_seconds` (its reference result set, or the
last local run's): the seconds of the cells not yet finished, less what the running ones have
already spent, spread over the parallel jobs. A cell never measured counts as the median of
the others.

On a terminal it is one live line under the cells' own lines (tqdm); in CI and in logs (not a
terminal, or `CI` set, or `FANIN_PROGRESS=plain`) it is a plain line after every cell:

    fanin: progress: 3/48 cells done; running: adk-1.0.0, langgraph-1.2.24; about 2 min 10 s left
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from fanin.model.results import RESULT_SET_LIMIT


def recorded_seconds(path: Path) -> float | None:
    """A result set's `environment.run_seconds`, if it records one."""
    try:
        if path.stat().st_size > RESULT_SET_LIMIT:  # refused by every reader: never read whole for an estimate
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        seconds = data["environment"]["run_seconds"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return float(seconds) if isinstance(seconds, int | float) else None


def estimates(known: dict[str, float | None]) -> dict[str, float]:
    """Seconds per cell; a cell never measured counts as the median of the measured ones (or 30 s)."""
    measured = [s for s in known.values() if s is not None]
    default = statistics.median(measured) if measured else 30.0
    return {cell: (default if seconds is None else seconds) for cell, seconds in known.items()}


def duration(seconds: float) -> str:
    if seconds < 0.5:
        return "under a second"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def mode(stream: IO[str]) -> str:
    """`live` on a terminal, `plain` in CI, logs and pipes (`FANIN_PROGRESS=plain|live|off` decides)."""
    chosen = os.environ.get("FANIN_PROGRESS", "")
    if chosen in ("plain", "live", "off"):
        return chosen
    if os.environ.get("CI") or not getattr(stream, "isatty", lambda: False)():
        return "plain"
    return "live"


class Progress:
    """Told when each cell starts and ends (from the cells' threads); prints the line(s) and the cells' own lines."""

    def __init__(
        self,
        cells: Iterable[str],
        seconds: dict[str, float],
        jobs: int,
        stream: IO[str] | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        self.cells = list(cells)
        self.seconds = seconds
        self.jobs = max(1, jobs)
        self.stream = stream if stream is not None else sys.stdout
        self.clock = clock
        self.mode = mode(self.stream) if len(self.cells) > 1 else "off"
        self.running: dict[str, float] = {}
        self.done: set[str] = set()
        self.lock = threading.Lock()
        self.bar: Any = None
        if self.mode == "live":
            from tqdm import tqdm  # type: ignore[import-untyped]

            self.bar = tqdm(
                total=len(self.cells),
                unit="cell",
                file=self.stream,
                dynamic_ncols=True,
                bar_format="fanin: {n_fmt}/{total_fmt} cells {bar:20} {postfix}",
                leave=False,
            )
            self._refresh()
            self._ticking = threading.Event()
            threading.Thread(target=self._tick, name="fanin-progress", daemon=True).start()

    def _tick(self) -> None:
        """The live line counts down between cells."""
        while not self._ticking.wait(1.0):
            with self.lock:
                self._refresh()

    def left(self) -> float:
        """Seconds until the last cell ends, by the recorded run times."""
        now = self.clock()
        waiting = sum(self.seconds.get(c, 0.0) for c in self.cells if c not in self.done and c not in self.running)
        running = sum(max(0.0, self.seconds.get(c, 0.0) - (now - began)) for c, began in self.running.items())
        return float((waiting + running) / self.jobs)

    def line(self) -> str:
        running = ", ".join(sorted(self.running)) or "none"
        return f"{len(self.done)}/{len(self.cells)} cells done; running: {running}; about {duration(self.left())} left"

    def _refresh(self) -> None:
        if self.bar is not None:
            self.bar.n = len(self.done)
            self.bar.set_postfix_str(self.line().split("; ", 1)[1], refresh=True)

    def started(self, cell: str) -> None:
        with self.lock:
            self.running[cell] = self.clock()
            self._refresh()

    def finished(self, cell: str, text: str) -> None:
        """The cell's own line(s), then the progress after it."""
        with self.lock:
            self.running.pop(cell, None)
            self.done.add(cell)
            if self.bar is not None:
                self.bar.write(text, file=self.stream)
                self._refresh()
            else:
                print(text, file=self.stream, flush=True)
                if self.mode == "plain" and len(self.done) < len(self.cells):
                    print(f"fanin: progress: {self.line()}", file=self.stream, flush=True)

    def close(self) -> None:
        with self.lock:
            if self.bar is not None:
                self._ticking.set()
                self.bar.close()
                self.bar = None
