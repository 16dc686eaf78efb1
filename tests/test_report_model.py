"""What the report decides (fanin/report/build.py), before any renderer formats it."""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from report_helpers import COMMIT, info, obs, result_set, write

from fanin.model import compare, matrix
from fanin.model.source import REPO_ROOT
from fanin.report import build as report
from fanin.report import html, html_compare, links, markdown, pages, read, view

MATRIX = matrix.load()
PID = "langgraph/join/x"


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty reference/ for the data files (mitigations, bisect findings) a test writes."""
    reference = tmp_path / "reference"
    reference.mkdir()
    monkeypatch.setattr(read, "REFERENCE", reference)
    return reference


def build(directory: Path, **kwargs: object) -> view.Report:
    return report.build(directory, MATRIX, reference=True, **kwargs)  # type: ignore[arg-type]


def test_spans_collapse_neighbours_and_verdicts_are_per_span(tmp_path: Path, data: Path) -> None:
    probe = info(PID, expect={"hazard": "safe"})
    write(
        tmp_path / "r",
        result_set("langgraph-1.2.9", {PID: obs("silent", "lost")}, [probe]),
        result_set("langgraph-1.2.18", {PID: obs("safe", "kept")}, [probe]),
        result_set("langgraph-1.2.24", {PID: obs("safe", "kept")}, [probe]),
        result_set("langgraph-0.2.76", {PID: obs("n/a", "n/a")}, [probe]),
    )
    view = build(tmp_path / "r").frameworks[0]
    spans = view.probes[0].default.spans
    assert [(s.versions, s.verdict) for s in spans] == [
        ("0.2.76", "not applicable"),
        ("1.2.9", "does not hold"),
        ("1.2.18 – 1.2.24", "holds"),
    ]
    assert [s.change.label if s.change else None for s in spans] == [None, "new coverage", "fix"]


def test_a_change_names_its_direction_fields_and_the_bisected_release(tmp_path: Path, data: Path) -> None:
    probe = info(PID)
    (data / "bisect.json").write_text(
        json.dumps({PID: [{"good": "1.2.9", "bad": "1.2.18", "first_changed": "1.2.12", "skipped_yanked": ["1.2.11"]}]})
    )
    write(
        tmp_path / "r",
        result_set("langgraph-1.2.9", {PID: obs("safe", "kept")}, [probe]),
        result_set("langgraph-1.2.18", {PID: obs("silent", "lost")}, [probe]),
    )
    step = build(tmp_path / "r").frameworks[0].probes[0].default.changes[0]
    expected = compare.classify(PID, obs("safe", "kept"), obs("silent", "lost"))
    assert (
        (step.label, step.gates, step.fields)
        == (expected.label, expected.gates, expected.fields)
        == (
            "regression",
            True,
            ("hazard", "value", "label", "detail"),
        )
    )
    assert step.text == (
        "regression between 1.2.9 and 1.2.18 (hazard, value, label, detail), first in 1.2.12 (bisected; yanked, skipped: 1.2.11)"
    )
    assert step.values == (("value.v", '"kept"', '"lost"'),)


def test_a_wording_change_is_not_a_behaviour_change(tmp_path: Path, data: Path) -> None:
    probe = info(PID)
    write(
        tmp_path / "r",
        result_set("langgraph-1.2.9", {PID: obs("loud", "E", value={"e": 1}, detail="old words")}, [probe]),
        result_set("langgraph-1.2.18", {PID: obs("loud", "E", value={"e": 1}, detail="new words")}, [probe]),
    )
    variant = build(tmp_path / "r").frameworks[0].probes[0].default
    assert variant.changes == () and [s.label for s in variant.wording] == ["wording"]
    assert len(variant.observed_spans) == 1


def all_markdown(rep: view.Report) -> str:
    """REPORT.md and every probes/<framework>.md, as one text."""
    return "\n".join([markdown.report(rep), *(markdown.probe_page(rep, v) for v in rep.frameworks if v.probes)])


def test_a_mitigation_is_shown_only_for_a_hazard_and_with_its_probes_observation(tmp_path: Path, data: Path) -> None:
    harmful, fine, mitigated = info(PID), info("langgraph/join/y"), info("langgraph/join/x-mitigated")
    (data / "mitigations.toml").write_text(
        f'[probe."{PID}"]\ntext = "use a list edge"\nsource = "https://example.org/m"\nprobe = "{mitigated.id}"\n'
        '[probe."langgraph/join/y"]\ntext = "never shown"\nsource = "https://example.org/m"\n'
    )
    observations = {PID: obs("silent", "join ×2"), fine.id: obs("safe", "join ×1"), mitigated.id: obs("safe", "×1")}
    write(tmp_path / "r", result_set("langgraph-1.2.24", observations, [harmful, fine, mitigated]))
    probes = {p.id: p for p in build(tmp_path / "r").frameworks[0].probes}
    mitigation = probes[PID].mitigation
    assert mitigation is not None and mitigation.text == "use a list edge"
    assert mitigation.probe_id == mitigated.id and mitigation.observation == obs("safe", "×1")
    assert mitigation.column is not None and mitigation.column.version == "1.2.24"
    assert probes["langgraph/join/y"].mitigation is None
    rep = build(tmp_path / "r")
    assert "with it, [`langgraph/join/x-mitigated`]" in all_markdown(rep)
    assert "with it, <a href" in html.page(rep)


def test_variants_are_rows_only_where_they_differ_from_the_default(tmp_path: Path, data: Path) -> None:
    dims = (("backend", ("memory", "postgres")), ("mode", ("sync", "async")))
    probe = info(PID, dimensions=dims)
    same = obs("safe", "kept")
    cells = []
    for version, differing in (("1.2.9", obs("safe", "kept")), ("1.2.18", obs("silent", "lost"))):
        observations = {PID: same, f"{PID}[async]": same, f"{PID}[postgres]": differing, f"{PID}[postgres,async]": same}
        cells.append(result_set(f"langgraph-{version}", observations, [probe]))
    write(tmp_path / "r", *cells)
    view = build(tmp_path / "r").frameworks[0]
    row = view.probes[0]
    assert [v.label for v in row.matrix_variants] == ["default", "[postgres]"]
    assert [v.label for v in row.alike] == ["[async]", "[postgres,async]"]
    assert row.default_name == "backend=memory, mode=sync"
    topic = view.topics[0]
    assert [r.variant.label for r in topic.rows] == ["default", "[postgres]"]
    text = all_markdown(build(tmp_path / "r"))
    assert "↳ [`[postgres]`]" in text and f'<a id="{PID}[postgres]"></a>' in text
    assert "`[async]`, `[postgres,async]` observe what the default does in every version" in text


def test_a_python_twin_is_not_a_column_but_its_differences_are_listed(tmp_path: Path, data: Path) -> None:
    probe, other = info(PID), info("langgraph/join/z")
    write(
        tmp_path / "r",
        result_set("adk-1.15.1", {}, []),
        result_set("langgraph-1.2.9", {PID: obs("safe", "kept"), other.id: obs("loud", "E")}, [probe, other]),
        result_set(
            "langgraph-1.2.9-py3.10",
            {PID: obs("loud", "RuntimeError"), other.id: obs("loud", "E")},
            [probe, other],
            python="3.10.14",
        ),
    )
    view = build(tmp_path / "r").frameworks[0]
    assert [c.cell for c in view.columns] == ["langgraph-1.2.9"]
    (twin,) = view.twins
    assert (twin.column.cell, twin.twin.cell, twin.column.python_note) == (
        "langgraph-1.2.9-py3.10",
        "langgraph-1.2.9",
        "py3.10",
    )
    assert [(e.observation_id, e.step.label) for e in twin.page.entries] == [(PID, "regression")]
    assert [s.after_column.cell for s in view.probe(PID).python_twins if s.after_column] == ["langgraph-1.2.9-py3.10"]
    text = all_markdown(build(tmp_path / "r"))
    assert '<a id="twins"></a>Python twins' in text and "**On Python 3.10**" in text
    assert "Python twins" in html.page(build(tmp_path / "r"))


def test_the_cite_line_names_hash_version_date_and_the_suite_commit(tmp_path: Path, data: Path) -> None:
    probe = info(PID)
    write(
        tmp_path / "r",
        result_set("langgraph-1.2.9", {PID: obs("safe", "kept")}, [probe], commit="ffffffffffff"),
        result_set("langgraph-1.2.24", {PID: obs("safe", "kept")}, [probe]),
    )
    rep = build(tmp_path / "r")
    cite = rep.frameworks[0].probes[0].cite
    assert cite.text == f"fanin {PID}@abc123 · langgraph 1.2.24 · reference 2026-11-30 @{COMMIT[:12]}"
    at = build(tmp_path / "r", focus={"langgraph": "langgraph-1.2.9"}).frameworks[0].probes[0].cite
    assert at.text == f"fanin {PID}@abc123 · langgraph 1.2.9 · reference 2026-11-30 @ffffffffffff"


def test_links_are_relative_without_a_base_url_and_permalinks_with_one() -> None:
    places = (
        ("REPORT.md", "/r/reference/REPORT.md"),
        ("matrix.html", "/r/reports/matrix.html"),
        ("compare", "/r/reports/compare"),
    )
    places = (*places, ("probes", "/r/reference/probes"))
    relative = links.Links("", places, "/r")
    assert relative.probe("a/b/c[postgres,async]", "REPORT.md") == "probes/a.md#a/b/c%5Bpostgres,async%5D"
    assert relative.probe("a/b/c", "probes/a.md") == "#a/b/c"
    assert relative.probe("a/b/c", "compare/x.md") == "../../reference/probes/a.md#a/b/c"
    assert relative.probe("a/b/c", "compare/x.html") == "../matrix.html#a/b/c"
    assert relative.source_file("suites/t.py", (3, 9), "REPORT.md") == "../suites/t.py#L3-L9"
    assert relative.source_file("suites/t.py", (3, 9), "probes/a.md") == "../../suites/t.py#L3-L9"
    absolute = links.Links("https://example.org/fanin", places, "")
    assert absolute.probe("a/b/c", "REPORT.md") == "https://example.org/fanin/probes/a.md#a/b/c"
    assert absolute.probe("a/b/c", "compare/x.html") == "https://example.org/fanin/matrix.html#a/b/c"
    assert absolute.source_file("suites/t.py", (3, 9), "REPORT.md") == ""


def test_rendering_imports_no_network_client() -> None:
    code = (
        "import sys, fanin.report.build, fanin.report.outputs, fanin.report.html, fanin.report.markdown, fanin.report.checklist;"
        "print(sorted(m for m in sys.modules if m in "
        "('fanin.versions.pypi', 'fanin.versions.first_release', 'urllib.request', 'http.client', 'requests', 'httpx', 'ssl')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    assert done.stdout.strip() == "[]"


# fanin.report.documents is the registry of the report's documents (file names, titles: what links.py held),
# a table that imports nothing of fanin's and decides nothing.
VIEW_MODEL = {
    "fanin.report.legend",
    "fanin.report.links",
    "fanin.report.view",
    "fanin.report.common",
    "fanin.report.documents",
}


@pytest.mark.parametrize(
    ("renderer", "also"),
    [
        ("html.py", set()),
        ("html_compare.py", {"fanin.report.html"}),
        ("markdown.py", set()),
        ("checklist.py", set()),
        ("gate_table.py", {"fanin.report.markdown"}),
        ("svg.py", set()),
        ("feed.py", set()),
    ],
)
def test_renderers_import_only_the_view_model(renderer: str, also: set[str]) -> None:
    """Renderers format and never decide: nothing from the builder (build, pages, read, sameness) reaches them."""
    tree = ast.parse((REPO_ROOT / "fanin" / "report" / renderer).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {
        f"{node.module}.{a.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "fanin.report"
        for a in node.names
    }
    ours = {m for m in imported if m.startswith("fanin.report.")}
    assert ours <= VIEW_MODEL | also, ours - VIEW_MODEL - also


def test_the_html_says_everything_the_markdown_says() -> None:
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    text, page = all_markdown(rep), html.page(rep)
    for said in (
        "**Claim:**",
        "**Claim check:**",
        "**See also:**",
        "**Changed:**",
        "**Wording changed:**",
        "**Mitigation:**",
        "**Variants**",
    ):
        word = said.strip("*")
        assert text.count(said) == page.count(f"<strong>{word}</strong>"), said
    assert (
        text.count("Cite as:") == page.count('class="cite-label"') == len([p for v in rep.frameworks for p in v.probes])
    )


def test_each_scenario_is_a_comparison_row_saying_how_many_frameworks_disagree(tmp_path: Path, data: Path) -> None:
    """Bowtie's "N of M implementations disagree": frameworks grouped by hazard at their focus version, n/a and
    frameworks without the scenario's probe left out, the most common hazard the agreement (the least harmful
    on a tie)."""
    same = "same-key-two-writers"
    ids = {fw: f"{fw}/scenario/{same}" for fw in ("langgraph", "pydantic_graph", "agent_framework", "adk")}
    write(
        tmp_path / "r",
        result_set("langgraph-1.2.24", {ids["langgraph"]: obs("loud", "raises")}, [info(ids["langgraph"])]),
        result_set(
            "pydantic_graph-2.68.0", {ids["pydantic_graph"]: obs("silent", "one kept")}, [info(ids["pydantic_graph"])]
        ),
        result_set(
            "agent_framework-1.23.0",
            {ids["agent_framework"]: obs("silent", "one kept")},
            [info(ids["agent_framework"])],
        ),
        result_set("adk-1.15.1", {ids["adk"]: obs("n/a", "n/a")}, [info(ids["adk"])]),
    )
    rows = {q.question.split(":")[0]: q for q in build(tmp_path / "r").comparison}
    row = rows[f"Scenario {same}"]
    assert (
        row.disagreement
        == "1 of 3 frameworks disagree (loud: LangGraph; silent: pydantic-graph, Microsoft Agent Framework)"
    )
    assert [a.probe_id for a in row.answers["langgraph"]] == [ids["langgraph"]]
    assert row.answers["deepagents"] == ()  # no scenario probe: "no probe cited", never counted
    assert rows["Scenario fan-in-order"].disagreement == ""  # nobody observed it here
    assert f"**{row.disagreement}**" in markdown.report(build(tmp_path / "r"))


def test_python_and_javascript_pair_by_the_registrys_port_of_not_by_a_suffix() -> None:
    """Issue 36 §4: pairing is data (matrix.toml's port_of, as BCD's `upstream`), so a port named anything pairs."""
    from fanin.report.pages import runtime_pairs

    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    paired = {(python.key, node.key) for python, node, _ in rep.runtime_pairs}
    assert paired == {(fw.port_of, key) for key, fw in MATRIX.frameworks.items() if fw.port_of} != set()
    node = next(v for v in rep.frameworks if v.key == "langgraphjs")
    renamed = dataclasses.replace(node, key="langgraph-ts")  # a port whose key says nothing about its runtime
    views = tuple(renamed if v is node else v for v in rep.frameworks)
    found = {(p.key, n.key): pairs for p, n, pairs in runtime_pairs(dataclasses.replace(rep, frameworks=views))}
    assert set(found) == {("langgraph", "langgraph-ts"), ("adk", "adkjs")} and found[("langgraph", "langgraph-ts")]


def test_every_regression_and_changed_row_of_a_compare_page_says_its_mitigation_at_the_newer_version(
    tmp_path: Path, data: Path
) -> None:
    """Issue 31: a compare page listed regressions without their mitigation. Beside each regression and changed row:
    the mitigation and its `-mitigated` probe when that probe observed safe in the newer cell itself; else "no proven
    mitigation" and why (observed unsafe there, or only at another version, or nothing recorded), never a blank."""
    proven, unsafe, elsewhere, bare = (f"langgraph/join/{c}" for c in ("proven", "unsafe", "elsewhere", "bare"))
    (data / "mitigations.toml").write_text(
        "".join(
            f'[probe."{pid}"]\ntext = "fix {pid.rsplit("/", 1)[1]}"\nsource = "https://example.org/m"\n'
            f'probe = "{pid}-mitigated"\n'
            for pid in (proven, unsafe, elsewhere)
        )
    )
    probes = [info(p) for p in (proven, unsafe, elsewhere, bare)] + [
        info(f"{p}-mitigated") for p in (proven, unsafe, elsewhere)
    ]
    old = {p: obs("safe", "kept") for p in (proven, unsafe, elsewhere, bare)}
    old[f"{elsewhere}-mitigated"] = obs("safe", "ok")  # safe at the older cell only: proves nothing at the newer one
    new = {p: obs("silent", "lost") for p in (proven, unsafe, elsewhere, bare)}
    new |= {f"{proven}-mitigated": obs("safe", "ok"), f"{unsafe}-mitigated": obs("silent", "lost too")}
    write(tmp_path / "r", result_set("langgraph-1.2.9", old, probes), result_set("langgraph-1.2.18", new, probes))
    rep = build(tmp_path / "r")
    (page,) = rep.frameworks[0].steps
    regressions = [g for g in page.grouped if g.step.label == "regression" and not g.probe_id.endswith("-mitigated")]
    said = {g.probe_id: g.proof.words if g.proof else "" for g in regressions}
    assert said == {
        proven: f"fix proven (proven: {proven}-mitigated safe at 1.2.18)",
        unsafe: f"no proven mitigation ({unsafe}-mitigated observes silent at 1.2.18); suggested: fix unsafe",
        elsewhere: f"no proven mitigation ({elsewhere}-mitigated was not observed at 1.2.18); suggested: fix elsewhere",
        bare: "no proven mitigation (none recorded in reference/mitigations.toml)",
    }
    md, page_html = markdown.compare_page(rep, page), html_compare.compare_page(rep, page)
    (row,) = [line for line in md.splitlines() if line.startswith("| regression |") and f"`{proven}`" in line]
    assert row.rstrip(" |").endswith(
        f"fix proven — proven: [`{proven}-mitigated`](../probes/langgraph.md#{proven}-mitigated) safe at 1.2.18"
    )
    for text in ("| mitigation |", "no proven mitigation (none recorded"):
        assert text in md
    assert (
        f'— proven: <a href="../matrix.html#{proven}-mitigated"><code>{proven}-mitigated</code></a> safe at 1.2.18'
        in page_html
    )
    assert "no proven mitigation (this probe is a mitigation's own test)" in md  # a -mitigated probe's own row
    assert all(g.proof is not None for g in page.grouped if g.step.label in ("regression", "changed"))


def test_key_findings_are_shares_of_what_was_observed_with_coverage_said_apart(tmp_path: Path, data: Path) -> None:
    """Issue 31: "22 silent of 94" beside "1 of 6" read as a ranking. A key finding is a share of the probes observed
    at that version ("silent in 1 of 2 observed (50%)"), and how many were n/a or not probed there is said apart."""
    silent, safe, absent, newer = (f"langgraph/join/{c}" for c in ("silent", "safe", "absent", "old-only"))
    probes = [info(p) for p in (silent, safe, absent, newer)]
    old = {silent: obs("silent", "lost"), safe: obs("safe", "kept"), absent: obs("n/a", "n/a"), newer: obs("safe", "k")}
    new = {silent: obs("silent", "lost"), safe: obs("safe", "kept"), absent: obs("n/a", "n/a")}  # `newer` not run
    write(tmp_path / "r", result_set("langgraph-1.2.9", old, probes), result_set("langgraph-1.2.24", new, probes))
    rep = build(tmp_path / "r")
    (key,) = rep.key_findings
    assert key.shares_text == "silent in 1 of 2 observed (50%)"
    assert key.coverage.text == "of 4 probes: 2 observed, 1 n/a, 1 not probed"
    assert "- **LangGraph 1.2.24**: silent in 1 of 2 observed (50%); of 4 probes: 2 observed, 1 n/a, 1 not probed" in (
        markdown.report(rep)
    )


def test_no_cross_framework_verdict_where_a_side_was_not_probed(tmp_path: Path, data: Path) -> None:
    """A question whose Google ADK side cites a probe not run at 2.13.0 got "LangGraph more harmful" from the one
    ADK probe that did run. Not probed is its own answer: no verdict, a coverage row per framework, and a
    framework with no probe cited says "not probed"."""
    lg, adk_ran, adk_unrun = "langgraph/join/x", "adk/join/ran", "adk/join/unrun"
    (data / "comparison.toml").write_text(
        "[[question]]\n"
        'question = "partly probed?"\n'
        f'langgraph = ["{lg}"]\nadk = ["{adk_ran}", "{adk_unrun}"]\n'
        "[[question]]\n"
        'question = "fully probed?"\n'
        f'langgraph = ["{lg}"]\nadk = ["{adk_ran}"]\n'
        "[[question]]\n"
        'question = "only LangGraph cited?"\n'
        f'langgraph = ["{lg}"]\n'
    )
    write(
        tmp_path / "r",
        result_set("langgraph-1.2.24", {lg: obs("silent", "lost")}, [info(lg)]),
        result_set("adk-2.13.0", {adk_ran: obs("safe", "kept")}, [info(adk_ran), info(adk_unrun)]),
        result_set("adk-2.0.0", {adk_ran: obs("safe", "kept"), adk_unrun: obs("safe", "ok")}, [info(adk_ran)]),
    )
    rep = build(tmp_path / "r")
    page = pages.compare_page(rep, "langgraph-1.2.24", "adk-2.13.0")
    verdicts = {q.question: q.verdict for q in page.questions}
    assert verdicts["partly probed?"] == "not comparable: Google ADK not probed"
    assert verdicts["fully probed?"] == "LangGraph more harmful"
    assert verdicts["only LangGraph cited?"] == "not comparable: Google ADK not probed"
    assert page.summary.startswith(f"{len(page.questions)} questions, 1 probed on both sides (")
    assert rep.comparison_coverage["adk"].text.startswith(f"of {len(rep.comparison)} questions: 1 observed, 0 n/a,")
    text = markdown.report(rep)
    assert "| **coverage** | of " in text and "not probed: no probe cited" in text
    assert '<th scope="row">coverage</th>' in html.page(rep)
    assert "not probed: no probe cited" in html_compare.compare_page(rep, page)


def test_the_summary_says_how_many_probes_a_version_was_not_probed_for(tmp_path: Path, data: Path) -> None:
    """A probe added after a cell was run has no observation there: the Summary says "not probed" beside the
    counts (Markdown and HTML), so its counts read as of fewer probes, not as fewer hazards."""
    old, added = "langgraph/join/old", "langgraph/join/added"
    write(
        tmp_path / "r",
        result_set("langgraph-1.2.9", {old: obs("silent", "lost")}, [info(old)]),
        result_set(
            "langgraph-1.2.24", {old: obs("silent", "lost"), added: obs("silent", "lost")}, [info(old), info(added)]
        ),
    )
    rep = build(tmp_path / "r")
    assert [row.not_probed for row in rep.frameworks[0].summary] == [1, 0]
    assert "| 1.2.9 (1 not probed) |" in markdown.report(rep)
    assert '<th scope="col">not probed</th>' in html.page(rep)
