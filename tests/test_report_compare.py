"""The compare view: two cells, only what differs, each classified by compare's own classifier."""

from __future__ import annotations

import itertools
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from report_helpers import info, newest_and_beyond, obs, result_set, write

import fanin.__main__ as cli
from fanin.model import compare, matrix
from fanin.model.results import load, save
from fanin.model.source import shown
from fanin.report import build as report
from fanin.report import html_compare, markdown, outputs, pages

MATRIX = matrix.load()
REFERENCE = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)


def _pairs() -> list[tuple[str, str]]:
    return [(p.a.cell, p.b.cell) for p in REFERENCE.compare_pages if not p.across_frameworks]


@pytest.mark.parametrize(("a", "b"), _pairs(), ids=lambda cell: cell)
def test_a_compare_page_is_exactly_what_compare_classifies(a: str, b: str) -> None:
    before, after = load(matrix.REFERENCE_RESULTS / f"{a}.json"), load(matrix.REFERENCE_RESULTS / f"{b}.json")
    expected = {c.probe_id: c for c in compare.diff(before, after)}
    page = pages.compare_page(REFERENCE, a, b)
    assert {e.observation_id: e.step.label for e in page.entries} == {pid: c.label for pid, c in expected.items()}
    for entry in page.entries:
        change = expected[entry.observation_id]
        assert (entry.step.fields, entry.step.gates) == (change.fields, change.gates)
        assert (
            entry.step.values
            == tuple(
                (path, compare.compact(x), compare.compact(y))
                for path, x, y in compare.value_differences(change.before.value, change.after.value)  # type: ignore[union-attr]
            )
            or "value" not in change.fields
        )
    assert page.compared == len(set(before.observations) | set(after.observations))


def test_the_summary_counts_each_direction_apart(tmp_path: Path) -> None:
    probes = [info(f"langgraph/t/{name}") for name in ("worse", "better", "appeared", "moved", "reworded", "same")]
    before = {
        "langgraph/t/worse": obs("safe", "ok"),
        "langgraph/t/better": obs("silent", "lost"),
        "langgraph/t/appeared": obs("n/a", "n/a"),
        "langgraph/t/moved": obs("silent", "lost A"),
        "langgraph/t/reworded": obs("loud", "E", value={"e": 1}, detail="one"),
        "langgraph/t/same": obs("safe", "ok"),
    }
    after = {
        **before,
        "langgraph/t/worse": obs("silent", "lost"),
        "langgraph/t/better": obs("safe", "ok"),
        "langgraph/t/appeared": obs("silent", "lost"),
        "langgraph/t/moved": obs("silent", "lost B"),
        "langgraph/t/reworded": obs("loud", "E", value={"e": 1}, detail="two"),
    }
    write(tmp_path, result_set("langgraph-1.2.9", before, probes), result_set("langgraph-1.2.18", after, probes))
    page = pages.compare_page(report.build(tmp_path, MATRIX, reference=True), "langgraph-1.2.9", "langgraph-1.2.18")
    # n/a -> silent is new coverage, not one more silent probe
    assert page.counts == (("regression", 1), ("changed", 1), ("fix", 1), ("new coverage", 1), ("wording", 1))
    assert page.summary == "5 of 6 observations differ: 1 regression, 1 changed, 1 fix, 1 new coverage, 1 wording"


def test_variants_that_changed_alike_share_a_row() -> None:
    page = pages.compare_page(REFERENCE, "langgraph-0.2.76", "langgraph-0.3.34")
    groups = {g.probe_id: g for g in page.grouped}
    assert groups["langgraph/interrupt/parallel-both"].variants == "all 6 variants"
    assert sum(len(g.observation_ids) for g in page.grouped) == len(page.entries)


def test_compare_pages_show_before_and_after_of_the_changed_value_paths() -> None:
    page = pages.compare_page(REFERENCE, "langgraph-0.3.34", "langgraph-0.4.10")
    text, page_html = markdown.compare_page(REFERENCE, page), html_compare.compare_page(REFERENCE, page)
    assert text.startswith("# LangGraph 0.3.34 → LangGraph 0.4.10\n")
    assert f"**{page.summary}.**" in text and page.summary.startswith(f"{len(page.entries)} of ")
    assert "| value path | before | after |" in text and '<th scope="col">value path</th>' in page_html
    assert "`value.b raises, the entrypoint catches it.returned` | `(absent)` |" in text
    assert "First changed in 0.4.5 (bisected)." in text


def test_the_newest_of_each_framework_side_by_side() -> None:
    page = next(p for p in REFERENCE.compare_pages if p.across_frameworks)
    assert (page.a.cell, page.b.cell) == (MATRIX.newest("langgraph").id, MATRIX.newest("adk").id)
    assert len(page.questions) == len(REFERENCE.comparison)
    allowed = {
        "same",
        "same hazard, other behaviour",
        "Google ADK more harmful",
        "LangGraph more harmful",
        "not comparable: Google ADK not probed",
        "not comparable: LangGraph not probed",
        "not comparable: neither side probed",
    }  # a question a side's probes do not (all) answer at its version: no verdict
    assert {q.verdict for q in page.questions} <= allowed | {"only Google ADK applies", "only LangGraph applies"}
    heading = (
        f"| question | LangGraph {MATRIX.newest('langgraph').version} | Google ADK {MATRIX.newest('adk').version} |"
    )
    assert heading + " compared |" in markdown.compare_page(REFERENCE, page)


def test_the_matrix_links_every_neighbour_and_oldest_to_newest_and_the_pages_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matrix, "REPORTS", tmp_path / "reports")
    files, _ = outputs.reference(MATRIX)
    page = files[tmp_path / "reports" / "matrix.html"]
    linked = set(re.findall(r'href="(compare/[^"#]+)"', page))
    for view in REFERENCE.frameworks:
        cells = [c.cell for c in view.columns]
        wanted = {f"compare/compare-{a}-{b}.html" for a, b in itertools.pairwise(cells)}
        wanted.add(f"compare/compare-{cells[0]}-{cells[-1]}.html")
        assert wanted <= linked
    assert {tmp_path / "reports" / href for href in linked} <= set(files)
    assert '<form class="pick" hidden' in page  # the optional picker: hidden until its script runs


def test_report_compare_writes_both_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["report", "--compare", "adk-1.0.0", "adk-2.13.0", "--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.glob("compare-*"))  # beside them, the report their links lead to
    assert written == ["compare-adk-1.0.0-adk-2.13.0.html", "compare-adk-1.0.0-adk-2.13.0.md"]
    text = (tmp_path / written[1]).read_text()
    expected = pages.compare_page(REFERENCE, "adk-1.0.0", "adk-2.13.0").summary
    assert expected in text and "observations differ" in expected
    assert "fanin: wrote" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["adk-1.0.0", "adk-9.9.9"], "no result set for google-adk==9.9.9"),
        (["adk-1.0.0", "google-adk==1.0.*"], "names 'adk-1.0.0' twice"),
        (["adk-1.0.0", "adk-1.0.0"], "names 'adk-1.0.0' twice"),
    ],
)
def test_report_compare_refuses_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    assert cli.main(["report", "--compare", *args, "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    err = err.strip()
    assert err.startswith("fanin: error: ") and "\n" not in err and said in err and out == ""
    assert not (tmp_path / "out").exists()


def test_report_compare_takes_specs_and_a_python(tmp_path: Path) -> None:
    """`--compare google-adk==1.15.1 google-adk==2.0.0 --python 3.10`: the same page as naming the twin cells."""
    by_spec = ["report", "--compare", "google-adk==1.15.1", "google-adk==2.0.0", "--python", "3.10"]
    assert cli.main([*by_spec, "--out", str(tmp_path / "a")]) == 0
    assert cli.main(["report", "--compare", "adk-1.15.1-py3.10", "adk-2.0.0-py3.10", "--out", str(tmp_path / "b")]) == 0
    name = "compare-adk-1.15.1-py3.10-adk-2.0.0-py3.10.md"
    assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()


class _Links(HTMLParser):
    """Every href and src of a page, and the ids its fragments may name."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.targets.append(value)
            if name == "id" and value is not None:
                self.ids.add(value)


def _read(page: Path) -> _Links:
    parsed = _Links()
    parsed.feed(page.read_text(encoding="utf-8"))
    return parsed


@pytest.mark.parametrize(("a", "b"), [("adk-1.15.1", "adk-2.0.0"), ("langgraph-1.2.24", "adk-2.13.0")])
def test_a_standalone_compare_links_only_to_files_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], a: str, b: str
) -> None:
    """`report --compare A B --out DIR`: every relative link of every page written resolves to a file written
    there, and a fragment to an id on that page (it linked ../reports/matrix.html, which it did not write)."""
    out = tmp_path / "cmp"
    assert cli.main(["report", "--compare", a, b, "--out", str(out)]) == 0
    written = {p.resolve() for p in out.rglob("*") if p.is_file()}
    assert out / f"compare-{a}-{b}.html" in set(out.iterdir())
    pages = {p: _read(p) for p in sorted(out.rglob("*.html"))}
    by_file = {p.resolve(): parsed for p, parsed in pages.items()}  # one lookup per link, not a scan of every page
    dead = []
    for page, parsed in pages.items():
        for href in parsed.targets:
            if "://" in href or href.startswith(("mailto:", "data:")):
                continue
            path, _, anchor = href.partition("#")
            target = (page.parent / unquote(path)).resolve() if path else page.resolve()
            if target not in written:
                dead.append(f"{page.relative_to(out)}: {href}")
            elif anchor and target.suffix == ".html":
                ids = by_file[target].ids
                if unquote(anchor) not in ids:
                    dead.append(f"{page.relative_to(out)}: {href} (no such id)")
    assert not dead, f"{len(dead)} dead links, e.g. {dead[:3]}"
    for page in out.rglob("*.md"):
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)  # not code
        for href in re.findall(r"\]\(([^)\s]+)\)", prose):
            path = href.partition("#")[0]
            if path and "://" not in path:
                assert (page.parent / unquote(path)).resolve() in written, f"{page.relative_to(out)}: {href}"
    said = capsys.readouterr().out.splitlines()
    assert f"fanin: wrote {out}/compare-{a}-{b}.html" in said
    (summary,) = [line for line in said if "/compare/" in line]  # the bundle's pages in one line
    assert re.fullmatch(rf"fanin: wrote \d+ compare pages in {re.escape(str(out))}/compare/", summary)


def _dead_links(page: Path) -> list[str]:
    """Every relative link of one written page (HTML href/src, Markdown link) whose file, or id in it, is missing."""
    text = page.read_text(encoding="utf-8")
    if page.suffix == ".html":
        hrefs = _read(page).targets
    else:
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", text, flags=re.DOTALL)  # code holds no links
        hrefs = re.findall(r"\]\(([^)\s]+)\)", prose)
    dead = []
    ids_of: dict[
        Path, set[str]
    ] = {}  # each target read once, not once per link to it (matrix.html: 2.6 MB, read per link it was 84 s a case)
    for href in hrefs:
        if "://" in href or href.startswith(("mailto:", "data:")):
            continue
        path, _, anchor = href.partition("#")
        target = (page.parent / unquote(path)).resolve() if path else page.resolve()
        if not target.is_file():
            dead.append(f"{href} (no such file)")
        elif anchor and target.suffix in (".html", ".md"):
            if target not in ids_of:
                ids_of[target] = (
                    _read(target).ids
                    if target.suffix == ".html"
                    else set(re.findall(r'<a id="([^"]+)"', target.read_text()))
                )
            if unquote(anchor) not in ids_of[target]:
                dead.append(f"{href} (no such id)")
    return dead


@pytest.mark.parametrize(("a", "b"), [("adk-1.15.1", "adk-2.0.0"), ("langgraph-1.2.24", "adk-2.13.0")])
@pytest.mark.parametrize("out", [False, True])
def test_every_link_of_a_compare_page_resolves_where_it_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], a: str, b: str, out: bool
) -> None:
    """Issue 31: `report --compare A B` without --out wrote reports/compare/compare-A-B.html, whose probe links (37
    of them) led to reports/matrix.html, which a fresh checkout does not have. Each link of both pages written,
    without --out and with --out DIR, names a file that exists from where the page is, and an id that file has."""
    monkeypatch.setattr(matrix, "REPORTS", tmp_path / "reports")
    where = tmp_path / "cmp" if out else tmp_path / "reports" / "compare"
    assert cli.main(["report", "--compare", a, b, *(["--out", str(where)] if out else [])]) == 0
    for suffix in (".html", ".md"):
        page = where / f"compare-{a}-{b}{suffix}"
        assert page.is_file() and _read(page).targets if suffix == ".html" else page.is_file()
        dead = _dead_links(page)
        assert not dead, f"{page.name}: {len(dead)} dead links, e.g. {dead[:3]}"
    said = capsys.readouterr().out.splitlines()
    assert (
        f"fanin: wrote {where}/compare-{a}-{b}.html" in said
        or f"fanin: wrote {shown(where)}/compare-{a}-{b}.html" in said
    )


@pytest.mark.parametrize("where", ["reference", "reference/probes"])
@pytest.mark.parametrize("how", [[], ["--compare", "adk-1.0.0", "adk-2.13.0"], ["--for", "google-adk==1.15.1"]])
def test_out_is_never_the_reference(where: str, how: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """`--out reference/` rewrote REPORT.md with the bundle's inline reproducers and left matrix.html, compare/ there."""
    before = {p: p.stat().st_mtime_ns for p in matrix.REFERENCE_REPORT.parent.rglob("*") if p.is_file()}
    assert cli.main(["report", *how, "--out", str(matrix.REFERENCE_REPORT.parent.parent / where)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fanin: error: --out ") and "inside the reference" in err and "\n" not in err
    assert {p: p.stat().st_mtime_ns for p in matrix.REFERENCE_REPORT.parent.rglob("*") if p.is_file()} == before


def test_report_compare_takes_versions_as_report_for_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A range means its newest reference cell, a version outside the reference its local run, each said in one line."""
    monkeypatch.setattr(matrix, "REPORTS", tmp_path / "reports")
    monkeypatch.setattr(matrix, "RUN_RESULTS", tmp_path / "reports" / "results")
    newest, beyond, spec = newest_and_beyond("langgraph")
    run = load(matrix.REFERENCE_RESULTS / f"{newest}.json")
    run.cell, run.version = f"langgraph-{beyond}", beyond
    run.environment = {**run.environment, "packages": {**run.environment["packages"], "langgraph": beyond}}
    (tmp_path / "reports" / "upgrade").mkdir(parents=True)
    save(run, tmp_path / "reports" / "upgrade" / f"langgraph-{beyond}.json")
    out = tmp_path / "out"
    published = ["--base-url", "https://example.org"]  # permalinks: the two pages alone, no bundle beside them
    asked = ["report", "--compare", f"langgraph=={spec}", f"langgraph=={beyond}", "--out", str(out), *published]
    assert cli.main(asked) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0] == f"fanin: langgraph=={spec} means {newest}, the newest reference cell matching it"
    assert said[1].startswith(f"fanin: langgraph=={beyond}: local result set ") and "(not in the reference)" in said[1]
    text = (out / f"compare-{newest}-langgraph-{beyond}.md").read_text()
    assert f"**0 of {len(run.observations)} observations differ.**" in text  # the local run is the newest set, renamed
