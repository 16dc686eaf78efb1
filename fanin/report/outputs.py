"""Which files a report run writes, from which result sets: one place for the CLI, bless and the staleness test.

- `reference`: the committed reference/REPORT.md and CHECKLIST.md (relative links, the same
  on every machine: a base URL never reaches them), and reports/matrix.html with its
  compare pages in reports/compare/ (absolute links when a base URL is given).
- `local_run`: reports/run/ from reports/results/, when there is a local run.
- `bundle`: REPORT.md, CHECKLIST.md, matrix.html and compare/ together in one directory,
  self-contained (reproducers inline), for publishing under a base URL or pasting:
  `report --out DIR`, and `report --for SPEC ... --out DIR` at the versions asked for.
- `compare`: DIR/compare-<a>-<b>.md and .html for any two cells.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path

from fanin.model import focus as focus_model
from fanin.model import matrix as paths
from fanin.model.errors import FaninError
from fanin.model.matrix import Matrix
from fanin.model.results import ResultSet
from fanin.model.source import REPO_ROOT
from fanin.report import build as report
from fanin.report import checklist, data, html, html_compare, links, markdown, pages, view
from fanin.report.gcpause import while_paused

BASE_URL_ENV = "FANIN_BASE_URL"


def base_url(option: str | None) -> str:
    """The base URL from `--base-url`, else FANIN_BASE_URL; "" for none. One line when it cannot be a URL."""
    value = (option if option is not None else os.environ.get(BASE_URL_ENV, "")).strip()
    if value and (any(c.isspace() for c in value) or '"' in value or "<" in value or ">" in value):
        raise FaninError(
            f"base URL {value!r} contains spaces, quotes or angle brackets; give a URL like https://host/fanin"
        )
    if value and "://" not in value and not value.startswith("/"):
        raise FaninError(f"base URL {value!r} is not absolute; give a URL like https://host/fanin")
    return value.rstrip("/")


def _places(report_md: Path, checklist_md: Path, matrix_html: Path, compare_dir: Path) -> tuple[tuple[str, str], ...]:
    return (
        (links.REPORT_MD, report_md.as_posix()),
        (links.PROBES_DIR, (report_md.parent / links.PROBES_DIR).as_posix()),  # probes/<key>.md beside REPORT.md
        (links.CHECKLIST_MD, checklist_md.as_posix()),
        (links.MATRIX_HTML, matrix_html.as_posix()),
        (links.COMPARE_DIR, compare_dir.as_posix()),
    )


def _probe_pages(rep: view.Report, directory: Path) -> dict[Path, str]:
    """probes/<key>.md beside REPORT.md, one per framework with a probe."""
    return {directory / links.probes_md(v.key): markdown.probe_page(rep, v) for v in rep.frameworks if v.probes}


def _compare_files(rep: view.Report, directory: Path, pages: Sequence[view.ComparePage]) -> dict[Path, str]:
    files: dict[Path, str] = {}
    for page in pages:
        files[directory / f"{page.name}.md"] = markdown.compare_page(rep, page)
        files[directory / f"{page.name}.html"] = html_compare.compare_page(rep, page)
    return files


@while_paused
def reference(
    matrix: Matrix, source: Path | None = None, replace: dict[str, ResultSet] | None = None, base: str = ""
) -> tuple[dict[Path, str], int]:
    """REPORT.md and CHECKLIST.md (committed), reports/matrix.html and reports/compare/, from the reference."""
    rep = report.build(source or paths.REFERENCE_RESULTS, matrix, reference=True, replace=replace)
    places = _places(
        paths.REFERENCE_REPORT, paths.REFERENCE_CHECKLIST, paths.REPORTS / "matrix.html", paths.REPORTS / "compare"
    )
    committed = rep.with_links(links.Links("", places, REPO_ROOT.as_posix()), inline_reproducers=False)
    published = rep.with_links(links.Links(base, places, "" if base else REPO_ROOT.as_posix()))
    files = {
        paths.REFERENCE_REPORT: markdown.report(committed),
        paths.REFERENCE_CHECKLIST: checklist.checklist(committed),
        paths.REPORTS / "matrix.html": html.page(published),
    }
    files.update(_probe_pages(committed, paths.REFERENCE_REPORT.parent))
    files.update(_compare_files(published, paths.REPORTS / "compare", published.compare_pages))
    files.update(
        data.schemas(paths.REFERENCE_REPORT.parent / links.SCHEMA_DIR)
    )  # committed, kept current like REPORT.md
    return files, rep.unreadable


def committed(path: Path) -> bool:
    """Is this rendered file part of the reference (REPORT.md, CHECKLIST.md, probes/, schema/), not a local page?"""
    home = paths.REFERENCE_REPORT.parent
    return path in (paths.REFERENCE_REPORT, paths.REFERENCE_CHECKLIST) or path.parent in (
        home / name for name in links.COMMITTED_DIRS if name
    )


@while_paused
def local_run(matrix: Matrix, source: Path | None = None, base: str = "") -> tuple[dict[Path, str], int]:
    """reports/run/REPORT.md, matrix.html and compare/, from a local run (nothing when there is none)."""
    source = source or paths.RUN_RESULTS
    if not any(source.glob("*.json")):
        return {}, 0
    rep = report.build(source, matrix, reference=False)
    run = paths.REPORTS / "run"
    places = _places(run / "REPORT.md", run / "CHECKLIST.md", run / "matrix.html", run / "compare")
    rep = rep.with_links(links.Links(base, places, "" if base else REPO_ROOT.as_posix()))
    pages = report.run_pages(sorted(p.stem for p in source.glob("*.json")), paths.REPORTS / "junit", run)
    rep = dataclasses.replace(rep, run_pages=pages)
    files = {run / "REPORT.md": markdown.report(rep), run / "matrix.html": html.page(rep)}
    files.update(_probe_pages(rep, run))
    files.update(_compare_files(rep, run / "compare", rep.compare_pages))
    return files, rep.unreadable


@while_paused
def bundle(rep: view.Report, out: Path, base: str = "") -> dict[Path, str]:
    """REPORT.md, CHECKLIST.md, matrix.html and compare/ in one directory, reproducers inline."""
    places = _places(out / "REPORT.md", out / "CHECKLIST.md", out / "matrix.html", out / "compare")
    rep = rep.with_links(links.Links(base, places, ""), inline_reproducers=True)
    files = {
        out / "REPORT.md": markdown.report(rep),
        out / "CHECKLIST.md": checklist.checklist(rep),
        out / "matrix.html": html.page(rep),
    }
    files.update(_probe_pages(rep, out))
    files.update(_compare_files(rep, out / "compare", rep.compare_pages))
    return files


@while_paused
def compare(rep: view.Report, a: str, b: str, out: Path, base: str = "") -> dict[Path, str]:
    """DIR/compare-<a>-<b>.md and .html; probe links lead to reference/REPORT.md and reports/matrix.html."""
    page = pages.compare_page(rep, a, b)
    places = _places(paths.REFERENCE_REPORT, paths.REFERENCE_CHECKLIST, paths.REPORTS / "matrix.html", out)
    rep = rep.with_links(links.Links(base, places, ""))
    return _compare_files(rep, out, [page])


@while_paused
def for_versions(matrix: Matrix, focus: focus_model.Focus, source: Path | None = None) -> view.Report:
    title = "fanin report at " + ", ".join(focus.specs)
    rep = report.build(source or paths.REFERENCE_RESULTS, matrix, reference=True, extra=focus.extra, focus=focus.cells)
    return rep.retitled(title)
