"""Probe cells: build each venv from its lock, run its probes (fanin.run.one_cell), one line per cell.

Cells run side by side, one per core (`FANIN_JOBS`), in threads of this one process: a
cell costs its own pytest process and nothing more. Output is kept per cell in
reports/logs/<cell>.log; the line printed per cell carries pytest's real counts, read
from the cell's junit XML.
"""

from __future__ import annotations

import dataclasses
import os
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from fanin.model import exits, schema
from fanin.model.errors import FaninError
from fanin.model.matrix import REPORTS, Cell, Matrix
from fanin.model.results import ResultFileError, load
from fanin.run import environment, identity, one_cell, progress, runtimes, services, venvs


@dataclass(frozen=True)
class Options:
    accept_new: bool = False
    pytest_args: tuple[str, ...] = ()
    jobs: int = 0  # 0: FANIN_JOBS or the number of cores
    results_dir: Path | None = None  # default: reports/results
    reference_dir: Path | None = None  # default: the cell's reference; a directory holding <cell>.json otherwise
    lock: Path | None = None  # a lock outside reference/locks (upgrade and bisect cells)
    targets: tuple[str, ...] = ()  # probe files or file::function ids instead of the framework's suite
    env: dict[str, str] = field(default_factory=dict)
    quiet: bool = False
    postgres: services.Shared | None = None  # set by run_cells: one server for the run's cells
    earlier: Cell | None = None  # who writes the live threads (upgrade --from); None: Matrix.earlier's cell
    earlier_lock: Path | None = None  # its lock, when it is no matrix cell (upgrade --from a version outside it)


class Interrupted(KeyboardInterrupt):
    """A signal ended the run after every cell's thread did: the cells whose new result set was written before it
    (they finished, or the signal came once every probe was observed); every other cell's previous set is kept."""

    def __init__(self, signal_name: str, written: tuple[str, ...]) -> None:
        super().__init__(signal_name)
        self.written = written


@dataclass(frozen=True)
class Result:
    cell: Cell
    outcome: one_cell.CellOutcome
    seconds: float
    log: Path
    results: Path
    junit: Path
    refused: str | None = None  # the reference was refused (identity or lock): every probe ran, the run fails

    @property
    def code(self) -> int:
        return self.outcome.code


def jobs(requested: int = 0) -> int:
    if requested:
        return requested
    raw = os.environ.get("FANIN_JOBS")
    if raw is None or raw == "":
        return os.cpu_count() or 1
    try:
        value = int(raw)
    except ValueError:
        raise FaninError(f"FANIN_JOBS={raw!r} is not a number of parallel cells (e.g. FANIN_JOBS=2)") from None
    if value < 1:
        raise FaninError(f"FANIN_JOBS={raw!r} must be at least 1")
    return value


def junit_summary(path: Path) -> str | None:
    """pytest's counts for the cell, from its junit XML ("23 passed, 1 failed in 5.2 s")."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return None
    tests = int(suite.get("tests", 0))
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    skipped = int(suite.get("skipped", 0))
    parts = (
        [f"{tests - failed - skipped} passed"]
        + ([f"{failed} failed"] if failed else [])
        + ([f"{skipped} skipped"] if skipped else [])
    )
    return f"{', '.join(parts)} in {float(suite.get('time', 0)):.1f} s"


def _reference_path(cell: Cell, options: Options) -> Path:
    return cell.reference_path if options.reference_dir is None else options.reference_dir / f"{cell.id}.json"


def unusable_reference(cell: Cell, options: Options) -> str | None:
    """Why the cell's reference cannot be read at all (not JSON, off its schema, too large), checked before anything runs.

    A reference that reads but is another cell's or from another lock is the run's to report (every
    probe is still observed, the run fails); one that does not read would only be found after the
    cell's venv and pytest ran, and would make every observation of that run worthless.
    """
    path = _reference_path(cell, options)
    if not path.exists():
        return None
    try:
        schema.load(path)
    except ResultFileError as exc:
        return str(exc)
    return None


def _reference(cell: Cell, options: Options) -> tuple[Path | None, str | None]:
    """The reference to compare with, after its identity check; a refusal is reported by the run, never hidden."""
    if options.reference_dir is not None:
        path = options.reference_dir / f"{cell.id}.json"
        return (path if path.exists() else None), None
    if not cell.reference_path.exists():
        return None, None
    try:
        identity.load_reference(cell.reference_path, cell)
    except ResultFileError as exc:
        return cell.reference_path, str(exc)
    return cell.reference_path, None


def html_pages() -> bool:
    """pytest-html pages per cell only when asked (`FANIN_HTML=1`): they cost every cell a plugin load and a page."""
    return os.environ.get("FANIN_HTML", "") not in ("", "0")


def run_one(cell: Cell, matrix: Matrix, options: Options) -> Result:
    results_dir = options.results_dir or (REPORTS / "results")
    results = results_dir / f"{cell.id}.json"
    log = (REPORTS / "logs" if options.results_dir is None else results_dir) / f"{cell.id}.log"
    junit = (REPORTS / "junit" if options.results_dir is None else results_dir) / f"{cell.id}.xml"
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    lock = options.lock or cell.lock_path
    with log.open("w", encoding="utf-8") as handle:
        unusable = unusable_reference(cell, options)
        if unusable is not None:  # before the venv, npm or pytest: nothing is spent on a run that cannot compare
            handle.write(f"fanin: error: unusable reference: {unusable}\n")
            reason = f"unusable reference: {unusable}; nothing ran"
            outcome = one_cell.not_run(cell.id, results, exits.NOT_RUN, reason)
            return Result(cell, outcome, time.monotonic() - started, log, results, junit)
        reference, refused = _reference(cell, options)
        job = runtimes.CellJob(
            cell, lock, reference, refused, results, junit, options.targets, options.accept_new,
            tuple(options.pytest_args), options.env, options.postgres, html_pages(),
            (options.earlier or matrix.earlier(cell)) if cell.framework.live_threads else None,
            options.earlier_lock if options.earlier is not None else None,
        )  # fmt: skip
        outcome = runtimes.of(cell).run(job, handle)  # pytest in a venv, node --test in an npm ci directory, ...
    return Result(cell, outcome, time.monotonic() - started, log, results, junit, refused)


def _new_count(result: Result, reference: Path) -> int:
    """Observations the reference does not have (accepted as new, so they did not fail the run)."""
    try:
        made, known = load(result.results), load(reference)
    except ResultFileError:
        return 0
    return len(set(made.observations) - set(known.observations))


def describe(result: Result, reference: Path | None = None) -> str:
    verdict = {
        exits.SAME: "same as the reference",
        exits.CHANGED: "CHANGED (see the log)"
        if result.outcome.reason is None
        else f"NOT RUN: {result.outcome.reason}",
    }.get(result.code, f"NOT RUN: {result.outcome.reason}")
    reference = reference or result.cell.reference_path
    if result.refused and result.code == exits.CHANGED:
        verdict = f"REFERENCE REFUSED ({result.refused}); every probe was observed"
    if result.code == exits.SAME:
        new = _new_count(result, reference) if reference.exists() else None
        if new is None:
            verdict = "observed (no reference to compare with)"
        elif new:
            verdict = f"same as the reference, and {new} new observation(s) accepted"
    summary = junit_summary(result.junit) if result.code in (exits.SAME, exits.CHANGED) else None
    return f"fanin: {result.cell.id}: {verdict} in {result.seconds:.1f} s" + (f" ({summary})" if summary else "")


def last_seconds(cell: Cell) -> float:
    """How long the cell's probes took last time (its junit XML): the slowest start first, so the last to start is short."""
    try:
        suite = ET.parse(REPORTS / "junit" / f"{cell.id}.xml").getroot()
    except (OSError, ET.ParseError):
        return float("inf")  # never run here: its install and first import are the slowest of all
    node = suite if suite.tag == "testsuite" else suite.find("testsuite")
    return float(node.get("time", 0)) if node is not None else 0.0


def run_cells(cells: list[Cell], matrix: Matrix, options: Options) -> list[Result]:
    """Every cell, slowest first, `jobs` at a time; a signal ends them all and leaves every previous result."""
    order = sorted(cells, key=lambda c: (-last_seconds(c), c.sort_key))
    done: list[Result] = []

    def run(cell: Cell) -> Result:
        results = (options.results_dir or (REPORTS / "results")) / f"{cell.id}.json"
        stopping = one_cell.CHILDREN.stopping
        if stopping is not None:  # a signal came while an earlier cell ran: this one never starts, nothing is touched
            outcome = one_cell.CellOutcome(cell.id, exits.INTERRUPTED, f"not started: {stopping} came first", 0, "")
            result = Result(
                cell, outcome, 0.0, REPORTS / "logs" / f"{cell.id}.log", results, REPORTS / "junit" / f"{cell.id}.xml"
            )
            done.append(result)
            return result
        try:
            result = run_one(cell, matrix, shared)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            reason = f"harness error: {type(exc).__name__}: {exc}"
            result = Result(
                cell,
                one_cell.not_run(cell.id, results, exits.NOT_RUN, reason),
                0.0,
                REPORTS / "logs" / f"{cell.id}.log",
                results,
                REPORTS / "junit" / f"{cell.id}.xml",
            )
        text = describe(result)
        if result.code not in (exits.SAME, exits.INTERRUPTED) and not options.quiet and result.log.exists():
            tail = result.log.read_text(encoding="utf-8", errors="replace").splitlines()[-12:]
            text += "\n" + "\n".join(f"    {line}" for line in tail)
        shown.finished(cell.id, text)
        done.append(result)
        return result

    def one(cell: Cell) -> Result:
        shown.started(cell.id)
        return run(cell)

    width = jobs(options.jobs)
    venvs.uv_binary()  # found once, in this thread, before any cell thread needs it
    shown = progress.Progress([c.id for c in order], expected_seconds(order, options), width)
    stopping = lambda: one_cell.CHILDREN.stopping is not None  # noqa: E731
    with (
        one_cell.signals_end_children(),
        environment.pinned_suite_commit(),  # one commit for every cell: the tree as the run started
        services.shared(stopping) as postgres,
    ):
        shared = dataclasses.replace(options, postgres=postgres)
        pool = ThreadPoolExecutor(max_workers=max(1, width))
        try:
            futures = [pool.submit(one, cell) for cell in order]
            for future in futures:
                future.result()
        except KeyboardInterrupt as exc:
            one_cell.stop_all()
            pool.shutdown(wait=True, cancel_futures=True)
            written = tuple(r.cell.id for r in sorted(done, key=lambda r: order.index(r.cell)) if r.outcome.written)
            raise Interrupted(str(exc) or "SIGINT", written) from None
        finally:
            shown.close()
        pool.shutdown(wait=True)
    return sorted(done, key=lambda r: order.index(r.cell))


def expected_seconds(cells: list[Cell], options: Options) -> dict[str, float]:
    """Each cell's recorded `run_seconds`: its last local result set's, else its reference's."""
    local = options.results_dir or (REPORTS / "results")
    known = {
        c.id: progress.recorded_seconds(local / f"{c.id}.json") or progress.recorded_seconds(c.reference_path)
        for c in cells
    }
    return progress.estimates(known)


def exit_code(results: list[Result]) -> int:
    codes = {r.code for r in results}
    for code in (exits.INTERRUPTED, exits.NOT_RUN, exits.CHANGED):
        if code in codes:
            return code
    return exits.SAME
