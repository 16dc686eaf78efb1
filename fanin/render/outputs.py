"""Which files a report run writes, from which result sets: one place for the CLI and the staleness test."""

from __future__ import annotations

from pathlib import Path

from fanin import report
from fanin.matrix import REFERENCE_CHECKLIST, REFERENCE_REPORT, REFERENCE_RESULTS, REPORTS, RUN_RESULTS, Matrix
from fanin.render import checklist, html, markdown


def reference(matrix: Matrix, source: Path = REFERENCE_RESULTS) -> tuple[dict[Path, str], int]:
    """REPORT.md and CHECKLIST.md (committed) and reports/matrix.html, from the reference."""
    rep = report.build(source, matrix, reference=True)
    files = {
        REFERENCE_REPORT: markdown.report(rep),
        REFERENCE_CHECKLIST: checklist.checklist(rep),
        REPORTS / "matrix.html": html.page(rep),
    }
    return files, rep.unreadable


def local_run(matrix: Matrix, source: Path = RUN_RESULTS) -> tuple[dict[Path, str], int]:
    """reports/run/REPORT.md and reports/run/matrix.html, from a local run (nothing when there is none)."""
    if not any(source.glob("*.json")):
        return {}, 0
    rep = report.build(source, matrix, reference=False)
    return {REPORTS / "run" / "REPORT.md": markdown.report(rep), REPORTS / "run" / "matrix.html": html.page(rep)}, rep.unreadable
