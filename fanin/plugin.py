"""pytest plugin: runs probes, turns what happened into observations, writes the cell's result set.

A probe's pytest result answers one question: is the observation the same as
the reference of this cell? pass = same (or only the detail line changed,
shown as `minor`); fail = behaviour changed, with a before/after; `new` = no
reference to compare with, which fails unless `--fanin-accept-new`.
Loaded with `-p fanin.plugin` (see suites/pytest.ini).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import signal
import sys
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from fanin.model import compare, contract, markers
from fanin.model.exits import IMPORT_FAILED_EXIT, WRITE_FAILED_EXIT
from fanin.model.results import (
    PROBE_ERROR,
    TIMEOUT,
    Observation,
    ProbeInfo,
    ResultFileError,
    ResultSet,
    Variant,
    load,
    normalize_message,
    save,
)
from fanin.model.source import INSTALLED, shown
from fanin.probe import FrameworkRaised, MissingService, NotApplicable, Observer, ProbeTimeout, Vacuous
from fanin.run import companions, environment, html_extras, lifetime, netblock
from fanin.run import journal as journal_log
from fanin.run import recorder as recorder_mod
from fanin.run.recorder import Recorder

# pytest's own codes are 0-5; IMPORT_FAILED_EXIT and WRITE_FAILED_EXIT (fanin.model.exits) are the plugin's own.


def _cannot_write(exc: OSError) -> None:
    """A full or read-only disk is the environment's fault, never a probe's: end the run, nothing written."""
    pytest.exit(
        f"fanin: error: cannot write {exc.filename or 'the run files'}: {exc.strerror or exc}",
        returncode=WRITE_FAILED_EXIT,
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fanin")
    group.addoption("--fanin-cell", help="cell id this run belongs to, e.g. langgraph-1.2.18")
    group.addoption("--fanin-framework", help="framework under test: its registry key and probe-id prefix")
    group.addoption("--fanin-results", type=Path, help="where to write this run's result set (atomically)")
    group.addoption("--fanin-reference", type=Path, help="result set to compare each observation with")
    group.addoption("--fanin-lock", type=Path, help="the lock the venv was built from (recorded, hashed)")
    group.addoption(
        "--fanin-accept-new", action="store_true", help="report probes without a reference as new, without failing"
    )
    group.addoption("--fanin-package", help="the framework's distribution name (recorded version), e.g. google-adk")
    group.addoption("--fanin-import", help="a module that must import before any probe runs, e.g. google.adk.agents")
    group.addoption(
        "--fanin-reference-error", help="the harness refused the reference: record every probe, fail the run"
    )
    group.addoption("--fanin-journal", type=Path, help="append each probe's start and observation here as it happens")
    group.addoption(
        "--fanin-resume", action="store_true", help="reuse the observations already in the journal; run only the rest"
    )
    group.addoption(
        "--fanin-companions",
        help="probe --here: the registry's companions (comma-separated requirements, e.g. aiosqlite,psycopg[binary]); "
        "each observation records those it tried to import while they were not installed",
    )


recorder_key = pytest.StashKey[Recorder]()


attempts_key = pytest.StashKey[netblock.Attempts]()
change_key = pytest.StashKey[compare.Change]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fanin_probe: a fanin probe (set by @probe)")
    lifetime.adopt_orphans()  # a daemon a probe forks comes back to this process, and ends with the run
    if not any(config.pluginmanager.hasplugin(name) for name in ("timeout", "pytest_timeout")):
        raise pytest.UsageError(
            "fanin needs pytest-timeout loaded (-p pytest_timeout), or a hanging probe hangs the run"
        )
    reference_path: Path | None = config.getoption("fanin_reference")
    reference, reference_error = None, None
    if reference_path is not None and reference_path.exists():
        try:
            reference = load(reference_path)
        except ResultFileError as exc:
            # Still run and record every probe (nothing is lost), but the run cannot pass.
            reference_error = str(exc)
            sys.stderr.write(f"fanin: error: unusable reference, every probe is reported as new: {exc}\n")
    refused = config.getoption("fanin_reference_error")
    if refused:
        reference, reference_error = None, refused
        sys.stderr.write(f"fanin: error: unusable reference, every probe is reported as new: {refused}\n")
    cell = config.getoption("fanin_cell") or "unnamed"
    config.stash[recorder_key] = Recorder(
        cell=cell,
        framework=config.getoption("fanin_framework"),
        reference=reference,
        reference_path=reference_path,
        reference_error=reference_error,
        accept_new=config.getoption("fanin_accept_new"),
        journal=config.getoption("fanin_journal"),
    )
    recorder = config.stash[recorder_key]
    registered = config.getoption("fanin_companions")
    if registered is not None:
        recorder.companions = {companions.canonical_name(c): c.strip() for c in registered.split(",") if c.strip()}
        sys.meta_path.append(recorder.failed_imports)
    if recorder.journal is not None:
        if config.getoption("fanin_resume"):
            recorder.resumed = journal_log.read(recorder.journal)
            recorder.not_installed = companions.resumed_not_installed(recorder.journal)
        else:
            recorder.journal.unlink(missing_ok=True)
    config.stash[attempts_key] = netblock.Attempts()
    netblock.install(config.stash[attempts_key])
    config.pluginmanager.register(_Collection(recorder), "fanin-collection")

    def terminate(signum: int, frame: Any) -> None:
        """SIGTERM ends the run like Ctrl-C: no half-written result set, the previous one stays."""
        name = signal.Signals(signum).name
        recorder.signals.append(name)
        raise KeyboardInterrupt(name)

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, terminate)


def pytest_sessionstart(session: pytest.Session) -> None:
    """A framework that does not import in this cell is one line naming the error, never 60 collection errors."""
    html_extras.describe_cell(session.config, session.config.stash[recorder_key])
    module = session.config.getoption("fanin_import")
    if not module:
        return
    try:
        importlib.import_module(module)
    except Exception as exc:
        error = f"{type(exc).__name__}: {normalize_message(str(exc))}"
        recorder = session.config.stash[recorder_key]
        if recorder.journal is not None:
            journal_log.append(recorder.journal, journal_log.IMPORT_FAILED, error=error, module=module)
        pytest.exit(f"fanin: error: {module} does not import in this cell: {error}", returncode=IMPORT_FAILED_EXIT)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A probe with dimensions runs once per variant; the default variant keeps the plain probe id."""
    info: ProbeInfo | None = getattr(metafunc.function, "fanin_probe", None)
    if info is None or not info.dimensions or "fanin_variant" not in metafunc.fixturenames:
        return
    variants = info.variants()
    metafunc.parametrize("fanin_variant", variants, ids=[v.suffix or "default" for v in variants], indirect=True)


@pytest.fixture
def fanin_variant(request: pytest.FixtureRequest) -> Variant | None:
    """The variant of a probe with dimensions (None: the probe has none)."""
    return getattr(request, "param", None)


def pytest_itemcollected(item: pytest.Item) -> None:
    observation_id = observation_id_of(item)
    if observation_id is not None:
        item.config.stash[recorder_key].collected.add(observation_id)


class _Collection:
    """The collection hook, registered per session: its report carries no config, so it holds the recorder."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A probe file that does not load (an import error, an invalid probe id) is a broken probe, named with its error."""
        if not report.failed:
            return
        text = str(report.longrepr) if report.longrepr is not None else "collection failed"
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("E ")] or lines[-1:]
        error = errors[-1][2:].strip() if errors and errors[-1].startswith("E ") else (errors[-1] if errors else "")
        self.recorder.collection_errors.append(f"{report.nodeid or 'collection'}: {error}"[:300])


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    recorder = config.stash[recorder_key]
    seen: dict[str, str] = {}
    for item in items:
        info = probe_info(item)
        observation_id = observation_id_of(item)
        if info is None or observation_id is None:
            continue
        if observation_id in seen:
            raise pytest.UsageError(
                f"probe id {observation_id} is declared twice: {seen[observation_id]} and {item.nodeid}"
            )
        if recorder.framework and info.framework != recorder.framework:
            raise pytest.UsageError(f"{item.nodeid} is a {info.framework} probe in a {recorder.framework} run")
        seen[observation_id] = item.nodeid
        item.add_marker(pytest.mark.fanin_probe)
    _skip_resumed(config, items)


def _skip_resumed(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On resume, probes the journal already holds are not run again; their observations count as made."""
    recorder = config.stash[recorder_key]
    done = recorder.resumed.observations
    if not done:
        return
    keep, skipped = [], []
    for item in items:
        observation_id = observation_id_of(item)
        info = probe_info(item)
        if observation_id in done and info is not None:
            _record(recorder, recorder.resumed.probes.get(info.id, info), observation_id, done[observation_id])
            skipped.append(item)
        else:
            keep.append(item)
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = keep


def probe_info(item: pytest.Item) -> ProbeInfo | None:
    function = getattr(item, "function", None)
    return getattr(function, "fanin_probe", None)


def variant_of(item: pytest.Item) -> Variant | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("fanin_variant") if callspec is not None else None


def observation_id_of(item: pytest.Item) -> str | None:
    info = probe_info(item)
    if info is None:
        return None
    variant = variant_of(item)
    return variant.observation_id if variant is not None else info.id


@pytest.fixture
def obs(
    request: pytest.FixtureRequest, fanin_variant: Variant | None, tmp_path_factory: pytest.TempPathFactory
) -> Observer:
    """The observer a probe records into."""
    info = probe_info(request.node)
    if info is None:
        raise pytest.UsageError(f"{request.node.nodeid} uses `obs` but is not decorated with @probe")
    return Observer(info, fanin_variant, scratch=lambda: tmp_path_factory.mktemp("probe", numbered=True))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    info = probe_info(pyfuncitem)
    if info is None:
        return None
    observer = pyfuncitem.funcargs["obs"]
    assert isinstance(observer, Observer)
    recorder = pyfuncitem.config.stash[recorder_key]
    recorder.running = observer.observation_id
    if recorder.journal is not None:
        try:
            journal_log.record_start(recorder.journal, observer.observation_id, pyfuncitem.nodeid)
        except OSError as exc:
            _cannot_write(exc)
    kwargs = {name: pyfuncitem.funcargs[name] for name in inspect.signature(pyfuncitem.obj).parameters}
    attempts = pyfuncitem.config.stash[attempts_key]
    attempts.clear()
    recorder.failed_imports.names.clear()
    failure: BaseException | None = None
    try:
        if inspect.iscoroutinefunction(pyfuncitem.obj):
            asyncio.run(pyfuncitem.obj(**kwargs))
        else:
            pyfuncitem.obj(**kwargs)
    except FrameworkRaised:
        pass
    except NotApplicable as exc:
        observer.finish_not_applicable(exc.reason, exc.extra)
    except Vacuous as exc:
        observer.finish_vacuous(exc.reason)
    except ProbeTimeout as exc:
        observer.observation = Observation(
            outcome=TIMEOUT,
            value={"timeout_seconds": exc.seconds},
            label="timeout",
            detail=f"no result within {exc.seconds} s (hang)",
            hazard="loud",
        )
    except MissingService as exc:
        observer.observation = recorder_mod.probe_error(str(exc), None)
    except Exception as exc:
        failure = exc
        observer.observation = recorder_mod.probe_error(f"{type(exc).__name__}: {normalize_message(str(exc))}", exc)
    if attempts.seen and failure is None:
        observer.observation = recorder_mod.probe_error(f"network blocked: {', '.join(attempts.seen)}", None)
    if observer.observation is None:
        observer.observation = recorder_mod.probe_error("the probe returned without recording an observation", None)
    if recorder.companions:
        missing = companions.missing(recorder.failed_imports.names, recorder.companions)
        if missing:
            recorder.not_installed[observer.observation_id] = missing
            if recorder.journal is not None:
                journal_log.append(
                    recorder.journal, companions.NOT_INSTALLED, id=observer.observation_id, companions=missing
                )
    _remember(pyfuncitem, info, observer.observation_id, observer.observation)
    if failure is not None:
        raise failure
    if observer.observation.outcome == PROBE_ERROR:
        pytest.fail(observer.observation.detail, pytrace=False)
    change = pyfuncitem.stash[change_key]
    if change.is_breaking:
        source = pyfuncitem.config.stash[recorder_key].reference_path
        against = shown(source) if source is not None else "the reference"
        pytest.fail(f"behaviour changed against {against}\n{compare.describe(change)}", pytrace=False)
    return True


timer_key = pytest.StashKey[Any]()


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool | None:
    """pytest-timeout's own hook: its settings (ini `timeout`, the marker), fanin's timer.

    For a probe, the alarm raises fanin's `ProbeTimeout` (a BaseException, so a framework's
    `except Exception` cannot swallow it) carrying the seconds: the observation says `timeout`
    without reading any message text. Everything else is left to pytest-timeout.
    """
    if (
        probe_info(item) is None
        or settings.method != "signal"
        or threading.current_thread() is not threading.main_thread()
    ):
        return None
    seconds = settings.timeout

    def alarm(signum: int, frame: Any) -> None:
        raise ProbeTimeout(seconds)

    def cancel() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    item.stash[timer_key] = cancel
    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    return True


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_cancel_timer(item: pytest.Item) -> bool | None:
    cancel = item.stash.get(timer_key, None)
    if cancel is None:
        return None
    cancel()
    del item.stash[timer_key]
    return True


def _remember(item: pytest.Item, info: ProbeInfo, observation_id: str, observation: Observation) -> None:
    recorder = item.config.stash[recorder_key]
    item.stash[change_key] = _record(recorder, info, observation_id, observation)
    if recorder.journal is not None:
        try:
            journal_log.record_observation(recorder.journal, observation_id, info, observation)
        except OSError as exc:
            _cannot_write(exc)
    recorder.running = None


def _record(recorder: Recorder, info: ProbeInfo, observation_id: str, observation: Observation) -> compare.Change:
    recorder.probes[info.id] = info
    recorder.observations[observation_id] = observation
    before = recorder.reference.observations.get(observation_id) if recorder.reference else None
    change = compare.classify(observation_id, before, observation)
    recorder.changes[observation_id] = change
    return change


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """The observation and how it compares go into the report's `user_properties` (so into the junit XML too)."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    change = item.stash.get(change_key, None)
    if call.when != "call" or change is None or change.after is None:
        return
    report.user_properties += [
        ("fanin_observation_id", change.probe_id),
        ("fanin_observation", json.dumps(change.after.to_json(), sort_keys=True, ensure_ascii=False)),
        ("fanin_change", change.label),
    ]
    html_extras.add_observation(report, change)
    if not report.passed:
        return
    if change.kind in (compare.Kind.NEW, compare.Kind.WORDING):
        report.user_properties.append(("fanin_status", change.kind.value))
    if change.kind == compare.NEW and not item.config.stash[recorder_key].accept_new:
        report.outcome = "failed"
        report.longrepr = f"no reference observation for this cell\n{compare.describe(change)}"


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """`NEW` and `WORDING` are their own categories in pytest's summary line ("3 failed, 7 new")."""
    status = dict(report.user_properties).get("fanin_status") if report.when == "call" else None
    if status == compare.Kind.NEW.value:
        return "new", "N", ("NEW", {"yellow": True})
    if status == compare.Kind.WORDING.value:
        return "wording", "w", ("WORDING", {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    recorder = config.stash.get(recorder_key, None)
    if recorder is None or not recorder.observations:
        return
    new = [c for c in recorder.changes.values() if c.kind == compare.NEW]
    if new:
        verdict = "accepted" if recorder.accept_new else "fails the run"
        terminalreporter.section(f"fanin: no reference observation for this cell ({len(new)} new, {verdict})")
        for change in new:
            terminalreporter.write_line(compare.describe(change))
        if not INSTALLED:  # advice for a fanin checkout; an installed fanin has no noxw and no reference to write
            terminalreporter.write_line("review them, then promote the run with `./noxw -s bless -- <cell>`")
    wording = [c for c in recorder.changes.values() if c.kind == compare.Kind.WORDING]
    if wording:
        terminalreporter.section("fanin: wording-only changes (label or detail)")
        for change in wording:
            terminalreporter.write_line(compare.describe(change))
    if recorder.reference_error:
        terminalreporter.section("fanin: unusable reference")
        terminalreporter.write_line(f"{recorder.reference_error} (the run fails; regenerate or restore the file)")
    results = config.getoption("fanin_results")
    if results is not None:
        terminalreporter.write_line(f"fanin: {len(recorder.observations)} observations of {recorder.cell} -> {results}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    recorder = config.stash.get(recorder_key, None)
    results: Path | None = config.getoption("fanin_results")
    config.stash[exit_key] = int(exitstatus)
    if recorder is None:
        return
    vanished = recorder.vanished()
    if vanished:
        sys.stderr.write(
            f"fanin: error: the reference holds {len(vanished)} probe(s) that no longer exist "
            f"({', '.join(vanished[:3])}{', …' if len(vanished) > 3 else ''}); re-run and bless the cell\n"
        )
    resumed_failures = [
        oid
        for oid in recorder.resumed.observations
        if oid in recorder.changes
        and (recorder.changes[oid].is_breaking or recorder.observations[oid].outcome == PROBE_ERROR)
    ]
    if (recorder.reference_error or vanished or resumed_failures) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        config.stash[exit_key] = int(session.exitstatus)
    if recorder.collection_errors:
        error = "; ".join(recorder.collection_errors[:3])
        if recorder.journal is not None:
            journal_log.append(recorder.journal, journal_log.COLLECTION_ERROR, error=error)
        if results is not None:
            sys.stderr.write(f"fanin: error: a probe file does not load: {error}; {shown(results)} left as it was\n")
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED or recorder.signals:
        _interrupted(recorder, results)
        return
    if results is None or exitstatus in (IMPORT_FAILED_EXIT, WRITE_FAILED_EXIT):
        return
    missing = _unobserved(session, recorder)
    if missing:
        # pytest may end "passed" without having run every probe (pytest.exit, -x, a signal a probe swallowed):
        # a result set is written only when every selected probe was observed.
        reason = (
            f"the run ended (pytest exit {int(exitstatus)}) before {len(missing)} of the selected probes "
            f"were observed ({', '.join(missing[:3])}{', …' if len(missing) > 3 else ''})"
        )
        if recorder.journal is not None:
            journal_log.append(recorder.journal, journal_log.INCOMPLETE, reason=reason)
        sys.stderr.write(f"fanin: {reason}; {shown(results)} left as it was\n")
        return
    if not recorder.observations:
        sys.stderr.write(f"fanin: no probe ran; {results} not written\n")
        return
    framework = recorder.framework or next(iter(recorder.probes.values())).framework
    package = config.getoption("fanin_package") or framework
    try:
        version = metadata.version(package)
    except metadata.PackageNotFoundError:
        version = "not installed"
    result_set = ResultSet(
        cell=recorder.cell,
        framework=framework,
        version=version,
        environment={
            **environment.collect(config.getoption("fanin_lock")),
            # How long the cell took (recorded, never compared): CI shards are balanced by it.
            "run_seconds": round(time.monotonic() - recorder.started, 1),
            # probe --here only: per observation, the registry's companions it needed that are not installed.
            **(
                {"not_installed": dict(sorted(recorder.not_installed.items()))}
                if recorder.companions is not None
                else {}
            ),
        },
        probes=dict(recorder.probes),
        observations=dict(recorder.observations),
    )
    # No signal may land between the last check and the write: one that arrives now is handled after it.
    blocked = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        if recorder.signals:
            _interrupted(recorder, results)
            return
        try:
            save(result_set, results)
            markers.clear_marker(results)
            if recorder.journal is not None:
                journal_log.append(recorder.journal, journal_log.SAVED, results=str(results))
        except OSError as exc:
            sys.stderr.write(f"fanin: error: cannot write {exc.filename or results}: {exc.strerror or exc}\n")
            session.exitstatus = WRITE_FAILED_EXIT
            config.stash[exit_key] = WRITE_FAILED_EXIT
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _interrupted(recorder: Recorder, results: Path | None) -> None:
    cause = f"interrupted by {recorder.signals[-1]}" if recorder.signals else "interrupted"
    where = f" while {recorder.running} ran" if recorder.running else ""
    if recorder.journal is not None:
        journal_log.append(recorder.journal, journal_log.INTERRUPTED, reason=f"{cause}{where}")
    if results is not None:
        sys.stderr.write(f"fanin: run {cause}{where}; {shown(results)} left as it was\n")


def _unobserved(session: pytest.Session, recorder: Recorder) -> list[str]:
    """Selected probes (after -k/-m, resumed ones included) that have no observation."""
    selected = [observation_id_of(item) for item in session.items]
    return sorted({oid for oid in selected if oid is not None and oid not in recorder.observations})


exit_key = pytest.StashKey[int]()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A probe that timed out may leave a framework thread blocked forever; do not wait for it at exit."""
    netblock.uninstall()
    ended = lifetime.end_children()
    if ended:
        sys.stderr.write(
            f"fanin: ended {len(ended)} process(es) a probe left running (pids {', '.join(map(str, ended))})\n"
        )
    recorder = config.stash.get(recorder_key, None)
    if recorder is not None and recorder.failed_imports in sys.meta_path:
        sys.meta_path.remove(recorder.failed_imports)
    leaked = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if leaked and exit_key in config.stash:
        sys.stdout.flush()
        sys.stderr.write(f"fanin: {len(leaked)} thread(s) still blocked after the run; exiting without joining them\n")
        sys.stderr.flush()
        os._exit(config.stash[exit_key])
    if os.environ.get(contract.FAST_EXIT) == "1" and exit_key in config.stash:
        # Run by the harness: the result set, the journal and junit are written and flushed by now. The
        # interpreter's own teardown of a framework's thousands of modules costs a quarter second a cell.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(config.stash[exit_key])
