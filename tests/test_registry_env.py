"""A framework's environment variables are registry data: matrix.toml's `env`, set by the runner in one place.

CrewAI sends telemetry and traces unless CREWAI_DISABLE_TELEMETRY, CREWAI_TRACING_ENABLED and
OTEL_SDK_DISABLED are set before it imports (issue 33). The switches live in `[frameworks.<key>] env`
(a cell's own `env` over it), are checked when the matrix is read (one line naming the bad field), and
reach the probes' pytest through fanin.run.one_cell's one environment, from every path that runs a
cell: a matrix or probe run (PythonRunner.run), the sensitivity check's copy (run_copy), probe --here,
and --here's detection, which imports every registered framework.
"""

from __future__ import annotations

import copy
import json
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import IO, Any

import pytest

from fanin.model import matrix
from fanin.model.errors import FaninError
from fanin.model.matrix import MatrixError, parse
from fanin.project import here
from fanin.run import one_cell, pythons, runtimes, venvs

RAW = tomllib.loads(matrix.MATRIX_FILE.read_text())
TELEMETRY_OFF = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TESTING": "true",
    "CREWAI_DISABLE_VERSION_CHECK": "true",
}


def _with(framework_env: object = None, cell_env: object = None, key: str = "langgraph") -> dict[str, Any]:
    data = copy.deepcopy(RAW)
    if framework_env is not None:
        data["frameworks"][key]["env"] = framework_env
    if cell_env is not None:
        first = next(c for c in data["cell"] if c["framework"] == key)
        first["env"] = cell_env
    return data


def _refused(data: dict[str, Any]) -> str:
    with pytest.raises(MatrixError) as caught:
        parse(data)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_a_frameworks_env_reaches_each_cell_and_a_cells_own_value_wins() -> None:
    parsed = parse(_with({"A_SWITCH": "off", "B_SWITCH": "1"}, {"B_SWITCH": "2"}))
    cells = parsed.of("langgraph")
    assert cells[0].env == {"A_SWITCH": "off", "B_SWITCH": "2"}
    assert all(c.env == {"A_SWITCH": "off", "B_SWITCH": "1"} for c in cells[1:])
    assert parse(RAW).newest("adk").env == {}  # no table: nothing added


@pytest.mark.parametrize(
    ("framework_env", "cell_env", "said"),
    [
        ("A=1", None, "'env' must be a table"),
        ({"1BAD": "x"}, None, "env name '1BAD' is not a variable name"),
        ({"A-B": "x"}, None, "env name 'A-B' is not a variable name"),
        ({"FLAG": True}, None, "env FLAG must be a string, got True"),
        (None, {"N": 3}, "env N must be a string, got 3"),
    ],
)
def test_a_malformed_env_is_one_line_naming_the_field(framework_env: object, cell_env: object, said: str) -> None:
    assert said in _refused(_with(framework_env, cell_env))


def test_a_runtime_whose_runner_does_not_set_env_refuses_the_table() -> None:
    """A Node cell's npm ci / node --test never read it: the table is refused rather than silently dropped."""
    message = _refused(_with({"X": "1"}, key="langgraphjs"))
    assert "[frameworks.langgraphjs]: 'env' is not set by the node runtime's runner" in message


def test_crewai_is_registered_with_its_telemetry_off() -> None:
    assert all(cell.env == TELEMETRY_OFF for cell in matrix.load().of("crewai"))


_PROBE = """
import json, os
from fanin.probe import Claim, probe

@probe("langgraph/dummy/env", title="t", claim=Claim("c", "https://example.org"))
def test_env(obs):
    seen = {k: os.environ.get(k) for k in ("FANIN_T_REGISTERED", "FANIN_T_JOB")}
    obs.record(json.dumps(seen, sort_keys=True), label="ran", detail="ran", hazard="safe")
"""


def _run_dummy(tmp_path: Path, source: str, **run: Any) -> Path:
    """One dummy probe module run as a cell's pytest (in this interpreter), exit 0; its result set's path."""
    module = tmp_path / "test_dummy.py"
    module.write_text(textwrap.dedent(source))
    results = tmp_path / "results" / "langgraph-0.0.1.json"
    spec = one_cell.CellRun(
        cell_id="langgraph-0.0.1",
        framework="langgraph",
        package="pytest",
        import_check="json",
        python=Path(sys.executable),
        lock=tmp_path / "lock.txt",
        reference=None,
        results=results,
        targets=(str(module),),
        pytest_args=("-o", "timeout=60", "-p", "no:cacheprovider"),
        accept_new=True,
        **run,
    )
    with (tmp_path / "cell.log").open("w") as log:
        outcome = one_cell.run_cell(spec, log)
    assert outcome.code == 0, (tmp_path / "cell.log").read_text()
    return results


def test_the_cells_pytest_runs_with_its_registered_env_over_the_callers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry's value beats the caller's shell (a user's CREWAI_DISABLE_TELEMETRY=false stays out of a cell);
    the job's own variables (PYTHONDONTWRITEBYTECODE for the sensitivity copy) still come last."""
    monkeypatch.setenv("FANIN_T_REGISTERED", "from the shell")
    results = _run_dummy(
        tmp_path,
        _PROBE,
        env={"FANIN_T_JOB": "job"},
        registry_env={"FANIN_T_REGISTERED": "registry", "FANIN_T_JOB": "registry"},
    )
    observed = json.loads(results.read_text())["observations"]["langgraph/dummy/env"]["value"]
    assert json.loads(observed) == {"FANIN_T_REGISTERED": "registry", "FANIN_T_JOB": "job"}


_WRITES_HOME = """
import json, os, tempfile
from pathlib import Path
from fanin.probe import Claim, probe

@probe("langgraph/dummy/home", title="t", claim=Claim("c", "https://example.org"))
def test_home(obs):
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        (Path(os.environ[name]) / "framework").mkdir()
    (Path.home() / ".framework-id").write_text("a telemetry id")
    tempfile.mkstemp(prefix="crewai:", suffix=".lock")  # CrewAI's lock files, never removed by CrewAI
    obs.record(json.dumps([str(Path.home()), tempfile.gettempdir()]), label="ran", detail="ran", hazard="safe")
"""


def test_what_a_framework_writes_in_home_goes_with_the_cells_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CrewAI writes a key file and its storage under ~/.local/share and ~/.config and lock files in the temporary
    directory, Haystack a telemetry id in ~/.haystack: a cell's pytest gets its own HOME, XDG directories and
    TMPDIR in its scratch, removed with it."""
    caller, caller_tmp = tmp_path / "caller-home", tmp_path / "caller-tmp"
    caller.mkdir()
    caller_tmp.mkdir()
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "TMP", "TEMP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(caller))
    monkeypatch.setenv("TMPDIR", str(caller_tmp))
    monkeypatch.setenv("FANIN_SCRATCH_ROOT", str(tmp_path / "scratch"))
    results = _run_dummy(tmp_path, _WRITES_HOME)
    seen = json.loads(json.loads(results.read_text())["observations"]["langgraph/dummy/home"]["value"])
    assert all(Path(place).is_relative_to(tmp_path / "scratch") for place in seen), seen
    assert list(caller.iterdir()) == []  # nothing in the caller's home
    assert list(caller_tmp.iterdir()) == []  # nor in the caller's temporary directory
    assert list((tmp_path / "scratch").iterdir()) == []  # and the cell's own went with its scratch


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[one_cell.CellRun]:
    """Every CellRun handed to one_cell.run_cell; no venv is built and no pytest runs."""
    runs: list[one_cell.CellRun] = []

    def fake_run(run: one_cell.CellRun, log: IO[str]) -> one_cell.CellOutcome:
        runs.append(run)
        return one_cell.CellOutcome(run.cell_id, 0, None, 1, "in-process")

    class _Venv:
        path = tmp_path / "venv"
        python = tmp_path / "venv" / "bin" / "python"

    monkeypatch.setattr(one_cell, "run_cell", fake_run)
    monkeypatch.setattr(pythons, "find", lambda version: Path(sys.executable))
    monkeypatch.setattr(venvs, "ensure", lambda *args, **kwargs: _Venv())
    monkeypatch.setattr(venvs, "has_package", lambda venv, name: False)
    return runs


def test_every_path_that_runs_a_python_cell_hands_it_the_cells_env(
    captured: list[one_cell.CellRun], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = parse(_with({**TELEMETRY_OFF, "FANIN_T_SWITCH": "off"}, key="crewai"))
    cell = parsed.newest("crewai")
    runner = runtimes.PythonRunner()
    job = runtimes.CellJob(cell, cell.lock_path, None, None, tmp_path / "r.json", tmp_path / "j.xml")
    runner.run(job, sys.stdout)
    runner.run_copy(cell, tmp_path / "copy", ("t.py::f",), tmp_path / "c.json", sys.stdout)

    monkeypatch.setattr(here, "load", lambda path: (_ for _ in ()).throw(SystemExit("stop after the run")))
    found = here.Found(cell.framework, cell.version, cell, "the same version")
    with pytest.raises(SystemExit):
        here._probe(parsed, found, sys.executable, {}, tmp_path)
    assert [r.registry_env for r in captured] == [{**TELEMETRY_OFF, "FANIN_T_SWITCH": "off"}] * 3


def test_here_detects_the_frameworks_with_their_registered_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Detection imports every registered framework (crewai among them) before any probe: telemetry off there too,
    with every framework's registered variables (strands' hash seed among them)."""
    seen: list[dict[str, str]] = []

    def fake_environment(python: str, packages: dict[str, str], env: dict[str, str]) -> tuple[str, dict[str, Any]]:
        seen.append(env)
        return "3.11", {}

    monkeypatch.setattr(here, "_environment", fake_environment)
    with pytest.raises(FaninError, match="none of the frameworks"):  # the fake reports nothing installed
        here.find(matrix.load(), sys.executable, {"PYTHONPATH": "x"})
    registered = {name: value for fw in matrix.load().frameworks.values() for name, value in fw.env}
    assert TELEMETRY_OFF.items() <= registered.items()
    assert seen == [{**registered, "PYTHONPATH": "x"}]
