"""Run nox sessions side by side, one per core, each with its own log; print one line per session.

Cells are independent processes (own venv, own result file), so the matrix
runs in parallel the way pytest-xdist runs tests: output is kept per cell in
reports/logs/<cell>.log and only a failing cell's tail is shown.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Outcome:
    session: str
    returncode: int
    seconds: float
    log: Path


def run_one(noxfile: Path, session: str, posargs: list[str], log: Path) -> Outcome:
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    command = [sys.executable, "-m", "nox", "--noxfile", str(noxfile), "-s", session]
    if posargs:
        command += ["--", *posargs]
    with log.open("w", encoding="utf-8") as handle:
        done = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, env=os.environ.copy())
    return Outcome(session, done.returncode, time.monotonic() - started, log)


def pytest_summary(log: Path) -> str | None:
    """The last pytest result line of a session log ("37 passed in 1.21s"), so CI shows real counts."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    for line in reversed(lines):
        match = re.fullmatch(r"=+ (.* in [0-9.]+s.*?) =+", line.strip())
        if match:
            return match.group(1)
    return None


def run_all(noxfile: Path, sessions: list[str], posargs: list[str], logs: Path, jobs: int) -> list[Outcome]:
    """Longest-first is the caller's choice of order; results come back in that order."""
    def one(session: str) -> Outcome:
        name = session.removeprefix("probe(").removesuffix(")")
        outcome = run_one(noxfile, session, posargs, logs / f"{name}.log")
        state = "ok" if outcome.returncode == 0 else f"FAILED (exit {outcome.returncode})"
        summary = pytest_summary(outcome.log)
        print(f"fanin: {session}: {state} in {outcome.seconds:.1f} s" + (f" ({summary})" if summary else ""), flush=True)
        if outcome.returncode:
            tail = outcome.log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
            print("\n".join(f"    {line}" for line in tail), flush=True)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, sessions))
