"""The user-project commands end to end: upgrade --from between two versions, probe --here in a real environment."""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.util
import itertools
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from fanin.model import matrix
from fanin.model.errors import FaninError
from fanin.model.results import Observation, ResultSet
from fanin.model.source import REPO_ROOT
from fanin.project import here
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
    header = next(line for line in done.stdout.splitlines() if line.startswith("adk-1.15.1 ("))
    # 2.13.0's live-thread probes resumed what 1.25.1 (the cell below it) wrote: they run again, 1.15.1 writing
    assert re.match(
        r"adk-1\.15\.1 \(1\.15\.1, reference\) -> adk-2\.13\.0 \(2\.13\.0, reference; live threads"
        r" (probed now|as run before, reports/upgrade/from-1\.15\.1)\):",
        header,
    ), header
    for word in ("regression", "fix", "new coverage", "changed"):
        assert word in header
    assert re.search(r"^\| regression +\| adk/", done.stdout, flags=re.MULTILINE)
    # ... and are not diffed with 1.15.1's own (which resumed 1.5.0's session): they answer for the pair
    assert not re.search(r"^\| \w[\w ]* +\| adk/upgrade/.* \| .* \| .* \|", done.stdout, flags=re.MULTILINE)
    said = "live threads: adk-2.13.0 resumed what google-adk 1.15.1 wrote mid-fan-out, 2 probes: 2 did not resume"
    assert said in done.stdout
    assert re.search(
        r"^\| broke +\| adk/upgrade/live-session\[postgres\] +\| \[loud\] written by 1\.15\.1", done.stdout, re.M
    )


def test_a_live_run_kept_from_before_is_used_only_while_its_cell_lock_and_probe_code_are_the_same(
    tmp_path: Path,
) -> None:
    from fanin.model.results import load
    from fanin.versions import upgrade

    cell = MATRIX.cell("adk-2.13.0")
    assert upgrade.kept_live_run(tmp_path / "absent.json", cell) is None
    fanin("upgrade", "google-adk==2.13.0", "--from", "1.15.1")  # runs them, or keeps the run already there
    path = matrix.REPORTS / "upgrade" / "from-1.15.1" / "adk-2.13.0.json"
    kept = upgrade.kept_live_run(path, cell)
    assert kept is not None and {"adk/upgrade/live-session", "adk/upgrade/live-session[postgres]"} <= set(
        kept.observations
    )
    data = json.loads(path.read_text())
    data["probes"]["adk/upgrade/live-session"]["source_hash"] = "0" * 12  # made by other probe code
    (tmp_path / "edited.json").write_text(json.dumps(data))
    assert upgrade.kept_live_run(tmp_path / "edited.json", cell) is None
    data = json.loads(path.read_text())
    data["environment"]["lock_sha256"] = "0" * 64  # made from another lock
    (tmp_path / "relocked.json").write_text(json.dumps(data))
    assert upgrade.kept_live_run(tmp_path / "relocked.json", cell) is None
    assert load(path).cell == "adk-2.13.0"


def test_upgrade_puts_the_mitigation_proven_at_the_target_beside_every_regression_and_changed_row() -> None:
    """Issue 31: the gate listed regressions with no mitigation. Each regression or changed row ends with the
    mitigation and its `-mitigated` probe where that probe observed safe in the target's own cell, else with
    "no proven mitigation" and why; the rows that moved the other way get none."""
    done = fanin("upgrade", "google-adk==2.13.0", "--from", "1.15.1")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    first = next(at for at, line in enumerate(lines) if line.startswith("| "))
    block = itertools.takewhile(lambda line: line.startswith("|"), lines[first:])  # the diff's own table
    table = [line for line in block if line.startswith("| ")]
    assert [c.strip() for c in table[0].strip("|").split("|")] == ["change", "probe", "before", "after", "mitigation"]
    rows = {
        cells[1]: (cells[0], cells[-1]) for line in table[1:] for cells in [[c.strip() for c in line.split("|")[1:-1]]]
    }
    target = json.loads((matrix.REFERENCE_RESULTS / "adk-2.13.0.json").read_text())
    mitigations = tomllib.loads(matrix.MITIGATIONS.read_text())["probe"]
    proven = 0
    for probe, (word, said) in rows.items():
        if word not in ("regression", "changed"):
            assert said == "—", probe
            continue
        entry = mitigations.get(probe.split("[", 1)[0])
        observed = entry and target["observations"].get(entry["probe"])
        if observed and observed["hazard"] == "safe":
            assert said == f"{entry['text']} (proven: {entry['probe']} safe at 2.13.0)", probe
            proven += 1
        else:
            assert said.startswith("no proven mitigation ("), probe
    assert proven >= 1  # adk/escalate/direct-child: its -mitigated probe is safe at 2.13.0


def test_upgrade_to_an_older_version_says_it_is_a_downgrade() -> None:
    """Issue 21: `upgrade` to a version older than `--from` runs, and says first that it is a downgrade."""
    recorded = {pypi.INDEX_VARIABLE: (REPO_ROOT / "tests" / "data" / "pypi").as_uri()}  # PyPI's answer, recorded
    done = fanin("upgrade", "google-adk==1.15.1", "--from", "2.13.0", env=recorded)
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.splitlines()[0] == (
        "fanin: google-adk 1.15.1 is older than 2.13.0: this is a downgrade;"
        " the table reads from the version you run to the one you asked for"
    )
    assert fanin("upgrade", "google-adk==2.13.0", "--from", "1.15.1", env=recorded).stdout.count("downgrade") == 0


def test_upgrade_on_a_python_twin_compares_the_twin_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23: a team on Python 3.10 checks its upgrade against the 3.10 twins, not the 3.11 cells."""
    recorded = {pypi.INDEX_VARIABLE: (REPO_ROOT / "tests" / "data" / "pypi").as_uri()}
    monkeypatch.setenv(pypi.INDEX_VARIABLE, recorded[pypi.INDEX_VARIABLE])  # PyPI's answer, recorded
    done = fanin("upgrade", "google-adk==2.0.0", "--from", "1.15.1", "--python", "3.10", env=recorded)
    assert done.returncode in (0, 1), done.stderr
    header = next(line for line in done.stdout.splitlines() if line.startswith("adk-1.15.1-py3.10 ("))
    assert header.startswith(
        "adk-1.15.1-py3.10 (1.15.1, reference) -> adk-2.0.0-py3.10 (2.0.0, reference; live threads"
    )
    real = matrix.load()
    newest_twin = [c for c in real.of("adk") if c.python == "3.10"][-1]
    plan = upgrade.plan(["google-adk==1.15.1", "--python", "3.10"], real)  # no --from: the newest 3.10 twin
    assert (plan.base.cell.id, plan.target.cell.id) == (newest_twin.id, "adk-1.15.1-py3.10")


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
    # The cell's venv has every companion: nothing is set aside for a package. Only the live-thread probes are not
    # covered (they resume a store an earlier release wrote; one environment has no earlier release): no regression.
    assert re.search(
        rf"^\| langgraph +\| {re.escape(cell.version)} +\| {cell.id} \(same version and Python\) +\| "
        r"same behaviour as the reference in all \d+ observations covered here; 2 not covered here \(a module or an"
        r" earlier release needed, see above\) +\|$",
        done.stdout,
        flags=re.MULTILINE,
    ), done.stdout
    live = {"langgraph/upgrade/live-thread", "langgraph/upgrade/live-thread[postgres]"}
    lacking = set(re.findall(r"^(\S+): not covered here: resumes a store an earlier release wrote", done.stdout, re.M))
    assert lacking == live, done.stdout
    assert f"--from {cell.version}` runs them" in done.stdout, done.stdout
    assert "packages missing" not in done.stdout and "from another package" not in done.stdout, done.stdout
    assert (run_dir_of(done.stdout, tmp_path / "here") / f"{cell.id}.json").exists()


# --- probe --here judges the framework, not the venv ---------------------------------------------------------

FW = MATRIX.frameworks["langgraph"]


def _seen(outcome: str = "ok", hazard: str = "safe", value: object = None, detail: str = "as seen") -> Observation:
    return Observation(
        outcome=outcome, value=value if value is not None else {}, label="seen", detail=detail, hazard=hazard
    )


def _here(observations: dict[str, Observation], not_installed: dict[str, list[str]]) -> ResultSet:
    environment = {"packages": {"langgraph": "1.2.24", "pytest": "9"}, "not_installed": not_installed}
    return ResultSet("langgraph-1.2.24", "langgraph", "1.2.24", environment, {}, observations)


REFERENCE = ResultSet(
    "langgraph-1.2.24",
    "langgraph",
    "1.2.24",
    {},
    {},
    {
        "langgraph/resume/x[sqlite]": _seen(value={"ran": ["a", "b"]}),
        "langgraph/resume/x[postgres]": _seen(value={"ran": ["a", "b"]}),
        "langgraph/same-key/y": _seen(value={"final": "A"}),
    },
)
NO_MODULE = _seen(
    "n/a", "n/a", {"reason": "no module langgraph.checkpoint.sqlite in this version (ModuleNotFoundError)"}
)


def test_an_observation_a_missing_companion_stopped_is_not_covered_here_with_one_install_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    here_run = _here(
        {
            "langgraph/resume/x[sqlite]": NO_MODULE,
            "langgraph/resume/x[postgres]": _seen("n/a", "n/a", {"reason": "no module langgraph.checkpoint.postgres"}),
            "langgraph/same-key/y": _seen(value={"final": "A"}),
        },
        {
            "langgraph/resume/x[sqlite]": ["langgraph-checkpoint-sqlite"],
            "langgraph/resume/x[postgres]": ["langgraph-checkpoint-postgres"],
        },
    )
    code, verdict = here._compare(FW, REFERENCE, here_run)
    out = capsys.readouterr().out
    assert code == 0, out
    assert (
        verdict
        == "same behaviour as the reference in all 1 observations covered here; 2 not covered here (packages missing, see above)"
    )
    assert "regression" not in out
    hints = [line for line in out.splitlines() if "pip install" in line]
    assert len(hints) == 1  # one line for all, not one per probe
    assert hints[0].endswith(
        'to cover them too: pip install langgraph-checkpoint-sqlite langgraph-checkpoint-postgres "psycopg[binary]" aiosqlite'
    )
    assert (
        "2 of 3 observations not covered here: they need langgraph-checkpoint-postgres, langgraph-checkpoint-sqlite"
        in hints[0]
    )


def test_n_a_without_a_missing_companion_is_the_framework_and_still_a_regression(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same n/a, but the plugin saw no registered companion missing: the framework lacks the API."""
    here_run = _here(
        {
            "langgraph/resume/x[sqlite]": NO_MODULE,
            "langgraph/resume/x[postgres]": REFERENCE.observations["langgraph/resume/x[postgres]"],
            "langgraph/same-key/y": _seen(value={"final": "A"}),
        },
        {},
    )
    code, verdict = here._compare(FW, REFERENCE, here_run)
    out = capsys.readouterr().out
    assert code == 1 and verdict == "1 regression in 3 observations covered here", out
    assert "not covered" not in out


def test_a_missing_companion_does_not_hide_a_probe_that_ran_to_another_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Set aside only what did not run (n/a, an error): an `ok` with another value is the framework's change,
    and is shown in full, however long."""
    long_value = "B" * 300
    here_run = _here(
        {
            "langgraph/resume/x[sqlite]": REFERENCE.observations["langgraph/resume/x[sqlite]"],
            "langgraph/resume/x[postgres]": REFERENCE.observations["langgraph/resume/x[postgres]"],
            "langgraph/same-key/y": _seen(
                value={"final": long_value}, hazard="silent", detail=f"last write wins: {long_value}"
            ),
        },
        {"langgraph/same-key/y": ["aiosqlite"]},
    )
    code, verdict = here._compare(FW, REFERENCE, here_run)
    out = capsys.readouterr().out
    assert code == 1 and verdict.startswith("1 regression"), out
    assert f'after:  "{long_value}"' in out and f"after:  last write wins: {long_value}" in out


def test_the_plugin_names_a_failed_import_by_its_companion_only_when_that_companion_is_not_installed() -> None:
    from fanin.run import companions

    registered = {
        companions.canonical_name(c): c for c in ("langgraph-checkpoint-postgres", "psycopg[binary]", "packaging")
    }
    modules = ["langgraph.checkpoint.postgres.aio", "psycopg", "packaging.nope", "orjson", "langgraph.nope"]
    # packaging is installed here: its failed submodule is not an environment gap
    assert companions.missing(modules, registered) == ["langgraph-checkpoint-postgres", "psycopg[binary]"]
    finder = companions.FailedImports()
    sys.meta_path.append(finder)
    try:
        assert importlib.util.find_spec("fanin_no_such_module") is None
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("fanin_no_such_module.sub")
    finally:
        sys.meta_path.remove(finder)
    assert finder.names == ["fanin_no_such_module", "fanin_no_such_module"]


def run_dir_of(out: str, base: Path) -> Path:
    """The run's own directory, as its last line names it: a new one directly below `base`."""
    found = re.findall(r"^fanin: result set and log of this run in (.+)/ \(--out DIR", out, flags=re.MULTILINE)
    assert len(found) == 1, out
    where = Path(found[0])
    assert where.parent == base and where.is_dir(), (where, base)
    return where


def test_probe_here_writes_nothing_into_the_project_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(here, "INSTALLED", True)
    monkeypatch.delenv("FANIN_REPORTS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "platform", "linux")
    assert here.output_dir(None) == tmp_path / "cache" / "fanin" / "here"
    assert here.output_dir(tmp_path / "mine") == tmp_path / "mine"


# --- probe --here in a venv set up the way a user's is -----------------------------------------------------------

USER_ENVS = REPO_ROOT / ".fanin" / "user-env"


def user_like_venv(cell: matrix.Cell) -> Path:
    """A venv as a plain app has it: `pip install <framework>==<version> pytest pytest-timeout`, then fanin
    from this checkout as the README says; no companion (checkpointer, driver) of the reference cell.

    Resolved with the cell's `exclude_newer`, so a later release of a dependency cannot change what the test
    sees (it is also what a user installing that day got). Kept under .fanin/user-env/ and rebuilt only when
    its spec changes; fanin itself, the code under test, is reinstalled every time (a few seconds).
    """
    from fanin.run import pythons, venvs

    uv = venvs.uv_binary()
    interpreter = pythons.find(cell.python)
    if interpreter is None:
        pytest.fail(f"Python {cell.python} is not installed (pyenv or PATH)")
    venv = USER_ENVS / cell.id
    python = venv / "bin" / "python"
    wanted = [f"{cell.framework.package}=={cell.version}", "pytest", "pytest-timeout"]
    spec = " ".join([interpreter, cell.exclude_newer, *wanted])
    stamp = venv / "fanin-user-env.txt"
    if not python.exists() or not stamp.exists() or stamp.read_text(encoding="utf-8") != spec:
        subprocess.run([uv, "venv", "-q", "--clear", "--python", interpreter, str(venv)], check=True, timeout=300)
        subprocess.run(
            [uv, "pip", "install", "-q", "--python", str(python), "--exclude-newer", cell.exclude_newer, *wanted],
            check=True,
            timeout=600,
        )
        stamp.write_text(spec, encoding="utf-8")
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), "--reinstall-package", "fanin", str(REPO_ROOT)],
        check=True,
        timeout=600,
    )
    return venv


@pytest.mark.timeout(1200)
def test_probe_here_in_a_plain_app_environment_at_a_reference_version_exits_0(tmp_path: Path) -> None:
    """The six real apps' case: the framework at a reference version, no checkpointer companions. Every observation
    that needed one is "not covered here" with one install hint, the rest is the reference: exit 0, and nothing is
    written into the project directory (the cwd)."""
    cell = MATRIX.newest("langgraph")
    venv = user_like_venv(cell)
    project, cache = tmp_path / "app", tmp_path / "cache"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FANIN_", "VIRTUAL_ENV", "PYTHON"))}
    done = subprocess.run(
        [str(venv / "bin" / "fanin"), "probe", "--here"],
        cwd=project,
        capture_output=True,
        text=True,
        env={**env, "XDG_CACHE_HOME": str(cache), "PATH": f"{venv / 'bin'}:{env.get('PATH', '')}"},
        timeout=900,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert f"comparing with {cell.id}: the reference cell of this very version and Python" in out
    hint = 'to cover them too: pip install langgraph-checkpoint-sqlite langgraph-checkpoint-postgres "psycopg[binary]" aiosqlite'
    assert [line for line in out.splitlines() if "pip install" in line] == [
        next(line for line in out.splitlines() if line.endswith(hint))
    ]
    assert re.search(
        rf"^\| langgraph +\| {re.escape(cell.version)} +\| {cell.id} \(same version and Python\) +\| "
        r"same behaviour as the reference in all \d+ observations covered here; \d+ not covered here",
        out,
        flags=re.MULTILINE,
    ), out
    assert "regression" not in out and "noxw" not in out
    assert list(project.iterdir()) == []  # nothing in the project directory
    results = run_dir_of(out, cache / "fanin" / "here") / f"{cell.id}.json"
    data = json.loads(results.read_text(encoding="utf-8"))
    gaps = data["environment"]["not_installed"]
    # Only backend variants, never a probe's default, unless the probe is about persistence itself
    # (every backend it declares needs a store: a process killed and restarted, two processes, one thread).
    from fanin.model import catalog, scenarios

    store_only = {pid for pid, _, values in catalog.backends() if "memory" not in values}
    # and a scenario whose runs share a database by definition (`together`: two store objects on one file)
    store_only |= {
        f"{cell.framework.key}/scenario/{sid}"
        for sid, found in scenarios.catalogue().items()
        if found.data.get(scenarios.TOGETHER)
    }
    assert gaps and all("[" in oid or oid in store_only for oid in gaps), sorted(gaps)
    assert {c for names in gaps.values() for c in names} <= set(FW.companions)
    assert "noxw" not in results.with_suffix(".log").read_text(encoding="utf-8")  # no advice a pip user cannot follow


def test_probe_here_with_a_python_that_does_not_exist_says_so() -> None:
    done = fanin("probe", "--here", "--python", "/nonexistent/python")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "fanin: error: --python /nonexistent/python: no such interpreter (give the path of the environment's python)"
    )


def test_out_and_python_go_with_here_only() -> None:
    done = fanin("probe", "langgraph-1.2.24", "--out", "somewhere")
    assert done.returncode == 2 and "--out and --python go with --here" in done.stderr, done.stderr


# --- probe --here judges the version it runs -----------------------------------------------------------------------


def here_env(venv: Path, cache: Path, **extra: str) -> dict[str, str]:
    """A user's variables (none of fanin's, no PYTHONPATH), the venv first on PATH, its cache, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FANIN_", "VIRTUAL_ENV", "PYTHON"))}
    return {**env, "XDG_CACHE_HOME": str(cache), "PATH": f"{venv / 'bin'}:{env.get('PATH', '')}", **extra}


def here_in(venv: Path, cwd: Path, cache: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """`fanin probe --here` as a user runs it: the venv's own fanin, from their project, their variables plus `extra`."""
    return subprocess.run(
        [str(venv / "bin" / "fanin"), "probe", "--here"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=here_env(venv, cache, **extra),
        timeout=900,
    )


@pytest.mark.timeout(1200)
def test_probe_here_detects_and_runs_the_version_pythonpath_puts_first(tmp_path: Path) -> None:
    """A PYTHONPATH tree of an older release in front of the venv's newer one: detection and the probe run see the
    same environment, so the older release is both what is compared and what runs (it ran the venv's before)."""
    from fanin.model.results import load
    from fanin.run import venvs

    older, newer = [c for c in MATRIX.of("pydantic_graph") if c.python == MATRIX.default_python][-2:]
    assert compare_cells(older, newer)  # the two references differ, so running the wrong one shows
    venv = user_like_venv(newer)
    tree = tmp_path / "tree"
    uv = [venvs.uv_binary(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "--no-deps"]
    wanted = f"{older.framework.package}=={older.version}"
    subprocess.run(
        [*uv, "--exclude-newer", older.exclude_newer, "--target", str(tree), wanted],
        check=True,
        timeout=600,
    )
    project = tmp_path / "app"
    project.mkdir()
    done = here_in(venv, project, tmp_path / "cache", PYTHONPATH=str(tree))
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    package = older.framework.package
    assert (
        f"{package} {older.version} installed here; comparing with {older.id}: the reference cell of this very" in out
    )
    results = run_dir_of(out, tmp_path / "cache" / "fanin" / "here") / f"{older.id}.json"
    ran = load(results)
    assert (ran.version, ran.environment["packages"][package]) == (older.version, older.version)


def compare_cells(a: matrix.Cell, b: matrix.Cell) -> list[object]:
    from fanin.model import compare
    from fanin.model.results import load

    return [c for c in compare.diff(load(a.reference_path), load(b.reference_path)) if c.gates]


def _wheel_like(site: Path, name: str, version: str, text: str = "VALUE = 1\n") -> Path:
    """A distribution as a wheel installs it: the package, its METADATA and a RECORD with each file's SHA-256."""
    import base64
    import hashlib

    package = site / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(text, encoding="utf-8")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    (info / "RECORD").write_text(
        f"{name}/__init__.py,sha256={digest},{len(text)}\n{info.name}/RECORD,,\n", encoding="utf-8"
    )
    return package / "__init__.py"


def test_detection_names_an_editable_or_patched_install_and_never_as_the_release(tmp_path: Path) -> None:
    """What a --here run will import, asked of its interpreter with its PYTHONPATH: a release; an editable install
    (clean, or with uncommitted changes in its git work tree); a wheel patched in place (a file differs from its
    RECORD hash); a source tree without metadata in front of the installed package (shadowed)."""
    site, shadow, source = tmp_path / "site", tmp_path / "shadow", tmp_path / "src"
    _wheel_like(site, "fanin_clean", "1.0")
    _wheel_like(site, "fanin_patched", "2.0").write_text("VALUE = 2\n", encoding="utf-8")
    _wheel_like(site, "fanin_shadowed", "3.0")
    (shadow / "fanin_shadowed").mkdir(parents=True)
    (shadow / "fanin_shadowed" / "__init__.py").write_text("VALUE = 3\n", encoding="utf-8")
    for name, version in (("fanin_editable", "4.0"), ("fanin_edited", "5.0")):
        folder = source / name
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text("VALUE = 4\n", encoding="utf-8")
        git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.org"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "release"], check=True)
        info = site / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
        direct = {"url": folder.as_uri(), "dir_info": {"editable": True}}
        (info / "direct_url.json").write_text(json.dumps(direct), encoding="utf-8")
    (source / "fanin_edited" / "fanin_edited" / "__init__.py").write_text("VALUE = 5\n", encoding="utf-8")
    paths = [shadow, site, source / "fanin_editable", source / "fanin_edited"]
    env = {"PYTHONPATH": os.pathsep.join(map(str, paths))}
    names = ("fanin_clean", "fanin_patched", "fanin_shadowed", "fanin_editable", "fanin_edited", "fanin_absent")
    python, found = here._environment(sys.executable, {name: name for name in names}, env)
    assert python == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert {name: (seen["version"], seen["origin"]) for name, seen in found.items()} == {
        "fanin_clean": ("1.0", "release"),
        "fanin_patched": ("2.0", "modified"),
        "fanin_shadowed": ("3.0", "shadowed"),
        "fanin_editable": ("4.0", "editable"),
        "fanin_edited": ("5.0", "editable, modified"),
    }
    assert found["fanin_patched"]["where"].endswith("e.g. fanin_patched/__init__.py")
    assert str(shadow / "fanin_shadowed" / "__init__.py") in found["fanin_shadowed"]["where"]
    assert found["fanin_edited"]["where"] == str(source / "fanin_edited")
    framework = MATRIX.frameworks["pydantic_graph"]
    seen = here.Found(framework, "5.0", MATRIX.newest("pydantic_graph"), "", "editable, modified", "")
    assert seen.installed == "5.0 (editable, modified)"  # the closing table's "installed here"


# --- probe --here exits 1 only for a behaviour the installed version shows and its reference does not ----------------


def test_a_sub_case_n_a_in_the_reference_that_runs_now_is_new_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    """A mitigation's variant the reference's version could not build (`{"n/a": reason}`), observed now: new coverage,
    never "changed"; the same variant gone is a regression; any other difference beside it is still a change."""
    from fanin.model import compare

    before = {"variants": {"merge": {"hazard": "safe"}, "node_timeout": {"n/a": "add_node has no parameter timeout"}}}
    after = {"variants": {"merge": {"hazard": "safe"}, "node_timeout": {"hazard": "loud", "runs": {"a": {}}}}}
    appeared = compare.classify("x/y/z", _seen(value=before), _seen(value=after))
    assert (appeared.label, appeared.gates) == ("new coverage", False)
    assert compare.classify("x/y/z", _seen(value=after), _seen(value=before)).label == "regression"
    moved = {"variants": {**after["variants"], "merge": {"hazard": "silent"}}}
    assert compare.classify("x/y/z", _seen(value=before), _seen(value=moved)).label == "changed"
    text = {"node_timeout": "n/a: StateGraph.add_node has no parameter 'timeout' in this version"}
    assert compare.classify("x/y/z", _seen(value=text), _seen(value={"node_timeout": {"final": 1}})).gates is False
    reference = ResultSet("langgraph-1.2.24", "langgraph", "1.2.24", {}, {}, {"x/y/z": _seen(value=before)})
    code, verdict = here._compare(FW, reference, _here({"x/y/z": _seen(value=after)}, {}))
    assert (code, verdict) == (0, "no regression in 1 observations covered here (1 new coverage)")


def test_a_module_this_environment_lacks_is_not_covered_here_with_its_name(capsys: pytest.CaptureFixture[str]) -> None:
    """A transitive package the app does not have (greenlet): the probe's ModuleNotFoundError is recorded with the
    module, and the difference is "not covered here", with the reason, never `[safe] -> probe-error` as a regression."""
    from fanin.run import recorder

    try:
        try:
            importlib.import_module("fanin_no_such_transitive_module")
        except ModuleNotFoundError as exc:
            raise RuntimeError("the framework's engine could not start") from exc
    except RuntimeError as exc:
        broken = recorder.probe_error(f"RuntimeError: {exc}", exc)
    assert broken.value["missing_module"] == "fanin_no_such_transitive_module"
    try:
        importlib.import_module("fanin.no_such_submodule")  # fanin is installed: the framework's own gap, not ours
    except ModuleNotFoundError as exc:
        assert "missing_module" not in recorder.probe_error(str(exc), exc).value
    here_run = _here({**REFERENCE.observations, "langgraph/same-key/y": broken}, {})
    code, verdict = here._compare(FW, REFERENCE, here_run)
    out = capsys.readouterr().out
    assert code == 0, out
    assert verdict == (
        "same behaviour as the reference in all 2 observations covered here;"
        " 1 not covered here (a module or an earlier release needed, see above)"
    )
    assert "langgraph/same-key/y: not covered here: needs the module fanin_no_such_transitive_module" in out
    assert "a module this environment does not have (fanin_no_such_transitive_module); not a regression" in out


def test_a_timeout_where_the_reference_did_not_hang_could_not_be_judged(capsys: pytest.CaptureFixture[str]) -> None:
    """A loaded machine: the probe's bound fired here, the reference ended safe. "could not judge: timed out", exit 0."""
    timed_out = _seen("timeout", "loud", {"timeout_seconds": 60}, "no result within 60 s (hang)")
    here_run = _here({**REFERENCE.observations, "langgraph/same-key/y": timed_out}, {})
    code, verdict = here._compare(FW, REFERENCE, here_run)
    out = capsys.readouterr().out
    assert code == 0, out
    assert verdict == "no regression in 3 observations covered here (1 could not judge)"
    assert "langgraph/same-key/y: could not judge: timed out here after 60 s (the reference did not hang;" in out


def test_between_two_cells_what_the_newer_cell_shows_is_as_the_newer_reference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A version between two cells: a difference from the older cell that the newer one shows too is expected; one
    that neither shows is still the installed version's own, and gates."""
    newer_value = {"final": "B"}
    newer = ResultSet(
        "langgraph-1.2.30", "langgraph", "1.2.30", {}, {}, {"langgraph/same-key/y": _seen(value=newer_value)}
    )
    here_run = _here({**REFERENCE.observations, "langgraph/same-key/y": _seen(value=newer_value)}, {})
    code, verdict = here._compare(FW, REFERENCE, here_run, newer)
    out = capsys.readouterr().out
    assert (code, verdict) == (0, "no regression in 3 observations covered here (1 as the newer reference)"), out
    assert "langgraph-1.2.24 (reference; langgraph-1.2.30, the newer neighbour) -> langgraph 1.2.24 installed" in out
    own = _here({**REFERENCE.observations, "langgraph/same-key/y": _seen(value={"final": "C"})}, {})
    assert here._compare(FW, REFERENCE, own, newer) == (1, "1 changed in 3 observations covered here")


@pytest.mark.timeout(1200)
def test_probe_here_between_two_cells_exits_0_where_the_newer_cell_shows_the_change(tmp_path: Path) -> None:
    """pydantic-graph 2.62.0, between the 2.30.0 and 2.68.0 cells: its fold-order/start-order is 2.68.0's (bisect
    pinned the change to 2.62.0), so it is as the newer reference, not a change since 2.30.0 (it exited 1)."""
    older, newer = [c for c in MATRIX.of("pydantic_graph") if c.python == MATRIX.default_python][-2:]
    assert [c.probe_id for c in compare_cells(older, newer)] == ["pydantic_graph/fold-order/start-order"]
    between = MATRIX.make_cell(newer.framework, "2.62.0", newer.python, "as-released", newer.exclude_newer)
    venv = user_like_venv(between)
    project = tmp_path / "app"
    project.mkdir()
    done = here_in(venv, project, tmp_path / "cache")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert f"comparing with {older.id}: no reference cell for 2.62.0; the nearest older one, and {newer.id}" in out
    assert re.search(r"^\| as the newer reference +\| pydantic_graph/fold-order/start-order ", out, re.MULTILINE), out
    assert re.search(
        rf"^\| pydantic-graph +\| 2\.62\.0 +\| {older.id} and {newer.id} \(between two versions\) +\| no regression",
        out,
        flags=re.MULTILINE,
    ), out


# probe --here's pytest, held inside its run until the test opens the gate (a FIFO: opening it to read waits for a
# writer, reading it ends when the writer closes it).
GATE_PLUGIN = """
import os


def pytest_collection_finish(session):
    with open(os.environ["HERE_TEST_GATE"], encoding="utf-8") as gate:
        gate.read()
"""
# An interpreter that is the venv's, except that its pytest loads the gate.
HELD_PYTHON = """#!/bin/sh
case " $* " in
  *" -m pytest "*) PYTHONPATH="{gates}:$PYTHONPATH" exec {python} "$@" -p here_gate ;;
esac
exec {python} "$@"
"""


@pytest.mark.timeout(1200)
def test_two_probe_here_runs_at_once_in_one_environment_each_keep_their_own_files(tmp_path: Path) -> None:
    """Run A is held inside its pytest while run B, in the same environment and cache, runs from start to end: each
    has a directory of its own, so neither clears or overwrites the other's journal, result set or log (they shared
    one, and one exited 3)."""
    cell = MATRIX.newest("pydantic_graph")
    venv = user_like_venv(cell)
    gates, project, cache = tmp_path / "gates", tmp_path / "app", tmp_path / "cache"
    gates.mkdir()
    project.mkdir()
    (gates / "here_gate.py").write_text(GATE_PLUGIN, encoding="utf-8")
    held_python = gates / "python"
    held_python.write_text(HELD_PYTHON.format(gates=gates, python=venv / "bin" / "python"), encoding="utf-8")
    held_python.chmod(0o755)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    command = [str(venv / "bin" / "fanin"), "probe", "--here", "--python", str(held_python)]
    env = here_env(venv, cache, HERE_TEST_GATE=str(gate))
    held = subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        with gate.open("w", encoding="utf-8"):  # returns once run A's pytest opened the gate: A is mid-run
            other = here_in(venv, project, cache)
        first, _ = held.communicate(timeout=900)
    finally:
        if held.poll() is None:
            held.kill()
            held.wait()
    assert other.returncode == 0, other.stdout + other.stderr
    assert held.returncode == 0, first
    base = cache / "fanin" / "here"
    mine, theirs = run_dir_of(first, base), run_dir_of(other.stdout, base)
    assert mine != theirs
    for where in (mine, theirs):
        assert (where / f"{cell.id}.json").is_file() and (where / f"{cell.id}.log").is_file()
    assert str(held_python) in (mine / f"{cell.id}.log").read_text(encoding="utf-8")  # each log is its own run's
    assert str(held_python) not in (theirs / f"{cell.id}.log").read_text(encoding="utf-8")


def test_a_second_run_given_the_same_out_directory_meanwhile_is_refused(tmp_path: Path) -> None:
    """--out DIR is the directory the user named: held while a run writes there, a second run at once is one line."""
    with here.run_dir(tmp_path / "mine") as where:
        assert where == tmp_path / "mine"
        with pytest.raises(here.EnvironmentFault, match="another probe --here run is writing there"):
            with here.run_dir(tmp_path / "mine"):
                pass
    with here.run_dir(tmp_path / "mine"):  # released when the first run ended
        pass


def test_the_user_cache_keeps_the_newest_runs_and_never_one_another_run_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "here"
    monkeypatch.setattr(here, "output_dir", lambda out: base)
    runs = [base / f"2026010{day}T000000Z-run{n}" for day in range(1, 4) for n in range(5)]  # 15, oldest first
    for run in runs:
        run.mkdir(parents=True)
        (run / "langgraph-1.2.24.json").write_text("{}", encoding="utf-8")
    (base / "langgraph-1.2.24.json").write_text("{}", encoding="utf-8")  # not a run directory: never touched
    with here.run_dir(runs[0]):  # the oldest, held by a run that is still writing there
        with here.run_dir(None) as mine:
            assert mine.parent == base and here.RUN_NAME.match(mine.name)
            with pytest.raises(here.EnvironmentFault):
                with here.run_dir(mine):  # held while this run writes
                    pass
    kept = sorted(p.name for p in base.iterdir())
    assert kept == sorted(
        [runs[0].name, *(r.name for r in runs[-(here.KEEP_RUNS - 1) :]), mine.name, "langgraph-1.2.24.json"]
    )


def test_probe_here_puts_the_mitigation_proven_in_this_environment_beside_a_regression(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The gate's table in probe --here, as in upgrade: a regression's mitigation is proven by the `-mitigated` probe's
    observation in the user's own run (the version installed here), never by the reference's."""
    hazard, mitigated = "langgraph/same-key/no-reducer", "langgraph/same-key/no-reducer-mitigated"
    reference = ResultSet("langgraph-1.2.24", "langgraph", "1.2.24", {}, {}, {hazard: _seen(hazard="loud")})
    here_run = _here({hazard: _seen(hazard="silent"), mitigated: _seen(hazard="safe")}, {})
    code, _ = here._compare(FW, reference, here_run)
    out = capsys.readouterr().out
    assert code == 1
    (row,) = [line for line in out.splitlines() if line.startswith("| regression")]
    assert row.rstrip(" |").endswith(f"(proven: {mitigated} safe at 1.2.24)")
    unproven = _here({hazard: _seen(hazard="silent"), mitigated: _seen(hazard="silent")}, {})
    here._compare(FW, reference, unproven)
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| regression")]
    assert f"no proven mitigation ({mitigated} observes silent at 1.2.24)" in row
