"""A cell that could not produce a result set says why, in a one-line marker beside where it would be.

`reports/results/<cell>.error` holds e.g. "install failed (uv exited 1)" or
"interrupted by SIGTERM while langgraph/join/defer ran (previous result set kept)";
the report shows the cell as "not run" with that reason instead of a blank (or instead
of the previous, now stale, result set), bless refuses the cell, and a later
successful run removes the marker. The previous result set itself is never touched.
"""

from __future__ import annotations

from pathlib import Path

from fanin.model.results import write_atomic


def marker(results: Path) -> Path:
    return results.with_suffix(".error")


def clear_marker(results: Path) -> None:
    """The run finished and wrote its result set: the reason a previous attempt failed no longer holds."""
    marker(results).unlink(missing_ok=True)


def record(results: Path, reason: str) -> None:
    write_atomic(marker(results), " ".join(reason.split()) + "\n")


def reason(results: Path) -> str | None:
    path = marker(results)
    return path.read_text(encoding="utf-8").strip() if path.exists() else None
