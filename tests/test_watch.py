"""`fanin watch`: which framework released a version newer than its newest cell, against recorded registry answers.

tests/data/pypi/<package>/json is PyPI's JSON API answer of 2026-12-01 for every Python framework
of the registry, trimmed to what fanin reads (each release's first upload and whether it is yanked);
tests/data/npm/*.time.json is `npm view <package> time --json` of the same day for the Node ones.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import tomlkit

import fanin.__main__ as cli
from fanin.model import matrix
from fanin.model.source import REPO_ROOT
from fanin.versions import npm, pypi, watch

RECORDED = REPO_ROOT / "tests" / "data" / "pypi"
RECORDED_NPM = {
    "@langchain/langgraph": REPO_ROOT / "tests" / "data" / "npm" / "langchain-langgraph.time.json",
    "@google/adk": REPO_ROOT / "tests" / "data" / "npm" / "google-adk.time.json",
    "@mastra/core": REPO_ROOT / "tests" / "data" / "npm" / "mastra-core.time.json",
}


@pytest.fixture(autouse=True)
def recorded_registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyPI through its documented index variable; npm's answer (what `npm view` printed) through fanin's own parser."""
    monkeypatch.setenv(pypi.INDEX_VARIABLE, RECORDED.as_uri())
    monkeypatch.setattr(npm, "_npm", lambda args, cwd=None, step="npm": RECORDED_NPM[args[1]].read_text())


def _without_newest(framework: str, tmp_path: Path) -> matrix.Matrix:
    """The matrix as it was before its newest cell of `framework` was added (the previous one current)."""
    document = tomlkit.parse(matrix.MATRIX_FILE.read_text())
    newest = matrix.load().newest(framework)
    cells = document["cell"]
    for index in reversed(range(len(cells))):
        raw = cells[index]
        if raw["framework"] == framework and raw["version"] == newest.version:
            del cells[index]
    previous = [raw for raw in cells if raw["framework"] == framework and "python" not in raw][-1]
    previous["resolution"] = "current"  # what the previous newest was, before add-cell moved `current` on
    return matrix.parse(tomlkit.parse(tomlkit.dumps(document)).unwrap(), origin="test matrix")


def test_nothing_is_due_when_every_newest_cell_is_the_newest_release(capsys: pytest.CaptureFixture[str]) -> None:
    recorded = {p.name for p in RECORDED.iterdir()}
    real = matrix.load()
    assert {fw.package for fw in real.frameworks.values() if real.of(fw.key) and fw.runtime == "python"} <= recorded
    assert watch.due(real) == []
    assert cli.main(["watch", "--dry-run"]) == 0
    assert "every framework's newest cell is its newest release (PyPI, npm)" in capsys.readouterr().out


def test_a_newer_release_is_due_and_the_dry_run_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older = _without_newest("langgraph", tmp_path)
    found = watch.due(older)
    assert [(d.framework.key, d.release.version, d.newest.version) for d in found] == [
        ("langgraph", matrix.load().newest("langgraph").version, older.newest("langgraph").version)
    ]
    before = {p: p.read_bytes() for p in (REPO_ROOT / "reference").rglob("*") if p.is_file()}
    body = tmp_path / "pr.md"
    assert watch.run(older, dry_run=True, body=body) == 0
    said = capsys.readouterr().out
    assert re.search(r"langgraph \S+ \(uploaded \d{4}-\d\d-\d\d\) is newer than the newest cell langgraph-", said)
    assert "would add langgraph-" in said and not body.exists()
    assert before == {p: p.read_bytes() for p in (REPO_ROOT / "reference").rglob("*") if p.is_file()}


def test_yanked_and_pre_releases_are_never_due(tmp_path: Path) -> None:
    newest = matrix.load().newest("langgraph").version
    installable = [r for r in pypi.releases("langgraph") if not r.yanked and not r.prerelease]
    assert installable[-1].version == newest  # the recorded answer's newest installable release
    assert any(r.prerelease for r in pypi.releases("langgraph", prereleases=True))


@pytest.fixture
def lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The watch's file lock in tmp, so a test never touches the checkout's .fanin/."""
    path = tmp_path / "watch.lock"
    monkeypatch.setattr(watch, "LOCK", path)
    return path


def _recorded_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, edit: Any) -> None:
    """The recorded PyPI answers in tmp, `package`'s edited by `edit(releases)`: what the index says after a yank."""
    copy = tmp_path / "pypi"
    shutil.copytree(RECORDED, copy)
    answer = copy / package / "json"
    data = json.loads(answer.read_text())
    edit(data["releases"])
    answer.write_text(json.dumps(data))
    monkeypatch.setenv(pypi.INDEX_VARIABLE, copy.as_uri())


def test_a_quiet_day_writes_no_body_and_its_json_says_nothing_is_due(
    tmp_path: Path, lock: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 31 §4: the workflow's pull-request step runs only when `due` is true, so a quiet day is green."""
    body, due_json = tmp_path / "pr.md", tmp_path / "due.json"
    assert cli.main(["watch", "--body", str(body), "--json", str(due_json)]) == 0
    said = capsys.readouterr().out
    assert not body.exists()
    data = json.loads(due_json.read_text())
    assert data["due"] is False
    real = matrix.load()
    rows = {row["framework"]: row for row in data["frameworks"]}
    assert set(rows) == {key for key in real.frameworks if real.of(key)}
    langgraph = rows["langgraph"]
    assert langgraph["newest_cell"] == real.newest("langgraph").id and langgraph["due"] == []
    assert langgraph["newest_release"] == real.newest("langgraph").version and langgraph["adds"] is None
    assert langgraph["newest_cell_on_index"] == "listed" and langgraph["warning"] is None
    assert rows["langgraphjs"]["index"] == "npm" and rows["langgraph"]["index"] == "PyPI"
    # how fresh the index read is: the newest upload of the recorded answer, pre-releases included
    uploads = json.loads((RECORDED / "langgraph" / "json").read_text())["releases"]
    freshest = max(f["upload_time_iso_8601"] for files in uploads.values() for f in files)
    assert langgraph["index_newest_upload"] == freshest
    assert f"langgraph (PyPI) {freshest[:19]}" in said and "indexes read are as fresh as their newest uploads" in said


def test_the_json_says_what_is_due_per_framework(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    older = _without_newest("langgraph", tmp_path)
    due_json = tmp_path / "due.json"
    assert watch.run(older, dry_run=True, body=tmp_path / "pr.md", json_out=due_json) == 0
    data = json.loads(due_json.read_text())
    assert data["due"] is True
    row = next(r for r in data["frameworks"] if r["framework"] == "langgraph")
    newest = matrix.load().newest("langgraph")
    assert row["newest_cell"] == older.newest("langgraph").id and row["newest_release"] == newest.version
    installable = [r.version for r in pypi.releases("langgraph") if not r.yanked]
    between = installable[installable.index(older.newest("langgraph").version) + 1 :]
    assert row["due"] == between and between[-1] == newest.version and row["adds"] == newest.id  # the newest is added
    assert all(r["due"] == [] for r in data["frameworks"] if r["framework"] != "langgraph")


def test_a_second_watch_is_refused_while_one_holds_the_lock(
    tmp_path: Path, lock: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs cannot both add the same cell: the second says so in one line and exits 3, writing nothing."""
    body, due_json = tmp_path / "pr.md", tmp_path / "due.json"
    with watch.exclusive():
        assert cli.main(["watch", "--body", str(body), "--json", str(due_json)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("fanin: error: another fanin watch is adding cells") and err.count("\n") == 1
    assert str(lock) in err and not body.exists() and not due_json.exists()
    assert cli.main(["watch", "--body", str(body), "--json", str(due_json)]) == 0  # released: the next run runs


@pytest.mark.parametrize("how", ["missing", "yanked"])
def test_a_newest_cell_whose_version_left_the_index_is_said(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30 §3: a yanked or deleted newest release is one warning line, and in --json."""
    newest = matrix.load().newest("langgraph")

    def edit(releases: dict[str, Any]) -> None:
        if how == "missing":
            del releases[newest.version]
        else:
            for upload in releases[newest.version]:
                upload["yanked"] = True

    _recorded_copy(tmp_path, monkeypatch, "langgraph", edit)
    due_json = tmp_path / "due.json"
    assert cli.main(["watch", "--dry-run", "--json", str(due_json)]) == 0
    warnings = [line for line in capsys.readouterr().out.splitlines() if line.startswith("fanin: warning:")]
    words = "is no longer in PyPI's index" if how == "missing" else "was yanked on PyPI's index"
    assert warnings == [
        (
            f"fanin: warning: langgraph {newest.version}, the newest cell's version ({newest.id}), {words};"
            " the cell stays in the matrix, decide whether to keep it"
        )
    ]
    row = next(r for r in json.loads(due_json.read_text())["frameworks"] if r["framework"] == "langgraph")
    assert row["newest_cell_on_index"] == how and row["warning"] == warnings[0].removeprefix("fanin: warning: ")
    assert row["due"] == []  # an older release is never "due"
