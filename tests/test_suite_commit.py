"""The suite commit a result set names is the tree its cells started from: a commit or an edit made while
they ran makes it `+dirty` (so bless refuses it), never the later commit's name for code that did not run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fanin.model import contract
from fanin.run import environment


def _git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args]
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / "probe.py").write_text("one\n", encoding="utf-8")
    _git(tmp_path, "add", "probe.py")
    _git(tmp_path, "commit", "-qm", "one")
    monkeypatch.setattr(environment, "REPO_ROOT", tmp_path)
    monkeypatch.delenv(contract.SUITE_COMMIT, raising=False)
    return tmp_path


def test_the_pin_is_undone_when_the_run_ends(repo: Path) -> None:
    with environment.pinned_suite_commit() as started:
        assert os.environ[contract.SUITE_COMMIT] == started
    assert contract.SUITE_COMMIT not in os.environ  # a long-lived process pins no later run


def test_a_run_names_the_commit_it_started_from(repo: Path) -> None:
    with environment.pinned_suite_commit() as started:
        assert started == _git(repo, "rev-parse", "--short=12", "HEAD")
        assert environment.suite_commit() == started


def test_a_commit_made_while_the_cells_ran_makes_the_run_dirty(repo: Path) -> None:
    with environment.pinned_suite_commit() as started:
        (repo / "probe.py").write_text("two\n", encoding="utf-8")
        assert environment.suite_commit() == started + "+dirty"  # edited, not committed
        _git(repo, "commit", "-qam", "two")
        assert environment.suite_commit() == started + "+dirty"  # committed: still not the code that ran


def test_a_tree_dirty_at_the_start_stays_dirty(repo: Path) -> None:
    (repo / "probe.py").write_text("two\n", encoding="utf-8")
    with environment.pinned_suite_commit() as started:
        assert started.endswith("+dirty")
        _git(repo, "checkout", "-q", "probe.py")
        assert environment.suite_commit() == started


def test_outside_a_checkout_the_given_commit_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment, "REPO_ROOT", tmp_path)  # no git repository: an installed fanin
    monkeypatch.setenv(contract.SUITE_COMMIT, "0123456789ab")
    assert environment.suite_commit() == "0123456789ab"
