"""`fanin audit` where users run it: a venv with the framework at a reference version and fanin pip-installed.

The venv holds only what a plain LangGraph app installs (langgraph, no checkpointer companions)
and this checkout, installed as README says (`pip install` of the checkout, here through uv pip).
Then the harness side of the audit on small graphs written here: import failures, package-relative
imports, a failed dry run, and isolation (the dry run's traffic goes to loopback only, which the
network namespace makes a different loopback).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from fanin.model import matrix
from fanin.model.source import REPO_ROOT
from fanin.project import audit
from fanin.run import isolation, venvs

MATRIX = matrix.load()
CORPUS = REPO_ROOT / "examples" / "corpus"
# The venv is built once, in a module fixture whose length is the machine's load (each of its steps has its
# own timeout): pytest's 120 s bound applies to each test's own body only.
pytestmark = pytest.mark.timeout(func_only=True)


@pytest.fixture(scope="module")
def user_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cell = MATRIX.newest("langgraph")
    root = tmp_path_factory.mktemp("user") / "venv"
    uv = venvs.uv_binary()
    subprocess.run([uv, "venv", "-q", "-p", cell.python, str(root)], check=True, timeout=300)
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "-q",
            "--python",
            str(root / "bin" / "python"),
            f"langgraph=={cell.version}",
            str(REPO_ROOT),
        ],
        check=True,
        timeout=900,
    )
    return root


def fanin_in(
    venv: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(venv / "bin" / "fanin"), *args],
        capture_output=True,
        text=True,
        cwd=cwd or venv.parent,
        env={**inherited, **(env or {})},
        timeout=600,
    )


def test_audit_in_a_users_venv_finds_the_removed_reducer(user_venv: Path) -> None:
    installed = subprocess.run(
        [
            str(user_venv / "bin" / "python"),
            "-c",
            "import importlib.util as u; print(u.find_spec('langgraph.checkpoint.postgres') is None)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert installed.stdout.strip() == "True"  # a plain app: no checkpointer companions
    given = json.dumps({"query": "tea", "results": [], "answer": ""})
    done = fanin_in(user_venv, "audit", f"{CORPUS / 'lg_reducer_removed.py'}:graph", "--input", given)
    assert done.returncode == 1, done.stdout + done.stderr
    cell = MATRIX.newest("langgraph")
    assert f"langgraph {cell.version} installed; evidence from reference cell `{cell.id}`" in done.stdout
    assert "### 1. plain key written in parallel — **loud**" in done.stdout
    assert "key 'results'" in done.stdout
    assert f"fanin {audit.DRY_RUN}, isolated from the network" in done.stdout
    assert "| 1 | web_search | `results` |" in done.stdout
    assert "No fan-in hazard found" not in done.stdout


GRAPH = """
from typing import TypedDict
from langgraph.graph import END, START, StateGraph
{imports}

class State(TypedDict):
    x: int
    y: int


def first(state: State) -> dict:
{body}
    return {{"x": 1}}


def second(state: State) -> dict:
    return {{"y": 2}}


builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("second", second)
builder.add_edge(START, "first")
builder.add_edge(START, "second")
builder.add_edge("first", END)
builder.add_edge("second", END)
graph = builder.compile()
"""


def _write(path: Path, imports: str = "", body: str = "    pass") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(GRAPH.format(imports=imports, body=body), encoding="utf-8")
    return path


def test_a_package_relative_import_loads_from_the_file_path(user_venv: Path, tmp_path: Path) -> None:
    package = tmp_path / "app" / "agents"
    for folder in (tmp_path / "app", package):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    (package / "helpers.py").write_text("VALUE = 1\n")
    _write(package / "graph.py", imports="from .helpers import VALUE")
    done = fanin_in(user_venv, "audit", "app/agents/graph.py:graph", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "## fanin audit of `app/agents/graph.py:graph`" in done.stdout


def test_an_import_that_fails_in_user_code_shows_the_chain_and_exits_3(user_venv: Path, tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text("def load():\n    raise KeyError('OPENAI_API_KEY')\n")
    _write(tmp_path / "graph.py", imports="import settings\nCONFIG = settings.load()")
    done = fanin_in(user_venv, "audit", "graph.py:graph", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "cannot import graph.py:graph: KeyError: 'OPENAI_API_KEY'" in done.stderr
    assert "import chain (your code, last frames):" in done.stderr
    assert "settings.py:2 in load: raise KeyError('OPENAI_API_KEY')" in done.stderr
    assert "Traceback (most recent call last)" not in done.stderr
    full = fanin_in(user_venv, "audit", "graph.py:graph", "--traceback", cwd=tmp_path)
    assert full.returncode == 3 and "Traceback (most recent call last)" in full.stderr
    bad = fanin_in(user_venv, "audit", "graph.py", cwd=tmp_path)
    assert bad.returncode == 2 and "is not FILE.py:ATTR" in bad.stderr
    relative = tmp_path / "loose"
    _write(relative / "graph.py", imports="from .helpers import VALUE")
    hint = fanin_in(user_venv, "audit", "loose/graph.py:graph", cwd=tmp_path)
    assert hint.returncode == 3, hint.stderr
    assert "attempted relative import" in hint.stderr and "module form" in hint.stderr


def test_a_failed_dry_run_is_reported_and_keeps_the_audit_incomplete(user_venv: Path, tmp_path: Path) -> None:
    _write(tmp_path / "graph.py", body="    raise TypeError('bad payload')")
    done = fanin_in(user_venv, "audit", "graph.py:graph", "--input", '{"x": 0, "y": 0}', cwd=tmp_path)
    assert done.returncode == audit.INCOMPLETE, done.stdout + done.stderr
    assert "**The dry run failed:** `TypeError: bad payload (raised at " in done.stdout  # and where, in the user's file
    assert "graph.py:12 in first)`" in done.stdout
    assert "No fan-in hazard found" not in done.stdout
    assert "| 1 | second | `y` |" in done.stdout


@pytest.mark.skipif(not isolation.namespace_prefix(), reason="no network namespace on this machine")
def test_the_dry_run_cannot_reach_the_machines_loopback(user_venv: Path, tmp_path: Path) -> None:
    """A node connects to a port listening on this machine's loopback (raw _socket, past the in-process
    block): in the namespace's own loopback nobody listens, so nothing arrives here. Once the audit has ended, a
    connection that reached this port waits in its listen backlog, so one accept that does not wait reads it."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    body = (
        "    import _socket\n"
        "    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)\n"
        "    s.settimeout(2)\n"
        f"    s.connect(('127.0.0.1', {port}))\n"
    )
    _write(tmp_path / "graph.py", body=body)
    try:
        done = fanin_in(user_venv, "audit", "graph.py:graph", "--input", '{"x": 0, "y": 0}', cwd=tmp_path)
        server.setblocking(False)
        try:
            arrived: object = server.accept()
        except BlockingIOError:
            arrived = None
    finally:
        server.close()
    assert arrived is None, arrived
    assert done.returncode == audit.INCOMPLETE, done.stdout + done.stderr
    assert "(a network namespace with loopback only)" in done.stdout
    assert "**The dry run failed:** `ConnectionRefusedError" in done.stdout


# A daemon as servers start one: forks, the child makes a session of its own, the parent returns once the
# daemon has written its pid. Its stdout and stderr are the dry run's, inherited.
DAEMON = """
import os, sys, time
r, w = os.pipe()
if os.fork():
    os.close(w)
    os.read(r, 1)
    os._exit(0)
os.setsid()
with open(sys.argv[1], "w") as handle:
    handle.write(str(os.getpid()))
os.write(w, b"x")
time.sleep(3600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_daemon_the_dry_run_starts_does_not_outlive_the_audit(user_venv: Path, tmp_path: Path) -> None:
    """A node starts a detached process that inherits the dry run's output: the audit ends when the dry run ends
    (it waited 300 s for the pipe the daemon held, then exit 3), and the daemon ends with it (it was left running)."""
    pidfile = tmp_path / "daemon.pid"
    (tmp_path / "daemon.py").write_text(DAEMON, encoding="utf-8")
    body = (
        "    import subprocess, sys\n"
        f"    subprocess.run([sys.executable, {str(tmp_path / 'daemon.py')!r}, {str(pidfile)!r}], check=True)"
    )
    _write(tmp_path / "graph.py", body=body)
    try:
        done = fanin_in(user_venv, "audit", "graph.py:graph", "--input", '{"x": 0, "y": 0}', cwd=tmp_path)
        pid = int(pidfile.read_text())
        assert done.returncode == 0, done.stdout + done.stderr
        assert "| 1 | first | `x` |" in done.stdout and "No fan-in hazard found" in done.stdout
        assert not _alive(pid)
    finally:
        if pidfile.exists() and _alive(int(pidfile.read_text())):
            os.kill(int(pidfile.read_text()), 9)


LOOPING = """
import threading
from typing import TypedDict
from langgraph.graph import END, START, StateGraph

class State(TypedDict):
    x: int


def first(state: State) -> dict:
    threading.Event().wait()  # never returns
    return {"x": 1}


def second(state: State) -> dict:
    return {"x": 2}


builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("second", second)
builder.add_edge(START, "first")
builder.add_edge(START, "second")
builder.add_edge("first", END)
builder.add_edge("second", END)
graph = builder.compile()
"""


def test_a_dry_run_that_never_finishes_keeps_the_static_findings_within_the_bound(
    user_venv: Path, tmp_path: Path
) -> None:
    """The bound is settable (the flag, else FANIN_AUDIT_DRY_RUN_SECONDS): the static findings are printed, the dry
    run is reported as not finished within it, and the exit code is audit's own (3, or 1 for a finding in --fail-on)."""
    (tmp_path / "graph.py").write_text(LOOPING, encoding="utf-8")
    given = ("--input", '{"x": 0}')
    bounded = {"FANIN_AUDIT_DRY_RUN_SECONDS": "1"}
    done = fanin_in(user_venv, "audit", "graph.py:graph", *given, "--fail-on", "silent", cwd=tmp_path, env=bounded)
    assert done.returncode == audit.INCOMPLETE, done.stdout + done.stderr
    assert "### 1. plain key written in parallel — **loud**" in done.stdout  # the static finding
    assert "**The dry run did not finish within 1 s** (the bound: --dry-run-seconds or" in done.stdout
    flagged = fanin_in(user_venv, "audit", "graph.py:graph", *given, "--dry-run-seconds", "0.5", cwd=tmp_path)
    assert flagged.returncode == 1, flagged.stdout + flagged.stderr  # loud is in the default --fail-on
    assert "**The dry run did not finish within 0.5 s**" in flagged.stdout
    for bad in ("0", "nan", "-3"):
        refused = fanin_in(user_venv, "audit", "graph.py:graph", *given, "--dry-run-seconds", bad, cwd=tmp_path)
        assert refused.returncode == 2 and refused.stderr.startswith("fanin: error: --dry-run-seconds="), bad
    refused = fanin_in(
        user_venv, "audit", "graph.py:graph", *given, cwd=tmp_path, env={"FANIN_AUDIT_DRY_RUN_SECONDS": "x"}
    )
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip() == "fanin: error: FANIN_AUDIT_DRY_RUN_SECONDS='x' is not a number of seconds"
