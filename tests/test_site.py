"""The published site (`report --out DIR`): HTML pages only, a front page, one page per framework, a size budget
per page, every link landing on an anchor, and a permanent copy per reference commit that cite lines name."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from fanin import __main__ as cli
from fanin.model import matrix
from fanin.model.results import probe_of
from fanin.report import build as report
from fanin.report import documents, links, outputs

MATRIX = matrix.load()
REFERENCE = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
BASE = "https://example.org/fanin"
TAG = "0123456789ab"
BUDGET = 1_000_000  # bytes a page of the site may weigh (issue 31): one framework's page, not one matrix of all


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as the publishing workflow writes it, relative links (opened from disk), with a permanent copy."""
    out = tmp_path_factory.mktemp("site") / "site"
    assert cli.main(["report", "--out", str(out), "--version-tag", TAG]) == 0
    return out


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same under a base URL: every link absolute, cite lines naming v/<tag>/."""
    out = tmp_path_factory.mktemp("published") / "site"
    assert cli.main(["report", "--out", str(out), "--base-url", BASE, "--version-tag", TAG]) == 0
    return out


class Page(HTMLParser):
    """The ids, the hrefs and the text of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.hrefs.append(str(found["href"]))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


# the latest's badges, trend charts and feeds: pictures and feeds, not pages
SHORT_FORMS = {d.file.partition("/")[0] for d in documents.of(documents.SHORT)}


def short_form(root: Path, path: Path) -> bool:
    return path.relative_to(root).parts[0] in SHORT_FORMS


def pages(root: Path) -> list[Path]:
    """Every page of the site and its permanent copies; data/ holds JSON for tools, the short forms are not pages."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "data" not in p.relative_to(root).parts and not short_form(root, p)
    )


def test_the_site_holds_html_pages_and_data_only(site: Path) -> None:
    assert {p.suffix for p in pages(site)} == {".html"}, "no Markdown (or anything else) is published as a page"
    assert (site / documents.INDEX_HTML).is_file(), "the base URL is a page, not a 404"
    for view in REFERENCE.frameworks:
        assert (site / documents.framework_html(view.key)).is_file()
    assert (site / documents.CHECKLIST_HTML).is_file() and (site / documents.COMPARISON_HTML).is_file()
    forward = (site / documents.MATRIX_HTML).read_text(encoding="utf-8")  # the old one-page matrix's place
    assert len(forward.encode()) < 20_000 and 'class="matrix"' not in forward, "one page per framework, not of all"
    assert (site / "data" / "index.json").is_file()
    others = {p.suffix for p in site.rglob("*") if p.is_file() and short_form(site, p)}
    assert others == {".svg", ".atom", ".json"}, "beside the pages: the badges, trend charts and feeds only"


def test_the_front_page_says_what_fanin_is_and_the_key_findings_the_report_shows(site: Path) -> None:
    page = parsed(site / documents.INDEX_HTML)
    text = " ".join("".join(page.text).split())
    assert "fanin is a conformance suite" in text
    assert "key-findings" in page.ids and "cite" in page.ids
    assert REFERENCE.key_findings
    for key in REFERENCE.key_findings:  # the builder's findings, the same ones REPORT.md opens with
        view, column = key.framework, key.column
        assert f"{view.name} {column.label}: {key.shares_text}; {key.coverage.text}" in text  # shares, coverage apart
        for probe in key.examples:
            assert links.fragment(probe.id) in "".join(page.hrefs)
    for view in REFERENCE.frameworks:  # each framework, its newest version, a link to its page
        assert view.newest is not None and f"{view.name}" in text and view.newest.label in text
        assert documents.framework_html(view.key) in page.hrefs
    example = next(p for k in REFERENCE.key_findings for p in k.examples)
    assert example.cite.text in text, "how to cite shows a real cite line"


def _targets(root: Path, page: Path, href: str) -> tuple[Path, str] | None:
    """Where a link of the site lands (file, anchor); None for a link that leaves the site (a claim's source)."""
    if href.startswith(BASE):
        href = href[len(BASE) :].lstrip("/")
        where = root / unquote(href.partition("#")[0])
    elif re.match(r"[a-z]+:", href):
        return None
    else:
        where = (page.parent / unquote(href.partition("#")[0])).resolve() if href.partition("#")[0] else page
    return where, unquote(href.partition("#")[2])


@pytest.mark.parametrize("kind", ["relative", "published"])
def test_every_link_of_every_page_lands_on_an_html_page_and_an_anchor_in_it(
    site: Path, published: Path, kind: str
) -> None:
    root = site if kind == "relative" else published
    found: dict[Path, Page] = {p.resolve(): parsed(p) for p in pages(root)}
    broken, count = [], 0
    for path, page in found.items():
        for href in page.hrefs:
            target = _targets(root.resolve(), path, href)
            if target is None:
                assert not href.startswith("https://example.org"), href
                continue
            where, anchor = target
            count += 1
            if where.suffix == ".md":
                broken.append(f"{path.name}: {href} (a Markdown page)")
            elif where.suffix == ".json":
                if not where.is_file():
                    broken.append(f"{path.name}: {href} (no such file)")
            elif where.resolve() not in found:
                broken.append(f"{path.name}: {href} (no such page)")
            elif anchor and anchor not in found[where.resolve()].ids:
                broken.append(f"{path.name}: {href} (no such anchor)")
    assert count > 5_000
    assert not broken, "\n".join(sorted(set(broken))[:20])


def test_every_anchor_the_markdown_probe_pages_have_is_on_the_frameworks_html_page(site: Path) -> None:
    """A link into reference/probes/<key>.md#<id> has the same id on probes/<key>.html: only the suffix changes."""
    files, _ = outputs.reference(MATRIX)
    for view in REFERENCE.frameworks:
        markdown = files[matrix.REFERENCE_REPORT.parent / documents.probes_md(view.key)]
        anchors = set(re.findall(r'<a id="([^"]+)"></a>', markdown))
        assert anchors and {probe_of(a) for a in anchors} <= {p.id for p in view.probes}
        missing = anchors - parsed(site / documents.framework_html(view.key)).ids
        assert not missing, sorted(missing)[:5]


def test_every_page_is_within_the_budget_and_says_its_bytes_per_observation(
    published: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each page at most 1 MB over the real reference, as published (absolute links, the permanent copy's the
    longest). A framework's page grows with its own observations only, so the line printed per page (bytes per
    observation, and how many more observations it holds) shows growth."""
    site = published
    observations = {
        documents.framework_html(v.key): sum(len(var.observations) for p in v.probes for var in p.variants)
        for v in REFERENCE.frameworks
    }
    over, lines = [], []
    for path in pages(site):
        size = path.stat().st_size
        name = shown = path.relative_to(site).as_posix()
        if name.startswith(f"{documents.VERSIONS_DIR}/"):
            name = name.split("/", 2)[2]  # the permanent copy's page, counted against its framework too
        if size > BUDGET:
            over.append(f"{shown}: {size} bytes")
        if name in observations:
            each = size / observations[name]
            lines.append(
                f"{shown}: {size} bytes, {observations[name]} observations, {each:.0f} bytes each,"
                f" room for {int((BUDGET - size) / each)} more"
            )
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert len(lines) == 2 * len(REFERENCE.frameworks)  # the latest and the permanent copy
    assert not over, over


def test_a_page_over_the_budget_is_caught(tmp_path: Path) -> None:
    """The budget test can fail: the one page of every framework (matrix.html) is over it."""
    files = outputs.bundle(REFERENCE, tmp_path)
    assert len(files[tmp_path / "matrix.html"].encode()) > BUDGET


def test_cite_lines_name_the_permanent_copy_and_every_copy_links_within_itself(published: Path) -> None:
    view = REFERENCE.frameworks[0]
    probe = view.probes[0]
    permanent = f"{BASE}/{documents.VERSIONS_DIR}/{TAG}"
    cite = f"{probe.cite.text} · {permanent}/{documents.framework_html(view.key)}#{probe.id}"
    for root in (published, published / documents.VERSIONS_DIR / TAG):
        text = (root / documents.framework_html(view.key)).read_text(encoding="utf-8")
        assert cite in text, root
        nav = parsed(root / documents.INDEX_HTML).hrefs
        home = BASE if root == published else permanent
        assert f"{home}/{documents.framework_html(view.key)}" in nav
    copy = {p.relative_to(published / "v" / TAG) for p in (published / "v" / TAG).rglob("*") if p.is_file()}
    latest = {p.relative_to(published) for p in published.rglob("*") if p.is_file()}
    latest = {p for p in latest if p.parts[0] != documents.VERSIONS_DIR and p.name != documents.NOT_FOUND_HTML}
    latest = {p for p in latest if not short_form(published, published / p) and p.name != documents.VIEWER_HTML}
    assert copy == latest, "the permanent copy holds every page and data file the latest has"


def test_without_a_version_tag_cite_lines_name_the_latest(tmp_path: Path) -> None:
    assert cli.main(["report", "--out", str(tmp_path), "--base-url", BASE]) == 0
    assert not (tmp_path / "v").exists()
    view = REFERENCE.frameworks[0]
    probe = view.probes[0]
    text = (tmp_path / documents.framework_html(view.key)).read_text(encoding="utf-8")
    assert f"{probe.cite.text} · {BASE}/{documents.framework_html(view.key)}#{probe.id}" in text


@pytest.mark.parametrize(
    "args",
    [
        ["--version-tag", "../up"],
        ["--version-tag", "a b"],
        ["--version-tag", "abc", "--for", "langgraph==1.2.9"],
        ["--version-tag", "abc", "--compare", "adk-1.0.0", "adk-2.13.0"],
    ],
)
def test_a_bad_version_tag_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    out = tmp_path / "site"
    assert cli.main(["report", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fanin: error: ") and err.count("\n") == 1 and "version-tag" in err.replace(" tag", "-tag")
    assert not out.exists()


def test_every_site_link_names_the_site_not_a_checkout() -> None:
    """Published pages never link into a checkout (the committed REPORT.md does, to the probes' files)."""
    files = outputs.site(REFERENCE, MATRIX, Path("/nowhere"), BASE, TAG)
    for path, text in files.items():
        if path.suffix != ".html":
            continue
        for href in re.findall(r'href="([^"]+)"', text):
            assert href.startswith("#") or urlsplit(href).scheme in ("https", "http"), (path, href)


def test_the_front_page_lists_every_permanent_copy_the_site_holds(tmp_path: Path) -> None:
    """The workflow restores earlier copies into DIR/v/ before rendering: the front page links each, this one too."""
    out = tmp_path / "site"
    assert cli.main(["report", "--out", str(out), "--version-tag", "aaaaaaaaaaaa"]) == 0
    (out / documents.VERSIONS_DIR / "not-a-copy").mkdir()  # no data/index.json: not one this site wrote
    assert cli.main(["report", "--out", str(out), "--version-tag", TAG]) == 0
    listed = [h for h in parsed(out / documents.INDEX_HTML).hrefs if h.startswith(f"{documents.VERSIONS_DIR}/")]
    assert sorted(listed) == [f"v/{tag}/{documents.INDEX_HTML}" for tag in sorted(("aaaaaaaaaaaa", TAG))]
    assert all((out / h).is_file() for h in listed)
    assert "copies" not in parsed(out / documents.VERSIONS_DIR / TAG / documents.INDEX_HTML).ids, "a copy lists none"
