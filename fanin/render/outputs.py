"""Which files a report run writes, from which result sets: one place for the CLI and the staleness test."""

from __future__ import annotations

from pathlib import Path

from fanin import matrix as paths
from fanin import report
from fanin.matrix import Matrix
from fanin.model import ResultSet
from fanin.render import checklist, html, markdown


def reference(
    matrix: Matrix, source: Path | None = None, replace: dict[str, ResultSet] | None = None
) -> tuple[dict[Path, str], int]:
    """REPORT.md and CHECKLIST.md (committed) and reports/matrix.html, from the reference (as `replace` would make it)."""
    rep = report.build(source or paths.REFERENCE_RESULTS, matrix, reference=True, replace=replace)
    files = {
        paths.REFERENCE_REPORT: markdown.report(rep),
        paths.REFERENCE_CHECKLIST: checklist.checklist(rep),
        paths.REPORTS / "matrix.html": html.page(rep),
    }
    return files, rep.unreadable


def local_run(matrix: Matrix, source: Path | None = None) -> tuple[dict[Path, str], int]:
    """reports/run/REPORT.md and reports/run/matrix.html, from a local run (nothing when there is none)."""
    source = source or paths.RUN_RESULTS
    if not any(source.glob("*.json")):
        return {}, 0
    rep = report.build(source, matrix, reference=False)
    return {
        paths.REPORTS / "run" / "REPORT.md": markdown.report(rep),
        paths.REPORTS / "run" / "matrix.html": html.page(rep),
    }, rep.unreadable
