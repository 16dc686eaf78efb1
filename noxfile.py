"""fanin's sessions: thin wiring from reference/matrix.toml to `python -m fanin`; the logic lives in fanin/.

    ./noxw                                  every cell (in parallel), then the report (the main job)
    ./noxw -s tests                         lint, types, harness tests, every cell against the reference, sensitivity
    ./noxw -s selftest                      the harness tests alone
    ./noxw -s "probe(langgraph-1.2.18)"     one cell;  -t smoke / -t langgraph / -t adk for groups
    ./noxw -s upgrade -- langgraph==1.2.20  a version outside the matrix, diffed with the newest reference
    ./noxw -s diff -- BASE NEW              two result sets (cell id = its reference, or a .json path)
    ./noxw -s bless -- [CELL ...]           promote reviewed local results into reference/
    ./noxw -s lock -- [CELL ...]            re-resolve cell locks with uv
    ./noxw -s bisect -- FRAMEWORK PROBE GOOD BAD   first release where a probe's observation changed
        (… --companion PACKAGE --at VERSION: GOOD and BAD are the companion's, the framework held at VERSION)
    ./noxw -t repeat -- 20                  every cell 20 times (hash seeds 0..19), then the stability table
    ./noxw -s stability -- --runs 20        the repetition probes of each framework's newest cell, 20 runs each
    ./noxw -s sensitivity                   patched framework copies: every probe must notice its patch
    ./noxw -s bench                         benchmarks/results.json, and RESULTS.md rendered from it
    ./noxw -s browser                       the report pages in headless chromium (apt-get install -y chromium)
    ./noxw -s fresh                         as root: the set-up on a machine with no leftovers (in CI, part of tests)

Every session runs the harness from the project's own locked environment (`uv run --frozen`,
uv.lock, kept in .fanin/harness); none of them imports a framework. A session's exit code is
fanin's (0 same, 1 behaviour changed, 2 bad input, 3 could not run, 130 interrupted): `./noxw`
passes it on through FANIN_EXIT_FILE, since nox itself only says pass or fail.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
HARNESS_ENV = ROOT / ".fanin" / "harness"
INTERRUPTED = runpy.run_path(str(ROOT / "fanin" / "model" / "exits.py"))["INTERRUPTED"]  # fanin's exit 130
Lane = runpy.run_path(str(ROOT / "fanin" / "run" / "lane.py"))["Lane"]  # the tests' second lane (fanin.run.lane)
DiskWatch = runpy.run_path(str(ROOT / "fanin" / "run" / "diskwatch.py"))["DiskWatch"]  # fanin.run.diskwatch
uv_said = runpy.run_path(str(ROOT / "fanin" / "run" / "uv_said.py"))["said"]  # fanin.run.uv_said

nox.options.default_venv_backend = "none"
nox.options.sessions = ["matrix", "report"]


def _check_matrix() -> None:
    """A broken matrix file is one line before nox lists anything; fanin validates the rest when a session runs."""
    path = Path(os.environ.get("FANIN_MATRIX", ROOT / "reference" / "matrix.toml"))
    try:
        tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        sys.stderr.write(f"fanin: error: {path}: cannot be read as a matrix ({type(exc).__name__}: {exc})\n")
        raise SystemExit(2) from None


def _cells() -> list[tuple[str, str, bool]]:
    """(cell id, framework, newest of its framework) for every [[cell]], as `fanin cells --json` lists them."""
    try:
        done = subprocess.run(
            ["uv", "run", "--quiet", "--frozen", "--project", str(ROOT), "python", "-m", "fanin", "cells", "--json"],
            capture_output=True,
            text=True,
            env=_env(),
        )
    except FileNotFoundError:
        sys.stderr.write("fanin: error: uv is not on PATH: run ./noxw (it brings nox and uv), or install uv\n")
        raise SystemExit(2) from None
    if done.returncode != 0:  # fanin's own one line, or what uv said building the harness environment
        said = uv_said(done.stderr)
        sys.stderr.write(
            f"{said}\n" if said.startswith("fanin:") else f"fanin: error: cannot list cells: {said or 'no output'}\n"
        )
        raise SystemExit(2)
    import json

    return [(c["id"], c["framework"], c["smoke"]) for c in json.loads(done.stdout)]


def _env() -> dict[str, str]:
    return {**os.environ, "UV_PROJECT_ENVIRONMENT": str(HARNESS_ENV)}


def _command(*args: str, group: str | None = None, program: tuple[str, ...] = ("-m", "fanin")) -> list[str]:
    command = ["uv", "run", "--quiet", "--frozen", "--project", str(ROOT)]
    if group:
        command += ["--group", group]
    return [*command, "python", *program, *args]


def _failed(session: nox.Session, code: int) -> None:
    exit_file = os.environ.get("FANIN_EXIT_FILE")
    if exit_file:
        Path(exit_file).write_text(str(code))
    if code == INTERRUPTED:
        raise KeyboardInterrupt(f"exit {code}")
    session.error(f"exit {code}")


def fanin(
    session: nox.Session, *args: str, group: str | None = None, program: tuple[str, ...] = ("-m", "fanin")
) -> None:
    """Run the harness; a non-zero exit ends the session with fanin's own code (see the module docstring).

    An interrupted fanin (a signal reached it, exit 130) interrupts nox too, as Ctrl-C does: nox would
    otherwise go on to the next queued session (`-t repeat`, `-t smoke`: the next cell) after the signal."""
    command = _command(*args, group=group, program=program)
    shown = " ".join(command[command.index("python") :])
    session.log(shown)
    started = time.monotonic()
    code = subprocess.run(command, env=_env()).returncode
    session.log(f"{shown[:80]}: exit {code} in {time.monotonic() - started:.0f} s")
    if code:
        _failed(session, code)


_check_matrix()
CELLS = _cells()


@nox.session
@nox.parametrize("cell", [nox.param(cid, id=cid, tags=[fw, *(["smoke"] if smoke else [])]) for cid, fw, smoke in CELLS])
def probe(session: nox.Session, cell: str) -> None:
    """Run one cell's probes against its reference; writes reports/results/<cell>.json."""
    fanin(session, "probe", cell, *session.posargs)


@nox.session
def matrix(session: nox.Session) -> None:
    """Every cell side by side, one per core (FANIN_JOBS to change); logs in reports/logs/."""
    fanin(session, "probe", *session.posargs)


@nox.session
@nox.parametrize("cell", [nox.param(cid, id=cid, tags=["repeat"]) for cid, _, _ in CELLS])
def repeat(session: nox.Session, cell: str) -> None:
    """Run a cell N times (default 5; `-- 20`), as separate processes with different hash seeds."""
    fanin(session, "repeat", cell, *session.posargs)
    session.notify("stability", posargs=["--repeated"])


@nox.session
def stability(session: nox.Session) -> None:
    """Repetition probes N times per cell (`-- [--framework FW] [--cells ...] [--probe ID] [--runs 20]`), exit 1
    if a verdict varies; `-- --repeated` compares the repeated runs of cells (reports/repeat/) instead."""
    fanin(session, "stability", *session.posargs)


@nox.session
def report(session: nox.Session) -> None:
    """Render reference/REPORT.md + CHECKLIST.md + reports/matrix.html, and reports/run/ from a local run."""
    fanin(session, "report", *session.posargs)


@nox.session
def diff(session: nox.Session) -> None:
    """Compare two result sets, or every local run with its reference; exit 1 on a behaviour change."""
    fanin(session, "diff", *session.posargs)


@nox.session
def bless(session: nox.Session) -> None:
    """Promote reviewed local results into reference/results and re-render the report, all or nothing."""
    fanin(session, "bless", *session.posargs)


@nox.session
def lock(session: nox.Session) -> None:
    """Re-resolve cell locks (all, or the cells named) with uv, as of each cell's exclude_newer."""
    fanin(session, "lock", *session.posargs)


@nox.session
def watch(session: nox.Session) -> None:
    """New PyPI releases into the reference: add, probe, bless, bisect, re-render, a PR body (`-- --dry-run`)."""
    fanin(session, "watch", *session.posargs)


@nox.session(name="add-cell")
def add_cell(session: nox.Session) -> None:
    """Add FRAMEWORK==VERSION to the matrix with its as-released date (or as current, if newest) and lock it."""
    fanin(session, "add-cell", *session.posargs)


@nox.session
def cells(session: nox.Session) -> None:
    """List the cells (`-- --json` for CI job matrices)."""
    fanin(session, "cells", *session.posargs)


@nox.session
def repro(session: nox.Session) -> None:
    """PROBE_ID [--cell CELL] [--variant backend,mode] [--out FILE]: the probe as one standalone script (`uv run` it)."""
    fanin(session, "repro", *session.posargs)


@nox.session
def audit(session: nox.Session) -> None:
    """FILE.py:ATTR [--cell CELL] [--input JSON] [--json PATH]: fan-in hazards of your graph, with observed evidence."""
    fanin(session, "audit", *session.posargs)


@nox.session
def record(session: nox.Session) -> None:
    """[--python PY] [--json PATH] -- PYTEST-ARGS: run your tests, record each graph run's writes, and what they mean."""
    fanin(session, "record", *session.posargs)


@nox.session
def scenarios(session: nox.Session) -> None:
    """[--scenario ID] [--json] -- ADAPTER-COMMAND: run the shared scenarios against an adapter (docs/ADAPTERS.md)."""
    fanin(session, "scenarios", *session.posargs)


@nox.session
def probes(session: nox.Session) -> None:
    """[WORDS] [--framework F] [--topic T] [--json]: list and search the catalogue by topic."""
    fanin(session, "probes", *session.posargs)


@nox.session
def merge(session: nox.Session) -> None:
    """Gather result sets from CI shards: `-- DIR... [--out DIR]` (default out: reports/results)."""
    fanin(session, "merge", *session.posargs)


@nox.session
def upgrade(session: nox.Session) -> None:
    """Probe FRAMEWORK==VERSION (or ==latest) outside the matrix and diff it with the newest reference."""
    fanin(session, "upgrade", *session.posargs)


@nox.session
def bisect(session: nox.Session) -> None:
    """FRAMEWORK PROBE-ID GOOD BAD: the first release between GOOD and BAD whose observation changed."""
    fanin(session, "bisect", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Measure floors, the warm matrix, a cold cell, upgrades, bisect, probe --here, audit, the report, growth:
    writes benchmarks/results.json and benchmarks/RESULTS.md rendered from it."""
    fanin(session, group="bench", program=(str(ROOT / "benchmarks" / "bench.py"),))


@nox.session
def sensitivity(session: nox.Session) -> None:
    """Patch copies of cell venvs (reference/sensitivity.toml); fail unless each patch moves its probes' hazard or label."""
    fanin(session, "sensitivity", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint and format check."""
    fanin(session, "check", str(ROOT), group="lint", program=("-m", "ruff"))
    fanin(session, "format", "--check", str(ROOT), group="lint", program=("-m", "ruff"))


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy over fanin/ and the suites' shared modules, then over each Python suite in a run of its own.

    pytest imports a suite's files as top-level modules, and suites share file names (audit.py,
    test_errors.py): one mypy run cannot hold two modules of one name ([tool.mypy] in pyproject.toml).
    """
    config = ("--config-file", str(ROOT / "pyproject.toml"))
    fanin(session, *config, group="lint", program=("-m", "mypy"))
    for suite in sorted({path.parent for path in (ROOT / "suites").glob("*/*.py")}):
        fanin(session, *config, str(suite), group="lint", program=("-m", "mypy"))


@nox.session
def selftest(session: nox.Session) -> None:
    """Only the harness's own tests (no framework installed): seconds, for work on fanin itself.

    They run in pytest-xdist workers, one per core (FANIN_TEST_WORKERS: another number; 0, in pytest's own
    process), a file to a worker (a module's fixtures, such as the audited corpus, are made once). A third of
    their time in one process was waiting on the frameworks' subprocesses and on bounds: 610 s in one process,
    435 s in two, on 2 cores."""
    selection = session.posargs or [str(ROOT / "tests")]  # `-- tests/test_x.py` runs only that file
    fanin(session, *_workers(session), *selection, group="tests", program=("-m", "pytest"))


def _workers(session: nox.Session) -> tuple[str, ...]:
    chosen = os.environ.get("FANIN_TEST_WORKERS", "").strip()
    if chosen and not chosen.isdigit():
        session.error(f"FANIN_TEST_WORKERS={chosen!r} must be a whole number (0: no workers, in pytest's process)")
    count = int(chosen) if chosen else (os.cpu_count() or 1)
    return ("-n", str(count), "--dist", "loadfile") if count > 0 else ()


@nox.session
def fresh(session: nox.Session) -> None:
    """A fresh machine, proven (as root): a PostgreSQL cell, a Node cell and `probe --here` in a new clone with new
    empty HOME, TMPDIR and XDG_* directories, as root and as an unprivileged user (.ci/fresh_machine.py)."""
    fanin(session, *session.posargs, program=(str(ROOT / ".ci" / "fresh_machine.py"),))


@nox.session
def browser(session: nox.Session) -> None:
    """The report pages in headless chromium at 1440 and 390 px (needs `apt-get install -y chromium`)."""
    chromium = os.environ.get("FANIN_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        session.error(f"{chromium} is missing: apt-get install -y chromium (Debian's package; nothing is downloaded)")
    os.environ["FANIN_BROWSER"] = "1"  # tests/test_browser.py runs only when asked to
    try:
        fanin(
            session, str(ROOT / "tests" / "test_browser.py"), *session.posargs, group="tests", program=("-m", "pytest")
        )
    finally:
        os.environ.pop("FANIN_BROWSER", None)


@nox.session
def tests(session: nox.Session) -> None:
    """The CI command: lint and type gates, the harness's tests, every cell must reproduce its reference,
    and every probe named in reference/sensitivity.toml must notice its patch. The cells and the sensitivity
    check run beside the gates and tests (their output goes to reports/logs/tests-cells.log, shown at the end).
    In CI (`CI` set, or `FANIN_FRESH=1`) the set-up is then proven on a fresh machine (the `fresh` session)."""
    started = time.monotonic()
    disk = DiskWatch(ROOT).start()  # its line, at the end, tells a failure of the disk filling from one of the code
    cells = Lane(
        Path(os.environ.get("FANIN_REPORTS", ROOT / "reports")) / "logs" / "tests-cells.log",
        [
            (f"python -m fanin {' '.join(args)}", _command(*args))
            for args in (("probe", *session.posargs), ("sensitivity", *session.posargs))
        ],
        _env(),
    )
    session.log(f"every cell, then the sensitivity check, beside the tests: {cells.log}")
    cells.thread.start()
    try:
        lint(session)
        typecheck(session)
        selftest(session)
        browser(session)
    except BaseException:
        cells.stop()
        raise
    finally:
        session.log(f"gates and tests done after {time.monotonic() - started:.0f} s")
        if cells.stopped:
            session.log(disk.stop())
    cells.thread.join()
    sys.stdout.write(cells.log.read_text(encoding="utf-8", errors="replace"))
    sys.stdout.flush()
    for line in cells.lines:
        session.log(line)
    session.log(disk.stop())
    if cells.code:
        session.log(f"tests: {time.monotonic() - started:.0f} s in all")
        _failed(session, cells.code)
    if os.environ.get("CI") or os.environ.get("FANIN_FRESH"):  # CI proves the set-up on a machine with no leftovers
        fresh(session)
    session.log(f"tests: {time.monotonic() - started:.0f} s in all")
