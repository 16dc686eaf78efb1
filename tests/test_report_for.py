"""`report --for`: the report, checklist and cite lines at the versions a review is about."""

from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path

import pytest
from packaging.version import Version
from report_helpers import newest_and_beyond

import fanin.__main__ as cli
from fanin.model import focus as focus_model
from fanin.model import matrix
from fanin.model.results import NOT_APPLICABLE, ResultSet, load, save
from fanin.model.source import REPO_ROOT
from fanin.report import build as report
from fanin.report import checklist, outputs
from fanin.versions import pypi

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
    newest, beyond, _ = newest_and_beyond("langgraph")
    run = load(matrix.REFERENCE_RESULTS / f"{newest}.json")
    run.cell, run.version = f"langgraph-{beyond}", beyond
    run.environment = {**run.environment, "packages": {**run.environment["packages"], "langgraph": beyond}}
    (reports / "upgrade").mkdir(parents=True)
    save(run, reports / "upgrade" / f"langgraph-{beyond}.json")
    out = reports / "review"
    assert cli.main(["report", "--for", f"langgraph=={beyond}", "--out", str(out)]) == 0
    assert "local result set" in capsys.readouterr().out
    text = (out / "REPORT.md").read_text()
    assert "(not in the reference)" in text and f"{beyond} local" in text
    assert re.search(
        rf"```text\nfanin langgraph/\S+ · langgraph {re.escape(beyond)} · local run ",
        (out / "probes" / "langgraph.md").read_text(),
    )
    assert f"| Version | langgraph=={beyond} |" in (out / "CHECKLIST.md").read_text()


def test_a_version_with_no_result_set_is_one_line_and_exit_2(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = reports / "review"
    assert cli.main(["report", "--for", "langgraph==1.2.99", "--out", str(out)]) == 2
    err = one_line_error(capsys)
    assert "no result set for langgraph==1.2.99" in err and "./noxw -s upgrade -- langgraph==1.2.99" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("specs", "said"),
    [
        (["langgraph[x]==1.2.9"], "malformed spec"),
        (["langgraph==latest"], "needs a version or a range"),
        (["langgraph==1.2.9", "langgraph==1.2.18"], "twice"),
        (["autogen==1.0"], "unknown framework"),
    ],
)
def test_bad_specs_are_one_line(reports: Path, capsys: pytest.CaptureFixture[str], specs: list[str], said: str) -> None:
    assert cli.main(["report", "--for", *specs, "--out", str(reports / "review")]) == 2
    assert said in one_line_error(capsys)


def test_the_checklist_pastes_well(tmp_path: Path) -> None:
    rep = outputs.for_versions(MATRIX, focus_model.resolve([focus_model.parse("google-adk==1.15.1", MATRIX)], MATRIX))
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
    assert f"(langgraph {MATRIX.newest('langgraph').version}): " in text
    assert f"(google-adk {MATRIX.newest('adk').version}): " in text
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
    focus = focus_model.resolve([focus_model.parse("google-adk==1.15.1", MATRIX)], MATRIX)
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
    # The probe cited for it, then the scenarios the question names (reference/comparison.toml's `scenarios`).
    assert [a.probe_id for a in first.answers["deepagents"]] == [
        "deepagents/subagents/parallel-files",
        "deepagents/scenario/same-key-two-writers",
        "deepagents/scenario/same-key-same-value",
    ]
    answer = first.answers["deepagents"][0]
    assert answer.observation is not None and answer.observation.hazard == "silent"


def test_the_readmes_checklist_sample_is_what_report_for_writes(tmp_path: Path) -> None:
    readme = (REPO_ROOT / "docs" / "RESULTS.md").read_text()
    assert "python -m fanin report --for google-adk==1.15.1 --out review/" in readme
    sample = readme.split("```markdown\n", 1)[1].split("```", 1)[0].splitlines()
    written = _adk_1_15_checklist(tmp_path).splitlines()
    assert len(sample) > 10 and [line for line in sample if line not in written] == [], (
        "update docs/RESULTS.md's sample"
    )


@pytest.mark.parametrize(
    ("word", "cell"),
    [
        ("deepagents==0.6.*", "deepagents-0.6.12"),
        ("deepagents~=0.6", "deepagents-0.7.32"),
        ("deepagents>=0.6,<0.7.20", "deepagents-0.7.16"),
        ("google_adk==1.15.*", "adk-1.15.1"),
        ("adk~=1.15", "adk-1.39.1"),  # the framework key as the name; ~=1.15 is >=1.15,<2
    ],
)
def test_a_range_means_its_newest_reference_cell_and_says_so(
    reports: Path, capsys: pytest.CaptureFixture[str], word: str, cell: str
) -> None:
    """`report --for "deepagents==0.6.*"`: any PEP 440 specifier set, the PyPI name or the key, one line saying what it means."""
    out = reports / "review"
    assert cli.main(["report", "--for", word, "--out", str(out)]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("fanin: wrote")]
    assert said == [f"fanin: {word} means {cell}, the newest reference cell matching it"]
    version = MATRIX.cell(cell).requirement
    assert (out / "REPORT.md").read_text().startswith(f"# fanin report at {version}\n")


def _released(*versions: str) -> list[pypi.Release]:
    return [pypi.Release(v, "2026-11-01T00:00:00Z", False) for v in sorted(versions, key=Version)]


RELEASED = _released("0.6.12", "0.7.32", "0.8.1", "0.8.3", "0.9.1", "1.2.9", "1.2.24", "1.2.99", "1.15.2")


def advised(text: str) -> list[str]:
    """The `./noxw -s SESSION -- ARGS` commands a message advises, as a shell would split them."""
    commands = [shlex.split(c) for c in re.findall(r"`(\./noxw [^`]+)`", text)]
    assert commands, f"no command advised in {text!r}"
    for words in commands:
        assert words[:2] == ["./noxw", "-s"] and words[3] == "--", words
    return commands


def run_advice(words: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The advised command through the real CLI's parsing and validation (PyPI answered from RELEASED; nothing
    locked, probed or written): the (version, Python) it would give a result set."""
    from fanin.versions import add_cell, locking, upgrade

    made: list[tuple[str, str]] = []
    monkeypatch.setattr(pypi, "releases", lambda package, timeout=20.0, prereleases=False: RELEASED)

    def planned(args: list[str], m: matrix.Matrix) -> int:
        target = upgrade.plan(args, m).cell
        made.append((target.version, target.python))
        return 0

    def locked(cell: matrix.Cell, m: matrix.Matrix) -> dict[Path, str]:
        if cell.id not in MATRIX.ids():  # not the newest cell add-cell re-dates
            made.append((cell.version, cell.python))
        return {}

    monkeypatch.setattr(upgrade, "run", planned)
    monkeypatch.setattr(locking, "resolve_files", locked)
    monkeypatch.setattr(add_cell, "write_all", lambda files: None)
    session, args = words[2], words[4:]
    assert cli.main([session, *args]) == 0, words
    (result,) = made
    return result


@pytest.mark.parametrize(
    ("words", "gives"),
    [
        (["deepagents==0.8.*"], ("0.8.3", "3.11")),  # a range nothing in the reference matches
        (["langgraph==1.2.99"], ("1.2.99", "3.11")),
        (["langgraph==1.2.99", "--python", "3.10"], ("1.2.99", "3.10")),  # langgraph has a 3.10 cell to compare with
        (["deepagents==0.9.1", "--python", "3.10"], ("0.9.1", "3.10")),  # deepagents has none: a new twin
        (["adk-1.15.2"], ("1.15.2", "3.11")),
    ],
)
def test_a_refusals_advice_is_a_command_that_runs(
    reports: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    words: list[str],
    gives: tuple[str, str],
) -> None:
    """The command a `report --for` refusal advises passes that command's own parsing and validation, and would
    make the very result set asked for (the advice used to be `upgrade -- deepagents==0.6.*`, which upgrade refused)."""
    assert cli.main(["report", "--for", *words, "--out", str(reports / "review")]) == 2
    (command,) = advised(one_line_error(capsys))
    assert run_advice(command, monkeypatch) == gives


def test_a_missing_python_twin_is_stood_in_for_one_line_each_with_the_command_that_fills_the_gap(
    reports: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--for google-adk==1.15.1 langgraph==1.2.9 --python 3.10`: ADK's twin, and LangGraph's 3.11 cell, said so."""
    out = reports / "review"
    args = ["report", "--for", "google-adk==1.15.1", "langgraph==1.2.9", "--python", "3.10", "--out", str(out)]
    assert cli.main(args) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("fanin: wrote")]
    assert said[0] == "fanin: google-adk==1.15.1 on Python 3.10: reference cell adk-1.15.1-py3.10"
    assert said[1] == (
        "fanin: langgraph==1.2.9 on Python 3.10: no Python 3.10 reference cell; langgraph-1.2.9 stands in from"
        " Python 3.11 (another Python); to fill the gap, run `./noxw -s upgrade -- langgraph==1.2.9 --python 3.10`"
    )
    assert len(said) == 2
    assert (
        (out / "REPORT.md")
        .read_text()
        .startswith("# fanin report at google-adk==1.15.1 on Python 3.10, langgraph==1.2.9\n")
    )
    (command,) = advised(said[1])
    assert run_advice(command, monkeypatch) == ("1.2.9", "3.10")


@pytest.mark.parametrize(
    ("word", "cell"),
    [("langgraph==1.2.9", "langgraph-1.2.9-py3.10"), ("langgraph~=1.3.0", "langgraph-1.3.2-py3.10")],
)
def test_once_the_gap_is_filled_its_local_run_is_used(
    reports: Path, capsys: pytest.CaptureFixture[str], word: str, cell: str
) -> None:
    """What the advised upgrade writes (reports/upgrade/<cell>.json) is read, exact or by a range, not a stand-in."""
    run = load(matrix.REFERENCE_RESULTS / "langgraph-1.2.9.json")
    _, version, _ = MATRIX.named(cell)
    run.cell, run.version = cell, version
    run.environment = {**run.environment, "packages": {**run.environment["packages"], "langgraph": version}}
    (reports / "upgrade").mkdir(parents=True)
    save(run, reports / "upgrade" / f"{cell}.json")
    assert cli.main(["report", "--for", word, "--python", "3.10", "--out", str(reports / "review")]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("fanin: wrote")]
    assert len(said) == 1 and said[0].startswith(f"fanin: {word} on Python 3.10: local result set "), said
    assert said[0].endswith(f"upgrade/{cell}.json (not in the reference)")


def test_latest_is_refused_with_specs_that_work(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["report", "--for", "deepagents==latest", "--out", str(reports / "review")]) == 2
    err = one_line_error(capsys)
    examples = [shlex.split(w)[0] for w in re.findall(r"e\.g\. (\S+) \(its newest reference cell\) or (\S+)$", err)[0]]
    assert examples == ["deepagents==0.7.32", "deepagents~=0.7"]
    for example in examples:
        assert cli.main(["report", "--for", example, "--out", str(reports / "review")]) == 0
