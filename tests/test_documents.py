"""A report's documents are registered once (fanin.report.documents): a page added by one entry there is written by
every output that lists it, in the site's permanent copy too, and linked from every page's navigation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from report_helpers import info, obs, result_set, write

from fanin.model import matrix
from fanin.report import build as report
from fanin.report import data, documents, outputs
from fanin.report.view import FrameworkView, Report

MATRIX = matrix.load()
TAG = "0123456789ab"


def _extra(rep: Report) -> str:
    return f"<!doctype html><title>extra</title><p>{rep.title}</p>"


def _extra_per_framework(rep: Report, view: FrameworkView) -> str:
    return f"# {view.name} notes\n"


@pytest.fixture
def small(tmp_path: Path) -> Report:
    probes = [info("adk/t/a")]
    write(tmp_path / "results", *(result_set(f"adk-{v}", {"adk/t/a": obs("safe", v)}, probes) for v in ("1.0", "1.1")))
    return report.build(tmp_path / "results", MATRIX, reference=True)


def test_a_site_page_added_by_one_entry_is_written_in_the_site_and_its_copy_and_in_every_pages_navigation(
    small: Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        documents,
        "DOCUMENTS",
        [*documents.DOCUMENTS, documents.Document("extra.html", _extra, (documents.SITE,), title="extra")],
    )
    out = tmp_path / "site"
    files = outputs.site(small, MATRIX, out, "", TAG)
    assert files[out / "extra.html"] == _extra(small)
    assert out / documents.VERSIONS_DIR / TAG / "extra.html" in files  # the permanent copy holds it too
    navigated = [p for p in files if p.suffix == ".html" and '<nav class="site"' in files[p]]
    assert out / documents.INDEX_HTML in navigated and len(navigated) > 3
    for page in navigated:
        nav = re.search(r'<nav class="site".*?</nav>', files[page], re.S)
        assert nav and re.search(r'href="[^"]*extra\.html"[^>]*>extra</a>', nav.group(0)), page


def test_without_the_entry_the_page_is_nowhere(small: Report, tmp_path: Path) -> None:
    files = outputs.site(small, MATRIX, tmp_path, "", TAG)
    assert not any(p.name == "extra.html" for p in files)
    assert "extra.html" not in files[tmp_path / documents.INDEX_HTML]


def test_a_per_framework_document_added_by_one_entry_is_in_the_bundle_once_per_framework_and_linkable(
    small: Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = documents.Document("notes/{key}.md", _extra_per_framework, (documents.BUNDLE, documents.RUN))
    monkeypatch.setattr(documents, "DOCUMENTS", [*documents.DOCUMENTS, entry])
    files = outputs.bundle(small, tmp_path)
    (adk,) = [v for v in small.frameworks if v.probes]
    assert files[tmp_path / "notes" / "adk.md"] == f"# {adk.name} notes\n"
    assert not any(p.parent.name == "notes" and p.name != "adk.md" for p in files)  # frameworks without probes: none


def test_every_registered_renderer_resolves_and_every_output_is_known() -> None:
    known = {documents.REFERENCE, documents.RUN, documents.BUNDLE, documents.SITE, documents.SITE_ROOT, documents.SHORT}
    for document in documents.DOCUMENTS:
        assert callable(document.renderer()), document.file
        assert document.outputs and set(document.outputs) <= known, document.file


def _extra_short(rep: Report, key: str) -> str:
    return f"<svg>{key}</svg>\n"


def _extra_instances(rep: Report) -> list[tuple[str, str]]:
    return [(v.key, v.key) for v in rep.frameworks_with_columns]


def test_a_short_form_added_by_one_entry_is_in_the_bundle_and_the_sites_root_not_its_permanent_copy(
    small: Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = documents.Document("spark/{key}.svg", _extra_short, (documents.SHORT,), each=f"{__name__}:_extra_instances")
    monkeypatch.setattr(documents, "DOCUMENTS", [*documents.DOCUMENTS, entry])
    bundled = outputs.bundle(small, tmp_path / "bundle")
    assert bundled[tmp_path / "bundle" / "spark" / "adk.svg"] == "<svg>adk</svg>\n"
    site = outputs.site(small, MATRIX, tmp_path / "site", "", TAG)
    assert site[tmp_path / "site" / "spark" / "adk.svg"] == "<svg>adk</svg>\n"
    assert not any("spark" in p.parts for p in site if documents.VERSIONS_DIR in p.parts)


def _heads(root: Path, files: dict[Path, str]) -> set[str]:
    return {p.relative_to(root).parts[0] for p in files}


def test_every_file_the_bundle_and_the_site_write_is_a_registered_document() -> None:
    """The viewer, the badges, trend charts and feeds and the compare pages are named by the registry alone:
    every file a bundle or the site writes lies at a registered document's place (or is the site's data/ or its
    permanent copy, v/<tag>/)."""
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    registered = {d.file.partition("/")[0] for d in documents.DOCUMENTS} | {documents.COMPARE_DIR}
    out = Path("/nonexistent-fanin-bundle")  # nothing is written: the outputs only say what they would write
    bundled = outputs.bundle(rep, out)
    assert _heads(out, bundled) <= registered
    assert {documents.VIEWER_HTML, documents.BADGES_DIR, documents.FEED_ATOM} <= _heads(out, bundled)
    site = outputs.site(rep, MATRIX, out, "", TAG)
    assert _heads(out, site) - registered == {data.DATA, documents.VERSIONS_DIR}
    compare_page = next(iter(rep.compare_pages))
    assert compare_page.name == documents.compare_page(compare_page.a.cell, compare_page.b.cell)
    assert out / documents.compare_file(compare_page.name, ".html") in site
