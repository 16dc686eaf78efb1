"""The comparison's core questions read the shared scenarios (reference/comparison.toml's `scenarios`): every
framework with an adapter answers a question a scenario answers, with an observation or n/a with its reason,
and a framework probe a scenario names as observing exactly it (`same_as`) is that framework's one source."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_helpers import info, obs, result_set, write

from fanin.model import matrix, scenarios
from fanin.model.errors import FaninError
from fanin.report import build as report
from fanin.report import read

MATRIX = matrix.load()


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    reference = tmp_path / "reference"
    reference.mkdir()
    monkeypatch.setattr(read, "REFERENCE", reference)
    return reference


def test_a_question_naming_a_scenario_has_each_frameworks_scenario_probe_or_its_same_as_source(
    tmp_path: Path, data: Path
) -> None:
    (data / "comparison.toml").write_text(
        '[[question]]\nquestion = "not selected?"\nscenarios = ["unselected-branch"]\n'
        'langgraph = ["langgraph/send/empty"]\n'
    )
    own = scenarios.catalogue()["unselected-branch"].same_as("langgraph")
    assert own == "langgraph/join/unselected-branch"
    pg, adk = "pydantic_graph/scenario/unselected-branch", "adk/scenario/unselected-branch"
    write(
        tmp_path / "r",
        result_set(
            "langgraph-1.2.24",
            {
                "langgraph/send/empty": obs("safe", "ok"),
                own: obs("silent", "never"),
                "langgraph/scenario/unselected-branch": obs("silent", "never"),
            },
            [info("langgraph/send/empty"), info(own), info("langgraph/scenario/unselected-branch")],
        ),
        result_set("pydantic_graph-2.68.0", {pg: obs("safe", "the join ran once")}, [info(pg)]),
        result_set("adk-2.13.0", {adk: obs("n/a", "n/a")}, [info(adk)]),
    )
    (question,) = [
        q for q in report.build(tmp_path / "r", MATRIX, reference=True).comparison if q.question == "not selected?"
    ]
    cited = {key: [a.probe_id for a in answers] for key, answers in question.answers.items() if answers}
    # LangGraph: its own probe is the source, the scenario probe is not cited beside it (one source, not both).
    assert cited == {"langgraph": ["langgraph/send/empty", own], "pydantic_graph": [pg], "adk": [adk]}
    assert question.coverage["adk"] != question.coverage["deepagents"]  # n/a with a reason, not "not probed"


def test_a_question_naming_no_such_scenario_is_one_line(tmp_path: Path, data: Path) -> None:
    (data / "comparison.toml").write_text('[[question]]\nquestion = "q?"\nscenarios = ["no-such"]\n')
    write(tmp_path / "r", result_set("langgraph-1.2.24", {}, []))
    with pytest.raises(FaninError, match=r"'q\?' names no such scenario \['no-such'\]"):
        report.build(tmp_path / "r", MATRIX, reference=True)


def test_every_core_question_a_scenario_answers_names_it_and_the_retired_duplicates_are_cited_nowhere() -> None:
    rows = read.read_toml("comparison.toml")["question"]
    named = {sid for row in rows for sid in row.get("scenarios", [])}
    assert named == set(scenarios.catalogue())  # every scenario answers some core question
    text = "".join((read.REFERENCE / name).read_text() for name in ("comparison.toml", "checklist.toml"))
    for retired in ("pydantic_graph/join/unequal-depth", "pydantic_graph/join/unselected-branch"):
        assert f'"{retired}"' not in text


def test_every_same_as_probe_a_scenario_names_is_declared_by_its_framework() -> None:
    """A same_as naming no probe would leave that framework's answer empty: no probe cited, silently."""
    from fanin.model import catalog

    declared = {p.id for p in catalog.declared()}
    named = [p for s in scenarios.catalogue().values() for p in s.data.get("same_as", [])]
    assert named and set(named) <= declared, sorted(set(named) - declared)
