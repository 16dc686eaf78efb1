"""`fanin watch`: which framework released a version newer than its newest cell, against recorded registry answers.

tests/data/pypi/<package>/json is PyPI's JSON API answer of 2026-12-01 for every Python framework
of the registry, trimmed to what fanin reads (each release's first upload and whether it is yanked);
tests/data/npm/*.time.json is `npm view <package> time --json` of the same day for the Node ones.
"""

from __future__ import annotations

import re
from pathlib import Path

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
