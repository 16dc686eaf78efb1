"""`fanin record`: the write relation a user's own test suite exercises (tests/data/record_*: apps in the shapes
users write, each with its own tests), on the newest LangGraph cell's interpreter."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fanin import __main__ as cli
from fanin.model import matrix
from fanin.project import audit, record

MATRIX = matrix.load()
DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def python() -> str:
    return audit.python_of(MATRIX.newest("langgraph"))


def _summary(out: str) -> str:
    """pytest's last line: how many passed and failed (the tests' own outcome)."""
    return next(
        line for line in reversed(out.splitlines()) if " in " in line and ("passed" in line or "failed" in line)
    )


def test_a_reducer_written_in_one_superstep_by_the_users_tests_is_seen(python: str, tmp_path: Path) -> None:
    facts = record.record([str(DATA / "record_app"), "-q", "-p", "no:cacheprovider"], MATRIX, python)
    (graph,) = facts["inspected"]
    seen = graph["recorded"]
    assert (seen["runs"], len(seen["tests"]), seen["never_ran"]) == (2, 2, ["review"])
    assert seen["writers"]["notes"] == ["research_papers", "research_web"]
    assert seen["writers"]["summary"] == ["research_papers", "summarise"]  # two writers, never in one superstep
    (one,) = record.audits(facts, MATRIX)
    found = {(f.pattern, f.certainty) for f in one.findings}
    assert found == {("order-sensitive reducer", "recorded")}, found  # summary's two writers never meet: no finding
    (finding,) = one.findings
    assert "test_both_researchers_contribute, superstep 1" in finding.how and finding.evidence
    text = record.markdown(facts, [one])
    assert "Never ran in these tests: review." in text and "A lower bound" in text
    assert (
        "| `summary` | LastValue (one write per superstep; no reducer) | research_papers, summarise | never |" in text
    )


def test_writes_seen_apart_are_crossed_with_the_structure_and_the_tests_outcome_is_their_own(
    python: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    args = [str(DATA / "record_routes"), "-q", "-p", "no:cacheprovider"]
    plain = subprocess.run([python, "-m", "pytest", *args], capture_output=True, text=True, cwd=DATA.parent.parent)
    capfd.readouterr()
    out = tmp_path / "record.json"
    assert cli.main(["record", "--python", python, "--json", str(out), "--", *args]) == 1  # one test fails
    said = capfd.readouterr().out
    assert _summary(said).split(" in ")[0] == _summary(plain.stdout).split(" in ")[0] == "1 failed, 2 passed"
    assert said.rstrip().endswith("the record covers the runs they made")
    (entry,) = json.loads(out.read_text())["audits"]
    (finding,) = entry["findings"]
    assert (finding["pattern"], finding["certainty"]) == ("order-sensitive reducer", "recorded-static")
    assert "never seen in one superstep by them" in finding["precondition"]


def test_record_refuses_bad_input_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["record", "--fail-on", "nope", "--", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fanin: error: --fail-on nope: hazards are") and "\n" not in err
    assert cli.main(["record", "--python", str(tmp_path / "no-python"), "--", str(tmp_path)]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("fanin: error: cannot run ") and "\n" not in err


def test_adk_state_writes_of_parallel_branches_are_seen_per_invocation_and_crossed_with_the_tree() -> None:
    """An ADK app's own tests (its own stub model): two ParallelAgent branches writing one key in one invocation
    are seen; a key each branch writes only in another test is the tree's word; a reviewer no test ran is named.
    The environment has no LangGraph: the recorder of a framework that is absent is skipped, never a crash."""
    python = audit.python_of(MATRIX.newest("adk"))
    args = [str(DATA / "record_adk"), "-q", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"]
    facts = record.record(args, MATRIX, python)
    wrapped = {"adk": ["BaseAgent.run_async", "_node_runner_utils.run_node_async"]}  # ADK 2.x: the Workflows' entry too
    assert (facts["pytest_exit"], facts["errors"], facts["wrapped"]) == (0, [], wrapped)
    (tree,) = facts["inspected"]
    seen = tree["recorded"]
    assert (seen["runs"], len(seen["tests"]), seen["never_ran"]) == (3, 3, ["reviewer"])
    assert seen["writers"]["sources"] == seen["writers"]["flag"] == ["researcher_papers", "researcher_web"]
    assert seen["writers"]["report"] == ["synthesiser"]
    assert seen["met_by_key"] == {"sources": [["researcher_papers", "researcher_web"]]}
    (one,) = record.audits(facts, MATRIX)
    found = {(f.where[1].split(":")[0], f.certainty) for f in one.findings}
    assert found == {("state key 'sources'", "recorded"), ("state key 'flag'", "recorded-static")}, found
    assert all(f.pattern == "parallel branches write the same state key" and f.evidence for f in one.findings)
    text = record.markdown(facts, [one])
    assert "Never ran in these tests: reviewer." in text
    assert (
        "| `flag` | state_delta (no merge: the last event's value is kept) | researcher_papers, researcher_web | never |"
        in text
    )


def test_agent_framework_set_state_of_one_superstep_is_seen_and_a_factorys_workflows_are_one_graph() -> None:
    """An Agent Framework app built by a factory (a new workflow per test): its runs are one graph; two reviewers
    that set one key in one superstep are seen; a key each sets only in its own test is the edges' word."""
    python = audit.python_of(MATRIX.newest("agent_framework"))
    facts = record.record([str(DATA / "record_af"), "-q", "-p", "no:cacheprovider"], MATRIX, python)
    assert (facts["pytest_exit"], facts["errors"]) == (0, [])
    assert facts["wrapped"]["agent_framework"] == [
        "Workflow.run",
        "RunnerImpl.run_until_convergence",
        "WorkflowContext.set_state",
    ]
    (workflow,) = facts["inspected"]
    seen = workflow["recorded"]
    assert (workflow["name"], seen["runs"], len(seen["tests"]), seen["never_wrote"]) == (
        "workflow from dispatch",
        3,
        3,
        ["aggregate"],
    )
    assert seen["met_by_key"] == {"verdict": [["legal", "security"]]}
    (one,) = record.audits(facts, MATRIX)
    found = {(f.where[1].split(":")[0], f.certainty) for f in one.findings}
    assert found == {("shared-state key 'verdict'", "recorded"), ("shared-state key 'escalation'", "recorded-static")}
    assert all(f.probes == ["agent_framework/same-key/last-writer"] and f.evidence for f in one.findings)
    assert "superstep 2: legal and security each set 'verdict'" in next(
        f.how for f in one.findings if f.certainty == "recorded"
    )
    assert "Never seen writing state in these tests: aggregate." in record.markdown(facts, [one])


def test_adk_workflow_nodes_state_writes_are_seen_per_node_and_crossed_with_the_graph() -> None:
    """An ADK 2.x Workflow app's own tests: two parallel function nodes writing one key in one invocation are seen
    (their writes are authored by the Workflow; the node is its event's node_info.path); a key each writes only in
    another test is the graph's word; two sequential writers of one key (plan, then write) are no finding."""
    python = audit.python_of(MATRIX.newest("adk"))
    facts = record.record([str(DATA / "record_adk_workflow"), "-q", "-p", "no:cacheprovider"], MATRIX, python)
    assert (facts["pytest_exit"], facts["errors"]) == (0, [])
    assert facts["wrapped"]["adk"] == ["BaseAgent.run_async", "_node_runner_utils.run_node_async"]
    (workflow,) = facts["inspected"]
    seen = workflow["recorded"]
    assert (workflow["name"], seen["runs"], len(seen["tests"]), seen["never_ran"]) == ("research", 3, 3, [])
    assert seen["writers"] == {
        "flag": ["search_papers", "search_web"],
        "report": ["write"],
        "sources": ["search_papers", "search_web"],
        "topic": ["plan", "write"],
    }
    assert seen["met_by_key"] == {"sources": [["search_papers", "search_web"]]}
    assert workflow["parallel"] == [["search_papers", "search_web"]]
    (one,) = record.audits(facts, MATRIX)
    found = {(f.where[1].split(":")[0], f.certainty) for f in one.findings}
    assert found == {("state key 'sources'", "recorded"), ("state key 'flag'", "recorded-static")}, found
    assert all(f.probes == ["adk/workflow/same-key"] and f.evidence for f in one.findings)
    assert all(f.hazard == "silent" for f in one.findings), [f.hazard for f in one.findings]
    text = record.markdown(facts, [one])
    assert "| `topic` | state_delta (no merge: the last event's value is kept) | plan, write | never |" in text


def test_a_graph_whose_state_holds_a_managed_value_is_named_and_crossed_with_its_merge_policies(python: str) -> None:
    """A prebuilt agent's state holds `remaining_steps`, a managed value: the graph lists it among its channels, a
    run's loop does not. The run is still matched to its graph, so its merge policies cross the writes seen."""
    facts = record.record([str(DATA / "record_managed"), "-q", "-p", "no:cacheprovider"], MATRIX, python)
    (graph,) = facts["inspected"]
    assert graph["name"] == "LangGraph" and {c["key"] for c in graph["channels"]} >= {"checks", "answer"}
    assert graph["recorded"]["writers"]["checks"] == ["check_facts", "check_style"]
    (one,) = record.audits(facts, MATRIX)
    assert {(f.pattern, f.certainty) for f in one.findings} == {("order-sensitive reducer", "recorded")}
