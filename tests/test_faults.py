"""The fault suite: interrupts, kills, crashes, hangs in C code, and the network, each against a real pytest run.

Every case drives fanin.run.one_cell on a throw-away probe module, as a cell run does, and
checks the README's promises: the previous result set survives byte for byte, the marker
says why, no process is left behind, every other probe is still observed, and nothing
leaves the machine. Network tests talk to loopback only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from fanin.model import exits, markers
from fanin.model.results import load
from fanin.model.source import REPO_ROOT
from fanin.run import one_cell

HEADER = """
import ctypes
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from fanin.probe import Claim, probe

CLAIM = Claim("c", "https://example.org")
"""


def probe_module(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "test_dummy.py"
    path.write_text(HEADER + textwrap.dedent(body))
    return path


def cell_run(tmp_path: Path, module: Path, **overrides: object) -> one_cell.CellRun:
    values: dict[str, object] = {
        "cell_id": "langgraph-0.0.1",
        "framework": "langgraph",
        "package": "pytest",
        "import_check": "json",
        "python": Path(sys.executable),
        "lock": tmp_path / "lock.txt",
        "reference": None,
        "results": tmp_path / "results" / "langgraph-0.0.1.json",
        "targets": (str(module),),
        # Bounds against a harness defect only: no test here waits for them, so a loaded machine cannot trip
        # them (the watchdog's own test drives its clock from events: test_a_probe_stuck_in_c_code_...).
        "pytest_args": ("-o", "timeout=60", "-p", "no:cacheprovider"),
        "accept_new": True,
        "watchdog": one_cell.DEFAULT_WATCHDOG,
    }
    values.update(overrides)
    return one_cell.CellRun(**values)  # type: ignore[arg-type]


def run(tmp_path: Path, body: str, **overrides: object) -> tuple[one_cell.CellOutcome, str]:
    spec = cell_run(tmp_path, probe_module(tmp_path, body), **overrides)
    log = tmp_path / "cell.log"
    with log.open("w") as handle:
        outcome = one_cell.run_cell(spec, handle)
    return outcome, log.read_text()


def observations(tmp_path: Path) -> dict[str, tuple[str, str]]:
    result = load(tmp_path / "results" / "langgraph-0.0.1.json")
    return {oid: (o.outcome, o.detail) for oid, o in result.observations.items()}


def processes_mentioning(text: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(attrs=["cmdline"]):
        if text in " ".join(process.info["cmdline"] or []) and process.pid != os.getpid():
            found.append(process)
    return found


# --- a process that dies outright keeps every other observation ------------------------

CRASHES = """
@probe("langgraph/dummy/a-first", title="t", claim=CLAIM)
def test_a_first(obs):
    obs.record(1, label="ran", detail="ran", hazard="safe")


@probe("langgraph/dummy/b-exits", title="os._exit mid-probe", claim=CLAIM)
def test_b_exits(obs):
    os._exit(3)


@probe("langgraph/dummy/c-middle", title="t", claim=CLAIM)
def test_c_middle(obs):
    obs.record(2, label="ran", detail="ran", hazard="safe")


@probe("langgraph/dummy/d-segfaults", title="a segfault in C", claim=CLAIM)
def test_d_segfaults(obs):
    ctypes.string_at(0)


@probe("langgraph/dummy/e-last", title="t", claim=CLAIM)
def test_e_last(obs):
    obs.record(3, label="ran", detail="ran", hazard="safe")
"""


def test_a_process_that_dies_outright_keeps_every_other_observation_and_names_the_probe(tmp_path: Path) -> None:
    outcome, log = run(tmp_path, CRASHES)
    seen = observations(tmp_path)
    assert {oid: o for oid, (o, _) in seen.items()} == {
        "langgraph/dummy/a-first": "ok",
        "langgraph/dummy/b-exits": "probe-error",
        "langgraph/dummy/c-middle": "ok",
        "langgraph/dummy/d-segfaults": "probe-error",
        "langgraph/dummy/e-last": "ok",
    }
    assert seen["langgraph/dummy/b-exits"][1] == "probe-error: the process died (exit 3) while this probe ran"
    assert seen["langgraph/dummy/d-segfaults"][1] == "probe-error: the process died (SIGSEGV) while this probe ran"
    assert outcome.code == exits.CHANGED and outcome.attempts == 3
    assert "ended the process (exit 3); resuming the others" in log


# --- a hang in C code that no signal reaches: the watchdog ------------------------------

STUCK_IN_C = """
@probe("langgraph/dummy/stuck", title="blocks SIGALRM, then waits in C forever", claim=CLAIM)
def test_stuck(obs):
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGTERM})
    Path(os.environ["FANIN_TEST_STARTED"]).write_text(str(os.getpid()))
    select.select([], [], [])


@probe("langgraph/dummy/after", title="runs after", claim=CLAIM)
def test_after(obs):
    obs.record(1, label="ran", detail="ran", hazard="safe")
"""


def stuck_clock(started: Path, step: float) -> Callable[[], float]:
    """The watchdog's clock, driven by events: it stands still until the probe has said it is stuck (its pid
    in `started`), then moves `step` a reading for as long as that process lives. So however slow pytest
    starts on a loaded machine, only the stuck probe can trip the watchdog, and it does so at once."""
    now = 0.0

    def clock() -> float:
        nonlocal now
        pid = started.read_text() if started.exists() else ""
        if pid and not _gone(int(pid)):
            now += step
        return now

    return clock


def test_a_probe_stuck_in_c_code_is_killed_recorded_as_timeout_and_the_rest_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = tmp_path / "started"
    watch = one_cell._watch
    monkeypatch.setattr(
        one_cell,
        "_watch",
        lambda process, journal, watchdog, failed: watch(
            process, journal, watchdog, failed, clock=stuck_clock(started, watchdog + 1)
        ),
    )
    outcome, log = run(tmp_path, STUCK_IN_C, watchdog=4.0, env={"FANIN_TEST_STARTED": str(started)})
    seen = observations(tmp_path)
    assert (
        seen["langgraph/dummy/stuck"][0] == "timeout" and "did not answer signals" in seen["langgraph/dummy/stuck"][1]
    )
    assert seen["langgraph/dummy/stuck"][1].startswith("no result within 4 s")
    assert seen["langgraph/dummy/after"][0] == "ok"
    assert outcome.code == exits.SAME  # a timeout is an observation like any other; no reference here
    assert outcome.attempts == 2  # killed once, resumed once: nothing else stalled
    assert "watchdog: langgraph/dummy/stuck stalled" in log
    assert processes_mentioning(str(tmp_path / "test_dummy.py")) == []


# --- signals: the previous result set survives, byte for byte ---------------------------

HANGS = """
@probe("langgraph/dummy/hang", title="waits until killed", claim=CLAIM)
def test_hang(obs):
    Path(os.environ["FANIN_TEST_STARTED"]).write_text(str(os.getpid()))
    threading.Event().wait()
"""

DRIVER = """
import sys
from pathlib import Path
from fanin.run import one_cell
spec = one_cell.CellRun(
    cell_id="langgraph-0.0.1", framework="langgraph", package="pytest", import_check="json",
    python=Path(sys.executable), lock=Path("lock.txt"), reference=None,
    results=Path(sys.argv[1]), targets=(sys.argv[2],), pytest_args=("-o", "timeout=60", "-p", "no:cacheprovider"),
    accept_new=True, watchdog=60.0,
)
with one_cell.signals_end_children():
    outcome = one_cell.run_cell(spec, sys.stdout)
print("OUTCOME", outcome.code, outcome.reason, flush=True)
sys.exit(outcome.code)
"""


def start_driver(tmp_path: Path, script: str, started: Path, *args: str) -> subprocess.Popen[str]:
    """A driver script run as the runner would be: its own session, output captured, the probe's start file."""
    driver = tmp_path / "driver.py"
    driver.write_text(script)
    return subprocess.Popen(
        [sys.executable, str(driver), *args],
        cwd=tmp_path,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "FANIN_TEST_STARTED": str(started), "PYTHONPATH": str(REPO_ROOT)},
    )


def start_hanging_cell(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    module = probe_module(tmp_path, HANGS)
    results = tmp_path / "results" / "langgraph-0.0.1.json"
    results.parent.mkdir()
    results.write_text('{"previous": "run"}\n')
    started = tmp_path / "started"
    process = start_driver(tmp_path, DRIVER, started, str(results), str(module))
    deadline = time.monotonic() + 60
    while not (started.exists() and started.read_text()):
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        assert time.monotonic() < deadline, "the probe never started"
        time.sleep(0.05)
    return process, results, started


def signal_to(target: str, signum: int, runner: subprocess.Popen[str], pytest_pid: int) -> None:
    """The signal cases every signal test runs: to the runner, to its process group, or to pytest alone."""
    if target == "runner":
        runner.send_signal(signum)
    elif target == "runner-group":
        os.killpg(runner.pid, signum)
    else:
        os.kill(pytest_pid, signum)


@pytest.mark.parametrize("target", ["runner", "runner-group", "pytest-alone"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_cell_keeps_the_previous_result_set_and_says_why(tmp_path: Path, target: str, signum: int) -> None:
    process, results, started = start_hanging_cell(tmp_path)
    pytest_pid = int(started.read_text())
    signal_to(target, signum, process, pytest_pid)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == exits.INTERRUPTED, out
    assert results.read_text() == '{"previous": "run"}\n'
    reason = markers.reason(results) or ""
    assert f"interrupted by {signal.Signals(signum).name} while langgraph/dummy/hang ran" in reason, reason
    assert reason.endswith("(previous result set kept)")
    assert not psutil.pid_exists(pytest_pid) or psutil.Process(pytest_pid).status() == psutil.STATUS_ZOMBIE
    assert sorted(p.name for p in results.parent.iterdir()) == ["langgraph-0.0.1.error", "langgraph-0.0.1.json"]


# The probe waits; at the runner's SIGTERM (its teardown) it says so and ends only when the test releases it.
HANGS_THROUGH_TEARDOWN = """
@probe("langgraph/dummy/hang", title="waits until killed", claim=CLAIM)
def test_hang(obs):
    here = Path(os.environ["FANIN_TEST_STARTED"]).parent

    def teardown(signum, frame):
        (here / "terminating").write_text("yes")
        while not (here / "release").exists():
            select.select([], [], [], 0.05)
        signal.signal(signal.SIGTERM, plugins)
        os.kill(os.getpid(), signal.SIGTERM)

    plugins = signal.signal(signal.SIGTERM, teardown)
    Path(os.environ["FANIN_TEST_STARTED"]).write_text(str(os.getpid()))
    threading.Event().wait()
"""


def _pending(pid: int, signum: int) -> bool:
    """Whether `signum` sent to `pid` still waits for delivery (its handler runs once it is delivered)."""
    with open(f"/proc/{pid}/status") as status:
        masks = [int(line.split()[1], 16) for line in status if line.startswith(("SigPnd:", "ShdPnd:"))]
    return any(mask & (1 << (signum - 1)) for mask in masks)


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_during_the_teardown_is_the_same_interrupt(tmp_path: Path, second: int) -> None:
    """Issue 30 case 1: a repeat (./noxw passing on a group's signal, uv's second SIGINT, a second Ctrl-C) raised
    again inside the first one's teardown: run_cell never wrote its marker. Now the repeat changes nothing."""
    module = probe_module(tmp_path, HANGS_THROUGH_TEARDOWN)
    results = tmp_path / "results" / "langgraph-0.0.1.json"
    results.parent.mkdir()
    results.write_text('{"previous": "run"}\n')
    started = tmp_path / "started"
    process = start_driver(tmp_path, DRIVER, started, str(results), str(module))
    try:
        _wait_until(lambda: started.exists() and started.read_text(), "the probe never started", seconds=60)
        process.send_signal(signal.SIGINT)
        _wait_until(lambda: (tmp_path / "terminating").exists(), "the runner never ended pytest")
        process.send_signal(second)  # lands while the runner waits for pytest to end
        _wait_until(lambda: not _pending(process.pid, second), "the second signal was never delivered")
        (tmp_path / "release").write_text("go")
        out, _ = process.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == exits.INTERRUPTED, out
    assert "OUTCOME 130 interrupted by SIGINT while langgraph/dummy/hang ran" in out, out
    assert results.read_text() == '{"previous": "run"}\n'
    assert markers.reason(results) == "interrupted by SIGINT while langgraph/dummy/hang ran (previous result set kept)"


def test_sigterm_to_the_matrix_parent_ends_every_cell_it_started(tmp_path: Path) -> None:
    """Two cells in threads of one parent; SIGTERM to the parent ends both pytest runs, and neither writes later."""
    cells = []
    for name in ("one", "two"):
        directory = tmp_path / name
        directory.mkdir()
        cells.append(
            (directory, probe_module(directory, HANGS.replace("FANIN_TEST_STARTED", f"STARTED_{name.upper()}")))
        )
    script = tmp_path / "matrix.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        from concurrent.futures import ThreadPoolExecutor
        from pathlib import Path
        from fanin.run import one_cell
        def one(directory, module):
            spec = one_cell.CellRun(cell_id="langgraph-0.0.1", framework="langgraph", package="pytest", import_check="json",
                python=Path(sys.executable), lock=Path("lock.txt"), reference=None,
                results=Path(directory) / "langgraph-0.0.1.json", targets=(module,),
                pytest_args=("-o", "timeout=60", "-p", "no:cacheprovider"), accept_new=True, watchdog=60.0)
            return one_cell.run_cell(spec, open(Path(directory) / "log", "w"))
        with one_cell.signals_end_children():
            pool = ThreadPoolExecutor(2)
            futures = [pool.submit(one, d, m) for d, m in {[(str(d), str(m)) for d, m in cells]!r}]
            try:
                print([f.result().code for f in futures])
            except KeyboardInterrupt:
                one_cell.stop_all()
                pool.shutdown(wait=True)
                sys.exit(130)
    """)
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "STARTED_ONE": str(tmp_path / "one" / "started"),
        "STARTED_TWO": str(tmp_path / "two" / "started"),
    }
    process = subprocess.Popen([sys.executable, str(script)], env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while not all(
        (tmp_path / n / "started").exists() and (tmp_path / n / "started").read_text() for n in ("one", "two")
    ):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    pids = [int((tmp_path / n / "started").read_text()) for n in ("one", "two")]
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 130
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    for name in ("one", "two"):
        assert not (tmp_path / name / "langgraph-0.0.1.json").exists()
        assert "interrupted by SIGTERM" in (markers.reason(tmp_path / name / "langgraph-0.0.1.json") or "")


def test_a_cell_queued_behind_a_signal_never_starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A worker thread that frees up after SIGTERM must not take the next cell (it once ran it to the end)."""
    from fanin.model import matrix as matrix_model
    from fanin.run import all_cells

    matrix = matrix_model.load()
    started: list[str] = []
    monkeypatch.setattr(all_cells, "run_one", lambda cell, matrix, options: started.append(cell.id))
    monkeypatch.setattr(one_cell.CHILDREN, "stopping", "SIGTERM")
    options = all_cells.Options(results_dir=tmp_path, quiet=True, jobs=2)
    results = all_cells.run_cells(matrix.cells[:3], matrix, options)
    assert started == []
    assert [r.code for r in results] == [exits.INTERRUPTED] * 3
    assert all("not started: SIGTERM came first" in (r.outcome.reason or "") for r in results)
    assert list(tmp_path.iterdir()) == []  # no marker, no result set: every previous one is as it was


def test_the_last_line_after_a_signal_names_the_result_sets_written_before_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30 case 3: a Ctrl-C once a cell's every probe was observed (its new set written) ended with "every
    cell's previous result set is as it was". Now the line names the cells whose new set was written."""
    import fanin.__main__ as cli
    from fanin.model import matrix as matrix_model
    from fanin.run import all_cells

    monkeypatch.setattr(all_cells, "REPORTS", tmp_path)  # no junit times: the cells run in the matrix's order
    monkeypatch.setattr(one_cell.CHILDREN, "stopping", None)
    first, second = matrix_model.load().cells[:2]
    written = threading.Event()

    def run_one(cell: matrix_model.Cell, matrix: object, options: all_cells.Options) -> all_cells.Result:
        if cell.id == first.id:  # the signal came in its teardown, after the plugin wrote the set
            reason = "interrupted by SIGINT after every probe was observed; the new result set was written"
            outcome = one_cell.CellOutcome(cell.id, exits.INTERRUPTED, reason, 1, "", written=True)
            written.set()
        else:
            assert written.wait(timeout=60), "the first cell never ended"
            os.kill(os.getpid(), signal.SIGINT)  # to this process: the handler runs in the main thread
            _wait_until(lambda: one_cell.CHILDREN.stopping is not None, "the signal never reached the handler")
            outcome = one_cell.CellOutcome(cell.id, exits.INTERRUPTED, "interrupted by SIGINT (kept)", 1, "")
        return all_cells.Result(cell, outcome, 0.0, tmp_path / "log", tmp_path / f"{cell.id}.json", tmp_path / "j.xml")

    monkeypatch.setattr(all_cells, "run_one", run_one)
    assert cli.main(["probe", first.id, second.id, "--jobs", "2"]) == exits.INTERRUPTED
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == (
        f"fanin: interrupted (SIGINT); new result sets were written before it for {first.id}; "
        "every other cell's previous result set is as it was"
    )


# --- `fanin repeat`: a signal while runs are queued ends them all -------------------------

HANGS_ON_SEED_1 = """
@probe("langgraph/dummy/hang-on-seed-1", title="returns under hash seed 0, waits until killed under seed 1", claim=CLAIM)
def test_hang_on_seed_1(obs):
    if os.environ["PYTHONHASHSEED"] == "1":
        Path(os.environ["FANIN_TEST_STARTED"]).write_text(str(os.getpid()))
        threading.Event().wait()
    obs.record(1, label="ran", detail="ran", hazard="safe")
"""

REPEAT_DRIVER = """
import sys
from pathlib import Path
import fanin.__main__ as cli
from fanin.run import all_cells, one_cell
work, module, cell_id = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
cli.REPORTS = work
work.mkdir(parents=True, exist_ok=True)

def run_one(cell, matrix, options):  # `fanin repeat`'s own loop and runner, on the throw-away probe module
    with (work / "seeds").open("a") as seeds:
        seeds.write(options.env["PYTHONHASHSEED"] + "\\n")
    results = options.results_dir / f"{cell.id}.json"
    spec = one_cell.CellRun(
        cell_id=cell.id, framework=cell.framework.key, package="pytest", import_check="json",
        python=Path(sys.executable), lock=Path("lock.txt"), reference=None, results=results, targets=(module,),
        pytest_args=("-o", "timeout=60", "-p", "no:cacheprovider"), accept_new=True, watchdog=60.0, env=options.env,
    )
    log = options.results_dir / "cell.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as handle:
        outcome = one_cell.run_cell(spec, handle)
    return all_cells.Result(cell, outcome, 0.0, log, results, options.results_dir / "junit.xml")

all_cells.run_one = run_one
sys.exit(cli.main(["repeat", cell_id, "4"]))
"""


@pytest.mark.parametrize("target", ["runner", "runner-group", "pytest-alone"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_repeat_ends_it_and_no_queued_run_starts(tmp_path: Path, target: str, signum: int) -> None:
    """`fanin repeat CELL 4`: the signal lands in run 2; runs 3 and 4 never start, nothing is left running, exit 130."""
    from fanin.model import matrix as matrix_model

    cell = matrix_model.load().newest("langgraph")
    module = probe_module(tmp_path, HANGS_ON_SEED_1)
    started = tmp_path / "started"
    process = start_driver(tmp_path, REPEAT_DRIVER, started, str(tmp_path / "reports"), str(module), cell.id)
    try:
        _wait_until(lambda: started.exists() and started.read_text() != "", "run 2 never started")
        pytest_pid = int(started.read_text())
        signal_to(target, signum, process, pytest_pid)
        out, _ = process.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == exits.INTERRUPTED, out
    assert (tmp_path / "reports" / "seeds").read_text().split() == ["0", "1"], out
    runs = tmp_path / "reports" / "repeat" / cell.id
    assert sorted(p.name for p in runs.iterdir()) == ["run-000", "run-001"]
    assert not psutil.pid_exists(pytest_pid) or psutil.Process(pytest_pid).status() == psutil.STATUS_ZOMBIE
    assert processes_mentioning(str(module)) == []


# --- a framework that does not import --------------------------------------------------


def test_a_framework_that_does_not_import_is_one_reason_not_a_list_of_vanished_probes(tmp_path: Path) -> None:
    previous = tmp_path / "results" / "langgraph-0.0.1.json"
    outcome, log = run(tmp_path, CRASHES.split("@probe")[0], import_check="fanin_no_such_framework.graph")
    assert outcome.code == exits.NOT_RUN
    assert outcome.reason == (
        "fanin_no_such_framework.graph does not import: ModuleNotFoundError: No module named 'fanin_no_such_framework'"
    )
    assert markers.reason(previous) == outcome.reason
    assert "no longer exist" not in log


# --- the network: nothing leaves, and the attempt is caught ---------------------------

NETWORK = """
@probe("langgraph/dummy/interfaces", title="lists interfaces", claim=CLAIM)
def test_interfaces(obs):
    names = sorted(name for _, name in socket.if_nameindex())
    obs.record({"interfaces": names}, label="listed", detail=" ".join(names), hazard="safe")


@probe("langgraph/dummy/raw-connect", title="a raw _socket connect to the test's loopback listener", claim=CLAIM)
def test_raw_connect(obs):
    import _socket
    port = int(os.environ["FANIN_TEST_PORT"])
    raw = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    raw.settimeout(2)
    try:
        raw.connect(("127.0.0.1", port))
        result = "connected"
    except OSError as exc:
        result = type(exc).__name__
    obs.record({"raw": result}, label=result, detail=result, hazard="safe")


@probe("langgraph/dummy/subprocess", title="curl in a subprocess to the test's loopback listener", claim=CLAIM)
def test_subprocess(obs):
    port = os.environ["FANIN_TEST_PORT"]
    code = subprocess.run([sys.executable, "-c", f"import _socket; s = _socket.socket(); s.settimeout(2); s.connect(('127.0.0.1', {port}))"],
                          capture_output=True).returncode
    obs.record({"exit": code}, label=str(code), detail=str(code), hazard="safe")


@probe("langgraph/dummy/udp", title="a UDP datagram to loopback", claim=CLAIM)
def test_udp(obs):
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.sendto(b"x", ("127.0.0.1", int(os.environ["FANIN_TEST_PORT"])))
    except OSError:
        pass
    obs.record({"sent": True}, label="sent", detail="swallowed", hazard="safe")
"""


def test_probes_run_in_a_namespace_with_only_loopback_and_reach_nothing_outside(tmp_path: Path) -> None:
    from fanin.run import isolation

    if not isolation.namespace_prefix():
        pytest.skip("this machine allows no network namespace; the in-process block is tested in test_plugin")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    port = listener.getsockname()[1]
    outcome, _ = run(tmp_path, NETWORK, env={"FANIN_TEST_PORT": str(port)})
    result = load(tmp_path / "results" / "langgraph-0.0.1.json")
    seen = dict(result.observations.items())
    assert seen["langgraph/dummy/interfaces"].value == {"interfaces": ["lo"]}
    assert seen["langgraph/dummy/raw-connect"].value == {"raw": "ConnectionRefusedError"}  # another loopback
    assert seen["langgraph/dummy/subprocess"].value == {"exit": 1}
    assert seen["langgraph/dummy/udp"].outcome == "probe-error"  # caught in-process, not swallowed
    assert "network blocked: 127.0.0.1" in seen["langgraph/dummy/udp"].detail
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody ever connected to the machine's loopback
    listener.close()
    assert result.environment["network_isolation"] == isolation.NAMESPACE
    assert outcome.isolation == isolation.NAMESPACE


def test_without_a_namespace_the_in_process_block_is_recorded(tmp_path: Path) -> None:
    from fanin.run import isolation

    _outcome, _ = run(tmp_path, NETWORK.split("@probe")[0] + "@probe" + NETWORK.split("@probe")[1], isolate=False)
    result = load(tmp_path / "results" / "langgraph-0.0.1.json")
    assert result.environment["network_isolation"] == isolation.IN_PROCESS
    assert json.dumps(result.observations["langgraph/dummy/interfaces"].value)  # recorded, whatever the host has


def test_a_harness_defect_in_one_cell_never_stops_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug while setting up one cell is that cell's marker; every other cell still runs and is reported."""
    from fanin.model import matrix
    from fanin.run import all_cells

    monkeypatch.setattr(matrix, "REPORTS", tmp_path)
    monkeypatch.setattr(all_cells, "REPORTS", tmp_path)
    cells = list(matrix.load().cells)[:3]

    def fake_run_one(cell: matrix.Cell, m: object, options: all_cells.Options) -> all_cells.Result:
        if cell is cells[1]:
            raise TypeError("can only concatenate str (not 'NoneType') to str")
        outcome = one_cell.CellOutcome(cell.id, exits.SAME, None, 1, "")
        return all_cells.Result(cell, outcome, 0.0, tmp_path / "log", tmp_path / f"{cell.id}.json", tmp_path / "j.xml")

    monkeypatch.setattr(all_cells, "run_one", fake_run_one)
    results = all_cells.run_cells(cells, matrix.load(), all_cells.Options(jobs=2))
    codes = {r.cell.id: r.code for r in results}
    assert codes == {cells[0].id: exits.SAME, cells[1].id: exits.NOT_RUN, cells[2].id: exits.SAME}
    assert "harness error: TypeError" in (markers.reason(tmp_path / "results" / f"{cells[1].id}.json") or "")
    assert all_cells.exit_code(results) == exits.NOT_RUN


# --- a result set is written only when every selected probe was observed -----------------

SWALLOWS_THE_SIGNAL = """
@probe("langgraph/dummy/swallows", title="a framework that catches everything, KeyboardInterrupt included", claim=CLAIM)
def test_swallows(obs):
    Path(os.environ["FANIN_TEST_STARTED"]).write_text(str(os.getpid()))
    try:
        threading.Event().wait()
    except BaseException:
        pass
    obs.record(1, label="ran", detail="ran", hazard="safe")


@probe("langgraph/dummy/after", title="runs after", claim=CLAIM)
def test_after(obs):
    obs.record(2, label="ran", detail="ran", hazard="safe")
"""

EXITS_ZERO = """
import pytest


@probe("langgraph/dummy/first", title="t", claim=CLAIM)
def test_first(obs):
    obs.record(1, label="ran", detail="ran", hazard="safe")


@probe("langgraph/dummy/ends-the-session", title="pytest.exit with status 0 half way", claim=CLAIM)
def test_ends_the_session(obs):
    pytest.exit("stop here", returncode=0)


@probe("langgraph/dummy/never-runs", title="t", claim=CLAIM)
def test_never_runs(obs):
    obs.record(3, label="ran", detail="ran", hazard="safe")
"""


def _interrupt_pytest_once_started(started: Path, signum: int) -> None:
    """A gate, not a sleep: wait until the probe says it is running, then signal pytest alone."""
    import threading

    def fire() -> None:
        deadline = time.monotonic() + 60
        while not (started.exists() and started.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(int(started.read_text()), signum)

    threading.Thread(target=fire, daemon=True).start()


@pytest.mark.parametrize("case", ["a-signal-the-probe-swallowed", "pytest-exit-0-half-way"])
def test_a_run_that_did_not_observe_every_selected_probe_never_overwrites_the_previous_set(
    tmp_path: Path, case: str
) -> None:
    """Issue 21 case 1: pytest may end "passed" (exit 0) after a Ctrl-C or half way; the old set must stay."""
    previous = tmp_path / "results" / "langgraph-0.0.1.json"
    previous.parent.mkdir()
    previous.write_text('{"previous": "run"}\n')
    started = tmp_path / "started"
    if case == "a-signal-the-probe-swallowed":
        _interrupt_pytest_once_started(started, signal.SIGINT)
        outcome, log = run(tmp_path, SWALLOWS_THE_SIGNAL, env={"FANIN_TEST_STARTED": str(started)})
        assert outcome.code == exits.INTERRUPTED, log
        assert "interrupted by SIGINT" in (outcome.reason or "")
    else:
        outcome, log = run(tmp_path, EXITS_ZERO)
        assert outcome.code == exits.NOT_RUN, log
        assert "(pytest exit 0) before 1 of the selected probes were observed" in (outcome.reason or ""), outcome.reason
        assert "langgraph/dummy/never-runs" in (outcome.reason or "")
    assert previous.read_text() == '{"previous": "run"}\n'
    assert (markers.reason(previous) or "").endswith("(previous result set kept)")


# --- a probe file that does not load is a broken probe, not an interrupt -----------------

IMPORT_ERROR = """
import fanin_no_such_module_anywhere


@probe("langgraph/dummy/x", title="t", claim=CLAIM)
def test_x(obs):
    obs.record(1, label="ran", detail="ran", hazard="safe")
"""

NON_ASCII_ID = """
@probe("langgraph/dummy/caf\u00e9", title="t", claim=CLAIM)
def test_x(obs):
    obs.record(1, label="ran", detail="ran", hazard="safe")
"""


@pytest.mark.parametrize(
    ("body", "error"),
    [(IMPORT_ERROR, "No module named 'fanin_no_such_module_anywhere'"), (NON_ASCII_ID, "is not of the form")],
    ids=["import-error", "non-ascii-probe-id"],
)
def test_a_collection_error_is_a_broken_probe_with_its_error_not_an_interrupt(
    tmp_path: Path, body: str, error: str
) -> None:
    """Issue 21 case 8: exit 1 (a broken probe) with the error, the previous set kept."""
    previous = tmp_path / "results" / "langgraph-0.0.1.json"
    previous.parent.mkdir()
    previous.write_text('{"previous": "run"}\n')
    outcome, log = run(tmp_path, body)
    assert outcome.code == exits.CHANGED, log
    assert (outcome.reason or "").startswith("broken probe: "), outcome.reason
    assert error in (outcome.reason or ""), outcome.reason
    assert "interrupted" not in (outcome.reason or "")
    assert previous.read_text() == '{"previous": "run"}\n'
    assert error in (markers.reason(previous) or "")


# --- kill -9 of the harness's process group leaves nothing behind ------------------------


def _gone(pid: int) -> bool:
    """Ended, or a zombie; a process that ends between the two questions is gone too (psutil raises then)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_until(condition: object, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_kill_9_of_the_runners_group_takes_pytest_with_it_and_writes_nothing(tmp_path: Path) -> None:
    """Issue 21 case 4: pytest runs in a session of its own, so the group kill misses it; the death signal does not."""
    process, results, started = start_hanging_cell(tmp_path)
    pytest_pid = int(started.read_text())
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    _wait_until(lambda: _gone(pytest_pid), "pytest outlived the runner killed with -9")
    assert results.read_text() == '{"previous": "run"}\n'
    assert processes_mentioning(str(tmp_path / "test_dummy.py")) == []


POSTGRES_HOLDER = """
import sys
from pathlib import Path
from fanin.run import services
with services.postgres() as env:
    host = dict(part.split("=", 1) for part in env[services.POSTGRES_DSN].split())["host"]
    data = next(p for p in Path(host).parents if p.name.startswith("fanin-pg-"))
    pid = (data / "data" / "postmaster.pid").read_text().splitlines()[0]
    Path(sys.argv[1]).write_text(f"{data} {pid}")
    sys.stdin.read()  # held until the test kills this process group
"""


def test_kill_9_of_the_runners_group_stops_its_postgresql_and_removes_its_directory(tmp_path: Path) -> None:
    """Issue 21 case 4: PostgreSQL daemonises itself; a guardian in its own session ends it when the harness dies."""
    where = tmp_path / "server"
    process = subprocess.Popen(
        [sys.executable, "-c", POSTGRES_HOLDER, str(where)],
        stdin=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    _wait_until(lambda: where.exists() and where.read_text(), "the server never started", seconds=120)
    directory, pid = where.read_text().split()
    assert psutil.pid_exists(int(pid)) and Path(directory).exists()
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    _wait_until(lambda: _gone(int(pid)), "PostgreSQL outlived the harness killed with -9")
    _wait_until(lambda: not Path(directory).exists(), f"{directory} outlived the harness killed with -9")


def test_a_stale_marker_beside_a_later_result_set_is_ignored(tmp_path: Path) -> None:
    """Issue 21 case 4: a run that wrote its set, then was killed before removing the old marker, is not 'not run'."""
    results = tmp_path / "langgraph-0.0.1.json"
    results.write_text('{"previous": "run"}\n')
    markers.record(results, "interrupted by SIGTERM (previous result set kept)")
    assert markers.reason(results) == "interrupted by SIGTERM (previous result set kept)"
    results.write_text('{"later": "run"}\n')  # the later run's set; its clean-up never happened
    assert markers.marker(results).exists() and markers.reason(results) is None
    results.unlink()
    markers.record(results, "install failed")  # no set at all when the marker was written
    assert markers.reason(results) == "install failed"
    results.write_text('{"later": "run"}\n')
    assert markers.reason(results) is None


# --- ./noxw passes a signal on and ends after everything it started --------------------

FAKE_NOX = """#!{python}
import subprocess, sys
# like the noxfile: the session's fanin is a child in nox's own process group; nox itself dies on SIGTERM
sys.exit(subprocess.run([sys.executable, "-c", {session!r}]).returncode)
"""

FAKE_SESSION = """
import os, signal, sys, threading
from pathlib import Path
def stop(signum, frame):
    Path(os.environ["FANIN_TEST_DIR"], "terminated").write_text(signal.Signals(signum).name)
    sys.exit(130)
signal.signal(signal.SIGTERM, stop)
Path(os.environ["FANIN_TEST_DIR"], "started").write_text("yes")
threading.Event().wait()
"""


def noxw_checkout(tmp_path: Path, tools: dict[str, str]) -> Path:
    """A checkout for the real ./noxw: its supervisor (fanin/), the noxfile, and .fanin/tools as bootstrapped,
    its bin/ holding `tools` (name: script) instead of the pinned nox and uv."""
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "bootstrap.txt").write_text("nox\n")
    bin_dir = tmp_path / ".fanin" / "tools" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir.parent / "bootstrap.txt").write_text("nox\n")
    (bin_dir / "python").symlink_to(sys.executable)
    for name, script in tools.items():
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "fanin").symlink_to(REPO_ROOT / "fanin")
    (tmp_path / "noxfile.py").symlink_to(REPO_ROOT / "noxfile.py")
    wrapper = tmp_path / "noxw"
    wrapper.write_text((REPO_ROOT / "noxw").read_text())
    wrapper.chmod(0o755)
    return wrapper


def test_sigterm_to_noxw_itself_reaches_the_session_and_exits_130(tmp_path: Path) -> None:
    """Issue 21 case 6: the shell deferred its trap until nox ended; SIGTERM to noxw's own pid is now passed on."""
    wrapper = noxw_checkout(tmp_path, {"nox": FAKE_NOX.format(python=sys.executable, session=FAKE_SESSION)})
    process = subprocess.Popen(
        [str(wrapper), "-s", "matrix"],
        start_new_session=True,
        env={**os.environ, "FANIN_PYTHON": sys.executable, "FANIN_TEST_DIR": str(tmp_path)},
    )
    try:
        _wait_until(lambda: (tmp_path / "started").exists(), "the fake session never started")
        os.kill(process.pid, signal.SIGTERM)  # the wrapper's own pid, as `timeout` and `kill` send it
        assert process.wait(timeout=30) == 130
        assert (tmp_path / "terminated").read_text() == "SIGTERM"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


# A nox that leaves a process behind: a double fork (the grandchild is orphaned, so the supervisor adopts it),
# which writes its pid and ignores SIGTERM; nox itself then ends with 0.
NOX_THAT_LEAVES_A_PROCESS = """
import os, signal, sys, threading
from pathlib import Path
if os.fork() == 0:
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        Path(sys.argv[1]).write_text(str(os.getpid()))
        threading.Event().wait()
    os._exit(0)
os.wait()
while not Path(sys.argv[1]).exists() or not Path(sys.argv[1]).read_text():
    pass
"""

SUPERVISED = """
import sys
from fanin.run import supervisor
supervisor.GRACE = float(sys.argv[1])
sys.exit(supervisor.main(sys.argv[2:]))
"""


def test_a_process_still_running_after_the_grace_is_killed_and_named_before_noxw_exits(tmp_path: Path) -> None:
    """noxw waits for every descendant (it adopts orphans); one that would outlive it is killed after the grace."""
    left = tmp_path / "left.pid"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SUPERVISED,
            "0.5",
            str(tmp_path / "exit"),
            sys.executable,
            "-c",
            NOX_THAT_LEAVES_A_PROCESS,
            str(left),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        timeout=60,
    )
    pid = int(left.read_text())
    assert done.returncode == 0, done.stderr
    assert _gone(pid)
    assert re.fullmatch(
        rf"fanin: still running 0.5 s after nox ended, killed: {pid} \([^\n]*python[^\n]*\)\n", done.stderr
    )


NOX_THAT_SAYS_IT_RAN = """#!{python}
from pathlib import Path
Path({ran!r}).write_text("ran")
"""


@pytest.mark.parametrize("tmpdir", ["missing", "a-file"])
def test_a_tmpdir_that_is_no_directory_is_bad_input_before_anything_runs(tmp_path: Path, tmpdir: str) -> None:
    """Issue 30 case 2: `mktemp` under `set -e` ended noxw with exit 1 ("behaviour changed") and mktemp's words."""
    ran = tmp_path / "nox-ran"
    wrapper = noxw_checkout(tmp_path, {"nox": NOX_THAT_SAYS_IT_RAN.format(python=sys.executable, ran=str(ran))})
    where = tmp_path / tmpdir
    if tmpdir == "a-file":
        where.write_text("not a directory")
    before = sorted(tmp_path.rglob("*"))
    done = subprocess.run(
        [str(wrapper), "-s", "matrix"],
        capture_output=True,
        text=True,
        env={**os.environ, "FANIN_PYTHON": sys.executable, "TMPDIR": str(where)},
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"fanin: error: TMPDIR={where} is not a directory\n"
    assert done.stdout == "" and not ran.exists()
    assert sorted(tmp_path.rglob("*")) == before  # nothing written


@pytest.mark.parametrize("first_run", [True, False])
def test_a_first_run_short_of_disk_says_so_in_one_line_before_anything_installs(
    tmp_path: Path, first_run: bool
) -> None:
    """A disk that fills half way through a first run fails as something else (a test's scratch, a half-built
    venv); noxw says the shortfall first, once, and goes on (one cell needs far less). No venvs yet is a first run."""
    ran = tmp_path / "nox-ran"
    wrapper = noxw_checkout(tmp_path, {"nox": NOX_THAT_SAYS_IT_RAN.format(python=sys.executable, ran=str(ran))})
    if not first_run:
        (tmp_path / ".fanin" / "venvs").mkdir()
    env = {**os.environ, "FANIN_PYTHON": sys.executable, "FANIN_FIRST_RUN_GB": str(10**9)}  # more than any disk
    env.pop("FANIN_VENVS", None)
    done = subprocess.run([str(wrapper), "-l"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and ran.exists(), done.stderr
    said = [line for line in done.stderr.splitlines() if "GB free" in line]
    if not first_run:
        assert said == []
        return
    assert len(said) == 1 and re.fullmatch(
        r"fanin: warning: \d+ GB free where \S+ is; a first run of every cell and the tests needs about"
        r" 1000000000 GB \(README: Set-up\)",
        said[0],
    ), said


def test_the_readme_states_the_disk_figure_noxw_checks() -> None:
    figure = re.search(r"first_run_gb=\$\{FANIN_FIRST_RUN_GB:-(\d+)\}", (REPO_ROOT / "noxw").read_text())
    assert figure is not None
    setup = (REPO_ROOT / "README.md").read_text().split("## Set-up", 1)[1].split("\n## ", 1)[0]
    assert f"{figure.group(1)} GB" in setup


# The real nox (the tests' environment has it), and a `uv` for the real noxfile: `fanin cells --json` lists one
# cell; its probe session is the real `uv run` of the runner driver (one_cell on the probe that waits).
REAL_NOX = """#!{python}
import sys
from nox.__main__ import main
sys.exit(main())
"""

CELL_UV = """#!{python}
import json, os, sys
if sys.argv[sys.argv.index("fanin") + 1 :][:1] == ["cells"]:
    print(json.dumps([{{"id": "langgraph-0.0.1", "framework": "langgraph", "smoke": False}}]))
    sys.exit(0)
os.execv({uv!r}, [{uv!r}, "run", "--quiet", "--frozen", "--project", {root!r}, "python", *{driver!r}])
"""


def _controlling_terminal() -> None:
    """In the child (a new session, its stdin a pty): make the pty its terminal, as a shell's job has one."""
    import fcntl
    import termios

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _alive(processes: list[psutil.Process]) -> list[str]:
    found = []
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                found.append(f"{process.pid} {' '.join(process.cmdline())[:120]}")
    return found


# The probe waits; at the runner's SIGTERM its teardown outlasts nox (nox kills `uv run` 0.25 s after a Ctrl-C and
# ends): it ends only once nox has, then as the plugin ends it.
HANGS_PAST_NOX = """
@probe("langgraph/dummy/hang", title="waits until killed", claim=CLAIM)
def test_hang(obs):
    def ended(pid):
        try:
            return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True

    def end_after_nox(signum, frame):
        nox = Path(os.environ["FANIN_TEST_NOX"]).read_text()
        while not ended(nox):
            select.select([], [], [], 0.05)
        signal.signal(signal.SIGTERM, plugins)
        os.kill(os.getpid(), signal.SIGTERM)

    plugins = signal.signal(signal.SIGTERM, end_after_nox)
    Path(os.environ["FANIN_TEST_STARTED"]).write_text(str(os.getpid()))
    threading.Event().wait()
"""


@pytest.mark.parametrize("how", ["ctrl-c", "kill-group", "kill-noxw-alone"])
def test_an_interrupted_noxw_ends_after_everything_it_started_and_keeps_the_previous_set(
    tmp_path: Path, how: str
) -> None:
    """Issue 30 case 1: at Ctrl-C nox kills `uv run` after 0.25 s and noxw exited 130 while fanin and pytest still
    ran (a marker read then was the previous run's); `kill -INT <noxw pid>` was never passed on (the run went on).
    Now noxw is the subreaper of all it starts and exits once none is alive; SIGINT to it alone is passed on, and
    a Ctrl-C the terminal sent to the whole group, or a group kill, is taken once (fanin ignores the repeat)."""
    module = probe_module(tmp_path, HANGS_PAST_NOX)
    results = tmp_path / "results" / "langgraph-0.0.1.json"
    results.parent.mkdir()
    results.write_text('{"previous": "run"}\n')
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    uv = REPO_ROOT / ".fanin" / "tools" / "bin" / "uv"
    assert uv.exists(), "run the tests through ./noxw: it brings uv"
    wrapper = noxw_checkout(
        tmp_path,
        {
            "nox": REAL_NOX.format(python=sys.executable),
            "uv": CELL_UV.format(
                python=sys.executable, uv=str(uv), root=str(REPO_ROOT), driver=[str(driver), str(results), str(module)]
            ),
        },
    )
    started = tmp_path / "started"
    terminal, pty = os.openpty()
    process = subprocess.Popen(
        [str(wrapper), "-s", "probe(langgraph-0.0.1)"],
        cwd=tmp_path,
        stdin=pty,
        stdout=pty,
        stderr=pty,
        start_new_session=True,
        preexec_fn=_controlling_terminal,
        env={
            **os.environ,
            "FANIN_PYTHON": sys.executable,
            "FANIN_TEST_STARTED": str(started),
            "FANIN_TEST_NOX": str(tmp_path / "nox.pid"),
            "PYTHONPATH": str(REPO_ROOT),
        },
    )
    os.close(pty)
    output: list[bytes] = []

    def read() -> None:
        with contextlib.suppress(OSError):  # EIO once every process holding the pty has ended
            while chunk := os.read(terminal, 4096):
                output.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    below: list[psutil.Process] = []
    try:
        _wait_until(lambda: started.exists() and started.read_text(), "the probe never started", seconds=120)
        below = psutil.Process(process.pid).children(recursive=True)  # nox, uv, the runner, its pytest
        assert int(started.read_text()) in {p.pid for p in below}
        (nox,) = psutil.Process(process.pid).children()
        (tmp_path / "nox.pid").write_text(str(nox.pid))
        if how == "ctrl-c":
            os.write(terminal, b"\x03")  # the terminal's Ctrl-C: the kernel signals the foreground group
        elif how == "kill-group":
            os.killpg(process.pid, signal.SIGINT)
        else:
            os.kill(process.pid, signal.SIGINT)
        code = process.wait(timeout=90)
        left = _alive(below)  # at the moment noxw has exited
        reason = markers.reason(results) or ""
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        for leftover in below:
            with contextlib.suppress(psutil.NoSuchProcess):
                leftover.kill()
        os.close(terminal)
        reader.join(timeout=10)
    shown = b"".join(output).decode(errors="replace")[-3000:]
    assert left == [], shown
    assert code == 130, shown
    assert results.read_text() == '{"previous": "run"}\n'
    assert reason == "interrupted by SIGINT while langgraph/dummy/hang ran (previous result set kept)", shown


SIGNAL_INSIDE_ADD = """
import os, signal, sys
from fanin.run import one_cell

class Signalled(set):  # the signal lands while CHILDREN.add holds its lock
    def add(self, pid):
        os.kill(os.getpid(), signal.SIGTERM)
        super().add(pid)

one_cell.CHILDREN.groups = Signalled()
with one_cell.signals_end_children():
    try:
        one_cell.CHILDREN.add(2**22 + 1)  # no such process group
    except KeyboardInterrupt as exc:
        print("interrupted by", exc)
        sys.exit(130)
"""


def test_a_signal_while_the_main_thread_registers_a_child_is_not_a_deadlock() -> None:
    """`fanin repeat` (and upgrade, sensitivity, --here) run the cell in the main thread, where the signal handler
    runs too: landing inside `CHILDREN.add`, it waited forever for the lock its own thread held."""
    process = subprocess.Popen(
        [sys.executable, "-c", SIGNAL_INSIDE_ADD],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    try:
        out, _ = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
        pytest.fail(f"the handler waited for the lock its own thread held (no exit in 20 s): {out}")
    assert process.returncode == 130 and "interrupted by SIGTERM" in out, out


# A `uv` on PATH for the real noxfile: `fanin cells --json` lists two cells; any other fanin command is a
# session that says it started, then waits until a signal and exits 130, as fanin does.
FAKE_UV = """#!{python}
import json, os, signal, sys, threading
from pathlib import Path
words = sys.argv[sys.argv.index("fanin") + 1 :]
if words[:1] == ["cells"]:
    print(json.dumps([{{"id": c, "framework": "langgraph", "smoke": False}} for c in ("langgraph-0.0.1", "langgraph-0.0.2")]))
    sys.exit(0)
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(130))
Path(os.environ["FANIN_TEST_DIR"], "started " + " ".join(words)).write_text(str(os.getpid()))
threading.Event().wait()
"""


def test_a_signal_to_one_cells_fanin_starts_no_queued_session(tmp_path: Path) -> None:
    """`./noxw -t repeat` queues one nox session per cell; SIGTERM to the running session's fanin (exit 130)
    ends the whole nox run with 130: the next cell's repeat never starts (nox went on to it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    uv = bin_dir / "uv"
    uv.write_text(FAKE_UV.format(python=sys.executable))
    uv.chmod(0o755)
    exit_file = tmp_path / "exit"
    process = subprocess.Popen(
        [sys.executable, "-m", "nox", "--noxfile", str(REPO_ROOT / "noxfile.py"), "-t", "repeat", "--", "3"],
        cwd=tmp_path,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "FANIN_TEST_DIR": str(tmp_path),
            "FANIN_EXIT_FILE": str(exit_file),
        },
    )
    first = tmp_path / "started repeat langgraph-0.0.1 3"
    try:
        _wait_until(lambda: first.exists() and first.read_text() != "", "the first repeat never started", 120)
        os.kill(int(first.read_text()), signal.SIGTERM)  # the session's fanin alone, as `kill <pid>` sends it
        _wait_until(lambda: process.poll() is not None or len(list(tmp_path.glob("started *"))) > 1, "nox never ended")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate(timeout=60)
    assert sorted(p.name for p in tmp_path.glob("started *")) == [first.name], out
    assert exit_file.read_text() == "130" and process.returncode == 130, out  # nox says "interrupted", as on Ctrl-C


# --- a full disk is "could not run" with the reason, never a behaviour change ------------


@pytest.fixture
def small_disk(tmp_path: Path) -> object:
    """A 64 KiB tmpfs (needs root, as on CI); skipped, saying why, where mounting is not permitted."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_could_not_run_with_the_reason_and_keeps_the_previous_set(
    tmp_path: Path, small_disk: Path
) -> None:
    """Issue 21 case 9: with the results on a full filesystem the cell is exit 3 naming the disk, not 'CHANGED'."""
    results = small_disk / "results" / "langgraph-0.0.1.json"
    results.parent.mkdir()
    results.write_text('{"previous": "run"}\n')
    with contextlib.suppress(OSError), (small_disk / "filler").open("wb") as filler:
        while True:
            filler.write(b"x" * 4096)
            filler.flush()
    outcome, log = run(tmp_path, CRASHES.split('@probe("langgraph/dummy/b-exits"')[0], results=results)
    assert outcome.code == exits.NOT_RUN, log
    assert "cannot write" in (outcome.reason or "") and "full" in (outcome.reason or ""), outcome.reason
    assert results.read_text() == '{"previous": "run"}\n'


# --- a daemon a probe forks ends with its cell -------------------------------------------

DAEMON = """
@probe("langgraph/dummy/daemon", title="a probe that leaves a daemon behind", claim=CLAIM)
def test_daemon(obs):
    pidfile = Path(os.environ["FANIN_TEST_PIDFILE"])
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:  # the grandchild: a daemon in a session of its own, its parent gone
            pidfile.write_text(str(os.getpid()))
            while True:
                select.select([], [], [])
        os._exit(0)
    while not pidfile.exists() or not pidfile.read_text():
        pass
    obs.record(1, label="forked", detail="a daemon forked", hazard="safe")
"""


def test_a_daemon_a_probe_forks_does_not_outlive_its_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21 (minor): a double-forked, setsid daemon comes back to pytest (a subreaper) and is ended with the run."""
    pidfile = tmp_path / "daemon.pid"
    monkeypatch.setenv("FANIN_TEST_PIDFILE", str(pidfile))
    outcome, log = run(tmp_path, DAEMON)
    assert outcome.code == exits.SAME or outcome.code == exits.CHANGED, log
    daemon = int(pidfile.read_text())
    _wait_until(lambda: _gone(daemon), "the daemon still runs after its cell ended", seconds=10)
    assert re.search(r"fanin: ended \d+ process\(es\) a probe left running \(pids [^)]*\b" + str(daemon) + r"\b", log)


# --- throwaway files in memory ---------------------------------------------------------------

WRITES_SCRATCH = """
@probe("langgraph/dummy/writes-scratch", title="a probe that writes a SQLite file in its scratch", claim=CLAIM)
def test_writes_scratch(obs):
    Path(os.environ["FANIN_TEST_SCRATCH"]).write_text(str(obs.scratch))
    obs.record({"wrote": True}, label="wrote", detail="wrote", hazard="safe")
"""


def test_a_probes_scratch_is_under_the_scratch_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite files go where fanin.run.memory says (/dev/shm where there is room): no fsync waits on a disk."""
    from fanin.run import memory

    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setenv(memory.ENV, str(root))
    written = tmp_path / "scratch"
    outcome, log = run(tmp_path, WRITES_SCRATCH, env={"FANIN_TEST_SCRATCH": str(written)})
    assert outcome.code == exits.SAME, log
    assert Path(written.read_text()).is_relative_to(root)


def test_every_run_removes_its_scratch_however_it_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30 case 7: pytest's numbered basetemps (three kept per root, more under parallel cells) piled up in
    /dev/shm. Each run's scratch is its own directory, gone when it ends: finished, crashed, or signalled."""
    from fanin.run import memory

    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setenv(memory.ENV, str(root))
    written = tmp_path / "scratch"
    for _ in range(2):
        outcome, log = run(tmp_path, WRITES_SCRATCH, env={"FANIN_TEST_SCRATCH": str(written)})
        assert outcome.code == exits.SAME, log
        assert Path(written.read_text()).is_relative_to(root) and not Path(written.read_text()).exists()
        assert list(root.iterdir()) == []
    crashing = tmp_path / "crashing"
    crashing.mkdir()
    outcome, log = run(crashing, CRASHES)  # two processes die outright; pytest starts three times
    assert outcome.code == exits.CHANGED and outcome.attempts == 3, log
    assert list(root.iterdir()) == []
    signalled = tmp_path / "signalled"
    signalled.mkdir()
    process, _, _ = start_hanging_cell(signalled)
    assert [p.name.startswith(memory.SCRATCH_PREFIX) for p in root.iterdir()] == [True]  # in use while it runs
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == exits.INTERRUPTED, out
    assert list(root.iterdir()) == []


def test_the_scratch_a_killed_harness_left_is_removed_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 of the harness runs no clean-up; the next run removes the directory once its process is gone."""
    from fanin.run import memory

    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setenv(memory.ENV, str(root))
    process, _, started = start_hanging_cell(tmp_path)
    pytest_pid = int(started.read_text())
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    _wait_until(lambda: _gone(pytest_pid), "pytest outlived the runner killed with -9")
    assert [p.name.startswith(f"{memory.SCRATCH_PREFIX}{process.pid}-") for p in root.iterdir()] == [True]
    (tmp_path / "next").mkdir()
    outcome, log = run(tmp_path / "next", WRITES_SCRATCH, env={"FANIN_TEST_SCRATCH": str(tmp_path / "written")})
    assert outcome.code == exits.SAME, log
    assert list(root.iterdir()) == []


# --- the PostgreSQL server starts while pytest starts ---------------------------------------

USES_POSTGRES = """
@probe("langgraph/dummy/uses-postgres", title="a probe that asks for the harness's server", claim=CLAIM)
def test_uses_postgres(obs):
    dsn = obs.postgres_dsn(obs.database_name)
    Path(os.environ["FANIN_TEST_STARTED"]).write_text(dsn)
    obs.record({"asked": True}, label="asked", detail="asked", hazard="safe")
"""


def test_a_probe_waits_for_the_server_that_starts_beside_pytest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fanin.run import services  # pgserver is one of the harness's own dependencies: never skipped

    monkeypatch.setattr(services, "needs_postgres", lambda framework, targets=(): True)
    started = tmp_path / "started"
    outcome, log = run(tmp_path, USES_POSTGRES, env={"FANIN_TEST_STARTED": str(started)})
    assert outcome.code == exits.SAME, log
    host = dict(part.split("=", 1) for part in started.read_text().split())["host"]
    assert not Path(host).exists()  # the server and its directory are gone with the run
    assert load(tmp_path / "results" / "langgraph-0.0.1.json").environment["services"]["postgresql"][0].isdigit()


OWN_DATABASES = """
import importlib.util

# pgserver's psql, found without importing pgserver: its import asks platformdirs for a runtime directory,
# which in an unprivileged run's user namespace (uid 0 there, every parent owned by nobody) raises PermissionError.
PSQL = str(Path(importlib.util.find_spec("pgserver").submodule_search_locations[0]) / "pginstall" / "bin" / "psql")


def sql(dsn, statement):
    return subprocess.run([PSQL, dsn, "-tAc", statement], capture_output=True, text=True, check=True).stdout.strip()


def observe(obs):
    name = obs.database_name
    sql(obs.postgres_dsn("postgres"), f'CREATE DATABASE "{name}"')  # fails if another observation made it
    dsn = obs.postgres_dsn(name)
    found = sql(dsn, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
    sql(dsn, "CREATE TABLE seen (who text)")
    with open(os.environ["FANIN_TEST_DATABASES"], "a") as out:
        out.write(f"{name} {found}\\n")
    obs.record({"tables": found}, label="made", detail="made", hazard="safe")


@probe("langgraph/dummy/first-database", title="an observation's own database", claim=CLAIM)
def test_first(obs):
    observe(obs)


@probe("langgraph/dummy/second-database", title="another observation's own database", claim=CLAIM)
def test_second(obs):
    observe(obs)
"""


def test_two_observations_never_share_a_database_and_each_starts_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the cell's in-memory server, each observation's database (obs.database_name) is its own and new: the
    second observation neither finds the first one's database nor its table."""
    pytest.importorskip("pgserver")
    from fanin.run import services

    monkeypatch.setattr(services, "needs_postgres", lambda framework, targets=(): True)
    made = tmp_path / "databases"
    outcome, log = run(tmp_path, OWN_DATABASES, env={"FANIN_TEST_DATABASES": str(made)})
    assert outcome.code == exits.SAME, log
    rows = [line.split() for line in made.read_text().splitlines()]
    assert len(rows) == 2 and rows[0][0] != rows[1][0], rows
    assert [found for _, found in rows] == ["0", "0"]


def test_a_server_that_does_not_start_ends_the_cell_as_could_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pgserver_lock_held: Callable[[], None]
) -> None:
    """pytest started beside the server; when the server cannot start, pytest is ended and the reason is the cell's."""
    from fanin.run import services

    monkeypatch.setattr(services, "needs_postgres", lambda framework, targets=(): True)
    monkeypatch.setenv("FANIN_PG_START_SECONDS", "2")
    previous = tmp_path / "results" / "langgraph-0.0.1.json"
    previous.parent.mkdir(parents=True)
    previous.write_text("the previous result set")
    started = tmp_path / "started"
    outcome, log = run(tmp_path, USES_POSTGRES, env={"FANIN_TEST_STARTED": str(started)})
    pgserver_lock_held()
    assert outcome.code == exits.NOT_RUN, log
    assert outcome.reason is not None and "PostgreSQL did not start within 2 s: pgserver's lock" in outcome.reason
    assert previous.read_text() == "the previous result set" and not started.exists()


def test_a_matrix_runs_failed_server_fails_its_other_cells_at_once_without_starting_pytest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A matrix run starts one server; once it has failed, every later cell that needs it is "could not run" with
    the same reason straight away: no pytest is started to be ended, no second start is tried (a failing server
    cost each LangGraph and ADK cell ~28 s on a fresh machine)."""
    from fanin.run import services

    starts: list[int] = []

    def cannot_start() -> str:
        starts.append(1)
        raise services.ServiceError("initdb failed (127): cannot load libpq")

    monkeypatch.setattr(services, "needs_postgres", lambda framework, targets=(): True)
    monkeypatch.setattr(services, "_system_user", cannot_start)
    started = tmp_path / "started"
    with services.shared() as pool:
        first, log = run(tmp_path, USES_POSTGRES, env={"FANIN_TEST_STARTED": str(started)}, postgres=pool)
        assert first.code == exits.NOT_RUN and first.reason is not None and "libpq" in first.reason, log
        second, log = run(tmp_path, USES_POSTGRES, env={"FANIN_TEST_STARTED": str(started)}, postgres=pool)
    assert second.code == exits.NOT_RUN and second.reason == first.reason, log
    assert "attempt 1" not in log and not started.exists()  # the second cell started no pytest
    assert starts == [1]  # one start for the whole run


def test_a_signal_while_the_server_starts_is_interrupted_not_could_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pgserver_lock_held: Callable[[], None]
) -> None:
    """A signal that lands while the cell's PostgreSQL is starting (here: it cannot start, its lock is held) ends
    the cell as interrupted (130), as a signal anywhere else does; the server's failure is not the cell's."""
    from fanin.run import services

    monkeypatch.setattr(services, "needs_postgres", lambda framework, targets=(): True)
    monkeypatch.setenv("FANIN_PG_START_SECONDS", "2")  # the server fails; the signal's mark is already there
    monkeypatch.setattr(one_cell.CHILDREN, "stopping", "SIGTERM")  # the handler's mark, as a signal leaves it
    previous = tmp_path / "results" / "langgraph-0.0.1.json"
    previous.parent.mkdir(parents=True)
    previous.write_text("the previous result set")
    outcome, log = run(tmp_path, USES_POSTGRES, env={"FANIN_TEST_STARTED": str(tmp_path / "started")})
    pgserver_lock_held()
    assert outcome.code == exits.INTERRUPTED, (outcome, log)
    assert outcome.reason is not None and outcome.reason.startswith("interrupted by SIGTERM"), outcome.reason
    assert previous.read_text() == "the previous result set"
