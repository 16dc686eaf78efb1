"""Which files a report run writes, from which result sets: one place for the CLI, bless and the staleness test.

- `reference`: the committed reference/REPORT.md and CHECKLIST.md (relative links, the same
  on every machine: a base URL never reaches them), and reports/matrix.html with its
  compare pages in reports/compare/ (absolute links when a base URL is given).
- `local_run`: reports/run/ from reports/results/, when there is a local run.
- `bundle`: REPORT.md, CHECKLIST.md, matrix.html and compare/ together in one directory,
  self-contained (reproducers inline), for a review to paste: `report --for SPEC ... --out DIR`
  at the versions asked for.
- `site`: the published site, HTML pages only (`report --out DIR`): index.html, probes/<key>.html
  (a framework's matrix and probe sections), checklist.html, comparison.html, compare/*.html and
  data/, its short forms and the viewer; with a version tag, the same pages again under v/<tag>/, the
  permanent copy cite lines name.
- `compare`: DIR/compare-<a>-<b>.md and .html for any two cells; with `--out DIR`, the bundle
  its links lead to beside them.
- the short forms (the registry's `SHORT` documents, in every bundle and at the site's root): badges/<key>.svg and
  badges/<cell>.svg, trend/<key>.svg, feed.atom and feed.json, and feeds/<key>.atom and .json (the digest decides
  them, svg and feed format them).

Every file name is the document registry's (`fanin.report.documents`); this module says only which output
writes which of its documents, with which links.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from fanin.model import focus as focus_model
from fanin.model import matrix as paths
from fanin.model.errors import FaninError
from fanin.model.matrix import Matrix
from fanin.model.results import ResultSet
from fanin.model.source import REPO_ROOT
from fanin.report import build as report
from fanin.report import data, documents, html, html_compare, links, markdown, pages, view
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
    if "#" in value or "?" in value:  # every permalink is BASE/page#probe: a fragment or query would swallow it
        part = "a #fragment" if "#" in value else "a ?query"
        raise FaninError(
            f"base URL {value!r} has {part}, which would break every permalink (BASE/matrix.html#probe);"
            " give the directory the files are published at, like https://host/fanin"
        )
    return value.rstrip("/")


def out_dir(option: Path | None) -> Path | None:
    """`--out DIR`, refused when it is the reference (or inside it): a bundle there would overwrite REPORT.md."""
    if option is None:
        return None
    reference = paths.REFERENCE_REPORT.parent.resolve()
    if option.resolve() == reference or reference in option.resolve().parents:
        raise FaninError(
            f"--out {option} is inside the reference; give another directory (`report` with no --out renders the reference)"
        )
    return option


def _places(committed: Path, home: Path, compare_dir: Path) -> tuple[tuple[str, str], ...]:
    """Where each registered document (or its folder) is written: the committed ones in `committed`, the others in
    `home`, compare pages in `compare_dir`. The site's pages are placed at its root (they link relatively)."""
    found: dict[str, str] = {}
    for document in documents.DOCUMENTS:
        if set(document.outputs) <= {documents.SITE, documents.SITE_ROOT}:
            continue
        head = document.file.partition("/")[0]
        found.setdefault(head, ((committed if document.committed else home) / head).as_posix())
    found[documents.COMPARE_DIR] = compare_dir.as_posix()
    return tuple(found.items())


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
    places = _places(paths.REFERENCE_REPORT.parent, paths.REPORTS, paths.REPORTS / documents.COMPARE_DIR)
    committed = rep.with_links(links.Links("", places, REPO_ROOT.as_posix()), inline_reproducers=False)
    published = rep.with_links(links.Links(base, places, "" if base else REPO_ROOT.as_posix()))
    files = {
        **_written(documents.REFERENCE, committed, committed=True),
        **_written(documents.REFERENCE, published, committed=False),
    }
    files.update(_compare_files(published, paths.REPORTS / documents.COMPARE_DIR, published.compare_pages))
    files.update(
        data.schemas(paths.REFERENCE_REPORT.parent / documents.SCHEMA_DIR)
    )  # committed, kept current like REPORT.md
    return files, rep.unreadable


def committed(path: Path) -> bool:
    """Is this rendered file part of the reference (REPORT.md, CHECKLIST.md, probes/, schema/), not a local page?"""
    home = paths.REFERENCE_REPORT.parent
    return path in (paths.REFERENCE_REPORT, paths.REFERENCE_CHECKLIST) or path.parent in (
        home / name for name in links.COMMITTED_DIRS if name
    )


def _written(output: str, rep: view.Report, home: Path | None = None, committed: bool | None = None) -> dict[Path, str]:
    """The registry's documents of one output (only the committed ones, or only the others, when asked), each at
    `home`/its file, else at the place `rep`'s links give it."""
    files: dict[Path, str] = {}
    for document in documents.of(output):
        if committed is not None and document.committed != committed:
            continue
        render = document.renderer()
        for name, args in document.instances(rep):
            files[home / name if home else Path(rep.links.place(name))] = render(rep, *args)
    return files


@while_paused
def local_run(matrix: Matrix, source: Path | None = None, base: str = "") -> tuple[dict[Path, str], int]:
    """reports/run/REPORT.md, matrix.html and compare/, from a local run (nothing when there is none)."""
    source = source or paths.RUN_RESULTS
    if not any(source.glob("*.json")):
        return {}, 0
    rep = report.build(source, matrix, reference=False)
    run = paths.REPORTS / "run"
    places = _places(run, run, run / documents.COMPARE_DIR)
    rep = rep.with_links(links.Links(base, places, "" if base else REPO_ROOT.as_posix()))
    pages = report.run_pages(sorted(p.stem for p in source.glob("*.json")), paths.REPORTS / "junit", run)
    rep = dataclasses.replace(rep, run_pages=pages)
    files = _written(documents.RUN, rep)
    files.update(_compare_files(rep, run / documents.COMPARE_DIR, rep.compare_pages))
    return files, rep.unreadable


@while_paused
def bundle(rep: view.Report, out: Path, base: str = "") -> dict[Path, str]:
    """REPORT.md, CHECKLIST.md, matrix.html and compare/ in one directory, reproducers inline."""
    places = _places(out, out, out / documents.COMPARE_DIR)
    rep = rep.with_links(links.Links(base, places, ""), inline_reproducers=True)
    files = _written(documents.BUNDLE, rep)
    files.update(_compare_files(rep, out / documents.COMPARE_DIR, rep.compare_pages))
    files.update(_written(documents.SHORT, rep.with_links(links.Links(base, places, ""))))
    return files


VERSION_TAG = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,63}")


def version_tag(option: str | None) -> str:
    """`--version-tag`: the name of the site's permanent copy (v/<tag>/), "" for none; one line when it cannot be one."""
    value = (option or "").strip()
    if value and not VERSION_TAG.fullmatch(value):
        raise FaninError(
            f"version tag {value!r} is not a short name (letters, digits, '.', '_', '-'); give e.g. a commit's short hash"
        )
    return value


def copies(out: Path, rep: view.Report, tag: str) -> tuple[tuple[str, str], ...]:
    """The permanent copies a site holds (v/<tag>/ with its data/index.json: restored by the publishing workflow)
    and this one, as (tag, date of its observations), the newest observations first."""
    found = {tag: rep.reference_date} if tag else {}
    home = out / documents.VERSIONS_DIR
    for index in sorted(home.glob(f"*/{data.DATA}/index.json")) if home.is_dir() else []:
        name = index.parent.parent.name
        if name == tag or not VERSION_TAG.fullmatch(name):
            continue
        try:
            found[name] = str(json.loads(index.read_text(encoding="utf-8")).get("date", ""))
        except (OSError, ValueError, AttributeError):
            continue  # not a copy this site wrote: left unlisted, never read further
    return tuple(sorted(found.items(), key=lambda item: (item[1], item[0]), reverse=True))


def _site_pages(rep: view.Report, out: Path, listed: tuple[tuple[str, str], ...] = ()) -> dict[Path, str]:
    files = _written(documents.SITE, dataclasses.replace(rep, site_copies=listed), out)
    for page in rep.compare_pages:
        files[out / documents.compare_file(page.name, ".html")] = html_compare.compare_page(rep, page)
    return files


@while_paused
def site(rep: view.Report, matrix: Matrix, out: Path, base: str = "", tag: str = "") -> dict[Path, str]:
    """The published site: HTML pages and data/ at DIR (the latest), and with a tag the same at DIR/v/<tag>/.

    Cite lines name the permanent copy (`<base>/v/<tag>/probes/<key>.html#<probe id>`) whenever there is
    one, so a cited link keeps landing on the section it named after the next bless moves the root.
    """
    permanent = f"{base}/{documents.VERSIONS_DIR}/{tag}" if base and tag else ""
    root = rep.with_links(links.Links(base, (), "", site=True, cite_base=permanent), inline_reproducers=True)
    files = _site_pages(root, out, copies(out, rep, tag))
    files.update(data.files(matrix, out))
    places = _places(out, out, out / documents.COMPARE_DIR)
    # the latest's alone, not the permanent copy's: they say what the newest reference shows
    files.update(_written(documents.SHORT, rep.with_links(links.Links(base, places, ""))))
    files.update(_written(documents.SITE_ROOT, root, out))  # viewer.html, 404.html: one for the whole site, at its root
    if tag:
        copy = out / documents.VERSIONS_DIR / tag
        kept = rep.with_links(links.Links(permanent, (), "", site=True, cite_base=permanent), inline_reproducers=True)
        files.update(_site_pages(kept, copy))
        files.update(data.files(matrix, copy))
    return files


@while_paused
def compare(rep: view.Report, a: str, b: str, out: Path, base: str = "", standalone: bool = False) -> dict[Path, str]:
    """DIR/compare-<a>-<b>.md and .html; probe links lead to reference/REPORT.md and reports/matrix.html, which
    is written with them (and the compare pages it links) unless a base URL makes every link a permalink.

    `standalone` (`--out DIR` without a base URL): the pages' links lead into DIR, where the report
    they name (REPORT.md, probes/, matrix.html, and what those link: the bundle) is written too, so
    every link resolves in what was written. With a base URL every link is a permalink already.
    """
    page = pages.compare_page(rep, a, b)
    if standalone and not base:
        places = _places(out, out, out)
        files = bundle(rep, out)
        files.update(_compare_files(rep.with_links(links.Links("", places, ""), inline_reproducers=True), out, [page]))
        return files
    matrix_html = paths.REPORTS / documents.MATRIX_HTML
    places = _places(paths.REFERENCE_REPORT.parent, matrix_html.parent, out)
    if base:  # every link is a permalink: nothing else to write
        return _compare_files(rep.with_links(links.Links(base, places, "")), out, [page])
    # The page's probe links lead to reports/matrix.html, and the matrix's to its compare pages: none of them
    # may be missing (a fresh checkout has no reports/), so they are written with it, from the same report.
    rep = rep.with_links(links.Links("", places, REPO_ROOT.as_posix()))
    files = {matrix_html: html.page(rep)}
    files.update(_compare_files(rep, out, rep.compare_pages))
    files.update(_compare_files(rep, out, [page]))
    return files


@while_paused
def for_versions(matrix: Matrix, focus: focus_model.Focus, source: Path | None = None) -> view.Report:
    title = "fanin report at " + ", ".join(focus.specs)
    rep = report.build(source or paths.REFERENCE_RESULTS, matrix, reference=True, extra=focus.extra, focus=focus.cells)
    return rep.retitled(title)
