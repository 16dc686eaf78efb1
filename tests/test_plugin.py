"""The pytest plugin on a dummy probe module: pass / changed / new / wording / timeout / probe-error / n/a.

Each case runs pytest in a subprocess (pytester), as a probe session does.
"""

import json
import shutil
from pathlib import Path

import pytest

from fanin.model.results import load

pytest_plugins = ["pytester"]

PROBES = """
import socket
import threading

from fanin.probe import Claim, probe

CLAIM = Claim("what the docs say", "https://example.org/doc")


@probe("langgraph/dummy/ok", title="records a value", claim=CLAIM)
def test_ok(obs):
    obs.record({"kept": ["A", "B"]}, label="both kept", detail="both kept", hazard="safe")


@probe("langgraph/dummy/async", title="async probes run too", claim=CLAIM)
async def test_async(obs):
    obs.record({"ran": "async"}, label="ran", detail="async ran", hazard="safe")


@probe("langgraph/dummy/raises", title="framework error is the answer", claim=CLAIM)
def test_raises(obs):
    with obs.framework():
        raise KeyError("At key 'value': one value per step <obj at 0x7f00aa11bb22>")


@probe("langgraph/dummy/not-applicable", title="API missing in this version", claim=CLAIM)
def test_not_applicable(obs):
    obs.need("fanin_no_such_module", "Send")


@probe("langgraph/dummy/hang", title="never returns", claim=CLAIM)
def test_hang(obs):
    threading.Event().wait()


@probe("langgraph/dummy/thread-hang", title="hangs in a worker thread that never ends", claim=CLAIM)
def test_thread_hang(obs):
    blocker = threading.Event()
    worker = threading.Thread(target=blocker.wait)
    worker.start()
    worker.join()


@probe("langgraph/dummy/broken", title="a bug in the probe", claim=CLAIM)
def test_broken(obs):
    {}["missing"]


@probe("langgraph/dummy/records-nothing", title="forgets to record", claim=CLAIM)
def test_records_nothing(obs):
    pass


@probe("langgraph/dummy/network", title="tries the network", claim=CLAIM)
def test_network(obs):
    try:
        socket.create_connection(("192.0.2.1", 80), timeout=1)
    except OSError:
        pass
    obs.record({"connected": False}, label="no network", detail="swallowed the error", hazard="safe")


@probe("langgraph/dummy/vacuous", title="could not show concurrency", claim=CLAIM)
def test_vacuous(obs):
    obs.vacuous("the writers did not share one superstep")
"""

INI = """
[pytest]
addopts = -p fanin.plugin -p no:cacheprovider
timeout = 2
timeout_method = signal
"""

EXPECTED_OUTCOMES = {
    "langgraph/dummy/ok": "ok",
    "langgraph/dummy/async": "ok",
    "langgraph/dummy/raises": "raises:KeyError",
    "langgraph/dummy/not-applicable": "n/a",
    "langgraph/dummy/hang": "timeout",
    "langgraph/dummy/thread-hang": "timeout",
    "langgraph/dummy/broken": "probe-error",
    "langgraph/dummy/records-nothing": "probe-error",
    "langgraph/dummy/network": "probe-error",
    "langgraph/dummy/vacuous": "vacuous",
}


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile(test_dummy=PROBES)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    results = pytester.path / "results.json"
    reference = pytester.path / "reference.json"
    return pytester.runpytest_subprocess(
        "--fanin-cell",
        "langgraph-0.0.1",
        "--fanin-framework",
        "langgraph",
        "--fanin-results",
        str(results),
        "--fanin-reference",
        str(reference),
        *args,
    )


def outcomes(path: Path) -> dict[str, str]:
    return {pid: o.outcome for pid, o in load(path).observations.items()}


def test_every_outcome_class_is_recorded_and_nothing_passes_silently(suite: pytest.Pytester) -> None:
    result = run(suite)
    assert outcomes(suite.path / "results.json") == EXPECTED_OUTCOMES
    result.stdout.fnmatch_lines(["*no reference observation for this cell*", "*= 3 failed, 7 new in *"])
    assert "passed" not in result.stdout.lines[-1]
    assert result.ret == 1


def test_new_fails_the_run_unless_accepted(suite: pytest.Pytester) -> None:
    strict = run(suite, "-k", "test_ok", f"--junitxml={suite.path / 'junit.xml'}")
    strict.stdout.fnmatch_lines(["* 1 new in *"])
    assert strict.ret == 1
    assert "no reference observation for this cell" in (suite.path / "junit.xml").read_text()
    accepted = run(suite, "-k", "test_ok", "--fanin-accept-new")
    accepted.stdout.fnmatch_lines(["* 1 new in *"])
    assert accepted.ret == 0


def test_accepting_new_never_hides_probe_errors(suite: pytest.Pytester) -> None:
    result = run(suite, "--fanin-accept-new")
    result.stdout.fnmatch_lines(["*= 3 failed, 7 new in *"])
    assert result.ret == 1


def test_observation_details(suite: pytest.Pytester) -> None:
    run(suite, "--fanin-accept-new")
    data = json.loads((suite.path / "results.json").read_text())
    observations = data["observations"]
    assert observations["langgraph/dummy/raises"]["detail"].startswith("raises KeyError:")
    assert "0x…" in observations["langgraph/dummy/raises"]["detail"]
    assert observations["langgraph/dummy/not-applicable"]["value"]["reason"].startswith(
        "no module fanin_no_such_module"
    )
    assert observations["langgraph/dummy/network"]["detail"] == "probe-error: network blocked: 192.0.2.1:80"
    assert observations["langgraph/dummy/hang"]["value"] == {"timeout_seconds": 2.0}
    assert data["probes"]["langgraph/dummy/ok"]["claim"]["source"] == "https://example.org/doc"
    assert len(data["probes"]["langgraph/dummy/ok"]["source_hash"]) == 6
    assert data["environment"]["packages"]["pytest"]
    assert data["cell"] == "langgraph-0.0.1" and data["framework"] == "langgraph"


def test_same_as_reference_passes_and_changed_fails_with_before_after(suite: pytest.Pytester) -> None:
    run(suite, "--fanin-accept-new")
    reference = suite.path / "reference.json"
    shutil.copy(suite.path / "results.json", reference)
    again = run(suite, "-k", "test_ok or test_raises or test_not_applicable or test_hang")
    again.assert_outcomes(passed=4)

    data = json.loads(reference.read_text())
    data["observations"]["langgraph/dummy/ok"]["value"] = {"kept": ["A"]}
    data["observations"]["langgraph/dummy/raises"]["detail"] = "raises KeyError: older wording"
    reference.write_text(json.dumps(data))
    changed = run(suite, "-k", "test_ok or test_raises")
    changed.stdout.fnmatch_lines(["* 1 failed, 8 deselected, 1 wording in *"])
    changed.stdout.fnmatch_lines(
        [
            "*behaviour changed against*reference.json*",
            "*langgraph/dummy/ok: changed*",
            "*value.kept*",
        ]
    )
    assert 'before: ["A"]\n      after:  ["A", "B"]' in changed.stdout.str()
    changed.stdout.fnmatch_lines(["*wording-only changes (label or detail)*", "*older wording*"])


def test_corrupt_reference_is_one_clear_line_and_loses_nothing(suite: pytest.Pytester) -> None:
    (suite.path / "reference.json").write_text('{"schema": 2, "cell": ')
    result = run(suite, "-k", "test_ok", "--fanin-accept-new")
    result.stderr.fnmatch_lines(["fanin: error: unusable reference*reference.json: not valid JSON*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert outcomes(suite.path / "results.json") == {"langgraph/dummy/ok": "ok"}


def test_duplicate_probe_ids_are_refused(pytester: pytest.Pytester) -> None:
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile(
        test_a=PROBES.split('@probe("langgraph/dummy/async"')[0],
        test_b='from fanin.probe import Claim, probe\n@probe("langgraph/dummy/ok", title="t", claim=Claim("c", "s"))\n'
        "def test_again(obs):\n    obs.record(1, label='l', detail='d', hazard='safe')\n",
    )
    result = pytester.runpytest_subprocess()
    result.stderr.fnmatch_lines(["*probe id langgraph/dummy/ok is declared twice*"])


def test_interrupted_run_leaves_the_previous_result_set(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_zz_interrupt="def test_interrupt():\n    raise KeyboardInterrupt\n")
    (suite.path / "results.json").write_text("previous")
    result = run(suite, "-k", "test_ok or test_interrupt")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert (suite.path / "results.json").read_text() == "previous"


def test_a_reference_probe_that_no_longer_exists_fails_the_run(suite: pytest.Pytester) -> None:
    run(suite, "--fanin-accept-new")  # every probe, so the reference knows them all
    reference = suite.path / "reference.json"
    data = json.loads((suite.path / "results.json").read_text())
    data["observations"]["langgraph/dummy/removed"] = data["observations"]["langgraph/dummy/ok"]
    reference.write_text(json.dumps(data))
    result = run(suite, "-k", "test_ok")  # the others are deselected, not gone
    result.stderr.fnmatch_lines(
        ["fanin: error: the reference holds 1 probe(s) that no longer exist (langgraph/dummy/removed)*"]
    )
    assert result.ret == 1


DIMENSIONED = """
import os

from fanin.probe import Claim, probe


@probe("langgraph/dummy/dims", title="runs per backend and mode", claim=Claim("c", "https://example.org"),
       backends=("memory", "sqlite", "postgres"), modes=("sync", "async"))
def test_dims(obs):
    if obs.backend == "postgres":
        obs.postgres_dsn()  # no server in this run: the observation is probe-error, never n/a
    (obs.scratch / "db.sqlite").write_text(obs.observation_id)
    obs.record({"backend": obs.backend, "mode": obs.mode, "scratch": sorted(p.name for p in obs.scratch.iterdir())},
               label=f"{obs.backend}/{obs.mode}", detail="ran", hazard="safe")
"""


def test_a_probe_with_dimensions_is_observed_once_per_variant(pytester: pytest.Pytester) -> None:
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile(test_dims=DIMENSIONED)
    run(pytester, "--fanin-accept-new")
    result = load(pytester.path / "results.json")
    assert {oid: o.label for oid, o in result.observations.items() if o.outcome == "ok"} == {
        "langgraph/dummy/dims": "memory/sync",
        "langgraph/dummy/dims[async]": "memory/async",
        "langgraph/dummy/dims[sqlite]": "sqlite/sync",
        "langgraph/dummy/dims[sqlite,async]": "sqlite/async",
    }
    postgres = result.observations["langgraph/dummy/dims[postgres]"]
    assert postgres.outcome == "probe-error" and "no PostgreSQL server" in postgres.detail
    assert result.observations["langgraph/dummy/dims[sqlite]"].value["scratch"] == ["db.sqlite"]
    assert result.probes["langgraph/dummy/dims"].dimensions == (
        ("backend", ("memory", "sqlite", "postgres")),
        ("mode", ("sync", "async")),
    )


def test_pytest_html_gets_each_observation_and_the_cell(suite: pytest.Pytester) -> None:
    page = suite.path / "cell.html"
    run(
        suite,
        "-k",
        "test_ok or test_raises",
        "--fanin-accept-new",
        "-p",
        "pytest_html",
        "-p",
        "pytest_metadata",
        f"--html={page}",
        "--self-contained-html",
    )
    text = page.read_text()
    assert "observation langgraph/dummy/ok" in text and "fanin cell" in text and "langgraph-0.0.1" in text


def test_the_plugin_keeps_its_session_state_in_one_object_not_in_module_globals() -> None:
    """Issue 36 §2: a second session in one process (pytester in-process, a resumed run) starts clean."""
    import fanin.plugin as plugin
    from fanin.run import companions

    mutable = (list, dict, set, companions.FailedImports)
    held = sorted(
        name for name, value in vars(plugin).items() if isinstance(value, mutable) and not name.startswith("__")
    )
    assert held == [], f"module-level session state in fanin.plugin: {held}"
