"""Harness tests: run with no agent framework installed.

They never write the committed reference: a session-wide guard fingerprints reference/
before the first test and fails the run if any file there changed by the end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
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
