"""The adapter protocol (docs/ADAPTERS.md) as a framework's maintainers meet it: an adapter run as a program,
its every message checked against the JSON Schema the model makes, its answers graded by the one grader."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import jsonschema
import pytest

from fanin.model import matrix, scenarios, schema
from fanin.model.errors import FaninError
from fanin.model.results import Observation, load
from fanin.model.source import REPO_ROOT
from fanin.project import audit
from fanin.run import adapters, node_cell

MATRIX = matrix.load()
PROTOCOL = jsonschema.Draft202012Validator(schema.adapter_protocol())
ENV = {**os.environ, "PYTHONPATH": f"{REPO_ROOT / 'suites'}{os.pathsep}{REPO_ROOT}"}


def test_the_pydantic_graph_adapter_speaks_the_protocol_as_a_program() -> None:
    _speaks_the_protocol("pydantic_graph")


def test_the_openai_agents_adapter_speaks_the_protocol_as_a_program() -> None:
    """The SDK's adapter (parallel tool calls of one scripted model turn) keeps stdout to the protocol: no log,
    no trace exporter's output, and observes as a program what the cell's probes observed in process."""
    _speaks_the_protocol("openai_agents")


def test_the_strands_adapter_speaks_the_protocol_as_a_program_under_the_cells_hash_seed() -> None:
    """Strands' adapter (GraphBuilder entry points, invocation_state) as a program: a join's inputs come in its
    edge set's hash order, so it observes what the cell did under the seed the cell's probes fix."""
    _speaks_the_protocol("strands", {**ENV, "PYTHONHASHSEED": "0"})


def _speaks_the_protocol(key: str, env: dict[str, str] = ENV) -> None:
    python = audit.python_of(MATRIX.newest(key))
    command = [python, str(REPO_ROOT / "suites" / key / "scenario_adapter.py")]
    chosen = list(scenarios.catalogue().values())
    capabilities, found, session = adapters.run(command, chosen, env=env)
    assert session.process.returncode == 0  # stop ends it
    for message in [*session.sent, *session.received]:
        errors = list(PROTOCOL.iter_errors(message))
        assert not errors, (message, errors[0].message)
    assert session.sent[0] == {"cmd": "start", "protocol": scenarios.PROTOCOL} and session.sent[-1] == {"cmd": "stop"}
    runs = [m for m in session.sent if m["cmd"] == "run"]
    supported = set(capabilities["supports"])
    expressible = [s for s in chosen if set(s.primitives()) <= supported]
    assert len(runs) == sum(len(s.orders) for s in expressible) == len(session.received) - 1
    assert capabilities["framework"] == key and capabilities["language"] == "python"
    assert set(found) == {s.id for s in chosen}
    for s in chosen:  # what it can express runs; what it cannot is n/a with its reason, never skipped
        if s in expressible:  # observed, or n/a with the reason the release gave at run time (never a bare one)
            run_na = found[s.id].hazard == "n/a" and "does not express" not in found[s.id].detail
            assert found[s.id].outcome == "ok" or run_na, s.id
        else:
            assert found[s.id].hazard == "n/a" and "express" in found[s.id].detail, (s.id, found[s.id])
    assert found["read-await-write"].hazard == "silent"  # one shared state object: an increment is lost
    _same_as_the_cells(MATRIX.newest(key), found)


@pytest.mark.parametrize(
    ("framework", "hazards"),
    [
        # ADK: one session state, each event's delta applied as it arrives (the adkjs adapter's answers).
        ("adk", {"same-key-two-writers": "silent", "read-await-write": "silent", "fan-in-order": "order-coupled"}),
        # deepagents: the parent's keys are last-value channels; the task calls fold in tool-call order.
        ("deepagents", {"same-key-two-writers": "loud", "read-await-write": "loud", "fan-in-order": "safe"}),
    ],
)
def test_an_adapter_whose_branches_write_by_yielding_or_by_tool_updates_observes_what_its_cell_did(
    framework: str, hazards: dict[str, str]
) -> None:
    """ADK's (a branch writes by yielding events, Script.walk) and deepagents' (a subagent's update through the
    `task` tool) adapters, run as programs: every message per the schema, the same observations as the cell's."""
    cell = MATRIX.newest(framework)
    command = [audit.python_of(cell), str(REPO_ROOT / "suites" / framework / "scenario_adapter.py")]
    capabilities, found, session = adapters.run(list(command), list(scenarios.catalogue().values()), env=ENV)
    assert session.process.returncode == 0
    for message in [*session.sent, *session.received]:
        assert not list(PROTOCOL.iter_errors(message)), message
    assert (capabilities["framework"], capabilities["version"]) == (framework, cell.version)
    assert {s: found[s].hazard for s in hazards} == hazards
    _same_as_the_cells(cell, found)


def _same_as_the_cells(cell: matrix.Cell, found: dict[str, Observation]) -> None:
    """The adapter run as a program observes what the cell's probes, talking to it in process, observed."""
    reference = load(cell.reference_path).observations
    for scenario_id, observation in found.items():
        assert observation.behaviour == reference[f"{cell.framework.key}/scenario/{scenario_id}"].behaviour


def _fake(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "adapter.py"
    script.write_text("import json, sys\n" + body, encoding="utf-8")
    return [sys.executable, str(script)]


CAPABLE = json.dumps(
    {"framework": "toy", "version": "1", "protocol": 1, "language": "python", "supports": list(scenarios.PRIMITIVES)}
)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        # Each reads the start message first: one that exits before it would race the harness's write.
        ("sys.stdin.readline(); sys.exit(0)\n", "ended without answering 'start'"),
        ("sys.stdin.readline(); print('hello', flush=True)\n", "not JSON"),
        (
            "sys.stdin.readline(); print(json.dumps({'framework': 'toy'}), flush=True)\n",
            "capabilities name its version",
        ),
        (
            (
                f"sys.stdin.readline(); print({CAPABLE!r}, flush=True); sys.stdin.readline();"
                " print(json.dumps({'observed': {}}), flush=True)\n"
            ),
            "broke the protocol",
        ),
    ],
)
def test_an_adapter_that_breaks_the_protocol_is_one_clear_line_and_ends(tmp_path: Path, body: str, said: str) -> None:
    with pytest.raises(adapters.AdapterFault, match=said) as raised:
        adapters.run(_fake(tmp_path, body), [scenarios.catalogue()["read-await-write"]])
    assert raised.value.exit_code == 3


def test_an_adapter_that_cannot_express_a_primitive_gives_n_a_and_is_never_asked_to_run(tmp_path: Path) -> None:
    cannot = json.dumps(
        {
            "framework": "toy",
            "version": "1",
            "protocol": 1,
            "language": "python",
            "supports": ["turn", "write", "join.all"],
            "cannot": {"read": "branches get no state"},
        }
    )
    body = f"sys.stdin.readline(); print({cannot!r}, flush=True)\nfor line in sys.stdin: sys.exit(0 if 'stop' in line else 5)\n"
    _, found, session = adapters.run(_fake(tmp_path, body), [scenarios.catalogue()["read-await-write"]])
    observation = found["read-await-write"]
    assert (observation.outcome, observation.hazard) == ("n/a", "n/a")
    assert "cannot express read: branches get no state" in observation.value["reason"]
    assert session.process.returncode == 0  # it got stop, never a run


def test_no_command_is_bad_input() -> None:
    with pytest.raises(FaninError, match="name the adapter's command") as raised:
        adapters.run([], [])
    assert raised.value.exit_code == 2


def test_the_langgraphjs_adapter_speaks_the_same_protocol_as_a_program() -> None:
    """The Node adapter, run by node in its cell's directory (the framework installed as the cell's lock pins it)."""
    cell = MATRIX.newest("langgraphjs")
    directory = node_cell.ensure(cell.id, cell.lock_path, framework=(cell.framework.package, cell.version))
    suite = node_cell._copy_suite(directory, "langgraphjs")
    chosen = list(scenarios.catalogue().values())
    command = ["node", str(suite / "langgraphjs" / "scenario_adapter.mjs")]
    capabilities, found, session = adapters.run(command, chosen, cwd=directory)
    assert session.process.returncode == 0
    for message in [*session.sent, *session.received]:
        assert not list(PROTOCOL.iter_errors(message)), message
    assert (capabilities["framework"], capabilities["language"]) == ("langgraphjs", "javascript")
    assert capabilities["version"] == cell.version
    assert found["same-key-two-writers"].value["orders"]["a,b"]["raises"] == "InvalidUpdateError"
    _same_as_the_cells(cell, found)


def test_the_adkjs_adapter_keeps_standard_output_for_the_protocol_while_adk_warns_there() -> None:
    """@google/adk writes a WARN line to standard output as it loads; the kit's `serve` sends what is not an
    answer to standard error, so `fanin scenarios -- node scenario_adapter.mjs` reads only the protocol there
    (before, the first line it read was ADK's warning: "not JSON", exit 3)."""
    cell = MATRIX.newest("adkjs")
    directory = node_cell.ensure(cell.id, cell.lock_path, framework=(cell.framework.package, cell.version))
    suite = node_cell._copy_suite(directory, "adkjs")
    command = ["node", str(suite / "adkjs" / "scenario_adapter.mjs")]
    capabilities, found, session = adapters.run(command, list(scenarios.catalogue().values()), cwd=directory)
    assert session.process.returncode == 0
    for message in [*session.sent, *session.received]:
        assert not list(PROTOCOL.iter_errors(message)), message
    assert (capabilities["framework"], capabilities["version"]) == ("adkjs", cell.version)
    _same_as_the_cells(cell, found)


def test_the_mastra_adapter_runs_on_its_cells_node_release_and_observes_what_the_cell_did() -> None:
    """Mastra declares Node >= 22.13: its adapter runs under the release the cell names (installed from the npm
    registry by fanin.run.node_release), observes the one shared workflow state losing an increment, and
    answers as its cell's probes did. A release without workflow state says so per primitive (n/a)."""
    cell = MATRIX.newest("mastra")
    release = cell.setting("node")
    assert release is not None  # the machine's Node 20 is below what @mastra/core 1.x declares
    node = node_cell.node_binary(release)
    directory = node_cell.ensure(cell.id, cell.lock_path, framework=(cell.framework.package, cell.version), node=node)
    suite = node_cell._copy_suite(directory, "mastra")
    chosen = list(scenarios.catalogue().values())
    command = [str(node), str(suite / "mastra" / "scenario_adapter.mjs")]
    capabilities, found, session = adapters.run(command, chosen, cwd=directory)
    assert session.process.returncode == 0
    for message in [*session.sent, *session.received]:
        assert not list(PROTOCOL.iter_errors(message)), message
    assert (capabilities["framework"], capabilities["version"]) == ("mastra", cell.version)
    assert found["read-await-write"].hazard == "silent" and found["fan-in-order"].hazard == "safe"
    _same_as_the_cells(cell, found)


def test_the_scenarios_command_prints_each_scenario_and_says_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fanin.__main__ import main

    # It reads stop too: one that exits once it answered start races the harness's write of stop (a broken pipe).
    capable = json.dumps(json.dumps({**json.loads(CAPABLE), "supports": []}))
    body = f"sys.stdin.readline(); print({capable}, flush=True); sys.stdin.readline()\n"
    assert main(["scenarios", "--scenario", "fan-in-order", "--", *_fake(tmp_path, body)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "toy 1 (python adapter)" and "fan-in-order" in out and "n/a" in out
    assert main(["scenarios", "--scenario", "nope", "--", "true"]) == 2
    assert capsys.readouterr().err.startswith("fanin: error: no scenario nope in scenarios/")
    assert main(["scenarios"]) == 2
    assert "name the adapter's command" in capsys.readouterr().err
    assert main(["scenarios", "--", str(tmp_path / "missing")]) == 3
    assert capsys.readouterr().err.count("\n") == 1  # one line
