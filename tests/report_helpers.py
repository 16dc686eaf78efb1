"""Small result sets made in a test, for the report's tests: one framework, a few cells, chosen observations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fanin.model.results import Claim, Observation, ProbeInfo, ResultSet, save

DATE = "2026-11-30"
COMMIT = "0123456789abcdef0123"


def obs(hazard: str, label: str, value: Any = None, outcome: str = "ok", detail: str = "") -> Observation:
    if hazard == "n/a":
        outcome, value = "n/a", value if value is not None else {"reason": "no such API"}
    return Observation(outcome, value if value is not None else {"v": label}, label, detail or f"saw {label}", hazard)


def info(
    probe_id: str,
    expect: dict[str, Any] | None = None,
    dimensions: tuple[tuple[str, tuple[str, ...]], ...] = (),
    sources: tuple[str, ...] = (),
) -> ProbeInfo:
    return ProbeInfo(
        probe_id,
        f"title of {probe_id}",
        Claim(f"claim of {probe_id}", "https://example.org/claim", expect),
        sources,
        "suites/langgraph/test_missing.py",
        "test_missing",
        "abc123",
        dimensions,
    )


def result_set(
    cell: str,
    observations: dict[str, Observation],
    probes: list[ProbeInfo],
    commit: str = COMMIT + "+dirty",
    python: str = "3.11.7",
) -> ResultSet:
    framework, rest = cell.split("-", 1)
    version = rest.split("-py", 1)[0]
    package = {
        "langgraph": "langgraph",
        "adk": "google-adk",
        "pydantic_graph": "pydantic-graph",
        "agent_framework": "agent-framework-core",
    }[framework]
    environment = {"date": DATE, "suite_commit": commit, "python": python, "packages": {package: version}}
    return ResultSet(cell, framework, version, environment, {p.id: p for p in probes}, observations)


def write(directory: Path, *sets: ResultSet) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for rs in sets:
        save(rs, directory / f"{rs.cell}.json")
    return directory


def newest_and_beyond(framework: str) -> tuple[str, str, str]:
    """The framework's newest reference cell, a version past it that no cell has, and a spec the newest matches.

    For tests that stand in a local run for a version outside the reference: computed, so that adding a
    version to the matrix never breaks them.
    """
    from fanin.model import matrix

    newest = matrix.load().newest(framework)
    major, minor, patch = [*newest.version.split("."), "0", "0"][:3]
    return newest.id, f"{major}.{minor}.{int(patch) + 100}", f"{major}.{minor}.*"
