"""The fresh-machine check (.ci/fresh_machine.py) judges leftovers by their owner: a scratch or server directory
whose harness process still runs belongs to another run on the same machine, not to the pass that just ended
(a CI run beside another checkout's cells failed on one: fanin-scratch-<its pid>-deepagents-0.2.8-…)."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from fanin.model.source import REPO_ROOT

FRESH = runpy.run_path(str(REPO_ROOT / ".ci" / "fresh_machine.py"), run_name="fresh_machine")


def test_a_directory_whose_owner_still_runs_is_not_this_pass_s_leftover(tmp_path: Path) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    one = SimpleNamespace(_switch=False, uid=os.getuid(), began=time.time() - 1, tmp=tmp_path)
    running = tmp_path / f"fanin-scratch-{os.getpid()}-deepagents-0.2.8-x"
    left = tmp_path / f"fanin-scratch-{ended.pid}-langgraph-1.2.24-x"
    server = tmp_path / f"fanin-pg-{ended.pid}-y"
    for made in (running, left, server):
        made.mkdir()
    found = FRESH["_leftovers"](one)
    assert f"a cell's scratch left behind: {left}" in found
    assert f"a server directory left behind: {server}" in found
    assert not any(str(running) in line for line in found)


def test_anything_a_pass_leaves_in_its_tmpdir_is_a_leftover_but_the_server_runtime_and_uvs_locks(
    tmp_path: Path,
) -> None:
    """CrewAI's crewai:<hash>.lock files and Node 22's node-compile-cache stayed in /tmp after every matrix run:
    a cell's run now has a TMPDIR of its own, and the check names anything else a pass leaves in its TMPDIR."""
    one = SimpleNamespace(_switch=False, uid=os.getuid(), began=time.time() - 1, tmp=tmp_path)
    for kept in (f"fanin-pgserver-{os.getuid()}", "node-compile-cache"):
        (tmp_path / kept).mkdir()
    for kept in ("uv-0d89e494b73e64ab.lock", "crewai:02811223e39f69e567671a20f7e5e56e.lock"):
        (tmp_path / kept).touch()
    found = FRESH["_leftovers"](one)
    assert found == [
        f"left in its TMPDIR: {tmp_path / 'crewai:02811223e39f69e567671a20f7e5e56e.lock'}",
        f"left in its TMPDIR: {tmp_path / 'node-compile-cache'}",
    ]
