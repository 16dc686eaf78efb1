"""The committed reference must be what today's probes and locks produce (python/typing's
conformance suite fails CI on stale results; so does fanin).

These checks need no framework: the probe sources are read with ast. That the
observations themselves still reproduce is proven by the probe sessions that
`./noxw -s tests` runs after these tests, one per cell.
"""

import re
from pathlib import Path

import pytest

from fanin.model import catalog, matrix
from fanin.model.results import NOT_APPLICABLE, PROBE_ERROR, load
from fanin.model.source import REPO_ROOT
from fanin.report import outputs
from fanin.run.environment import file_sha256

MATRIX = matrix.load()
DECLARED = catalog.declared()
CELLS = [pytest.param(cell, id=cell.id) for cell in MATRIX.cells]
STALE = "stale reference: run ./noxw -s 'probe({cell})' and, after review, ./noxw -s bless -- {cell}"


def test_probe_ids_are_unique_and_well_formed() -> None:
    ids = [p.id for p in DECLARED]
    assert len(ids) == len(set(ids))
    assert {p.framework for p in DECLARED} == set(MATRIX.frameworks)  # every registered framework has a suite
    assert all(Path(REPO_ROOT / p.file).parent.name == p.framework for p in DECLARED)


@pytest.mark.parametrize("cell", CELLS)
def test_reference_exists_and_is_for_its_cell(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path, expect_cell=cell.id)
    assert (reference.framework, reference.version) == (cell.framework.key, cell.version)
    assert reference.environment["packages"][cell.framework.package] == cell.version


@pytest.mark.parametrize("cell", CELLS)
def test_reference_holds_every_declared_probe_and_nothing_else(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path)
    declared = {oid for p in DECLARED if p.framework == cell.framework.key for oid in p.observation_ids()}
    assert set(reference.observations) == declared, STALE.format(cell=cell.id)


@pytest.mark.parametrize("cell", CELLS)
def test_reference_was_made_by_todays_probe_code(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path)
    edited = [
        p.id for p in DECLARED if p.id in reference.probes and reference.probes[p.id].source_hash != p.source_hash
    ]
    assert not edited, f"probes edited since blessing: {edited}; " + STALE.format(cell=cell.id)


@pytest.mark.parametrize("cell", CELLS)
def test_reference_was_made_from_todays_lock(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path)
    assert reference.environment.get("lock_sha256") == file_sha256(cell.lock_path), STALE.format(cell=cell.id)


@pytest.mark.parametrize("cell", CELLS)
def test_reference_has_no_probe_errors_and_every_na_has_a_reason(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path)
    for probe_id, observation in reference.observations.items():
        assert observation.outcome != PROBE_ERROR, probe_id
        if observation.outcome == NOT_APPLICABLE:
            assert observation.value["reason"].strip(), probe_id


def test_committed_report_is_rendered_from_the_reference() -> None:
    """REPORT.md, CHECKLIST.md, probes/<framework>.md and schema/: each as rendered now, and nothing else there."""
    files, unreadable = outputs.reference(MATRIX)
    assert unreadable == 0
    committed = {path for path in files if outputs.committed(path)}
    assert {matrix.REFERENCE_REPORT, matrix.REFERENCE_CHECKLIST} < committed
    stale = sorted(str(p.relative_to(REPO_ROOT)) for p in committed if not p.is_file() or p.read_text() != files[p])
    assert not stale, f"stale: {stale}: run ./noxw -s report"
    home = matrix.REFERENCE_REPORT.parent
    left_over = {p for folder in ("probes", "schema") for p in (home / folder).iterdir()} - committed
    assert not left_over, f"rendered files no longer made: {sorted(map(str, left_over))}"


def test_every_probe_the_report_data_cites_exists() -> None:
    declared = {p.id for p in DECLARED}
    for name in ("comparison.toml", "checklist.toml", "mitigations.toml"):
        text = (matrix.REFERENCE_RESULTS.parent / name).read_text()
        prefixes = "|".join(MATRIX.frameworks)
        cited = set(re.findall(rf'"((?:{prefixes})/[a-z0-9-]+/[a-z0-9-]+(?:\[[a-z0-9,-]+\])?)"', text))
        declared |= {oid for p in DECLARED for oid in p.observation_ids()}
        assert cited <= declared, f"{name} cites probes that do not exist: {sorted(cited - declared)}"


def _mentions(value: object, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(_mentions(item, key) for item in value.values())
    if isinstance(value, list):
        return any(_mentions(item, key) for item in value)
    return False


def _values_of(value: object, key: str) -> list:
    """Every value stored under `key` anywhere in an observation's value."""
    if isinstance(value, dict):
        here = [value[key]] if key in value else []
        return here + [v for item in value.values() for v in _values_of(item, key)]
    if isinstance(value, list):
        return [v for item in value for v in _values_of(item, key)]
    return []


# How a value records a run seen not to end: a probe's `run_ended`, a scenario observation's `returned` (per order).
NEVER_ENDED = ("run_ended", "returned")


def legend_violations(observations: dict) -> list[str]:
    """The hazard rules of the legend that can be checked from an observation alone."""
    found = []
    for oid, o in observations.items():
        if o.outcome.startswith("raises:") and o.hazard != "loud":
            found.append(f"{oid}: the framework raised, so the run stopped: loud, not {o.hazard}")
        if (o.hazard == "n/a") != (o.outcome in (NOT_APPLICABLE, "vacuous", PROBE_ERROR)):
            found.append(
                f"{oid}: hazard n/a is for n/a, vacuous and probe-error outcomes only ({o.outcome}, {o.hazard})"
            )
        if o.outcome == "ok" and o.hazard == "loud" and not _mentions(o.value, "raises"):
            found.append(f"{oid}: loud, but the value records no error")
        if o.hazard == "nondeterministic" and not any(
            isinstance(v, dict) and len(v.get("outcomes", [])) > 1 for v in [o.value, *o.value.values()]
        ):
            found.append(f"{oid}: nondeterministic needs the set of outcomes seen (value.*.outcomes, 2 or more)")
        never_ended = any(False in _values_of(o.value, key) for key in NEVER_ENDED)
        if o.hazard == "hangs" and not never_ended:
            found.append(f"{oid}: hangs needs the value to record a run seen not to end (run_ended or returned: false)")
        if never_ended and o.outcome == "ok" and o.hazard not in ("hangs", "silent", "nondeterministic"):
            found.append(
                f"{oid}: a run that never ended (run_ended or returned: false) is hangs (or worse), not {o.hazard}"
            )
        lost = o.value.get("lost") if isinstance(o.value, dict) else None
        if lost and o.outcome == "ok" and o.hazard not in ("silent", "nondeterministic"):
            found.append(f"{oid}: writes were lost ({lost}) with no error: silent, not {o.hazard}")
        if o.hazard == "safe" and lost:
            found.append(f"{oid}: safe means every write kept, but {lost} were lost")
    return found


@pytest.mark.parametrize("cell", CELLS)
def test_hazards_follow_the_legend(cell: matrix.Cell) -> None:
    assert legend_violations(load(cell.reference_path).observations) == []


def test_the_legend_check_catches_a_wrong_hazard() -> None:
    from fanin.model.results import Observation

    wrong = {
        "x/a/raised-but-safe": Observation("raises:KeyError", {"exception": "KeyError"}, "l", "d", "safe"),
        "x/a/lost-but-safe": Observation("ok", {"lost": ["A"]}, "l", "d", "safe"),
        "x/a/loud-without-error": Observation("ok", {"final": 1}, "l", "d", "loud"),
        "x/a/nondeterministic-once": Observation("ok", {"outcomes": ["A"]}, "l", "d", "nondeterministic"),
        "x/a/hangs-but-ended": Observation("ok", {"default": {"run_ended": True}}, "l", "d", "hangs"),
        "x/a/never-ended-but-loud": Observation("ok", {"run_ended": False, "raises": "X"}, "l", "d", "loud"),
        "x/a/hang-raised": Observation("raises:X", {"run_ended": False, "exception": "X"}, "l", "d", "hangs"),
    }
    # lost-but-safe breaks two rules; hang-raised breaks one (raised, so loud): a hang must not raise
    assert len(legend_violations(wrong)) == 8


def test_the_legend_check_reads_a_scenarios_returned_as_a_run_that_never_ended() -> None:
    """A scenario observation records `returned: false` per order, not `run_ended`: hangs is right for it, and a
    scenario that never returned graded safe is wrong."""
    from fanin.model.results import Observation

    def scenario(hazard: str) -> Observation:
        orders = {"a,b": {"returned": False, "raises": None, "join.runs": 0}}
        return Observation("ok", {"orders": orders, "grades": {"a,b": hazard}}, "l", "d", hazard)

    assert legend_violations({"x/scenario/stalled-branch": scenario("hangs")}) == []
    assert len(legend_violations({"x/scenario/stalled-branch": scenario("safe")})) == 1


@pytest.mark.parametrize("cell", CELLS)
def test_claims_check_behaviour_never_wording(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path)
    wrong = {
        pid: info.claim.unchecked_paths() for pid, info in reference.probes.items() if info.claim.unchecked_paths()
    }
    assert wrong == {}, "claims may expect outcome, hazard or value paths only"


def test_every_change_between_adjacent_cells_is_pinned_to_a_release() -> None:
    from fanin.versions import pin_changes

    unpinned = {f"{r.good.id} -> {r.bad.id}": list(r.observation_ids) for r in pin_changes.pending(MATRIX)}
    assert unpinned == {}, "run ./noxw -s bisect -- --all and commit reference/bisect.json"


_GITHUB = re.compile(r"https://github\.com/([A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+?)(?:\.git)?(?=[/#?\s\"')]|$)")


def _cited_repositories(paths: list[Path]) -> set[str]:
    return {m.group(1) for path in paths for m in _GITHUB.finditer(path.read_text(encoding="utf-8"))}


def test_every_cited_repository_is_one_the_registry_names() -> None:
    """Issue 36 §5: a claim cited github.com/microsoft/agent_framework, a repository that does not exist."""
    loaded = matrix.load()
    registered = {fw.repository for fw in loaded.frameworks.values()}
    assert all(registered), "every framework in matrix.toml names its GitHub repository"
    unknown: dict[str, set[str]] = {}
    for key, fw in loaded.frameworks.items():
        suite = REPO_ROOT / "suites" / key
        files = [p for p in suite.rglob("*") if p.suffix in (".py", ".mjs") and p.is_file()]
        cited = _cited_repositories(files) - registered - set(fw.related)
        if cited:
            unknown[key] = cited
    shared = [*REPO_ROOT.joinpath("scenarios").glob("*.toml"), *REPO_ROOT.joinpath("reference").glob("*.toml")]
    related = {r for fw in loaded.frameworks.values() for r in fw.related}
    stray = _cited_repositories(shared) - registered - related
    if stray:
        unknown["scenarios/, reference/*.toml"] = stray
    assert unknown == {}, f"cited repositories the registry does not name (repository or related): {unknown}"


def test_the_repository_check_sees_a_misspelt_repository(tmp_path: Path) -> None:
    probe = tmp_path / "test_x.py"
    probe.write_text('SRC = "https://github.com/microsoft/agent_framework/blob/python-1.0.0/x.py#L3"\n')
    assert _cited_repositories([probe]) == {"microsoft/agent_framework"}


def test_every_probe_topic_is_in_the_topic_registry_and_every_topic_has_a_probe() -> None:
    """Issue 36 §4: topics are one registry (reference/topics.toml), as typing's test_groups.toml."""
    from fanin.model import topics

    registry = topics.load()
    used = {p.id.split("/")[1] for p in catalog.declared()}
    assert sorted(used - set(registry)) == [], "add these topics to reference/topics.toml"
    assert sorted(set(registry) - used) == [], "reference/topics.toml names topics no probe has"


@pytest.mark.parametrize("cell", CELLS)
def test_reference_was_made_from_a_committed_tree(cell: matrix.Cell) -> None:
    """Issue 36 §5: the cite line names the suite commit, so the run must be of exactly that commit."""
    commit = str(load(cell.reference_path).environment.get("suite_commit") or "")
    assert re.fullmatch(r"[0-9a-f]{12}", commit), f"{cell.id}: suite_commit {commit!r} (blessed from a dirty tree?)"
