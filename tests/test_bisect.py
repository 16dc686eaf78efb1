"""Bisect: argument checks, and the search over releases (with observations made up in the test)."""

from pathlib import Path

import pytest
from packaging.version import Version

from fanin.model import matrix
from fanin.model.catalog import declared_node
from fanin.model.errors import FaninError
from fanin.model.results import Observation
from fanin.model.source import REPO_ROOT
from fanin.versions import first_release, npm, pypi, registry

MATRIX = matrix.load()
OLD = Observation("n/a", {"reason": "no defer"}, "n/a", "n/a: no defer", "n/a")
NEW = Observation("ok", {"runs": 1}, "join ×1", "join ran once", "safe")
RELEASES = [
    pypi.Release(v, "2025-01-01T00:00:00Z", v == "0.3.5")
    for v in ["0.3.33", "0.3.34", "0.3.5", "0.4.0", "0.4.1", "0.4.2", "0.4.9", "0.4.10"]
]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["langgraph", "langgraph/same-key/no-reducer", "0.3.34"], "takes FRAMEWORK PROBE-ID GOOD-VERSION BAD-VERSION"),
        (["autogen", "langgraph/same-key/no-reducer", "1", "2"], "unknown framework 'autogen'"),
        (["langgraph", "langgraph/nope/nope", "0.3.34", "0.4.10"], "no probe 'langgraph/nope/nope'"),
        (["adk", "langgraph/same-key/no-reducer", "1.0.0", "2.0.0"], "is not a adk probe"),
        (["langgraph", "langgraph/same-key/no-reducer", "0.4.10", "0.3.34"], "wrong order"),
        (["langgraph", "langgraph/same-key/no-reducer", "0.4.10", "0.4.10"], "the same version"),
        (["langgraph", "langgraph/same-key/no-reducer", "one", "0.4.10"], "not a version"),
    ],
)
def test_bad_arguments_are_one_line(args: list[str], message: str) -> None:
    with pytest.raises(FaninError, match=message) as caught:
        first_release.plan(args, MATRIX)
    assert "\n" not in str(caught.value)


def test_plan_lists_the_unyanked_releases_in_between(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pypi, "releases", lambda package, timeout=20.0, prereleases=False: RELEASES)
    plan = first_release.plan(["langgraph", "langgraph/same-key/no-reducer", "0.3.34", "0.4.10"], MATRIX)
    assert [r.version for r in plan.between] == ["0.4.0", "0.4.1", "0.4.2", "0.4.9"]


def test_a_node_framework_is_bisected_over_npm_releases(monkeypatch: pytest.MonkeyPatch) -> None:
    """`npm view … time` (recorded), not PyPI: the releases between, its lock a package-lock.json, its probes by file."""
    recorded = REPO_ROOT / "tests" / "data" / "npm" / "langchain-langgraph.time.json"
    monkeypatch.setattr(npm, "_npm", lambda args, cwd=None, step="npm": recorded.read_text())
    monkeypatch.setattr(pypi, "releases", lambda *a, **k: pytest.fail("a Node framework asked PyPI"))
    plan = first_release.plan(["langgraphjs", "langgraphjs/join/list-edge", "1.0.2", "1.1.0"], MATRIX)
    assert plan.good.version == "1.0.2" and plan.bad.version == "1.1.0"
    assert plan.between and all(Version("1.0.2") < Version(r.version) < Version("1.1.0") for r in plan.between)
    assert not any(r.prerelease for r in plan.between)
    framework = MATRIX.framework("langgraphjs")
    cell = MATRIX.make_cell(framework, "1.0.5", MATRIX.default_python, "as-released", "2025-01-01T00:00:00Z")
    assert registry.lock_path(cell, Path("/w")) == Path("/w/locks/langgraphjs-1.0.5/package-lock.json")
    probe = next(p for p in declared_node() if p.id == "langgraphjs/join/list-edge")
    assert registry.target(probe, framework) == str(REPO_ROOT / probe.file)


@pytest.mark.parametrize("first_new", ["0.4.0", "0.4.1", "0.4.2", "0.4.9", "0.4.10"])
def test_search_finds_the_first_changed_release_running_few(first_new: str) -> None:
    order = ["0.3.34", "0.4.0", "0.4.1", "0.4.2", "0.4.9", "0.4.10"]
    runs: list[str] = []

    def observe(version: str) -> Observation:
        runs.append(version)
        return NEW if order.index(version) >= order.index(first_new) else OLD

    first, seen = first_release.search("0.3.34", order[1:-1], "0.4.10", observe)
    assert first == first_new
    assert len(runs) <= 2 + 3 and set(seen) == set(runs)


def test_search_refuses_when_nothing_changed() -> None:
    with pytest.raises(FaninError, match="same behaviour"):
        first_release.search("1.0", ["1.1"], "1.2", lambda version: OLD)


def test_findings_are_recorded_for_the_report(tmp_path: Path) -> None:
    path = tmp_path / "bisect.json"
    first_release.record(
        "langgraph/join/defer", "0.3.34", "0.4.10", "0.4.0", {"0.3.34": OLD, "0.4.0": NEW, "0.4.10": NEW}, path
    )
    first_release.record("langgraph/join/defer", "0.3.34", "0.4.10", "0.4.0", {"0.3.34": OLD, "0.4.0": NEW}, path)
    found = first_release.findings(path)["langgraph/join/defer"]
    assert len(found) == 1 and found[0]["first_changed"] == "0.4.0"
    assert found[0]["observed"]["0.3.34"] == {"outcome": "n/a", "label": "n/a"}


def test_as_released_cutoff_is_a_day_after_upload() -> None:
    assert pypi.Release("1.0", "2025-02-26T21:57:39.123Z", False).as_released == "2025-02-27T21:57:39Z"


def test_a_live_thread_bisect_holds_the_writer_at_the_good_end_and_says_when_the_ends_then_agree() -> None:
    """Every step of a live-thread bisect resumes what the good end wrote (the good end too), so its steps compare
    one writer's stores; where the ends then agree, the reference's change was the writer's, not a release's."""
    from fanin.model import matrix as fanin_matrix
    from fanin.model.results import Observation
    from fanin.versions.first_release import NothingToBisect, held_writer, search

    committed = fanin_matrix.load()
    lg = committed.framework("langgraph")
    good = committed.of("langgraph")[1]
    assert held_writer(committed, lg, good.version) == good
    graph = committed.framework("pydantic_graph")  # no live-thread probes: no writer to hold
    assert held_writer(committed, graph, committed.of("pydantic_graph")[0].version) is None
    same = Observation("ok", {"v": 1}, "l", "d", "safe")
    with pytest.raises(NothingToBisect) as caught:
        search("1", ["2"], "3", lambda version: same)
    assert sorted(caught.value.seen) == ["1", "3"]
