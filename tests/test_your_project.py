"""The user-project commands end to end: upgrade --from between two versions, probe --here in a real environment."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fanin.model import matrix
from fanin.model.errors import FaninError
from fanin.model.source import REPO_ROOT
from fanin.versions import pypi, upgrade

MATRIX = matrix.load()


def fanin(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fanin", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
        timeout=900,
    )


def test_upgrade_from_between_two_reference_cells_classifies_and_gates() -> None:
    """Both sides are reference cells: nothing is installed, every difference is classified."""
    done = fanin("upgrade", "google-adk==2.13.0", "--from", "1.15.1")
    assert done.returncode == 1, done.stderr  # 1.15.1 -> 2.13.0 has regressions and changed values
    header = done.stdout.splitlines()[0]
    assert header.startswith("adk-1.15.1 (1.15.1, reference) -> adk-2.13.0 (2.13.0, reference):")
    for word in ("regression", "fix", "new coverage", "changed"):
        assert word in header
    assert re.search(r"^\| regression +\| adk/", done.stdout, flags=re.MULTILINE)


def test_upgrade_between_versions_outside_the_reference_plans_their_locks(monkeypatch: pytest.MonkeyPatch) -> None:
    releases = [
        pypi.Release("2.8.0", "2026-09-01T10:00:00Z", False),
        pypi.Release("2.12.0", "2026-11-10T10:00:00Z", False),
    ]
    monkeypatch.setattr(pypi, "releases", lambda package, timeout=20.0, prereleases=False: releases)
    plan = upgrade.plan(["google_adk==2.12.0", "--from", "2.8.0"], MATRIX, today=dt.date(2026, 11, 30))
    assert (plan.base.in_reference, plan.base.cell.resolution, plan.base.cell.exclude_newer) == (
        False,
        "as-released",
        "2026-09-02T10:00:00Z",
    )  # the environment its users had
    assert (plan.target.in_reference, plan.target.cell.resolution) == (False, "current")  # what pip gives today
    with pytest.raises(FaninError, match="same version"):
        upgrade.plan(["google-adk==2.8.0", "--from", "2.8.0"], MATRIX)
    with pytest.raises(FaninError, match="--from takes a version"):
        upgrade.plan(["google-adk==2.8.0", "--from"], MATRIX)


def test_probe_here_runs_the_catalogue_in_an_installed_environment_and_compares(tmp_path: Path) -> None:
    """A real environment with langgraph installed (the newest cell's venv): same version, same behaviour."""
    from fanin.project import audit

    cell = MATRIX.newest("langgraph")
    python = audit.python_of(cell)
    done = fanin("probe", "--here", "--python", python, env={"FANIN_REPORTS": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"comparing with {cell.id}: the reference cell of this very version and Python" in done.stdout
    assert f"{cell.id} (reference) -> langgraph {cell.version} installed here: no change" in done.stdout
    assert (tmp_path / "here" / f"{cell.id}.json").exists()
