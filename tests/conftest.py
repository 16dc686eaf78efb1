"""Harness tests: run with no agent framework installed.

They never write the committed reference: a session-wide guard fingerprints reference/
before the first test and fails the run if any file there changed by the end.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fanin.model.source import REPO_ROOT


def _fingerprint(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="session", autouse=True)
def reference_is_never_written() -> Iterator[None]:
    before = _fingerprint(REPO_ROOT / "reference")
    yield
    after = _fingerprint(REPO_ROOT / "reference")
    changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
    assert not changed, f"a test wrote the committed reference: {changed}"


@pytest.fixture
def pgserver_lock_held() -> Iterator[Callable[[], None]]:
    """Another process holds fanin's pgserver lock (fcntl locks are per process) from the test's start;
    the test may free it early by calling what the fixture gives, else it is freed when the test ends.

    The fixture returns once the holder has said it holds the lock (a gate, not a sleep).
    """
    from fanin.run import services

    services.runtime_dir().mkdir(mode=0o700, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, fasteners; lock = fasteners.InterProcessLock(sys.argv[1]); lock.acquire();"
                "print('held', flush=True); sys.stdin.read()"
            ),
            str(services.runtime_dir() / ".lockfile"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def release() -> None:
        if holder.returncode is None:
            holder.communicate("")

    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield release
    finally:
        release()
