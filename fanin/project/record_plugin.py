"""The pytest plugin `fanin record` loads into the user's own test run (`-p fanin.project.record_plugin`).

It changes nothing the tests do: each installed framework with a recorder (suites/<key>/record.py)
wraps the calls it observes, the plugin notes which test is running, and when the session ends every
graph that ran is handed, with its runs, to the framework's inspector (suites/<key>/audit.py,
`recorded`), whose facts go to FANIN_RECORD_RESULT as one JSON object. pytest's own outcome and exit
status are the tests' own. Runs in the user's environment, so it stays importable on Python 3.10 and
imports no framework itself.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from fanin.model import contract
from fanin.project import audit_inspect


class _Session:
    """This run's recorders and what they saw (one object: a second session in one process starts clean)."""

    def __init__(self, suites: Path, frameworks: dict[str, dict[str, str]]) -> None:
        self.suites = suites
        self.recorders: dict[str, tuple[Any, Any]] = {}  # key -> (record module, its Recording)
        self.wrapped: dict[str, list[str]] = {}
        self.errors: list[str] = []
        self.started = time.monotonic()
        self.tests = 0
        self.packages = {key: fw["package"] for key, fw in frameworks.items()}
        for key, fw in frameworks.items():
            path = suites / key / "record.py"
            if not path.is_file() or not _importable(fw["module"]):
                continue
            try:
                spec = importlib.util.spec_from_file_location(f"fanin_record_{key}", path)
                assert spec is not None and spec.loader is not None
                recorder = importlib.util.module_from_spec(spec)
                sys.modules[spec.name] = recorder
                spec.loader.exec_module(recorder)
                recording = recorder.Recording()
                self.wrapped[key] = recorder.install(recording)
                self.recorders[key] = (recorder, recording)
            except Exception as exc:
                self.errors.append(f"{key}: the recorder did not start: {type(exc).__name__}: {exc}"[:300])

    def set_test(self, nodeid: str) -> None:
        for _, recording in self.recorders.values():
            recording.test = nodeid

    def facts(self, exitstatus: int) -> dict[str, Any]:
        inspected = []
        versions = {}
        for key, (recorder, recording) in self.recorders.items():
            inspector = audit_inspect.inspector(self.suites, key)
            if inspector is None:
                self.errors.append(f"{key}: no inspector (suites/{key}/audit.py) to read what its runs wrote")
                continue
            for graph, runs in recorder.runs_by_graph(recording):
                try:
                    inspected.append(inspector.recorded(graph, runs))
                except Exception:
                    self.errors.append(f"{key}: {traceback.format_exc(limit=3).strip().splitlines()[-1]}"[:300])
            self.errors += [f"{key}: {e}" for e in recording.errors[:5]]
        for key in self.recorders:
            versions[key] = _version(self.packages[key])
        return {
            "inspected": inspected,
            "versions": versions,
            "python": f"{sys.version_info[0]}.{sys.version_info[1]}",  # as audit_inspect says it: a cell's Python
            "wrapped": self.wrapped,
            "tests": self.tests,
            "pytest_exit": exitstatus,
            "seconds": round(time.monotonic() - self.started, 2),
            "errors": self.errors,
        }


def _importable(module: str) -> bool:
    """Whether `module` is installed: find_spec of `a.b` imports `a` and raises where `a` is missing."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


_session_key = pytest.StashKey[_Session]()


def pytest_configure(config: pytest.Config) -> None:
    suites = Path(os.environ.get(contract.RECORD_SUITES, ""))
    frameworks = json.loads(os.environ.get(contract.RECORD_FRAMEWORKS) or "{}")
    config.stash[_session_key] = _Session(suites, frameworks)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    session = item.config.stash[_session_key]
    session.set_test(item.nodeid)
    session.tests += 1
    yield
    session.set_test("")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(_session_key, None)
    target = os.environ.get(contract.RECORD_RESULT)
    if state is None or not target:
        return
    Path(target).write_text(json.dumps(state.facts(int(exitstatus)), default=str) + "\n", encoding="utf-8")
