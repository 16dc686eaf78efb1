"""REPORT.md fits GitHub: collapsed matrix, bounded size and width, links that resolve, citations that match."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from report_helpers import info, obs, result_set, write

from fanin.model import js_source, matrix
from fanin.model.errors import FaninError
from fanin.model.source import REPO_ROOT, parse_file
from fanin.report import build as report
from fanin.report import documents, markdown, outputs, sameness

MATRIX = matrix.load()
REFERENCE = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
FILES, _ = outputs.reference(MATRIX)
TEXT = FILES[matrix.REFERENCE_REPORT]
# probes/<framework>.md: one file of probe sections per framework, beside REPORT.md
PROBE_PAGES = {v.key: FILES[matrix.REFERENCE_REPORT.parent / documents.probes_md(v.key)] for v in REFERENCE.frameworks}
SECTIONS = "\n".join(PROBE_PAGES.values())

MAX_BYTES = 400_000  # the README's bound
MAX_COLUMNS = 7  # the README's bound: reads in a 920 px column


def tables(text: str) -> list[list[str]]:
    found, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append(current)
            current = []
    return found + ([current] if current else [])


def test_report_md_stays_within_its_size_bound() -> None:
    for name, text in {"REPORT.md": TEXT, **{documents.probes_md(k): page for k, page in PROBE_PAGES.items()}}.items():
        assert len(text.encode()) <= MAX_BYTES, (
            f"{name} is {len(text.encode())} bytes, the README promises ≤ {MAX_BYTES}"
        )


def test_no_table_is_wider_than_the_bound() -> None:
    for table in tables(TEXT):
        columns = len(re.findall(r"(?<!\\)\|", table[0])) - 1
        assert columns <= MAX_COLUMNS, table[0][:120]


def test_a_topic_with_many_version_groups_is_split_evenly(tmp_path: Path) -> None:
    probes = [info("adk/t/a")]
    versions = ["1.0.0", "1.5.0", "1.15.1", "1.25.1", "1.34.3", "1.39.1", "2.0.0", "2.5.0"]
    write(tmp_path, *(result_set(f"adk-{v}", {"adk/t/a": obs("safe", f"v{v}")}, probes) for v in versions))
    text = markdown.report(report.build(tmp_path, MATRIX, reference=True))
    section = text.split('<a id="matrix-adk-t"></a>', 1)[1].split("\n## ", 1)[0]
    widths = [len(t[0].split(" | ")) for t in tables(section)]
    assert widths == [5, 5]  # probe + 4 groups, probe + 4 groups


def test_matrix_columns_collapse_neighbouring_versions_that_observed_the_same() -> None:
    for view in REFERENCE.frameworks:
        for topic in view.topics:
            assert [c for g in topic.groups for c in g.columns] == list(view.columns)
            for group in topic.groups:
                for probe in topic.probes:
                    for variant in probe.variants:
                        first = variant.observations.get(group.columns[0].cell)
                        for column in group.columns[1:]:
                            assert sameness.same_span(first, variant.observations.get(column.cell)), (
                                topic.name,
                                group.label,
                            )
            for left, right in zip(topic.groups, topic.groups[1:], strict=False):
                assert any(
                    not sameness.same_span(
                        v.observations.get(left.columns[-1].cell), v.observations.get(right.columns[0].cell)
                    )
                    for p in topic.probes
                    for v in p.variants
                ), f"{topic.name}: {left.label} and {right.label} should be one column"
    assert "| probe | 0.2.76 – 1.2.24 |" in TEXT  # a topic that never changed is one column


def test_the_readmes_example_cite_is_the_real_one() -> None:
    readme = (REPO_ROOT / "docs" / "RESULTS.md").read_text()
    section = readme.split("**Citing a probe**", 1)[1]
    example = re.search(r"```\n(fanin [^\n]+)\n```", section)
    assert example, "the README shows an example cite line"
    probe_id = example.group(1).split()[1].split("@")[0]
    found = REFERENCE.probe(probe_id)
    assert found is not None
    assert example.group(1) == found[1].cite.text, "update the README's example cite line"
    assert f"```text\n{example.group(1)}\n```" in SECTIONS


def test_every_probe_section_starts_with_its_cite_line_and_links_back_to_its_matrix() -> None:
    for view in REFERENCE.frameworks:
        for probe in view.probes:
            page = PROBE_PAGES[view.key]
            head = f'### <a id="{probe.id}"></a>`{probe.id}`\n\nCite as:\n\n```text\n{probe.cite.text}\n```\n\n'
            assert head in page
            after = page.split(head, 1)[1].split("\n", 1)[0]
            assert after.startswith(f"[↑ {view.name} · {probe.topic}](../REPORT.md#matrix-{view.key}-{probe.topic})")


def test_every_link_inside_the_report_lands_on_an_anchor() -> None:
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', TEXT))
    links = set(re.findall(r"\]\(#([^)]+)\)", TEXT))
    assert links and {unquote(link) for link in links} <= anchors


def test_reproducer_links_point_at_the_probe_functions_lines() -> None:
    links = re.findall(r"Reproducer: \[`([^`]+)::([^`]+)`\]\(\.\./\.\./([^)#]+)#L(\d+)-L(\d+)\)", SECTIONS)
    assert len(links) == sum(len(v.probes) for v in REFERENCE.frameworks)
    for file, function, target, first, last in links:
        assert file == target and (REPO_ROOT / target).is_file()
        parsed = js_source.parse_file if target.endswith(js_source.SUFFIX) else parse_file  # a Node probe
        assert parsed(REPO_ROOT / target).spans[function] == (int(first), int(last))


def test_the_committed_report_never_takes_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FANIN_BASE_URL", "https://example.org/fanin")
    files, _ = outputs.reference(MATRIX, base=outputs.base_url(None))
    assert files[matrix.REFERENCE_REPORT] == TEXT
    assert "https://example.org/fanin/matrix.html#" in files[matrix.REPORTS / "matrix.html"]
    assert str(REPO_ROOT) not in TEXT and "](reports/" not in TEXT


def test_with_a_base_url_every_probe_id_and_cite_line_is_a_permalink(tmp_path: Path) -> None:
    base = "https://example.org/fanin"
    files = outputs.bundle(REFERENCE, tmp_path, base)
    text, page = files[tmp_path / "REPORT.md"], files[tmp_path / "matrix.html"]
    view = REFERENCE.frameworks[0]
    sections = files[tmp_path / documents.probes_md(view.key)]
    assert not re.search(r"\]\(#[a-z]+/", text + sections), "no relative probe link is left"
    assert not re.search(r'href="#[a-z]+/', page)
    probe = view.probes[0]
    where = f"{base}/{documents.probes_md(view.key)}#{probe.id}"
    assert f'### <a id="{probe.id}"></a>[`{probe.id}`]({where})' in sections
    assert f"{probe.cite.text} · {where}" in sections and f"]({where})" in text
    assert f"{probe.cite.text} · {base}/matrix.html#{probe.id}" in page
    assert "```python" in sections  # a bundle carries the reproducers inline


@pytest.mark.parametrize("bad", ["not a url", "example.org/fanin", 'https://x/"y'])
def test_a_base_url_that_is_not_a_url_is_one_error(bad: str) -> None:
    with pytest.raises(FaninError, match="base URL"):
        outputs.base_url(bad)


@pytest.mark.parametrize("bad", ["https://example.org/fanin#top", "https://example.org/fanin?v=2", "/fanin/#"])
def test_a_base_url_with_a_fragment_or_query_is_refused_in_one_line(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30 §3: BASE#x/matrix.html#probe is no permalink. Refused (never silently cut), exit 2, nothing written."""
    import fanin.__main__ as cli

    assert cli.main(["report", "--out", str(tmp_path / "site"), "--base-url", bad]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fanin: error: base URL {bad!r} has a ") and err.count("\n") == 1
    assert "would break every permalink" in err and not (tmp_path / "site").exists()


def test_rendering_is_byte_identical_across_runs() -> None:
    again, _ = outputs.reference(MATRIX)
    assert again == FILES


def test_the_report_opens_with_key_findings_that_link_into_it() -> None:
    """Findings first: after the title and one paragraph, at most a dozen lines, each link landing in the report."""
    head = TEXT.split('<a id="contents"></a>', 1)[0]
    assert '## <a id="key-findings"></a>Key findings' in head
    lines = [line for line in head.split("Key findings", 1)[1].splitlines() if line.startswith("- **")]
    assert 0 < len(lines) <= 12
    assert {f"- **{v.name} {v.newest.label}**" for v in REFERENCE.frameworks_with_columns if v.newest} == {
        line.split(":", 1)[0] for line in lines
    }
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', TEXT))
    for link in re.findall(r"\]\(#([^)]+)\)", head):
        assert unquote(link) in anchors, link


def _links(path: Path, text: str) -> list[str]:
    if path.suffix == ".html":
        return re.findall(r'href="([^"]+)"', text)
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)  # code blocks hold no links
    return re.findall(r"\]\(([^)\s]+)\)", prose)


def _anchors(path: Path, text: str) -> set[str]:
    return set(re.findall(r'<a id="([^"]+)"' if path.suffix == ".md" else r'\bid="([^"]+)"', text))


def test_every_link_of_every_rendered_file_resolves(tmp_path: Path) -> None:
    """REPORT.md, CHECKLIST.md, matrix.html and every compare page: each relative link names a file that exists and an anchor in it."""
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    files = outputs.bundle(rep, tmp_path / "site")
    files.update(FILES)  # the committed reference files, whose links reach into the checkout
    texts = {path.resolve(): text for path, text in files.items()}
    anchors: dict[Path, set[str]] = {}
    broken = []
    for path, text in texts.items():
        for link in _links(path, text):
            if re.match(r"[a-z]+:", link):
                continue  # absolute URLs: the claims' sources
            target, _, anchor = link.partition("#")
            where = (path.parent / unquote(target)).resolve() if target else path
            if where not in texts and not where.exists():
                broken.append(f"{path.name}: {link} (no such file)")
            elif anchor and where.suffix in (".md", ".html") and not re.match(r"L\d+", anchor):
                if where not in anchors:
                    anchors[where] = _anchors(where, texts.get(where) or where.read_text())
                if unquote(anchor) not in anchors[where]:
                    broken.append(f"{path.name}: {link} (no such anchor)")
    assert not broken, "\n".join(sorted(set(broken))[:20])
