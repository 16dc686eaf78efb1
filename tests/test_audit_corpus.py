"""`fanin audit` on the corpus (examples/corpus/): graphs in the shapes real apps use, with what is truly in them.

Every graph runs in the venv of its framework's newest reference cell (as `fanin audit --cell`),
dry-run with its INPUT when it has one; a JavaScript one (ms_*.mjs, Mastra) under the Node release of its
framework's newest cell, in that cell's installed directory (suites/mastra/audit.mjs). Over the whole corpus:

- precision = silent/loud findings that match a hazard present / all silent/loud findings;
- recall = hazards present that a silent/loud finding matches / all hazards present.

Targets: precision >= 0.95, recall >= 0.90 (issue 20), over the corpus and for each framework on its
own. Both are printed, per framework too, and written to
$FANIN_REPORTS/audit-corpus.json with every finding, so a miss or a false alarm can be read.
"""

from __future__ import annotations

import ast
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fanin.model import matrix
from fanin.model.errors import FaninError
from fanin.model.source import REPO_ROOT, SUITES
from fanin.project import audit

CORPUS = REPO_ROOT / "examples" / "corpus"
EXPECTED: dict[str, dict[str, Any]] = tomllib.loads((CORPUS / "expected.toml").read_text(encoding="utf-8"))
MATRIX = matrix.load()
FRAMEWORKS = sorted({str(e["framework"]) for e in EXPECTED.values()})
LOUD = ("silent", "loud")
PRECISION, RECALL = 0.95, 0.90
ENDINGS = (".py", ".mjs")  # a corpus graph in Python, or a JavaScript module (Mastra)
# The corpus is audited once, in a module fixture that may first build the frameworks' venvs: a set-up whose
# length is the machine's load, so pytest's 120 s bound applies to each test's own body only. Every step of the
# set-up is bounded by what it waits for instead: each audit and dry run is one process with its own timeout.
pytestmark = pytest.mark.timeout(func_only=True)


@dataclass(frozen=True)
class Seen:
    """One silent or loud finding, as the metric needs it."""

    pattern: str
    where: str
    probes: tuple[str, ...]
    hazard: str


@dataclass
class Score:
    true_findings: int = 0
    findings: int = 0
    found: int = 0
    present: int = 0
    false_alarms: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.true_findings / self.findings if self.findings else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.present if self.present else 1.0


def matches(hazard: dict[str, Any], seen: Seen) -> bool:
    if not set(hazard.get("probes", [])) & set(seen.probes):
        return False
    if not all(token in seen.where for token in hazard.get("where", [])):
        return False
    anyof = hazard.get("where_any")
    return not anyof or any(token in seen.where for token in anyof)


def score(expected: dict[str, dict[str, Any]], seen: dict[str, list[Seen]]) -> Score:
    """Precision and recall of what the audit said (`seen`, silent/loud findings per graph) against `expected`."""
    result = Score()
    for name, truth in sorted(expected.items()):
        hazards = truth.get("hazards", [])
        loud = [s for s in seen.get(name, []) if s.hazard in LOUD]
        result.present += len(hazards)
        for hazard in hazards:
            if any(matches(hazard, s) for s in loud):
                result.found += 1
            else:
                result.misses.append(
                    f"{name}: {hazard.get('pattern')} at {hazard.get('where') or hazard.get('where_any')}"
                )
        for s in loud:
            result.findings += 1
            if any(matches(h, s) for h in hazards):
                result.true_findings += 1
            else:
                result.false_alarms.append(f"{name}: {s.pattern} at {s.where} [{s.hazard}]")
    return result


def _of(framework: str) -> dict[str, dict[str, Any]]:
    return {name: truth for name, truth in EXPECTED.items() if truth["framework"] == framework}


def _input_of(path: Path) -> str | None:
    """The graph's INPUT, read from its source (a literal, as in every corpus file): importing the module only for
    it cost one framework import per graph, as much again as the audit itself."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["INPUT"]:
            try:
                return json.dumps(ast.literal_eval(node.value))
            except ValueError:
                raise AssertionError(f"{path.name}: INPUT is not a literal; the corpus keeps it one") from None
    return None


def corpus_file(name: str) -> Path:
    """The graph's file: name.py, or name.mjs for a JavaScript one."""
    found = [CORPUS / f"{name}{ending}" for ending in ENDINGS if (CORPUS / f"{name}{ending}").is_file()]
    assert len(found) == 1, (name, found)
    return found[0]


@pytest.fixture(scope="module")
def audited() -> dict[str, Any]:
    """Every corpus graph audited once: its silent/loud findings, all findings, and any error."""
    pythons: dict[str, str | None] = {}
    seen: dict[str, list[Seen]] = {}
    raw: dict[str, Any] = {}
    for name, truth in sorted(EXPECTED.items()):
        path = corpus_file(name)
        scripted = audit.refuse_javascript(str(path), MATRIX) is not None  # read by a Node inspector: no venv
        if truth["framework"] not in pythons:
            pythons[truth["framework"]] = None if scripted else audit.python_of(MATRIX.newest(truth["framework"]))
        python = pythons[truth["framework"]]
        given = None if scripted else _input_of(path)
        try:
            audits = audit.evaluate(f"{path}:{truth['target']}", MATRIX, python, given)
        except FaninError as exc:
            seen[name] = []
            raw[name] = {"error": str(exc)}
            continue
        findings = [f for a in audits for f in a.findings]
        seen[name] = [Seen(f.pattern, "; ".join(f.where), tuple(f.probes), f.hazard) for f in findings]
        raw[name] = {
            "findings": [[f.pattern, f.where, f.hazard, f.certainty] for f in findings],
            "incomplete": [r for a in audits for r in a.incomplete],
        }
    result = score(EXPECTED, seen)
    per_framework = {fw: score(_of(fw), seen) for fw in FRAMEWORKS}
    reports = Path(os.environ.get("FANIN_REPORTS", REPO_ROOT / "reports"))
    reports.mkdir(parents=True, exist_ok=True)
    summary = {
        "precision": result.precision,
        "recall": result.recall,
        "true_findings": result.true_findings,
        "findings": result.findings,
        "found": result.found,
        "present": result.present,
        "false_alarms": result.false_alarms,
        "misses": result.misses,
        "frameworks": {
            fw: {"precision": r.precision, "recall": r.recall, "findings": r.findings, "present": r.present}
            for fw, r in per_framework.items()
        },
        "graphs": raw,
    }
    (reports / "audit-corpus.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(
        f"\naudit corpus: precision {result.precision:.2f} ({result.true_findings}/{result.findings}),"
        f" recall {result.recall:.2f} ({result.found}/{result.present})"
    )
    for fw, r in per_framework.items():
        print(
            f"  {fw}: precision {r.precision:.2f} ({r.true_findings}/{r.findings}),"
            f" recall {r.recall:.2f} ({r.found}/{r.present})"
        )
    for line in result.false_alarms:
        print(f"  false alarm: {line}")
    for line in result.misses:
        print(f"  missed: {line}")
    return {"score": result, "raw": raw, "frameworks": per_framework}


def test_the_corpus_is_large_enough_and_every_graph_has_a_file() -> None:
    assert len(EXPECTED) >= 15
    for name in EXPECTED:
        assert corpus_file(name).is_file(), name
    assert sorted(p.stem for e in ENDINGS for p in CORPUS.glob(f"*{e}")) == sorted(EXPECTED)


def test_every_corpus_graph_loads(audited: dict[str, Any]) -> None:
    errors = {name: r["error"] for name, r in audited["raw"].items() if "error" in r}
    assert not errors


def test_precision_on_the_corpus(audited: dict[str, Any]) -> None:
    result: Score = audited["score"]
    print(f"precision {result.precision:.3f}")
    assert result.precision >= PRECISION, result.false_alarms


def test_recall_on_the_corpus(audited: dict[str, Any]) -> None:
    result: Score = audited["score"]
    print(f"recall {result.recall:.3f}")
    assert result.recall >= RECALL, result.misses


def test_every_framework_with_an_inspector_has_hazardous_and_hazard_free_graphs() -> None:
    """A framework's score means something only with both: a hazard to find and a graph to raise no false alarm on."""
    inspected = sorted(p.parent.name for p in [*SUITES.glob("*/audit.py"), *SUITES.glob("*/audit.mjs")])
    assert inspected and set(inspected) <= set(FRAMEWORKS), "a framework with an inspector has no corpus graph"
    for framework in inspected:
        graphs = _of(framework)
        assert any(t.get("hazards") for t in graphs.values()), framework
        assert any(not t.get("hazards") for t in graphs.values()), framework


def test_each_framework_meets_the_targets(audited: dict[str, Any]) -> None:
    """The targets hold for every framework on its own, so a good score on one cannot hide a bad one."""
    below = {
        fw: (round(r.precision, 2), round(r.recall, 2))
        for fw, r in audited["frameworks"].items()
        if r.precision < PRECISION or r.recall < RECALL
    }
    assert not below


def test_the_metric_can_fail() -> None:
    """Fed a wrong expectation, the metric falls below both targets: it is not vacuous."""
    expected = {
        "safe": {"hazards": []},
        "hazardous": {"hazards": [{"probes": ["p/one"], "where": ["key"]}, {"probes": ["p/two"], "where": ["x"]}]},
    }
    seen = {
        "safe": [Seen("false alarm", "a; b", ("p/one",), "silent")],
        "hazardous": [
            Seen("right", "n; key 'key'", ("p/one",), "loud"),
            Seen("wrong place", "n; key 'other'", ("p/two",), "silent"),
            Seen("harmless", "n; key 'x'", ("p/two",), "order-coupled"),  # not silent/loud: counts for nothing
        ],
    }
    result = score(expected, seen)
    assert (result.true_findings, result.findings, result.found, result.present) == (1, 3, 1, 2)
    assert result.precision < PRECISION and result.recall < RECALL
    perfect = score(expected, {"hazardous": [Seen("a", "key x", ("p/one", "p/two"), "silent")]})
    assert (perfect.precision, perfect.recall) == (1.0, 1.0)
