"""The report's short forms (`report --out DIR`): badges, trend charts and the feed of behaviour changes.

The digest (fanin/report/digest.py) decides them from the built report; svg.py and feed.py format.
Against the reference: every SVG parses, its numbers are the result sets' own (each probe once, by its
default variant), the feeds are valid Atom and JSON Feed 1.1 with one stable id per change, and two
renders give the same bytes. On made-up cells: the feed's order, newest and worst first.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from report_helpers import info, obs, result_set, write

from fanin.model import compare, matrix
from fanin.model.results import NOT_APPLICABLE, load, probe_of
from fanin.report import build as report
from fanin.report import digest, feed, outputs, read, svg
from fanin.report.legend import HAZARD_STYLES

MATRIX = matrix.load()
ATOM = "{http://www.w3.org/2005/Atom}"
SVG = "{http://www.w3.org/2000/svg}"
WORD = {style.word: hazard for hazard, style in HAZARD_STYLES.items()}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The reference's short forms, as `report --out DIR` writes them, by path under DIR."""
    out = tmp_path_factory.mktemp("site")
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    files = outputs.bundle(rep, out)
    short = ("badges/", "trend/", "feeds/", "feed.")
    return {
        p.relative_to(out).as_posix(): t for p, t in files.items() if p.relative_to(out).as_posix().startswith(short)
    }


def _reference_counts() -> dict[str, Counter[str]]:
    """Each default-Python cell's probes per hazard, from its result set: each probe once, by its plain id."""
    counts = {}
    for cell in MATRIX.cells:
        if cell.python != MATRIX.default_python or not cell.reference_path.exists():
            continue
        rs = load(cell.reference_path)
        counts[cell.id] = Counter(o.hazard for oid, o in rs.observations.items() if oid == probe_of(oid))
    return counts


def _said(text: str) -> Counter[str]:
    """`22 silent · 1 hangs · 38 safe` back into counts."""
    found: Counter[str] = Counter()
    for part in text.split(" · "):
        n, word = part.split(" ", 1)
        found[WORD[word]] = int(n)
    return found


def test_every_badge_is_svg_saying_its_cells_counts_in_the_worst_hazards_colour(bundle: dict[str, str]) -> None:
    counts = _reference_counts()
    newest = {key: MATRIX.newest(key).id for key in MATRIX.frameworks}
    badges = {path[len("badges/") : -len(".svg")]: text for path, text in bundle.items() if path.startswith("badges/")}
    assert set(badges) == set(counts) | set(newest)
    for name, text in badges.items():
        root = ET.fromstring(text)
        assert root.tag == f"{SVG}svg"
        subject, value = (t.text or "" for t in root.iter(f"{SVG}text"))
        assert root.findtext(f"{SVG}title") == f"{subject}: {value}"
        cell = newest.get(name, name)
        assert _said(value) == counts[cell], name
        order = [WORD[part.split(" ", 1)[1]] for part in value.split(" · ")]
        assert order == sorted(order, key=digest.STACK.index)  # worst first, n/a last
        worst = next((h for h in order if h != NOT_APPLICABLE), NOT_APPLICABLE)
        fills = [r.get("fill") for r in root.iter(f"{SVG}rect")]
        assert svg.COLOURS[worst][0] in fills, name
        width = float(root.get("width", "0"))
        assert width >= round(svg.text_width(subject) + svg.text_width(value) + 20, 1)


def test_a_badges_colour_is_its_hazards_hue_in_the_html_matrix() -> None:
    from fanin.report import html

    assert set(svg.COLOURS) == set(html.PALETTE)
    for hazard, (fill, _) in svg.COLOURS.items():
        if hazard != NOT_APPLICABLE:  # the page's n/a is near white: no colour for a badge
            assert html.PALETTE[hazard][1].endswith(fill), hazard


def test_a_badge_is_as_wide_as_its_words() -> None:
    narrow = svg.text_width("1 safe")
    assert svg.text_width("111 safe") == pytest.approx(narrow + 14.0)
    assert svg.text_width("MW") > svg.text_width("il") * 3


def test_every_trend_stacks_each_versions_counts(bundle: dict[str, str]) -> None:
    counts = _reference_counts()
    for key in MATRIX.frameworks:
        root = ET.fromstring(bundle[f"trend/{key}.svg"])
        seen: dict[str, Counter[str]] = {}
        for rect in root.iter(f"{SVG}rect"):
            said = rect.findtext(f"{SVG}title")
            if said:
                version, rest = said.split(": ")
                seen.setdefault(version, Counter()).update(_said(rest))
        cells = {MATRIX.cell_id(MATRIX.frameworks[key], v): c for v, c in seen.items()}
        assert cells == {cell: c for cell, c in counts.items() if cell.startswith(f"{key}-")}, key


def test_the_feeds_are_atom_and_json_feed_with_one_stable_id_per_change(bundle: dict[str, str]) -> None:
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    changes = [
        (page.a.cell, page.b.cell, e.step.observation_id, e.step.label)
        for view in rep.frameworks
        for page in view.steps
        for e in page.entries
        if e.step.label in {d.value for d in compare.Direction}
    ]
    assert changes, "the reference has behaviour changes between adjacent versions"
    for name in ["feed", *(f"feeds/{key}" for key in MATRIX.frameworks)]:
        root = ET.fromstring(bundle[f"{name}.atom"])
        assert root.tag == f"{ATOM}feed"
        for required in ("id", "title", "updated"):
            assert root.findtext(f"{ATOM}{required}"), required
        assert root.findtext(f"{ATOM}author/{ATOM}name") == "fanin"
        entries = root.findall(f"{ATOM}entry")
        for entry in entries:
            for required in ("id", "title", "updated", "content"):
                assert entry.findtext(f"{ATOM}{required}"), required
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT00:00:00Z", entry.findtext(f"{ATOM}updated") or "")
            assert (entry.find(f"{ATOM}link") is not None) and "compare/compare-" in entry.find(f"{ATOM}link").get(
                "href", ""
            )  # type: ignore[union-attr]
        ids = [e.findtext(f"{ATOM}id") for e in entries]
        assert len(set(ids)) == len(ids)
        as_json = json.loads(bundle[f"{name}.json"])
        assert as_json["version"] == "https://jsonfeed.org/version/1.1" and as_json["title"]
        assert [item["id"] for item in as_json["items"]] == ids  # the same entries, the same order
        for item in as_json["items"]:
            assert {"id", "title", "content_text", "date_published", "tags"} <= set(item)
        wanted = [c for c in changes if name == "feed" or c[2].startswith(name.split("/")[1] + "/")]
        assert sorted(ids) == sorted(digest.entry_id(oid, a, b) for a, b, oid, _ in wanted)
    href = ET.fromstring(bundle["feeds/langgraph.atom"]).find(f"{ATOM}entry/{ATOM}link")
    assert href is not None and href.get("href", "").startswith("../compare/")  # relative to feeds/


def test_two_renders_are_the_same_bytes(bundle: dict[str, str], tmp_path: Path) -> None:
    again = outputs.bundle(report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True), tmp_path)
    rendered = {p.relative_to(tmp_path).as_posix(): t for p, t in again.items()}
    assert {path: rendered[path] for path in bundle} == bundle


def test_the_feed_is_newest_first_then_worst_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "REFERENCE", tmp_path / "no-reference-data")
    ids = [f"langgraph/join/p{i}" for i in range(1, 8)]
    probes = [info(pid) for pid in ids]
    old = {ids[0]: "loud", ids[1]: "safe", ids[2]: "silent", ids[3]: "safe", ids[4]: "safe", ids[5]: "safe"}
    mid = {ids[0]: "silent", ids[1]: "silent", ids[2]: "safe", ids[3]: "order-coupled", ids[4]: "safe", ids[5]: "safe"}
    new = {**mid, ids[4]: "loud"}
    sets = []
    for cell, hazards, date in (
        ("langgraph-1.2.9", old, "2026-10-01"),
        ("langgraph-1.2.18", mid, "2026-11-01"),
        ("langgraph-1.2.24", new, "2026-11-30"),
    ):
        observations = {pid: obs(h, h) for pid, h in hazards.items()}
        observations[ids[5]] = obs("safe", "safe", detail=f"reworded in {cell}")  # wording: not news
        observations[ids[6]] = obs("safe", "same", value={"cell": cell if cell != "langgraph-1.2.24" else "x"})
        rs = result_set(cell, observations, probes)
        rs.environment["date"] = date
        sets.append(rs)
    sets[0].observations[ids[6]] = obs("safe", "same", value={"cell": "before"})  # changed, then changed again
    rep = report.build(write(tmp_path / "r", *sets), MATRIX, reference=True)
    said = [(e.date, e.step.observation_id.rsplit("/", 1)[1], e.step.label) for e in digest.feed(rep, "langgraph")]
    assert said == [
        ("2026-11-30", "p5", "regression"),  # the newest version's change first
        ("2026-11-30", "p7", "changed"),
        ("2026-11-01", "p1", "regression"),  # loud -> silent: at the top of its date
        ("2026-11-01", "p2", "regression"),  # safe -> silent
        ("2026-11-01", "p4", "regression"),  # safe -> order-coupled
        ("2026-11-01", "p7", "changed"),
        ("2026-11-01", "p3", "fix"),
    ]
    first = digest.feed(rep)[0]
    assert first.id == "urn:fanin:change:langgraph/join/p5:langgraph-1.2.18:langgraph-1.2.24"
    assert feed.title(first) == "LangGraph 1.2.18 → 1.2.24: langgraph/join/p5 regression (safe → loud)"


def test_with_a_base_url_the_feeds_link_themselves_and_every_entry_is_a_permalink(tmp_path: Path) -> None:
    base = "https://example.org/fanin"
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    files = outputs.bundle(rep, tmp_path, base)
    root = ET.fromstring(files[tmp_path / "feeds" / "adk.atom"])
    selves = [link.get("href") for link in root.findall(f"{ATOM}link") if link.get("rel") == "self"]
    assert selves == [f"{base}/feeds/adk.atom"]
    for link in root.iter(f"{ATOM}link"):
        assert (link.get("href") or "").startswith(f"{base}/")
    as_json = json.loads(files[tmp_path / "feed.json"])
    assert as_json["feed_url"] == f"{base}/feed.json" and as_json["home_page_url"] == f"{base}/matrix.html"
    assert all(item["url"].startswith(f"{base}/compare/compare-") for item in as_json["items"])


def test_report_out_writes_them_and_says_each_directory_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import fanin.__main__ as cli

    out = tmp_path / "site"
    assert cli.main(["report", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    badges = sorted((out / "badges").glob("*.svg"))
    assert len(badges) == len(MATRIX.frameworks) + sum(
        1 for c in MATRIX.cells if c.python == MATRIX.default_python and c.reference_path.exists()
    )
    assert f"fanin: wrote {len(badges)} badges in " in said and "badges/adk.svg" not in said
    assert f"fanin: wrote {len(MATRIX.frameworks)} trend charts in " in said
    assert f"fanin: wrote {2 * len(MATRIX.frameworks)} feeds in " in said
    for name in ("feed.atom", "feed.json", "viewer.html"):
        assert (out / name).is_file() and f"{out / name}" in said
