"""The environment a result set was made in: every resolved package, Python, platform, commit, date.

Recorded beside the observations, never compared: two runs of one cell agree on
observations even though their dates differ.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import os
import platform
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fanin.model import contract
from fanin.model.source import REPO_ROOT

# Servers the harness ran for the cell, recorded with their versions (set by fanin.run.services).
_SERVICES = {"postgresql": contract.POSTGRES_VERSION}  # the variables that carry a service's version into the cell


def installed_packages() -> dict[str, str]:
    from importlib import metadata  # here: the harness imports this module on every command's start, few ask this

    packages: dict[str, str] = {}
    for dist in metadata.distributions():  # in sys.path order: the first of a name is the one imported
        name = dist.metadata["Name"]
        if name:
            packages.setdefault(name.lower().replace("_", "-"), dist.version)
    return dict(sorted(packages.items()))


def suite_commit() -> str:
    """The suite's commit as run: the one `pinned_suite_commit` saw when the run started (`+dirty` when the work
    tree differed then), and `+dirty` too when the tree is another now (a commit or an edit made while the cells
    ran: the code that ran is not the commit's alone, so bless refuses it)."""
    given = os.environ.get(contract.SUITE_COMMIT)
    if not given:
        return _current_commit()
    now = _current_commit()
    if now in ("unknown", given) or given.endswith("+dirty"):
        return given  # a copy of the suite that is no checkout (probe --here's fanin) says only what it was given
    return given + "+dirty"


@contextlib.contextmanager
def pinned_suite_commit() -> Iterator[str]:
    """The suite commit a run names, fixed at its start for every cell it starts (FANIN_SUITE_COMMIT, which they
    inherit), and unset again at its end, so a long-lived process (the harness tests) pins no later run."""
    given = os.environ.get(contract.SUITE_COMMIT)
    if given:
        yield given
        return
    os.environ[contract.SUITE_COMMIT] = commit = _current_commit()
    try:
        yield commit
    finally:
        os.environ.pop(contract.SUITE_COMMIT, None)


def _current_commit() -> str:
    """HEAD's short hash, with `+dirty` when a tracked file differs; "unknown" outside a git checkout."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def collect(lock: Path | None) -> dict[str, Any]:
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": f"{platform.system().lower()}-{platform.machine()}",
        "suite_commit": suite_commit(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
        "packages": installed_packages(),
    }
    # Which guard kept the run off the network (fanin.run.isolation sets it; a bare pytest run has only the in-process one).
    env["network_isolation"] = os.environ.get(contract.NETWORK_ISOLATION, contract.NETWORK_ISOLATION_UNSET)
    services = {name: os.environ[var] for name, var in _SERVICES.items() if os.environ.get(var)}
    if services:
        env["services"] = services
    if lock is not None and lock.is_file():
        try:
            shown = str(lock.resolve().relative_to(REPO_ROOT))
        except ValueError:
            shown = str(lock)
        env["lock"] = shown
        env["lock_sha256"] = file_sha256(lock)
    return env
