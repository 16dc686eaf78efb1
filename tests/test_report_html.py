"""matrix.html without a browser: hazards in words, an accessible palette, structure for sticking and printing."""

from __future__ import annotations

import itertools
import re
from html.parser import HTMLParser

from fanin.model import matrix
from fanin.report import build as report
from fanin.report import html, legend, outputs

MATRIX = matrix.load()
REFERENCE = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
PAGE = html.page(REFERENCE)
WORDS = {legend.HAZARD_STYLES[h].word: h for h in legend.HAZARD_STYLES}


class Cells(HTMLParser):
    """Every <td> of the matrix tables: its classes, its hazard word, and whether it has a title."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, str]] = []
        self._in_matrix = 0
        self._cell: dict[str, str] | None = None
        self._in_word = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table" and "matrix" in (found.get("class") or ""):
            self._in_matrix = 1
        elif tag == "td" and self._in_matrix:
            self._cell = {"class": found.get("class") or "", "title": found.get("title") or "", "word": "", "text": ""}
            self.cells.append(self._cell)
        elif tag == "b" and self._cell is not None and "hz" in (found.get("class") or ""):
            self._in_word = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_matrix = 0
        elif tag == "td":
            self._cell = None
        elif tag == "b":
            self._in_word = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] += data
            if self._in_word:
                self._cell["word"] += data


def test_every_matrix_cell_states_its_hazard_in_words_and_opens_without_a_title() -> None:
    parser = Cells()
    parser.feed(PAGE)
    assert len(parser.cells) > 100
    for cell in parser.cells:
        assert not cell["title"], "details are a <details>, reachable by keyboard and touch, never a title"
        if "h-none" in cell["class"]:
            assert cell["text"] == legend.NOT_OBSERVED
            continue
        assert cell["word"] in WORDS, cell
        assert html.hazard_class(WORDS[cell["word"]]) in cell["class"].split()


def test_each_hazard_has_its_own_hue_and_border_style() -> None:
    hues = {bg for bg, _ in html.PALETTE.values()}
    bars = {tuple(border.split()[:2]) for hazard, (_, border) in html.PALETTE.items() if hazard != "n/a"}
    assert len(hues) == len(html.PALETTE) and len(bars) == len(html.PALETTE) - 1  # n/a has no bar
    for hazard in legend.HAZARD_STYLES:
        assert f".{html.hazard_class(hazard)} {{" in html.STYLE


def test_the_page_is_built_to_stick_print_and_shrink() -> None:
    style = html.STYLE
    assert ".matrix-wrap{max-height:" in style and "overflow:auto" in style  # a bounded box, so the header sticks
    assert ".matrix thead th{position:sticky;top:0" in style
    assert ".matrix tbody th[scope=row]{position:sticky;left:0" in style
    assert "section.probe:target" in style
    printing = style.split("@media print{", 1)[1]
    assert "display:table-header-group" in printing and "overflow:visible!important" in printing
    assert "details::details-content{content-visibility:visible" in printing
    assert "@media (max-width:700px)" in style
    assert PAGE.count("<thead>") >= len(REFERENCE.frameworks) and '<meta name="viewport"' in PAGE


def test_the_page_is_self_contained_with_one_optional_script() -> None:
    assert "<link" not in PAGE and " src=" not in PAGE and "@import" not in PAGE
    assert PAGE.count("<script>") == 1 and 'class="pick" hidden' in PAGE


def test_contents_back_links_and_anchors() -> None:
    ids = set(re.findall(r' id="([^"]+)"', PAGE))
    links = set(re.findall(r'href="#([^"]+)"', PAGE))
    from urllib.parse import unquote

    assert {unquote(link) for link in links} <= ids
    for view in REFERENCE.frameworks:
        for probe in view.probes:
            assert f'<section class="probe" id="{probe.id}">' in PAGE
            assert f'href="#{probe.id}"' in PAGE
    assert PAGE.count('<a href="#contents">contents</a>') == sum(len(v.probes) for v in REFERENCE.frameworks)


def test_the_cite_line_is_its_own_element_under_the_heading() -> None:
    probe = REFERENCE.frameworks[0].probes[0]
    heading = f'<h3><a href="#{probe.id}"><code>{probe.id}</code></a></h3>'
    cite = (
        f'<p class="cite"><span class="cite-label">Cite as:</span> <code class="cite-line">{probe.cite.text}</code></p>'
    )
    assert f"{heading}\n{cite}" in PAGE


def test_local_runs_render_the_same_way(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(matrix, "REPORTS", tmp_path / "reports")
    files, _ = outputs.local_run(MATRIX, source=matrix.REFERENCE_RESULTS)
    assert tmp_path / "reports" / "run" / "matrix.html" in files
    assert any(p.parent.name == "compare" for p in files)


def test_each_matrix_cell_says_which_cells_of_its_row_observed_the_same() -> None:
    """The picker compares `data-same`, the builder's notion of same (Observation.behaviour), never the label."""
    view = next(v for v in REFERENCE.frameworks if v.key == "langgraph")
    probe = view.probe("langgraph/join/defer")
    assert probe is not None
    row = re.search(r'<tr><th scope="row"><a href="#langgraph/join/defer"><code>defer</code></a></th>(.*?)</tr>', PAGE)
    assert row is not None
    same = [int(n) for n in re.findall(r'data-same="(\d+)"', row.group(1))]
    spans = probe.default.spans
    assert len(same) == len(spans)
    kinds = [s.observation.behaviour if s.observation is not None else None for s in spans]
    assert len(set(kinds)) > 1  # n/a, then observed: the row differs somewhere
    for i, j in itertools.combinations(range(len(spans)), 2):
        assert (same[i] == same[j]) == (kinds[i] == kinds[j])
    assert 'name="between"' in PAGE  # the versions between the two picked, on request
