"""A cell that could not produce a result set says why, in a one-line marker beside where it would be.

`reports/results/<cell>.error` holds e.g. "install failed (uv exited 1)"; the
report shows the cell as "not run" with that reason instead of a blank, and a
later successful run removes the marker.
"""

from __future__ import annotations

from pathlib import Path

from fanin.model import write_atomic


def marker(results: Path) -> Path:
    return results.with_suffix(".error")


def clear(results: Path) -> None:
    """Forget the previous attempt, so a stale result never stands in for this run."""
    results.unlink(missing_ok=True)
    marker(results).unlink(missing_ok=True)


def record(results: Path, reason: str) -> None:
    write_atomic(marker(results), " ".join(reason.split()) + "\n")


def reason(results: Path) -> str | None:
    path = marker(results)
    return path.read_text(encoding="utf-8").strip() if path.exists() else None
