"""Commands run one after another in a thread, beside the CI command's own, into one log file.

The CI command's two halves use different resources: the harness tests are one pytest process (one core,
much of it waiting on the subprocesses it starts), the cells keep every core busy. Side by side they fill
the cores the tests leave idle. The lane stops at its first failing command with that command's exit code
(fanin's); `stop()` ends what runs as Ctrl-C would (every cell's previous result set is kept) and starts
nothing after it. Standard library only: the noxfile loads this file from the tools' Python, where fanin
is not installed (`runpy`), and the tests import it as `fanin.run.lane`.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

INTERRUPTED = 130  # fanin.model.exits.INTERRUPTED, which this file cannot import when the noxfile loads it


class Lane:
    """`commands` are (what the log shows, the argv to run), run in order with `env`; `code` is None while the
    lane runs, then 0, the first failing command's exit code, or 130 when it was stopped."""

    def __init__(self, log: Path, commands: Sequence[tuple[str, Sequence[str]]], env: Mapping[str, str]) -> None:
        self.log, self.commands, self.env = log, commands, dict(env)
        self.code: int | None = None
        self.lines: list[str] = []
        self.process: subprocess.Popen[bytes] | None = None
        self.stopped = False
        self.guard = threading.Lock()  # a command is started, or the lane stopped, never both
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:
            for shown, argv in self.commands:
                started = time.monotonic()
                out.write(f"nox > {shown}\n".encode())
                out.flush()
                with self.guard:
                    if self.stopped:
                        break
                    self.process = subprocess.Popen(list(argv), env=self.env, stdout=out, stderr=subprocess.STDOUT)
                code = self.process.wait()
                self.lines.append(
                    f"{shown.removeprefix('python -m ')}: exit {code} in {time.monotonic() - started:.0f} s"
                )
                if code:
                    self.code = code
                    return
        self.code = 0 if not self.stopped else INTERRUPTED

    def stop(self) -> None:
        """End what runs as Ctrl-C would and wait for it; nothing after it starts."""
        with self.guard:
            self.stopped = True
            if self.process is not None and self.process.poll() is None:
                self.process.send_signal(signal.SIGINT)
        self.thread.join()
