"""Faults never cost a result: install failures, signals, concurrent writers, noisy or leaky probes."""

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from fanin.model import markers, matrix
from fanin.model.results import Claim, Observation, ProbeInfo, ResultSet, load, save
from fanin.model.source import REPO_ROOT
from fanin.report import read

pytest_plugins = ["pytester"]

MATRIX_TEXT = matrix.MATRIX_FILE.read_text()

NOISY_AND_LEAKY = """
import asyncio
import sys

from fanin.probe import Claim, probe

CLAIM = Claim("c", "https://example.org")


@probe("langgraph/dummy/noisy", title="writes 4 MB to stdout and stderr", claim=CLAIM)
def test_noisy(obs):
    for _ in range(2000):
        print("x" * 1000)
        sys.stderr.write("y" * 1000 + "\\n")
    obs.record({"printed": True}, label="printed", detail="printed a lot", hazard="safe")


@probe("langgraph/dummy/leaky-task", title="leaves an asyncio task running", claim=CLAIM)
async def test_leaky_task(obs):
    asyncio.get_running_loop().create_task(asyncio.Event().wait())
    obs.record({"leaked": "task"}, label="leaked", detail="left a task behind", hazard="safe")


@probe("langgraph/dummy/after", title="runs after the others", claim=CLAIM)
def test_after(obs):
    obs.record({"ran": True}, label="ran", detail="still ran", hazard="safe")
"""

HANGS = """
import threading
from pathlib import Path

from fanin.probe import Claim, probe


@probe("langgraph/dummy/hang", title="blocks until killed", claim=Claim("c", "https://example.org"))
def test_hang(obs):
    Path("started").write_text("yes")
    threading.Event().wait()
"""

INI = "[pytest]\naddopts = -p fanin.plugin -p no:cacheprovider\ntimeout = 30\ntimeout_method = signal\n"


def fanin_args(path: Path) -> list[str]:
    return [
        "--fanin-cell",
        "langgraph-0.0.1",
        "--fanin-framework",
        "langgraph",
        "--fanin-results",
        str(path / "results.json"),
        "--fanin-accept-new",
    ]


def test_noisy_and_leaky_probes_are_recorded_and_the_run_goes_on(pytester: pytest.Pytester) -> None:
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile(test_dummy=NOISY_AND_LEAKY)
    result = pytester.runpytest_subprocess(*fanin_args(pytester.path))
    assert result.ret == 0
    observations = load(pytester.path / "results.json").observations
    assert {pid: o.outcome for pid, o in observations.items()} == {
        "langgraph/dummy/noisy": "ok",
        "langgraph/dummy/leaky-task": "ok",
        "langgraph/dummy/after": "ok",
    }


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_cell_leaves_the_previous_result_set_intact(pytester: pytest.Pytester, signum: int) -> None:
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile(test_dummy=HANGS)
    previous = pytester.path / "results.json"
    previous.write_text("previous run")
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *fanin_args(pytester.path)],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (pytester.path / "started").exists():  # wait for the probe to be mid-run
        assert process.poll() is None and time.monotonic() < deadline, "the probe never started"
        time.sleep(0.05)
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == pytest.ExitCode.INTERRUPTED
    assert previous.read_text() == "previous run"
    assert "left as it was" in err
    assert [p.name for p in pytester.path.iterdir() if p.name.startswith(".results")] == []


def _write_many(args: tuple[str, int]) -> int:
    path, writer = Path(args[0]), args[1]
    info = ProbeInfo("langgraph/dummy/x", "t", Claim("c", "s"), (), "f.py", "f", "abcdef")
    for index in range(150):
        obs = Observation("ok", {"writer": writer, "index": index, "pad": "z" * 20000}, "l", "d", "safe")
        save(ResultSet("langgraph-0.0.1", "langgraph", "0.0.1", {}, {info.id: info}, {info.id: obs}), path)
    return writer


def test_concurrent_writers_never_leave_a_torn_file(tmp_path: Path) -> None:
    path = tmp_path / "langgraph-0.0.1.json"
    with ProcessPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(_write_many, (str(path), writer)) for writer in (1, 2)]
        reads = 0
        while not all(f.done() for f in futures):
            if path.exists():
                load(path)  # raises on a torn or partial file
                reads += 1
        assert sorted(f.result() for f in futures) == [1, 2]
    assert reads > 0
    assert json.loads(path.read_text())["observations"]["langgraph/dummy/x"]["value"]["index"] == 149
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def nox(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nox", "--noxfile", str(REPO_ROOT / "noxfile.py"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )


def extra_cell(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "matrix.toml"
    path.write_text(MATRIX_TEXT + "\n[[cell]]\n" + body)
    return path


def test_a_cell_that_cannot_install_is_reported_as_not_run_with_the_reason(tmp_path: Path) -> None:
    custom = extra_cell(
        tmp_path,
        'framework = "langgraph"\nversion = "0.0.99"\nresolution = "as-released"\n'
        'exclude_newer = "2024-01-01T00:00:00Z"\n',
    )
    reports = tmp_path / "reports"
    done = nox(["-s", "probe(langgraph-0.0.99)"], {"FANIN_MATRIX": str(custom), "FANIN_REPORTS": str(reports)})
    assert done.returncode != 0
    assert "install failed: no lock" in done.stdout and "langgraph-0.0.99.txt" in done.stdout
    results = reports / "results" / "langgraph-0.0.99.json"
    assert not results.exists()
    assert markers.reason(results).startswith("install failed")
    _, missing = read.load_dir(reports / "results", matrix.load(custom))
    assert missing["langgraph-0.0.99"].startswith("install failed")


def test_a_python_that_is_not_installed_fails_its_cell_with_a_clear_line(tmp_path: Path) -> None:
    custom = extra_cell(
        tmp_path,
        'framework = "langgraph"\nversion = "1.2.24"\npython = "3.99"\n'
        'resolution = "current"\nexclude_newer = "2026-11-30T00:00:00Z"\n',
    )
    done = nox(["-s", "probe(langgraph-1.2.24-py3.99)"], {"FANIN_MATRIX": str(custom), "FANIN_REPORTS": str(tmp_path)})
    assert done.returncode != 0
    assert "NOT RUN: Python 3.99 is not installed" in done.stdout
