"""The CrewAI Flows inspector (suites/crewai/audit.py) on the corpus's flows, in the newest crewai cell's venv.

Each hazard the crewai probes observe is found where a flow has it and not where it does not: an or_ listener
whose two sources both complete (crewai/or-listener/two-branches), two listeners that can run at once setting
one state key (crewai/scenario/same-key-two-writers) or reading, awaiting and writing it
(crewai/state/lost-update); not behind a router's two routes, not for separate fields, not under one shared
lock. The order-coupled findings (an and_ listener handed its last source's output, appends to one list) are
held here too, since precision and recall count silent and loud findings only. Without the inspector no
crewai flow is recognised at all: every test here fails.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import findings_of, matches

from fanin.model import matrix
from fanin.model.source import REPO_ROOT
from fanin.project import audit

CORPUS = REPO_ROOT / "examples" / "corpus"
EXPECTED = {
    name: truth
    for name, truth in tomllib.loads((CORPUS / "expected.toml").read_text(encoding="utf-8")).items()
    if truth["framework"] == "crewai"
}
MATRIX = matrix.load()
pytestmark = pytest.mark.timeout(func_only=True)


@pytest.fixture(scope="module")
def audits() -> dict[str, list[audit.Audit]]:
    python = audit.python_of(MATRIX.newest("crewai"))
    return {
        name: audit.evaluate(f"{CORPUS / name}.py:{truth['target']}", MATRIX, python)
        for name, truth in sorted(EXPECTED.items())
    }


@pytest.fixture(scope="module")
def audited(audits: dict[str, list[audit.Audit]]) -> dict[str, list[Any]]:
    return findings_of(audits)


def test_the_crewai_corpus_has_flows_with_and_without_a_hazard() -> None:
    assert any(t["hazards"] for t in EXPECTED.values()) and any(not t["hazards"] for t in EXPECTED.values())


def test_every_crewai_hazard_is_found_and_nothing_else_is_silent_or_loud(audited: dict[str, list[Any]]) -> None:
    for name, truth in EXPECTED.items():
        loud = [f for f in audited[name] if f.hazard in ("silent", "loud")]
        for hazard in truth["hazards"]:
            assert any(matches(hazard, f) for f in loud), (name, hazard, audited[name])
        false = [f for f in loud if not any(matches(h, f) for h in truth["hazards"])]
        assert not false, (name, false)


def test_the_or_listener_finding_carries_the_installed_versions_evidence(audited: dict[str, list[Any]]) -> None:
    (finding,) = [f for f in audited["cw_first_responder_or"] if f.pattern.startswith("or_ listener")]
    assert finding.hazard == "silent" and finding.certainty == "static"  # once, second trigger dropped (1.9.0 on)
    assert finding.evidence and finding.evidence[0].probe == "crewai/or-listener/two-branches"
    assert "1.9.0" in (finding.precondition or "")


def test_the_lost_update_finding_names_both_writers_and_is_read_from_source(audited: dict[str, list[Any]]) -> None:
    (finding,) = [f for f in audited["cw_token_budget"] if f.hazard == "silent"]
    assert finding.certainty == "source" and "write_intro" in finding.where[0] and "write_body" in finding.where[0]
    assert finding.mitigation_probe is not None  # crewai/state/lost-update-mitigated, from mitigations.toml


def test_order_coupled_findings_of_an_and_join_and_shared_appends(audited: dict[str, list[Any]]) -> None:
    found = {f.pattern: f.hazard for f in audited["cw_sections_and_join"]}
    assert found == {
        "and_ listener handed one source's output": "order-coupled",
        "parallel listeners change one state value in place": "order-coupled",
    }
    assert not audited["cw_research_and_join"]  # separate fields, an and_ join that takes no argument
    assert not audited["cw_router_or_join"]  # the or_ over a router's two routes, their writes never meet


def test_the_or_listener_finding_is_order_coupled_where_or_ran_once_per_branch(
    audits: dict[str, list[audit.Audit]],
) -> None:
    # The same facts, as if crewai 1.8.1 were installed: its reference cell saw j run once per branch.
    (seen,) = audits["cw_first_responder_or"]
    old = next(c for c in MATRIX.cells if c.framework.key == "crewai" and c.version == "1.8.1")
    facts = {"versions": {"crewai": "1.8.1"}, "python": old.python, "inspected": [seen.facts]}
    (at_181,) = audit.audits_from(seen.target, facts, MATRIX, None)
    (finding,) = [f for f in at_181.findings if f.pattern.startswith("or_ listener")]
    assert at_181.compared_with == old.id and finding.hazard == "order-coupled"


def test_a_router_whose_routes_cannot_be_read_makes_the_audit_incomplete(tmp_path: Any) -> None:
    # Its listeners hang on labels the audit cannot see returned: "no finding" would not mean "no hazard".
    flow = tmp_path / "routed.py"
    flow.write_text(
        "from crewai.flow.flow import Flow, listen, router, start\n"
        "ROUTE = 'go'\n"
        "class Routed(Flow):\n"
        "    @start()\n    def s(self):\n        return 1\n"
        "    @router(s)\n    def pick(self):\n        return ROUTE\n"
        "    @listen('go')\n    async def a(self):\n        self.state['n'] = 1\n"
        "    @listen('go')\n    async def b(self):\n        self.state['n'] = 2\n",
        encoding="utf-8",
    )
    (found,) = audit.evaluate(f"{flow}:Routed", MATRIX, audit.python_of(MATRIX.newest("crewai")))
    assert any("pick (routes it returns" in reason for reason in found.incomplete), found.incomplete
    assert audit.exit_code([found], ["silent", "loud"]) == audit.INCOMPLETE


def test_auditing_a_crewai_flow_writes_nothing_into_the_users_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Importing crewai makes ~/.config/crewai and storage under ~/.local/share: the inspector's own HOME takes them."""
    python = audit.python_of(MATRIX.newest("crewai"))  # fanin's own venv first: its build lists its folder per user
    home = tmp_path / "home"
    home.mkdir()
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    (found,) = audit.evaluate(f"{CORPUS / 'cw_research_and_join'}.py:ResearchFlow", MATRIX, python)
    assert found.framework == "crewai" and found.facts and not list(home.iterdir())
