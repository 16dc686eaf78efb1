"""The free space of the disk the CI command writes to, watched while it runs, said in one line at its end.

A run that fills the disk fails in ways that name something else: a test's temporary directory cannot be
made, pytest's own capture file cannot be written (INTERNALERROR), a venv is half installed. The lowest free
space seen, beside the start and the end, tells a reader of the log which it was. Standard library only: the
noxfile loads this file from the tools' Python (`runpy`), the tests import it as `fanin.run.diskwatch`.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

LOW = 2 * 1024**3  # under this at the lowest, the line says a failure may be the disk filling


def _gb(free: int) -> str:
    return f"{free / 1024**3:.1f} GB"


class DiskWatch:
    """Samples the free space of `path`'s filesystem every `interval` seconds in a daemon thread."""

    def __init__(
        self, path: Path, interval: float = 5.0, free: Callable[[Path], int] = lambda p: shutil.disk_usage(p).free
    ) -> None:
        self.path, self.interval, self._free = path, interval, free
        self.start_free = self.lowest = self.last = free(path)
        self.lowest_at = time.strftime("%H:%M:%S")
        self._done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        try:
            self.last = self._free(self.path)
        except OSError:
            return
        if self.last < self.lowest:
            self.lowest, self.lowest_at = self.last, time.strftime("%H:%M:%S")

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            self.sample()

    def start(self) -> DiskWatch:
        self.thread.start()
        return self

    def stop(self) -> str:
        """Stop watching; the one line to log."""
        self._done.set()
        if self.thread.is_alive():
            self.thread.join()
        self.sample()
        line = (
            f"disk: {_gb(self.start_free)} free at the start, {_gb(self.lowest)} at the lowest ({self.lowest_at}), "
            f"{_gb(self.last)} at the end, on the filesystem of {self.path}"
        )
        if self.lowest < LOW:
            line += "; under 2 GB at the lowest: a failure above may be the disk filling (ENOSPC), not the code"
        return line
