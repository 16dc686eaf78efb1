"""A cell that could not produce a result set says why, in a one-line marker beside where it would be.

`reports/results/<cell>.error` holds e.g. "install failed (uv exited 1)" or
"interrupted by SIGTERM while langgraph/join/defer ran (previous result set kept)";
the report shows the cell as "not run" with that reason instead of a blank (or instead
of the previous, now stale, result set), bless refuses the cell, and a later
successful run removes the marker. The previous result set itself is never touched.

A marker also records which result set it was written beside (its SHA-256, or `none`). A
marker whose set has since been replaced (a run that finished after the marker was written,
its clean-up cut short by a kill) no longer describes that set and is ignored: a stale
marker next to a later set cannot make a good set look failed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from fanin.model.results import write_atomic

_KEPT = "kept-sha256: "


def marker(results: Path) -> Path:
    return results.with_suffix(".error")


def _fingerprint(results: Path) -> str:
    try:
        return hashlib.sha256(results.read_bytes()).hexdigest()
    except FileNotFoundError:
        return "none"


def clear_marker(results: Path) -> None:
    """The run finished and wrote its result set: the reason a previous attempt failed no longer holds."""
    marker(results).unlink(missing_ok=True)


def record(results: Path, reason: str) -> None:
    write_atomic(marker(results), " ".join(reason.split()) + "\n" + _KEPT + _fingerprint(results) + "\n")


def reason(results: Path) -> str | None:
    """The marker's reason, or None: no marker, or one written beside another result set than the one there now."""
    path = marker(results)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    kept = [line[len(_KEPT) :].strip() for line in lines[1:] if line.startswith(_KEPT)]
    if kept and kept[0] != _fingerprint(results):
        return None
    return lines[0].strip() if lines else ""
