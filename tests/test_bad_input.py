"""Every bad input or environment fault: one line, a documented exit code, nothing written (README: Reliability)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fanin.__main__ as cli
from fanin.model import matrix
from fanin.model.source import REPO_ROOT
from fanin.versions import pypi

MATRIX = matrix.load()


def fanin(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fanin", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=REPO_ROOT,
        timeout=120,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("fanin: error: "), done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    return lines[0]


RELEASES = [
    pypi.Release("1.2.23", "2026-11-19T00:00:00Z", False),
    pypi.Release("1.2.24", "2026-11-20T00:00:00Z", False),
    pypi.Release("1.3.0rc1", "2026-11-28T00:00:00Z", False, True),
]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("langgraph==not.a.version", "malformed spec 'langgraph==not.a.version'"),
        ("langgraph==1.4.*", "langgraph has no release matching ==1.4.* on PyPI (newest is 1.2.24)"),
        ("langgraph[x]>=1.2", "expected FRAMEWORK==VERSION"),
        ("langgraph==9.9.9", "has no release 9.9.9 on PyPI"),
    ],
)
def test_upgrade_specs_that_are_wrong_are_one_line_and_exit_2(
    spec: str, message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pypi, "releases", lambda package, timeout=20.0, prereleases=False: RELEASES)
    assert cli.main(["upgrade", spec]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fanin: error: ") and message in err and "\n" not in err


def test_names_follow_pypi_rules_latest_any_case_and_named_prereleases_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    from fanin.versions import upgrade

    monkeypatch.setattr(pypi, "releases", lambda package, timeout=20.0, prereleases=False: RELEASES)
    assert upgrade.plan(["google_adk==LATEST"], MATRIX).cell.id == "adk-1.2.24"
    assert upgrade.plan(["Google.ADK==1.3.0rc1"], MATRIX).cell.version == "1.3.0rc1"  # exists, though a pre-release
    assert upgrade.plan(["langgraph==latest"], MATRIX).cell.version == "1.2.24"  # latest is never a pre-release


def test_the_program_name_is_printed_once(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["no-such-command"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "see `python -m fanin --help`" in err and "fanin fanin" not in err


@pytest.mark.parametrize(
    ("env", "message", "code"),
    [
        ({"FANIN_JOBS": "abc"}, "FANIN_JOBS='abc' is not a number", 2),
        ({"FANIN_JOBS": "0"}, "FANIN_JOBS='0' must be at least 1", 2),
    ],
)
def test_bad_environment_variables(env: dict[str, str], message: str, code: int) -> None:
    done = fanin("probe", "langgraph-1.2.24", env=env)
    assert done.returncode == code and message in one_line(done)


@pytest.mark.parametrize("value", ["abc", "0", "nan"])
@pytest.mark.parametrize("command", [("probe", "langgraph-1.2.24"), ("repeat", "langgraph-1.2.24", "2")])
def test_a_malformed_postgres_start_bound_is_bad_input_before_any_cell_runs(
    tmp_path: Path, value: str, command: tuple[str, ...]
) -> None:
    """Issue 30 case 5: FANIN_PG_START_SECONDS=abc surfaced inside the cell's run: exit 3 and a `.error` marker."""
    earlier = tmp_path / "repeat" / "langgraph-1.2.24" / "run-000" / "langgraph-1.2.24.json"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("an earlier repeat")
    before = sorted(tmp_path.rglob("*"))
    done = fanin(*command, env={"FANIN_PG_START_SECONDS": value, "FANIN_REPORTS": str(tmp_path)})
    assert done.returncode == 2, done.stderr
    assert one_line(done) == (
        f"fanin: error: FANIN_PG_START_SECONDS={value!r} is not a number of seconds (e.g. FANIN_PG_START_SECONDS=60)"
    )
    assert sorted(tmp_path.rglob("*")) == before and earlier.read_text() == "an earlier repeat"  # nothing written


def test_a_matrix_that_is_not_utf8_or_is_a_directory(tmp_path: Path) -> None:
    binary = tmp_path / "matrix.toml"
    binary.write_bytes(b'[defaults]\npython = "3.11"\n\xff\xfe')
    done = fanin("cells", env={"FANIN_MATRIX": str(binary)})
    assert done.returncode == 2 and "not UTF-8 text" in one_line(done)
    done = fanin("cells", env={"FANIN_MATRIX": str(tmp_path)})
    assert done.returncode == 2 and "is a directory, not a matrix file" in one_line(done)


def test_fanin_reports_pointing_at_a_file_is_one_line_and_exit_3(tmp_path: Path) -> None:
    blocker = tmp_path / "reports"
    blocker.write_text("not a directory")
    done = fanin("report", env={"FANIN_REPORTS": str(blocker)})
    assert done.returncode == 3 and "cannot write or read" in one_line(done)
    assert blocker.read_text() == "not a directory"


def test_a_deeply_nested_file_given_to_diff_is_bad_input_not_a_behaviour_change(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    done = fanin("diff", "langgraph-1.2.24", str(deep))
    assert done.returncode == 2 and "nested too deeply" in one_line(done)


def test_a_reference_copied_under_another_cells_name_is_refused_by_diff(tmp_path: Path) -> None:
    copy = tmp_path / "langgraph-1.2.24.json"
    data = json.loads((REPO_ROOT / "reference" / "results" / "langgraph-1.2.18.json").read_text())
    copy.write_text(json.dumps(data))
    done = fanin("diff", "langgraph-1.2.24", str(copy))
    assert done.returncode == 2 and "holds cell 'langgraph-1.2.18', but its name says 'langgraph-1.2.24'" in one_line(
        done
    )
    data["cell"] = "langgraph-1.2.24"  # the name fixed by hand, the content still 1.2.18's
    copy.write_text(json.dumps(data))
    done = fanin("diff", "langgraph-1.2.24", str(copy))
    assert done.returncode == 2 and "holds langgraph 1.2.18, but langgraph-1.2.24 is langgraph 1.2.24" in one_line(done)


def test_pip_install_gives_a_working_fanin_without_any_framework(tmp_path: Path) -> None:
    """`pip install .` (here: uv's pip, from this checkout) gives `fanin` and `python -m fanin`, catalogue included."""
    from fanin.run.venvs import uv_binary

    uv = uv_binary()
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(tmp_path / "venv")], check=True)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(python), str(REPO_ROOT)], check=True, timeout=600)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FANIN_", "UV_PROJECT"))}
    listed = subprocess.run(
        [str(python), "-m", "fanin", "cells"], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert listed.returncode == 0, listed.stderr
    assert "langgraph-" in listed.stdout and "adk-" in listed.stdout
    script = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "fanin"), "diff", "langgraph-1.2.18", "langgraph-1.2.24", "-q"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert script.returncode in (0, 1), script.stderr  # the reference ships with it; no framework is installed
    frameworks = subprocess.run([str(python), "-c", "import langgraph"], capture_output=True)
    assert frameworks.returncode != 0  # report and diff really ran without one


@pytest.mark.parametrize("target", ["app/graph.ts:graph", "agent.mjs:root", "src/Flow.JS:app", "ui/flow.tsx"])
def test_a_javascript_target_given_to_audit_is_one_line_and_exit_2(target: str) -> None:
    """audit imports Python; a .js/.ts file gets one line saying so and what to read instead, before anything runs."""
    done = fanin("audit", target)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and not done.stdout
    assert "fanin audit reads Python graphs" in lines[0]
    assert "langgraphjs and adkjs cells" in lines[0] and "reference/CHECKLIST.md" in lines[0]


def test_a_python_target_is_not_taken_for_javascript() -> None:
    from fanin.project import audit

    for target in ("app/graph.py:graph", "app.graph:ts", "app.tsx_helpers:graph"):
        audit.refuse_javascript(target)  # no error


def test_a_python_module_named_like_a_javascript_file_is_audited_as_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`app.ts:graph` is the module app/ts.py when that file exists; a file app.ts beside it is JavaScript."""
    from fanin.model.errors import FaninError
    from fanin.project import audit

    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "ts.py").write_text("graph = None\n")
    audit.refuse_javascript("app.ts:graph")  # no error: a Python module
    (tmp_path / "flow.ts").write_text("export const graph = 1;\n")
    with pytest.raises(FaninError, match="fanin audit reads Python graphs"):
        audit.refuse_javascript("flow.ts:graph")


@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (["probe", "adk-1.15.2"], "adk-1.15.1"),
        (["diff", "langgraph-1.2.9", "langgraph-1.2.81"], "langgraph-1.2.18"),
        (["bless", "deepagents-0.6.21"], "deepagents-0.6.12"),
        (["repro", "langgraph/join/defr"], "langgraph/join/defer"),
        (["repro", "langgraph/join/defer", "--cell", "langgraph-1.2.42"], "langgraph-1.2.24"),
        (["bisect", "langgraph", "langgraph/join/defr", "0.3.34", "0.4.10"], "langgraph/join/defer"),
        (["report", "--for", "adkk-1.15.1", "--out", "{out}"], "adk-1.15.1"),
        (["report", "--for", "langgrap==1.2.9", "--out", "{out}"], "langgraph"),
        (["report", "--compare", "adk-1.0.0", "adk-2.13.1", "--out", "{out}"], "adk-2.13.0"),
    ],
)
def test_a_mistyped_cell_or_probe_id_gets_did_you_mean_not_the_whole_list(
    args: list[str], meant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command that takes a cell or probe id names the nearest ones (fanin.model.suggest), never all 59 cells."""
    out = tmp_path / "out"
    assert cli.main([a.replace("{out}", str(out)) for a in args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fanin: error: ") and "\n" not in err, err
    hint, sep, _ = err.split("; did you mean ", 1)[1].partition("?")
    assert sep and meant in hint.replace(" or ", ", ").split(", "), err
    assert sum(cell.id in err for cell in MATRIX.cells) <= 4 and "known cells" not in err
    assert not out.exists()


def test_a_name_nothing_is_near_says_where_the_list_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["probe", "zzz"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "fanin: error: no cell 'zzz' in the matrix; `python -m fanin cells` lists the cells"
