"""Run one cell's probes: pytest in the cell's venv, isolated from the network, watched, resumable.

One pytest process per cell does the work. Around it the runner
- starts the services the cell's probes need (a PostgreSQL server) and removes them after;
- runs it in a network namespace where the OS allows (fanin.run.isolation);
- watches it: a probe that runs longer than the watchdog allows (stuck in C code, where
  pytest-timeout's signal never arrives) is killed with its process group and recorded as
  `timeout`; a process that dies outright (os._exit, a segfault) has the probe it was
  running recorded as `probe-error`; either way pytest starts again for the probes that
  are left (the journal, fanin.run.journal), so one bad probe never costs the others;
- on SIGINT/SIGTERM ends every pytest it started and leaves each cell's previous result
  set byte-for-byte as it was, with a marker (`<cell>.error`) saying what happened.

The result set is written only by a pytest run that finished; a failed or interrupted run
writes a one-line marker instead, and the report shows the cell as not run, with the reason.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from fanin.model import contract, markers
from fanin.model.errors import FaninError
from fanin.model.exits import (
    CHANGED,
    INTERRUPTED,
    NOT_RUN,
    SAME,
    WRITE_FAILED_EXIT,
)
from fanin.model.results import PROBE_ERROR, TIMEOUT, Observation
from fanin.model.source import REPO_ROOT, SUITES
from fanin.run import environment, isolation, lifetime, memory, services
from fanin.run import journal as journal_log

DEFAULT_WATCHDOG = float(os.environ.get("FANIN_WATCHDOG_SECONDS", "90"))


@dataclass(frozen=True)
class CellRun:
    """Everything one pytest run of a cell needs."""

    cell_id: str
    framework: str
    package: str
    import_check: str
    python: Path
    lock: Path | None  # None: the environment is not ours (probe --here); the result set records its packages
    reference: Path | None
    results: Path
    junit: Path | None = None
    html: Path | None = None  # a self-contained pytest-html page of the run
    targets: tuple[str, ...] = ()  # probe files or file::function ids instead of the framework's whole suite
    pytest_args: tuple[str, ...] = ()
    accept_new: bool = False
    env: dict[str, str] = field(default_factory=dict)
    registry_env: dict[str, str] = field(default_factory=dict)  # the cell's `env` from matrix.toml (Cell.env)
    watchdog: float = DEFAULT_WATCHDOG
    isolate: bool = True
    postgres: services.Shared | None = None  # the matrix run's server, shared by its cells; None: the cell's own


@dataclass(frozen=True)
class CellOutcome:
    cell_id: str
    code: int
    reason: str | None  # why the cell did not run (NOT_RUN / INTERRUPTED)
    attempts: int
    isolation: str
    written: bool = False  # this run wrote the cell's new result set (even if a signal came after it)


class _Children:
    """Every pytest process group the runner started, so a signal can end them all."""

    def __init__(self) -> None:
        # Re-entrant: the signal handler (kill_all) runs in the main thread, which may be inside add/remove
        # (`fanin repeat`, upgrade, sensitivity, --here run the cell there); a plain Lock deadlocked it.
        self.lock = threading.RLock()
        self.groups: set[int] = set()
        self.stopping: str | None = None

    def add(self, pid: int) -> None:
        with self.lock:
            self.groups.add(pid)

    def remove(self, pid: int) -> None:
        with self.lock:
            self.groups.discard(pid)

    def kill_all(self, sig: int) -> None:
        with self.lock:
            groups = list(self.groups)
        for group in groups:
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                pass


CHILDREN = _Children()


@contextmanager
def signals_end_children() -> Iterator[None]:
    """Within the block, SIGINT/SIGTERM stop every cell's pytest and then raise KeyboardInterrupt.

    Only the first: a repeat (./noxw passing on a signal the whole group also got, uv forwarding a
    second SIGINT, a second Ctrl-C) is the same interrupt. Raised again it landed in the teardown the
    first one started (ending pytest, writing the marker) and broke it; that teardown is bounded
    (`_end`, `stop_all`: SIGKILL after the grace) without it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    came: list[str] = []

    def handler(signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        if came:
            return
        came.append(name)
        CHILDREN.stopping = name
        CHILDREN.kill_all(signal.SIGTERM)
        raise KeyboardInterrupt(name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def journal_path(results: Path) -> Path:
    return results.parent / f".{results.stem}.journal"


def pytest_command(run: CellRun, journal: Path, resume: bool, basetemp: Path | None = None) -> list[str]:
    command = [
        str(run.python),
        "-m",
        "pytest",
        "-p",
        "pytest_timeout",
        "-c",
        str(SUITES / "pytest.ini"),
        "--rootdir",
        str(SUITES),
        *(run.targets or (str(SUITES / run.framework),)),
        "--fanin-cell",
        run.cell_id,
        "--fanin-framework",
        run.framework,
        "--fanin-package",
        run.package,
        "--fanin-import",
        run.import_check,
        "--fanin-results",
        str(run.results),
        "--fanin-lock",
        str(run.lock),
        "--fanin-journal",
        str(journal),
    ]
    if run.reference is not None:
        command += ["--fanin-reference", str(run.reference)]
    if run.junit is not None:
        command.append(f"--junitxml={run.junit}")
    if run.html is not None:  # pytest-html is in every cell's lock (the matrix's harness requirements)
        command += [
            "-p",
            "pytest_metadata.plugin",
            "-p",
            "pytest_html.plugin",
            f"--html={run.html}",
            "--self-contained-html",
        ]
    if run.accept_new:
        command.append("--fanin-accept-new")
    if resume:
        command.append("--fanin-resume")
    if basetemp is not None:  # the probes' scratch (tmp_path), inside the run's own directory (fanin.run.memory)
        command.append(f"--basetemp={basetemp}")
    return [*command, *run.pytest_args]


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _watch(
    process: subprocess.Popen[bytes],
    journal: Path,
    watchdog: float,
    failed: Callable[[], str | None] = lambda: None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[int, str | None]:
    """Wait for pytest; kill its group when one probe (or the run between probes) stalls past the watchdog,
    or when a service it needs failed to start (`failed()` says why). `clock` measures the stall (a test
    drives it from events, so that a loaded machine neither trips the watchdog early nor makes it wait)."""
    last_size, since = -1, clock()
    while True:
        try:
            return process.wait(timeout=0.1), None
        except subprocess.TimeoutExpired:
            pass
        if failed() is not None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return process.returncode, None
        try:  # the journal grows with every start and observation: its size is the progress (cheap to ask)
            size = journal.stat().st_size
        except OSError:
            size = -1
        if size != last_size:
            last_size, since = size, clock()
            continue
        if clock() - since > watchdog:
            stalled = journal_log.read(journal).running
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return process.returncode, stalled or ""


def run_cell(run: CellRun, log: IO[str]) -> CellOutcome:
    """Run the cell to completion (resuming past hangs and crashes); write its result set or its marker."""
    journal = journal_path(run.results)
    run.results.parent.mkdir(parents=True, exist_ok=True)
    journal.unlink(missing_ok=True)
    attempts, mode = 0, isolation.IN_PROCESS
    try:
        cancelled = lambda: CHILDREN.stopping is not None  # noqa: E731
        with (
            environment.pinned_suite_commit(),  # the commit the cell starts from, not the one its results are written under
            memory.scratch(run.cell_id) as scratch,
            services.for_cell(run.framework, run.targets, cancelled, run.postgres) as service,
        ):
            known = service.failure()  # the matrix run's one server already failed: no pytest to start and end
            if known is not None:
                return _not_run(run, NOT_RUN, known, attempts, mode)
            while True:
                attempts += 1
                resume = attempts > 1
                command, mode = isolation.wrap(pytest_command(run, journal, resume, scratch / "pytest"), run.isolate)
                env = {
                    **os.environ,
                    "PYTHONPATH": str(REPO_ROOT),
                    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                    contract.FAST_EXIT: "1",  # fanin.plugin: no interpreter teardown once every file is written
                    # The probes' scratch (tmp_path: SQLite files) is the run's own directory in memory where there
                    # is room (--basetemp above); anything else pytest puts in its temporary root goes there too.
                    "PYTEST_DEBUG_TEMPROOT": str(scratch),
                    **memory.home(scratch),
                    isolation.ENV: mode,
                    **service.env,
                    **run.registry_env,  # the one place a framework's registered variables reach its probes
                    **run.env,
                }
                log.write(f"fanin: attempt {attempts}: {' '.join(command)}\n")
                log.flush()
                process = subprocess.Popen(
                    command,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,  # one group to signal; out of reach of a kill aimed at ours, so:
                    preexec_fn=lifetime.die_with_parent(),  # it dies with this thread, even by kill -9
                )
                CHILDREN.add(process.pid)
                try:
                    code, stalled = _watch(process, journal, run.watchdog, service.failure)
                except KeyboardInterrupt as exc:  # a signal to this process, in the thread that runs the cell
                    CHILDREN.stopping = CHILDREN.stopping or str(exc) or "SIGINT"
                    _end(process)
                    code, stalled = process.returncode, None
                finally:
                    CHILDREN.remove(process.pid)
                state = journal_log.read(journal)
                # A signal first: a server that failed in the same moment is not why the run ended (exit 130).
                if CHILDREN.stopping:
                    if state.saved:  # the plugin wrote a complete set before the signal could land
                        markers.clear_marker(run.results)
                        reason = f"interrupted by {CHILDREN.stopping} after every probe was observed; the new result set was written"
                        return CellOutcome(run.cell_id, INTERRUPTED, reason, attempts, mode, written=True)
                    where = f" while {state.running} ran" if state.running else ""
                    return _not_run(run, INTERRUPTED, f"interrupted by {CHILDREN.stopping}{where}", attempts, mode)
                failure = service.failure()
                if failure is not None and not state.saved:
                    return _not_run(run, NOT_RUN, failure, attempts, mode)
                if state.collection_error:
                    return _not_run(run, CHANGED, f"broken probe: {state.collection_error}", attempts, mode)
                if state.import_failed:
                    return _not_run(
                        run, NOT_RUN, f"{run.import_check} does not import: {state.import_failed}", attempts, mode
                    )
                if state.interrupted:
                    return _not_run(run, INTERRUPTED, state.interrupted, attempts, mode)
                if stalled is not None:
                    if not stalled:
                        return _not_run(
                            run,
                            NOT_RUN,
                            f"no progress for {run.watchdog:.0f} s outside any probe (collection or import hung)",
                            attempts,
                            mode,
                        )
                    observation = Observation(
                        outcome=TIMEOUT,
                        value={"timeout_seconds": run.watchdog, "ended_by": "watchdog"},
                        label="timeout",
                        detail=f"no result within {run.watchdog:.0f} s; the process did not answer signals (stuck outside Python) and was killed",
                        hazard="loud",
                    )
                    journal_log.record_observation(journal, stalled, None, observation)
                    log.write(
                        f"fanin: watchdog: {stalled} stalled for {run.watchdog:.0f} s; killed, resuming the others\n"
                    )
                    continue
                if state.incomplete:
                    return _not_run(run, CHANGED if code == 1 else NOT_RUN, state.incomplete, attempts, mode)
                if code == WRITE_FAILED_EXIT or (not state.saved and _disk_full(run.results)):
                    return _not_run(run, NOT_RUN, _cannot_write(run.results), attempts, mode)
                if state.saved and code in (0, 1):
                    markers.clear_marker(run.results)
                    return CellOutcome(run.cell_id, SAME if code == 0 else CHANGED, None, attempts, mode, written=True)
                how = _signal_name(code) if code < 0 else f"exit {code}"
                if state.running:
                    observation = Observation(
                        outcome=PROBE_ERROR,
                        value={"error": f"the process died ({how}) while this probe ran"},
                        label="probe-error",
                        detail=f"probe-error: the process died ({how}) while this probe ran",
                        hazard="n/a",
                    )
                    journal_log.record_observation(journal, state.running, None, observation)
                    log.write(f"fanin: {state.running} ended the process ({how}); resuming the others\n")
                    continue
                if code == 5:
                    return _not_run(run, NOT_RUN, "no probe was collected", attempts, mode)
                return _not_run(
                    run, NOT_RUN, f"pytest ended ({how}) without writing results: {_last_error(log)}", attempts, mode
                )
    except FaninError as exc:
        if CHILDREN.stopping:  # a service start the signal cancelled ("interrupted while PostgreSQL was starting")
            return _not_run(run, INTERRUPTED, f"interrupted by {CHILDREN.stopping} ({exc})", attempts, mode)
        return _not_run(run, NOT_RUN, str(exc), attempts, mode)
    except OSError as exc:  # the runner's own writes (the log, the journal): a full or read-only disk
        where = f" ({exc.filename})" if exc.filename else ""
        return _not_run(run, NOT_RUN, f"cannot write{where}: {exc.strerror or exc}", attempts, mode)
    finally:
        journal.unlink(missing_ok=True)


def _disk_full(results: Path, floor: int = 256 * 1024) -> bool:
    try:
        return shutil.disk_usage(results.parent).free < floor
    except OSError:
        return False


def _cannot_write(results: Path) -> str:
    """Why the run's files could not be written: the disk, with what is free."""
    try:
        usage = shutil.disk_usage(results.parent)
        room = f"{usage.free} bytes free of {usage.total}"
    except OSError as exc:
        room = exc.strerror or str(exc)
    return f"cannot write the run's files in {results.parent} (the disk is full or read-only: {room})"


def _last_error(log: IO[str]) -> str:
    """pytest's own last complaint (a usage error, a collection error), from the cell's log."""
    try:
        log.flush()
        lines = Path(log.name).read_text(encoding="utf-8", errors="replace").splitlines()
    except (OSError, AttributeError, TypeError):
        return "see the log"
    for line in reversed(lines):
        text = line.strip()
        if text.lower().startswith(("error", "e ", "usage")) or "Error" in text:
            return text[:200]
    return "see the log"


def _end(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the run's process group (pytest records nothing half-done), then SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def stop_all(grace: float = 10.0) -> None:
    """After a signal: give every cell's pytest `grace` seconds to end on SIGTERM, then SIGKILL them."""
    deadline = time.monotonic() + grace
    while CHILDREN.groups and time.monotonic() < deadline:
        time.sleep(0.05)
    CHILDREN.kill_all(signal.SIGKILL)


def not_run(cell_id: str, results: Path, code: int, reason: str, attempts: int = 0, mode: str = "") -> CellOutcome:
    """The cell did not finish: a marker says why, and the previous result set (if any) is left as it was."""
    kept = " (previous result set kept)" if results.exists() else ""
    try:
        markers.record(results, reason + kept)
    except OSError as exc:  # the disk that is full holds the marker too: say so, never crash the others
        kept += f" (no marker written: {exc.strerror or exc})"
    return CellOutcome(cell_id, code, reason + kept, attempts, mode)


def _not_run(run: CellRun, code: int, reason: str, attempts: int, mode: str) -> CellOutcome:
    return not_run(run.cell_id, run.results, code, reason, attempts, mode)
