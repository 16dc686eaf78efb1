"""The nox sessions are generated from the matrix: one probe session per cell, with tags."""

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

from fanin.model import matrix
from fanin.model.source import REPO_ROOT

MATRIX = matrix.load()


def nox_list(env: dict[str, str] | None = None, json_output: bool = True) -> subprocess.CompletedProcess[str]:
    selection = ["--json", "-s", "probe"] if json_output else []
    return subprocess.run(
        [sys.executable, "-m", "nox", "--noxfile", str(REPO_ROOT / "noxfile.py"), "-l", *selection],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_one_probe_session_per_cell_with_framework_and_smoke_tags() -> None:
    done = nox_list()
    assert done.returncode == 0, done.stderr
    sessions = {s["session"]: s for s in json.loads(done.stdout)}
    probes = {name for name in sessions if name.startswith("probe(")}
    assert probes == {f"probe({cell.id})" for cell in MATRIX.cells}
    for cell in MATRIX.cells:
        tags = set(sessions[f"probe({cell.id})"]["tags"])
        assert cell.framework.key in tags
        assert ("smoke" in tags) == (cell.id in MATRIX.smoke())
    listed = nox_list(json_output=False).stdout
    assert "* matrix ->" in listed and "* report ->" in listed  # the main job
    for name in ("report", "diff", "upgrade", "bless", "lock", "tests", "bisect", "stability"):
        assert f"- {name} ->" in listed or f"* {name} ->" in listed, name


def test_a_broken_matrix_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "matrix.toml"
    bad.write_text(matrix.MATRIX_FILE.read_text().replace('resolution = "current"', 'resolution = "today"', 1))
    done = nox_list({"FANIN_MATRIX": str(bad)})
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("fanin: error: ") and "resolution 'today'" in lines[-1]
    assert "Traceback" not in done.stderr


def test_nox_without_uv_is_one_line(tmp_path: Path) -> None:
    """A user with nox but no uv types `nox -l`: one line saying what to do, no traceback."""
    done = nox_list({"PATH": str(tmp_path)}, json_output=False)  # nox itself runs as `python -m nox`
    assert done.returncode == 2
    assert done.stderr.strip() == "fanin: error: uv is not on PATH: run ./noxw (it brings nox and uv), or install uv"


@functools.cache
def _noxfile() -> object:
    """The noxfile as a module, loaded once (nox registers its sessions on load)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fanin_noxfile", REPO_ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_fanin_command_has_a_session_of_its_name() -> None:
    """`./noxw -l` and `python -m fanin --help` list the same commands (README): a new command gets its session."""
    import argparse
    import ast

    from fanin import __main__ as cli

    (commands,) = [a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    tree = ast.parse((REPO_ROOT / "noxfile.py").read_text())
    sessions = {node.name.replace("_", "-") for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert sorted(set(commands.choices) - sessions) == []
