"""`report --for`: the report, checklist and cite lines at the versions a review is about."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import fanin.__main__ as cli
from fanin.model import focus as focus_model
from fanin.model import matrix
from fanin.model.results import NOT_APPLICABLE, ResultSet, load, save
from fanin.model.source import REPO_ROOT
from fanin.report import build as report
from fanin.report import checklist, outputs

MATRIX = matrix.load()


@pytest.fixture
def reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Local results and upgrade runs in a temporary reports/; the reference stays the real one."""
    monkeypatch.setattr(matrix, "REPORTS", tmp_path / "reports")
    monkeypatch.setattr(matrix, "RUN_RESULTS", tmp_path / "reports" / "results")
    return tmp_path / "reports"


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("fanin: error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_reference_versions_are_read_from_the_reference(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = reports / "review"
    assert cli.main(["report", "--for", "google-adk==1.15.1", "langgraph==1.2.9", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "google-adk==1.15.1: reference cell adk-1.15.1" in said and "langgraph==1.2.9: reference cell" in said
    text = (out / "REPORT.md").read_text()
    assert text.startswith("# fanin report at google-adk==1.15.1, langgraph==1.2.9\n")
    sections = "\n".join(p.read_text() for p in sorted((out / "probes").glob("*.md")))
    assert "| question | LangGraph 1.2.9 | Google ADK 1.15.1 |" in text
    cites = re.findall(r"```text\n(fanin \S+ · (\S+) (\S+) · reference [^\n]+)\n```", sections)
    newest_others = {
        (fw.package, MATRIX.newest(key).version)
        for key, fw in MATRIX.frameworks.items()
        if key not in ("langgraph", "adk")
    }  # frameworks not asked for stay at their newest
    assert cites and {(package, version) for _, package, version in cites} == {
        ("langgraph", "1.2.9"),
        ("google-adk", "1.15.1"),
        *newest_others,
    }
    listed = (out / "CHECKLIST.md").read_text()
    assert "| Framework | LangGraph (langgraph), Google ADK (google-adk) |" in listed
    assert "| Version | langgraph==1.2.9, google-adk==1.15.1 |" in listed
    assert "observations at langgraph 1.2.9, google-adk 1.15.1 |" in listed  # only the versions asked for
    evidence = [line for line in listed.splitlines() if line.startswith("  - Evidence: [")]
    assert evidence and all(
        re.search(r"\)@[0-9a-f]{6}(: not in | \()(langgraph 1\.2\.9|google-adk 1\.15\.1)[):]", e) for e in evidence
    )
    assert (out / "matrix.html").is_file() and any((out / "compare").iterdir())


def test_a_version_outside_the_reference_comes_from_a_local_upgrade_run(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = load(matrix.REFERENCE_RESULTS / "langgraph-1.2.24.json")
    run.cell, run.version = "langgraph-1.2.30", "1.2.30"
    run.environment = {**run.environment, "packages": {**run.environment["packages"], "langgraph": "1.2.30"}}
    (reports / "upgrade").mkdir(parents=True)
    save(run, reports / "upgrade" / "langgraph-1.2.30.json")
    out = reports / "review"
    assert cli.main(["report", "--for", "langgraph==1.2.30", "--out", str(out)]) == 0
    assert "local result set" in capsys.readouterr().out
    text = (out / "REPORT.md").read_text()
    assert "(not in the reference)" in text and "1.2.30 local" in text
    assert re.search(
        r"```text\nfanin langgraph/\S+ · langgraph 1\.2\.30 · local run ", (out / "probes" / "langgraph.md").read_text()
    )
    assert "| Version | langgraph==1.2.30 |" in (out / "CHECKLIST.md").read_text()


def test_a_version_with_no_result_set_is_one_line_and_exit_2(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = reports / "review"
    assert cli.main(["report", "--for", "langgraph==1.2.99", "--out", str(out)]) == 2
    err = one_line_error(capsys)
    assert "no result set for langgraph==1.2.99" in err and "./noxw -s upgrade -- langgraph==1.2.99" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("specs", "said"),
    [
        (["langgraph>=1.2"], "malformed spec"),
        (["langgraph==latest"], "exact version"),
        (["langgraph==1.2.9", "langgraph==1.2.18"], "twice"),
        (["crewai==1.0"], "unknown framework"),
    ],
)
def test_bad_specs_are_one_line(reports: Path, capsys: pytest.CaptureFixture[str], specs: list[str], said: str) -> None:
    assert cli.main(["report", "--for", *specs, "--out", str(reports / "review")]) == 2
    assert said in one_line_error(capsys)


def test_the_checklist_pastes_well(tmp_path: Path) -> None:
    rep = outputs.for_versions(MATRIX, focus_model.resolve([MATRIX.named("google-adk==1.15.1")], MATRIX))
    files = outputs.bundle(rep, tmp_path, "https://example.org/fanin")
    text = files[tmp_path / "CHECKLIST.md"]
    head = text.split("\n\n", 2)[1]
    assert head.splitlines()[:6] == [
        "| field | answer |",
        "|---|---|",
        "| Framework | Google ADK (google-adk) |",
        "| Version | google-adk==1.15.1 |",
        "| Owner | _…_ (name, team) |",
        "| Decision | _…_ (adopt / adopt with mitigations / do not adopt) |",
    ]
    evidence = [line for line in text.splitlines() if line.startswith("  - Evidence: [")]
    assert evidence
    for line in evidence:
        assert re.search(r"\]\(https://example\.org/fanin/probes/adk\.md#", line)  # absolute links with a base URL
        assert re.search(r"\)@[0-9a-f]{6}(: not in google-adk 1\.15\.1: | \(google-adk 1\.15\.1\): )", line)
    for section in rep.checklist:
        for item in section.items:
            for answer in item.evidence:
                if answer.observation is not None and not answer.absent:
                    assert " ".join(answer.observation.detail.split()) in text  # nothing truncated


def test_the_reference_checklist_speaks_of_the_newest_versions() -> None:
    files, _ = outputs.reference(MATRIX)
    text = files[matrix.REFERENCE_CHECKLIST]
    assert "| Framework | _…_ |" in text and "| Version | _…_ |" in text
    assert "at the newest version of each framework" in text
    assert "(langgraph 1.2.24): " in text and "(google-adk 2.13.0): " in text
    assert "](probes/langgraph.md#" in text and "](probes/adk.md#" in text
    assert text == checklist.checklist(outputs.report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True))


def test_a_local_runs_report_links_each_cells_pytest_html_page(tmp_path: Path) -> None:
    from fanin.report import build as report_module

    pages = tmp_path / "junit"
    pages.mkdir()
    (pages / "langgraph-1.2.24.html").write_text("<html></html>")
    found = report_module.run_pages(["langgraph-1.2.24", "adk-2.13.0"], pages, tmp_path / "run")
    assert found == (("langgraph-1.2.24", "../junit/langgraph-1.2.24.html"),)


@pytest.mark.parametrize(
    ("words", "python", "cell"),
    [
        (["google-adk==1.15.1"], None, "adk-1.15.1"),
        (["adk-1.15.1"], None, "adk-1.15.1"),
        (["adk-1.15.1-py3.10"], None, "adk-1.15.1-py3.10"),
        (["google-adk==1.15.1"], "3.10", "adk-1.15.1-py3.10"),
        (["adk-1.15.1"], "3.10", "adk-1.15.1-py3.10"),
    ],
)
def test_for_takes_specs_cell_ids_and_python_twins(
    reports: Path, capsys: pytest.CaptureFixture[str], words: list[str], python: str | None, cell: str
) -> None:
    """A team on Python 3.10 gets its own evidence, however it names the version."""
    extra = ["--python", python] if python else []
    assert cli.main(["report", "--for", *words, *extra, "--out", str(reports / "review")]) == 0
    assert f": reference cell {cell}\n" in capsys.readouterr().out


def _items(text: str) -> list[str]:
    """The checklist's items, each with its lines."""
    return ["- [ ] " + block for block in text.split("\n- [ ] ")[1:]]


def _adk_1_15_checklist(tmp_path: Path, replace: dict[str, ResultSet] | None = None) -> str:
    focus = focus_model.resolve([MATRIX.named("google-adk==1.15.1")], MATRIX)
    rep = report.build(
        matrix.REFERENCE_RESULTS, MATRIX, reference=True, replace=replace, extra=focus.extra, focus=focus.cells
    )
    return outputs.bundle(rep, tmp_path)[tmp_path / "CHECKLIST.md"]


def test_an_na_evidence_line_says_in_words_what_is_missing(tmp_path: Path) -> None:
    """ "not in google-adk 1.15.1: <the n/a reason>", never a bare ⚪ n/a · n/a."""
    text = _adk_1_15_checklist(tmp_path)
    assert "[`adk/workflow/join-inputs`](probes/adk.md#adk/workflow/join-inputs)@" in text
    line = next(line for line in text.splitlines() if "[`adk/workflow/join-inputs`]" in line)
    assert line.endswith(": not in google-adk 1.15.1: no module google.adk.workflow (ModuleNotFoundError)"), line
    assert "⚪" not in text and "· n/a —" not in text


def test_an_na_evidence_line_with_no_reason_is_left_out(tmp_path: Path) -> None:
    cell = load(matrix.REFERENCE_RESULTS / "adk-1.15.1.json")
    o = cell.observations["adk/workflow/join-inputs"]
    assert o.outcome == NOT_APPLICABLE
    cell.observations["adk/workflow/join-inputs"] = dataclasses.replace(o, detail="n/a")
    text = _adk_1_15_checklist(tmp_path, {"adk-1.15.1": cell})
    assert "adk/workflow/join-inputs" not in text
    assert "[`adk/parallel-agent/distinct-keys`]" in text  # the item's other evidence stays


def test_frameworks_not_asked_for_are_left_out_of_the_checklist(tmp_path: Path) -> None:
    text = _adk_1_15_checklist(tmp_path)
    cited = set(re.findall(r"\[`([a-z_]+)/", text))
    assert cited == {"adk"}, cited
    assert "| Evidence | fanin reference " in text and "; observations at google-adk 1.15.1 |" in text
    langgraph_only = next(i for i in _items(text) if "commutative" in i.splitlines()[0].lower())
    assert "  - Evidence: no Google ADK probe is cited for this item" in langgraph_only


def test_every_item_states_its_mitigation_and_what_the_mitigation_probe_observed_there(tmp_path: Path) -> None:
    text = _adk_1_15_checklist(tmp_path)
    items = _items(text)
    assert items and all("\n  - Mitigation" in item for item in items)
    at_1_15 = load(matrix.REFERENCE_RESULTS / "adk-1.15.1.json").observations["adk/parallel-agent/same-key-mitigated"]
    line = next(
        line for line in text.splitlines() if line.startswith("  - Mitigation for [`adk/parallel-agent/same-key`]")
    )
    assert "Give each parallel child its own state key" in line
    assert (
        "; with it, [`adk/parallel-agent/same-key-mitigated`](probes/adk.md#adk/parallel-agent/same-key-mitigated)@"
        in line
    )
    assert f"(google-adk 1.15.1): 🟢 safe · {at_1_15.label} — " in line and at_1_15.hazard == "safe"
    none = [i for i in items if "  - Mitigation: none" in i]
    assert none and all("  - Mitigation for" not in i for i in none)
    join = next(i for i in items if "What triggers the join" in i)  # its one ADK probe has a mitigation, not in 1.15.1
    assert "  - Mitigation: none applies: `adk/workflow/plain-fan-in` has one, but is not in this version" in join
    unasked = next(i for i in items if "commutative" in i.splitlines()[0].lower())
    assert "  - Mitigation: none: no probe is cited at the versions asked for" in unasked


def test_the_first_comparison_question_cites_the_deepagents_probe_that_merges_into_the_parent() -> None:
    """structured-response and parallel-todos keep their keys out of the parent: they do not answer "two branches write one key"."""
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    first = rep.comparison[0]
    assert first.question.startswith("Two branches write one key")
    assert [a.probe_id for a in first.answers["deepagents"]] == ["deepagents/subagents/parallel-files"]
    (answer,) = first.answers["deepagents"]
    assert answer.observation is not None and answer.observation.hazard == "silent"


def test_the_readmes_checklist_sample_is_what_report_for_writes(tmp_path: Path) -> None:
    readme = (REPO_ROOT / "docs" / "RESULTS.md").read_text()
    assert "python -m fanin report --for google-adk==1.15.1 --out review/" in readme
    sample = readme.split("```markdown\n", 1)[1].split("```", 1)[0].splitlines()
    written = _adk_1_15_checklist(tmp_path).splitlines()
    assert len(sample) > 10 and [line for line in sample if line not in written] == [], (
        "update docs/RESULTS.md's sample"
    )
