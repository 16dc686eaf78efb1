"""The Mastra inspector (suites/mastra/audit.mjs) on the corpus's workflows, under the newest mastra cell's Node.

Each hazard the mastra probes observe is found where a workflow has it and not where it does not: two steps of
one .parallel setting one state key (mastra/scenario/same-key-two-writers), reading a key and writing it back
(mastra/workflow-state/read-modify-write); not for outputs returned to the join (keyed by step id), not for
distinct keys at a release that keeps them (own-keys is version-dependent: silent at 0.24.9), not for steps in
sequence. Precision and recall over the Mastra corpus are printed and held to the corpus targets. A JavaScript
target no inspector reads (LangGraph.js, ADK for JavaScript) stays a one-line refusal, exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import findings_of, matches

from fanin.model import exits, matrix
from fanin.model.errors import FaninError
from fanin.model.source import REPO_ROOT
from fanin.project import audit
from fanin.run import runtimes

CORPUS = REPO_ROOT / "examples" / "corpus"
EXPECTED = {
    name: truth
    for name, truth in tomllib.loads((CORPUS / "expected.toml").read_text(encoding="utf-8")).items()
    if truth["framework"] == "mastra"
}
MATRIX = matrix.load()
PRECISION, RECALL = 0.95, 0.90
pytestmark = pytest.mark.timeout(func_only=True)  # the fixture may npm ci the newest cell first


@pytest.fixture(scope="module")
def audits() -> dict[str, list[audit.Audit]]:
    return {
        name: audit.evaluate(f"{CORPUS / name}.mjs:{truth['target']}", MATRIX)
        for name, truth in sorted(EXPECTED.items())
    }


@pytest.fixture(scope="module")
def audited(audits: dict[str, list[audit.Audit]]) -> dict[str, list[Any]]:
    return findings_of(audits)


def test_the_mastra_corpus_has_workflows_with_and_without_a_hazard() -> None:
    assert sum(bool(t["hazards"]) for t in EXPECTED.values()) >= 2
    assert sum(not t["hazards"] for t in EXPECTED.values()) >= 2


def test_precision_and_recall_on_the_mastra_corpus(audited: dict[str, list[Any]]) -> None:
    true = found = present = findings = 0
    for name, truth in EXPECTED.items():
        loud = [f for f in audited[name] if f.hazard in ("silent", "loud")]
        present += len(truth["hazards"])
        found += sum(any(matches(h, f) for f in loud) for h in truth["hazards"])
        findings += len(loud)
        true += sum(any(matches(h, f) for h in truth["hazards"]) for f in loud)
    precision, recall = (true / findings if findings else 1.0), (found / present if present else 1.0)
    print(
        f"\nmastra audit corpus: precision {precision:.2f} ({true}/{findings}), recall {recall:.2f} ({found}/{present})"
    )
    assert present >= 2 and precision >= PRECISION and recall >= RECALL, audited


def test_the_read_modify_write_finding_names_both_steps_and_is_read_from_source(
    audited: dict[str, list[Any]],
) -> None:
    (finding,) = audited["ms_token_budget"]
    assert finding.hazard == "silent" and finding.certainty == "source"
    assert "write-intro" in finding.where[0] and "write-body" in finding.where[0] and "`budget`" in finding.where[1]
    assert "across an await" in finding.how and finding.precondition
    assert finding.evidence[0].probe == "mastra/workflow-state/read-modify-write"
    assert finding.mitigation_probe is not None and finding.mitigation_probe.hazard == "safe"


def test_outputs_keyed_by_step_id_sequence_and_distinct_keys_give_no_finding(
    audits: dict[str, list[audit.Audit]],
) -> None:
    for name in ("ms_parallel_reviews_outputs", "ms_sequential_budget", "ms_research_own_keys"):
        (seen,) = audits[name]
        assert not seen.findings and not seen.incomplete, (name, seen.findings)
    (research,) = audits["ms_research_own_keys"]
    assert research.facts["writes"] == {
        "take-notes": {"keys": ["notes"], "how": "source"},
        "find-sources": {"keys": ["sources"], "how": "source"},
    }


def test_distinct_keys_are_a_finding_where_the_release_lost_one(audits: dict[str, list[audit.Audit]]) -> None:
    # The same facts, as if 0.24.9 were installed: its reference cell saw the first finisher's key lost.
    (seen,) = audits["ms_research_own_keys"]
    old = next(c for c in MATRIX.cells if c.framework.key == "mastra" and c.version == "0.24.9")
    facts = {"versions": {"mastra": "0.24.9"}, "python": old.python, "inspected": [seen.facts]}
    (at_0249,) = audit.audits_from(seen.target, facts, MATRIX, None)
    (finding,) = at_0249.findings
    assert at_0249.compared_with == old.id and finding.hazard == "silent"
    assert finding.probes == ["mastra/workflow-state/own-keys"]


def test_a_step_handing_its_argument_on_is_an_unknown_writer(tmp_path: Path) -> None:
    app = tmp_path / "app.mjs"
    app.write_text(
        'import { createStep, createWorkflow } from "@mastra/core/workflows";\n'
        'import { z } from "zod";\n'
        "const helper = async (args) => args.setState({ ...args.state, k: 1 });\n"
        "const mk = (id, execute) => createStep({ id, inputSchema: z.any(), outputSchema: z.any(), execute });\n"
        "const a = mk('a', async (args) => { await helper(args); return {}; });\n"
        "const b = mk('b', async ({ state, setState }) => { await setState({ ...state, k: 2 }); return {}; });\n"
        "const c = mk('c', async ({ setState }) => { await Promise.resolve(); return { save: setState }; });\n"
        "export const wf = createWorkflow({ id: 'w', inputSchema: z.any(), outputSchema: z.any() })"
        ".parallel([a, b, c]).commit();\n",
        encoding="utf-8",
    )
    (found,) = audit.evaluate(f"{app}:wf", MATRIX)
    assert found.facts["unknown_writers"] == ["a", "c"] and not found.findings
    assert audit.exit_code([found], ["silent", "loud"]) == audit.INCOMPLETE


def test_a_workflow_in_its_own_project_is_read_with_the_projects_install(tmp_path: Path) -> None:
    # The project's node_modules (here the newest cell's, linked) is the one read, not the cell's directory.
    cell_install = runtimes.of(MATRIX.newest("mastra")).installed(MATRIX.newest("mastra"))
    (tmp_path / "node_modules").symlink_to(cell_install / "node_modules")
    (tmp_path / "src").mkdir()
    app = tmp_path / "src" / "app.mjs"
    app.write_text((CORPUS / "ms_token_budget.mjs").read_text(encoding="utf-8"), encoding="utf-8")
    (found,) = audit.evaluate(f"{app}:articleWorkflow", MATRIX)
    assert found.facts["installed_in"] == str(tmp_path.resolve()) and found.findings


def test_a_typescript_workflow_is_read_with_its_types_stripped(tmp_path: Path) -> None:
    app = tmp_path / "app.ts"
    app.write_text(
        'import { createStep, createWorkflow } from "@mastra/core/workflows";\n'
        'import { z } from "zod";\n'
        "const mk = (id: string, execute: (args: any) => Promise<object>) =>\n"
        "  createStep({ id, inputSchema: z.any(), outputSchema: z.any(), execute });\n"
        "const a = mk('a', async ({ state, setState }) => { const k: string = 'a'; await setState({ ...state, k }); return {}; });\n"
        "const b = mk('b', async ({ state, setState }) => { await setState({ ...state, k: 'b' }); return {}; });\n"
        "export const wf = createWorkflow({ id: 'w', inputSchema: z.any(), outputSchema: z.any() })"
        ".parallel([a, b]).commit();\n",
        encoding="utf-8",
    )
    (found,) = audit.evaluate(f"{app}:wf", MATRIX)
    assert [(f.pattern, f.hazard) for f in found.findings] == [("parallel steps set one workflow state key", "silent")]


def test_a_mastra_module_without_a_workflow_or_export_is_bad_input(tmp_path: Path) -> None:
    app = tmp_path / "app.mjs"
    app.write_text('import { createWorkflow } from "@mastra/core/workflows";\nexport const wf = 3;\n', encoding="utf-8")
    with pytest.raises(FaninError, match="not a graph or agent"):
        audit.evaluate(f"{app}:wf", MATRIX)
    with pytest.raises(FaninError, match="exports no missing"):
        audit.evaluate(f"{app}:missing", MATRIX)


def test_input_and_a_cell_of_another_framework_are_bad_input() -> None:
    target = f"{CORPUS / 'ms_token_budget'}.mjs:articleWorkflow"
    with pytest.raises(FaninError, match="no dry run exists for this mastra target"):
        audit.evaluate(target, MATRIX, given="{}")
    with pytest.raises(FaninError, match="is a crewai cell"):
        audit.evaluate(target, MATRIX, options=audit.Options(cell=MATRIX.newest("crewai").id))


@pytest.mark.parametrize(
    "source",
    ['import { StateGraph } from "@langchain/langgraph";\n', "import { LlmAgent } from '@google/adk';\n"],
)
def test_a_langgraphjs_or_adkjs_target_stays_one_line_exit_2(tmp_path: Path, source: str) -> None:
    app = tmp_path / "app.mjs"
    app.write_text(source + "export const graph = 1;\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "fanin", "audit", f"{app}:graph"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=dict(os.environ),
        timeout=120,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == exits.BAD_INPUT and len(lines) == 1 and not done.stdout, done.stderr
    assert "langgraphjs and adkjs cells" in lines[0] and "reference/CHECKLIST.md" in lines[0]
