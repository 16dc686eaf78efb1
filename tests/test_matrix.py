"""reference/matrix.toml and the locks: what the issue asked for, and one clear line per mistake."""

import copy
import tomllib
from pathlib import Path

import pytest
from packaging.version import Version

from fanin.model import matrix
from fanin.model.errors import FaninError
from fanin.model.matrix import MatrixError, parse
from fanin.run import pythons

COMMITTED = matrix.load()
RAW = tomllib.loads(matrix.MATRIX_FILE.read_text())


def test_every_registered_framework_spans_its_history_and_only_its_newest_is_current() -> None:
    for key in COMMITTED.frameworks:
        cells = COMMITTED.of(key)
        assert len({c.version for c in cells}) >= 4, key  # a span of its history, not one version
        newest = max(Version(c.version) for c in cells)
        for cell in cells:
            assert (cell.resolution == "current") == (Version(cell.version) == newest), cell.id
    assert COMMITTED.smoke() == {COMMITTED.newest(key).id for key in COMMITTED.frameworks}


def test_every_cell_has_a_hashed_lock_of_its_framework_and_harness() -> None:
    for cell in COMMITTED.cells:
        if cell.framework.runtime == "node":
            continue  # package.json + package-lock.json: tests/test_node_cells.py
        text = cell.lock_path.read_text()
        assert f"\n{cell.requirement} \\" in text, cell.id
        assert "--hash=sha256:" in text, cell.id
        for requirement in COMMITTED.harness_requirements:
            assert f"\n{requirement}==" in text, (cell.id, requirement)
        assert f"nox -s lock -- {cell.id}" in text, cell.id


def test_ids_are_derived_from_framework_version_and_python() -> None:
    data = copy.deepcopy(RAW)
    data["cell"] = [dict(RAW["cell"][0], python="3.13", resolution="current")]
    cell = parse(data).cells[0]
    assert cell.id == f"{cell.framework.key}-{cell.version}-py3.13"
    assert cell.lock_path.name == f"{cell.id}.txt"


def broken(mutate) -> str:
    data = copy.deepcopy(RAW)
    mutate(data)
    with pytest.raises(MatrixError) as caught:
        parse(data)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_duplicate_cell() -> None:
    assert "duplicates cell #1" in broken(lambda d: d["cell"].append(dict(d["cell"][0])))


def test_missing_field() -> None:
    assert "'exclude_newer' is missing" in broken(lambda d: d["cell"][0].pop("exclude_newer"))


def test_unknown_cell_field() -> None:
    assert "unknown field(s) pyhton" in broken(lambda d: d["cell"][0].update(pyhton="3.12"))


def test_unknown_top_level_key() -> None:
    assert "unknown top-level key(s) cells" in broken(lambda d: d.update(cells=[]))


def test_unknown_framework() -> None:
    assert "unknown framework 'autogen'" in broken(lambda d: d["cell"][0].update(framework="autogen"))


@pytest.mark.parametrize("version", ["1.2.*", ">=1.2.0", "1.2.x", "latest"])
def test_version_must_be_exact(version: str) -> None:
    assert "not an exact release" in broken(lambda d: d["cell"][0].update(version=version))


def test_resolution_and_date_are_checked() -> None:
    assert "resolution 'today'" in broken(lambda d: d["cell"][0].update(resolution="today"))
    assert "not an ISO date-time" in broken(lambda d: d["cell"][0].update(exclude_newer="last year"))


def test_python_must_be_a_minor_version() -> None:
    assert "python '3'" in broken(lambda d: d["cell"][0].update(python="3"))


def test_not_toml_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text("[[cell]\nframework = ")
    with pytest.raises(MatrixError, match="not valid TOML"):
        matrix.load(path)


def test_unknown_cell_lookup_names_the_nearest_ones() -> None:
    with pytest.raises(
        MatrixError, match=r"no cell 'langgraph-1\.2\.81' in the matrix; did you mean langgraph-1\.2\.18"
    ):
        COMMITTED.cell("langgraph-1.2.81")


def test_framework_accepts_key_or_package_name() -> None:
    assert COMMITTED.framework("google-adk").key == "adk"
    assert COMMITTED.framework("ADK").package == "google-adk"
    with pytest.raises(MatrixError, match="unknown framework 'autogen'"):
        COMMITTED.framework("autogen")


def test_a_framework_key_with_an_underscore_is_found_and_prefixes_probe_ids() -> None:
    from fanin.model.matrix import Framework, Matrix
    from fanin.model.results import OBSERVATION_ID, PROBE_ID

    fw = Framework("my_graph", "graph-lib", "My graph", "graph_lib")
    registry = Matrix((), {"my_graph": fw}, "3.11", ())
    assert registry.framework("my_graph") is fw and registry.framework("my-graph") is fw
    assert PROBE_ID.match("my_graph/join/shared-initial") and OBSERVATION_ID.match("my_graph/join/x[async]")
    assert not PROBE_ID.match("my_graph/join_x/y")  # only the registry key may hold `_`


def test_python_discovery() -> None:
    assert pythons.find("3.99") is None
    found = pythons.find(COMMITTED.default_python)
    assert found is not None and Path(found).exists()


def test_only_the_newest_cell_of_a_framework_may_be_current() -> None:
    def older_current(data: dict) -> None:
        data["cell"][0]["resolution"] = "current"

    def newest_as_released(data: dict) -> None:
        newest = max((c for c in data["cell"] if c["framework"] == "langgraph"), key=lambda c: Version(c["version"]))
        newest["resolution"] = "as-released"

    assert "only the newest cell of a framework is current" in broken(older_current)
    assert "so its resolution must be 'current'" in broken(newest_as_released)


def test_add_cell_dates_the_version_keeps_the_file_and_moves_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fanin.versions import add_cell, locking, pypi

    text = matrix.MATRIX_FILE.read_text()
    target = tmp_path / "matrix.toml"
    target.write_text(text)
    monkeypatch.setattr(add_cell, "MATRIX_FILE", target)
    monkeypatch.setattr(matrix, "LOCKS", tmp_path / "locks")
    uploads = {"1.2.24": "2026-11-20T10:00:00Z", "1.2.25": "2026-11-28T10:00:00Z", "1.0.3": "2025-11-01T08:30:00Z"}
    monkeypatch.setattr(pypi, "resolve", lambda package, wanted: pypi.Release(wanted, uploads[wanted], False))
    monkeypatch.setattr(locking, "resolve", lambda cell, m: f"# lock of {cell.id} as of {cell.exclude_newer}\n")
    newest_before = matrix.load(target).newest("langgraph").id

    locked = add_cell.add(["langgraph==1.2.25"], matrix.load(target), today=__import__("datetime").date(2026, 11, 30))
    updated = matrix.load(target)
    twins = sorted(
        c.id
        for c in matrix.load(target).cells
        if c.version == newest_before.split("-")[1] and c.framework.key == "langgraph"
    )
    assert sorted(locked) == sorted([*twins, "langgraph-1.2.25"])  # every Python twin of the old newest moves too
    assert updated.cell("langgraph-1.2.25").resolution == "current"
    assert updated.cell("langgraph-1.2.25").exclude_newer == "2026-11-30T00:00:00Z"
    demoted = updated.cell(newest_before)
    assert (demoted.resolution, demoted.exclude_newer) == ("as-released", "2026-11-21T10:00:00Z")
    assert "# The cells fanin runs" in target.read_text()  # comments kept
    assert (tmp_path / "locks" / "langgraph-1.2.25.txt").read_text().startswith("# lock of langgraph-1.2.25")

    add_cell.add(["langgraph==1.0.3"], updated)  # an older version: as released, nothing else moves
    again = matrix.load(target)
    assert (again.cell("langgraph-1.0.3").resolution, again.cell("langgraph-1.0.3").exclude_newer) == (
        "as-released",
        "2025-11-02T08:30:00Z",
    )
    assert again.cell("langgraph-1.2.25").resolution == "current"
    written = target.read_text()
    at = {
        v: written.index(f'framework = "langgraph"\nversion = "{v}"') for v in ("0.6.11", "1.0.3", "1.0.10", "1.2.25")
    }
    assert at["0.6.11"] < at["1.0.3"] < at["1.0.10"]  # in version order, not after the framework's last cell
    # the next framework's heading, which tomlkit keeps inside the last cell's table, stays above that framework
    assert at["1.2.25"] < written.index("# --- google-adk ---") < written.index('framework = "adk"')
    with pytest.raises(FaninError, match="already in the matrix"):
        add_cell.add(["langgraph==1.0.3"], again)


def test_add_cell_adds_a_frameworks_first_cell_as_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fanin.versions import add_cell, locking, pypi

    text = (
        matrix.MATRIX_FILE.read_text()
        + '\n[frameworks.newframework]\npackage = "newframework"\ndisplay = "New"\nimport = "newframework"\n'
    )
    target = tmp_path / "matrix.toml"
    target.write_text(text)
    monkeypatch.setattr(add_cell, "MATRIX_FILE", target)
    monkeypatch.setattr(matrix, "LOCKS", tmp_path / "locks")
    monkeypatch.setattr(pypi, "resolve", lambda package, wanted: pypi.Release(wanted, "2026-11-01T00:00:00Z", False))
    monkeypatch.setattr(locking, "resolve", lambda cell, m: "# lock\n")
    assert add_cell.add(
        ["newframework==0.1.0"], matrix.load(target), today=__import__("datetime").date(2026, 11, 30)
    ) == ["newframework-0.1.0"]
    cell = matrix.load(target).cell("newframework-0.1.0")
    assert (cell.resolution, cell.exclude_newer) == ("current", "2026-11-30T00:00:00Z")


def test_a_lock_moment_in_the_future_is_refused_before_uv_runs() -> None:
    """Issue 21: `exclude_newer` a week ahead would lock a different set each day until then: bad input, one line."""
    import dataclasses
    import datetime as dt

    from fanin.model.errors import FaninError
    from fanin.versions import locking

    real = matrix.load()
    cell = real.newest("langgraph")
    ahead = (dt.datetime.now(dt.UTC) + dt.timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with pytest.raises(FaninError, match="is in the future"):
        locking.resolve(dataclasses.replace(cell, exclude_newer=ahead), real, uv="/nonexistent/uv")
    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=20)).strftime("%Y-%m-%dT%H:%M:%SZ")
    locking.check_moment(dataclasses.replace(cell, exclude_newer=tomorrow))  # an upload of today, plus a day


def test_a_clock_behind_a_committed_lock_moment_is_named_not_the_matrix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 30 case 6: a machine whose clock is a month behind said "fix it in reference/matrix.toml" of a moment
    its committed lock and reference were made after. The reference's recorded day is later than the clock's."""
    import datetime as dt

    from fanin.model.errors import EnvironmentFault
    from fanin.versions import locking

    cell = matrix.load().newest("langgraph")
    moment = dt.datetime.fromisoformat(cell.exclude_newer.replace("Z", "+00:00"))
    behind = moment - dt.timedelta(days=30)
    with pytest.raises(EnvironmentFault) as caught:
        locking.check_moment(cell, now=behind)
    said = str(caught.value)
    assert caught.value.exit_code == 3 and "matrix.toml" not in said
    assert said.startswith(f"this machine's clock says {behind:%Y-%m-%dT%H:%M:%SZ}, before {cell.id}'s lock moment")
    assert f"exclude_newer {cell.exclude_newer}" in said and "the clock looks behind" in said
    monkeypatch.setattr(matrix, "REFERENCE_RESULTS", tmp_path)  # nothing recorded after the clock: the file's moment
    with pytest.raises(FaninError, match=r"is in the future \(this machine's clock says .*matrix\.toml"):
        locking.check_moment(cell, now=behind)


def test_registry_links_are_checked() -> None:
    """port_of names another registered framework; repository is owner/name."""
    said = broken(lambda d: d["frameworks"]["langgraphjs"].update(port_of="langgraf"))
    assert "port_of 'langgraf' is not another registered framework" in said
    assert "is not owner/name" in broken(lambda d: d["frameworks"]["langgraph"].update(repository="langgraph"))


def test_a_live_thread_cell_is_written_to_by_the_cell_before_it_on_its_python() -> None:
    lg = [c for c in COMMITTED.of("langgraph") if c.python == COMMITTED.default_python]
    assert COMMITTED.earlier(lg[0]) is None
    assert [COMMITTED.earlier(c) for c in lg[1:]] == lg[:-1]
    twin = next(c for c in COMMITTED.of("langgraph") if c.python != COMMITTED.default_python)
    same_python = [c for c in COMMITTED.of("langgraph") if c.python == twin.python and c.sort_key < twin.sort_key]
    assert any(Version(c.version) < Version(twin.version) for c in lg)  # an older cell on another Python is not taken
    assert COMMITTED.earlier(twin) == (same_python[-1] if same_python else None)
    between = COMMITTED.make_cell(lg[-1].framework, lg[-1].version + ".post1", lg[-1].python, "current", "2026-01-01")
    assert COMMITTED.earlier(between) == lg[-1]  # a bisect step or an upgrade's release: the matrix cell below it
    assert COMMITTED.earlier(COMMITTED.newest("pydantic_graph")) is None  # no live-thread probes: no earlier venv
    adk = [c for c in COMMITTED.of("adk") if c.python == COMMITTED.default_python]
    assert [COMMITTED.earlier(c) for c in adk] == [None, *adk[:-1]]  # adk/upgrade/live-session: one writer each
    oa = [c for c in COMMITTED.of("openai_agents") if c.python == COMMITTED.default_python]
    assert [COMMITTED.earlier(c) for c in oa] == [None, *oa[:-1]]  # openai_agents/upgrade/live-state: one writer each
    hs = [c for c in COMMITTED.of("haystack") if c.python == COMMITTED.default_python]
    assert [COMMITTED.earlier(c) for c in hs] == [None, *hs[:-1]]  # haystack/upgrade/live-snapshot: one writer each
    st = [c for c in COMMITTED.of("strands") if c.python == COMMITTED.default_python]
    assert [COMMITTED.earlier(c) for c in st] == [None, *st[:-1]]  # strands/upgrade/live-session: one writer each
    cw = [c for c in COMMITTED.of("crewai") if c.python == COMMITTED.default_python]
    assert [COMMITTED.earlier(c) for c in cw] == [None, *cw[:-1]]  # crewai/upgrade/live-flow: one writer each


def test_live_threads_is_a_flag() -> None:
    assert "'live_threads' must be true or false" in broken(
        lambda d: d["frameworks"]["langgraph"].__setitem__("live_threads", "yes")
    )
