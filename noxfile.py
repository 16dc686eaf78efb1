"""fanin's sessions: thin wiring generated from reference/matrix.toml; the logic lives in fanin/.

    ./noxw                                  every cell (in parallel), then the report (the main job)
    ./noxw -s tests                         harness tests, then every cell against the reference
    ./noxw -s selftest                      the harness tests alone
    ./noxw -s "probe(langgraph-1.2.18)"     one cell;  -t smoke / -t langgraph / -t adk for groups
    ./noxw -s upgrade -- langgraph==1.2.20  a version outside the matrix, diffed with the newest reference
    ./noxw -s diff -- BASE NEW              two result sets (cell id = its reference, or a .json path)
    ./noxw -s bless -- [CELL ...]           promote reviewed local results into reference/
    ./noxw -s lock -- [CELL ...]            re-resolve cell locks with uv
    ./noxw -s bisect -- FRAMEWORK PROBE GOOD BAD   first release where a probe's observation changed
    ./noxw -t repeat -- 20                  every cell 20 times (hash seeds 0..19), then the stability table
    ./noxw -s bench                         benchmarks/RESULTS.md
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from fanin import bisect as fanin_bisect  # noqa: E402
from fanin import catalog, environment, failures, locking, parallel, pythons  # noqa: E402
from fanin import matrix as fanin_matrix  # noqa: E402
from fanin import services as fanin_services  # noqa: E402
from fanin import upgrade as fanin_upgrade  # noqa: E402
from fanin.errors import FaninError  # noqa: E402
from fanin.model import load  # noqa: E402

try:
    MATRIX = fanin_matrix.load()
except FaninError as exc:
    sys.stderr.write(f"fanin: error: {exc}\n")
    raise SystemExit(2) from None

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["matrix", "report"]

HARNESS_PYTHON = pythons.find(MATRIX.default_python) or MATRIX.default_python
SMOKE = MATRIX.smoke()
ENV = {"PYTHONPATH": str(ROOT), "FANIN_SUITE_COMMIT": environment.suite_commit()}
# Framework packages ship pytest plugins (langsmith, anyio); a probe run loads only fanin's
# (suites/pytest.ini) and pytest-timeout (named below).
PROBE_ENV = {**ENV, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
REQUIREMENTS = ROOT / "requirements"


def install_lock(session: nox.Session, lock: Path) -> None:
    """Make the venv exactly the lock; skip even the check when the venv was built from this very lock."""
    if not lock.exists():
        session.error(f"no lock {lock.relative_to(ROOT)}; make it with ./noxw -s lock -- {lock.stem}")
    stamp = Path(session.virtualenv.location) / ".fanin-lock-sha256"
    wanted = environment.file_sha256(lock)
    if stamp.exists() and stamp.read_text() == wanted:
        return
    if session.venv_backend == "uv":
        python = str(Path(session.virtualenv.location) / "bin" / "python")
        session.run_install("uv", "pip", "sync", "--quiet", "--compile-bytecode", "--python", python, str(lock), external=True)
    else:
        session.install("--no-deps", "-r", str(lock))
    stamp.write_text(wanted)


def run_probes(session: nox.Session, cell: fanin_matrix.Cell, lock: Path, reference: Path, results: Path,
               extra: list[str], success_codes: list[int] | None = None, target: str | None = None,
               env: dict[str, str] | None = None) -> None:
    with contextlib.ExitStack() as stack:
        try:
            service_env = stack.enter_context(fanin_services.for_cell(cell.framework.key, target))
        except FaninError as exc:
            session.error(str(exc))
        _pytest(session, cell, lock, results, reference, extra, success_codes, target, {**service_env, **(env or {})})


def _pytest(session: nox.Session, cell: fanin_matrix.Cell, lock: Path, results: Path, reference: Path,
            extra: list[str], success_codes: list[int] | None, target: str | None, env: dict[str, str]) -> None:
    session.run(
        "python", "-m", "pytest", "-p", "pytest_timeout",
        "-c", str(ROOT / "suites" / "pytest.ini"), "--rootdir", str(ROOT / "suites"),
        target or str(ROOT / "suites" / cell.framework.key),
        "--fanin-cell", cell.id, "--fanin-framework", cell.framework.key,
        "--fanin-results", str(results), "--fanin-reference", str(reference), "--fanin-lock", str(lock),
        f"--junitxml={fanin_matrix.REPORTS / 'junit' / (cell.id + '.xml')}",
        *extra,
        env={**PROBE_ENV, **env}, success_codes=success_codes or [0],
    )


def harness(session: nox.Session, requirements: str = "harness.txt") -> None:
    session.install("-r", str(REQUIREMENTS / requirements))


def fanin_cli(session: nox.Session, *args: str) -> None:
    """`python -m fanin ...` in a venv with the harness's few dependencies (no framework)."""
    harness(session)
    session.run("python", "-m", "fanin", *args, env=ENV)


CELL_PARAMS = [
    nox.param(
        pythons.find(cell.python) or cell.python,
        cell,
        id=cell.id,
        tags=[cell.framework.key, *(["smoke"] if cell.id in SMOKE else [])],
    )
    for cell in MATRIX.cells
]


@nox.session
@nox.parametrize(("python", "cell"), CELL_PARAMS)
def probe(session: nox.Session, cell: fanin_matrix.Cell) -> None:
    """Run one cell's probes against its reference; writes reports/results/<cell>.json."""
    failures.clear(cell.results_path)
    step = "install"
    try:
        install_lock(session, cell.lock_path)
        step = "probe run"
        run_probes(session, cell, cell.lock_path, cell.reference_path, cell.results_path, session.posargs)
    except BaseException as exc:
        if not cell.results_path.exists():  # behaviour changes (pytest exit 1) still wrote their results
            code = getattr(exc, "return_code", None)
            failures.record(cell.results_path, f"{step} failed" + (f" (exit {code})" if code is not None else f": {exc}"))
        raise


@nox.session(venv_backend="none")
def matrix(session: nox.Session) -> None:
    """Every probe session side by side, one per core (FANIN_JOBS to change); logs in reports/logs/."""
    jobs = int(os.environ.get("FANIN_JOBS") or os.cpu_count() or 1)
    # Slowest first (ADK 1.x imports take longest), so the last cell to start is a quick one.
    order = sorted(MATRIX.cells, key=lambda c: (c.framework.key != "adk", c.sort_key))
    outcomes = parallel.run_all(ROOT / "noxfile.py", [f"probe({c.id})" for c in order], session.posargs,
                                fanin_matrix.REPORTS / "logs", jobs)
    failed = [o.session for o in outcomes if o.returncode]
    if failed:
        session.error(f"{len(failed)} of {len(outcomes)} cells failed: {', '.join(failed)} (logs in reports/logs/)")


@nox.session
@nox.parametrize(("python", "cell"), [nox.param(p.args[0], p.args[1], id=p.id, tags=["repeat"]) for p in CELL_PARAMS])
def repeat(session: nox.Session, cell: fanin_matrix.Cell) -> None:
    """Run a cell N times (default 5; `-- 20`), as separate processes with different hash seeds."""
    try:
        runs = int(session.posargs[0]) if session.posargs else 5
    except ValueError:
        session.error(f"repeat takes the number of runs, e.g. -- 20; got {session.posargs[0]!r}")
    if runs < 2:
        session.error(f"repeat needs at least 2 runs to compare, got {runs}")
    install_lock(session, cell.lock_path)
    work = fanin_matrix.REPORTS / "repeat" / cell.id
    for stale in work.glob("*.json"):
        stale.unlink()
    for seed in range(runs):
        run_probes(session, cell, cell.lock_path, cell.reference_path, work / f"run-{seed:03d}.json",
                   ["-q", "--fanin-accept-new"], success_codes=[0, 1], env={"PYTHONHASHSEED": str(seed)})
    session.notify("stability", posargs=[])  # one check over every repeated cell (not the run count)


@nox.session(python=HARNESS_PYTHON)
def stability(session: nox.Session) -> None:
    """Compare the repeated runs of cells (directories under reports/repeat/); exit 1 if a probe is flaky."""
    targets = session.posargs or [str(p) for p in sorted((fanin_matrix.REPORTS / "repeat").glob("*")) if p.is_dir()]
    if not targets:
        session.error("no repeated runs in reports/repeat/; run ./noxw -s repeat -- N first")
    fanin_cli(session, "stability", *targets)


@nox.session(python=HARNESS_PYTHON)
def report(session: nox.Session) -> None:
    """Render reference/REPORT.md + CHECKLIST.md + reports/matrix.html, and reports/run/ from a local run."""
    fanin_cli(session, "report", *session.posargs)


@nox.session(python=HARNESS_PYTHON)
def diff(session: nox.Session) -> None:
    """Compare two result sets, or every local run with its reference; exit 1 on a breaking change."""
    fanin_cli(session, "diff", *session.posargs)


@nox.session(python=HARNESS_PYTHON)
def bless(session: nox.Session) -> None:
    """Promote reviewed local results into reference/results, then re-render reference/REPORT.md."""
    fanin_cli(session, "bless", *session.posargs)
    fanin_cli(session, "report")


@nox.session(python=HARNESS_PYTHON)
def lock(session: nox.Session) -> None:
    """Re-resolve cell locks (all, or the cells named) with uv, as of each cell's exclude_newer."""
    fanin_cli(session, "lock", *session.posargs)


@nox.session(python=HARNESS_PYTHON)
def upgrade(session: nox.Session) -> None:
    """Probe FRAMEWORK==VERSION (or ==latest), a version outside the matrix, and diff it with the newest reference."""
    try:
        plan = fanin_upgrade.plan(session.posargs, MATRIX)
        lock_path = fanin_matrix.REPORTS / "locks" / f"{plan.cell.id}.txt"
        locking.lock(plan.cell, MATRIX, lock_path)
    except FaninError as exc:
        session.error(str(exc))
    results = fanin_matrix.REPORTS / "upgrade" / f"{plan.cell.id}.json"
    results.unlink(missing_ok=True)
    install_lock(session, lock_path)
    run_probes(session, plan.cell, lock_path, plan.baseline.reference_path, results, [], success_codes=[0, 1])
    session.notify("diff", posargs=[plan.baseline.id, str(results)])


@nox.session(python=HARNESS_PYTHON)
def bisect(session: nox.Session) -> None:
    """FRAMEWORK PROBE-ID GOOD BAD: the first release between GOOD and BAD whose observation changed."""
    try:
        plan = fanin_bisect.plan(session.posargs, MATRIX)
    except FaninError as exc:
        session.error(str(exc))
    releases = {r.version: r for r in (plan.good, *plan.between, plan.bad)}
    declared = next(p for p in catalog.declared() if p.id == plan.probe_id)
    work = fanin_matrix.REPORTS / "bisect"

    def observe(version: str):
        cell = MATRIX.make_cell(plan.framework, version, MATRIX.default_python, "as-released", releases[version].as_released)
        lock_path = work / "locks" / f"{cell.id}.txt"
        locking.lock(cell, MATRIX, lock_path)
        install_lock(session, lock_path)
        results = work / f"{cell.id}.json"
        results.unlink(missing_ok=True)
        run_probes(session, cell, lock_path, work / "no-reference.json", results, ["--fanin-accept-new", "-q"],
                   success_codes=[0, 1], target=f"{ROOT / declared.file}::{declared.function}")
        observation = load(results).observations[plan.probe_id]
        session.log(f"{version}: {observation.outcome} [{observation.hazard}] {observation.label}")
        return observation

    try:
        first, seen = fanin_bisect.search(plan.good.version, [r.version for r in plan.between], plan.bad.version, observe)
    except FaninError as exc:
        session.error(str(exc))
    fanin_bisect.record(plan.probe_id, plan.good.version, plan.bad.version, first, seen)
    session.log(f"{plan.probe_id}: first changed in {plan.framework.package} {first} "
                f"({len(seen)} of {len(releases)} releases run); recorded in reference/bisect.json")


@nox.session(python=HARNESS_PYTHON)
def bench(session: nox.Session) -> None:
    """Measure the floor, the warm matrix, a cold cell, an upgrade and the report; writes benchmarks/RESULTS.md."""
    harness(session, "bench.txt")
    session.run("python", str(ROOT / "benchmarks" / "bench.py"), env=ENV)


@nox.session(python=HARNESS_PYTHON)
def selftest(session: nox.Session) -> None:
    """Only the harness's own tests (no framework installed): seconds, for work on fanin itself."""
    harness(session, "tests.txt")
    session.run("python", "-m", "pytest", str(ROOT / "tests"), *session.posargs, env=ENV)


@nox.session(python=HARNESS_PYTHON)
def tests(session: nox.Session) -> None:
    """The harness's own tests, then every cell must reproduce its committed reference (the CI command)."""
    session.notify("matrix", posargs=[])
    selftest(session)
