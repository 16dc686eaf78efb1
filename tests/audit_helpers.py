"""What the per-framework corpus tests (test_audit_crewai, test_audit_mastra) share: a graph's findings, and
whether a finding is a hazard the corpus says is there."""

from __future__ import annotations

from typing import Any

from fanin.project import audit


def findings_of(audits: dict[str, list[audit.Audit]]) -> dict[str, list[Any]]:
    """Every finding of every audit, per corpus graph."""
    return {name: [f for a in found for f in a.findings] for name, found in audits.items()}


def matches(hazard: dict[str, Any], finding: Any) -> bool:
    """The finding cites one of the hazard's probes and names every place the hazard's entry lists."""
    where = "; ".join(finding.where)
    return bool(set(hazard["probes"]) & set(finding.probes)) and all(t in where for t in hazard.get("where", []))
