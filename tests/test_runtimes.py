"""The runtime seam: a runtime is data plus one implementation per floor, looked up by its name, never compared.

Issue 32: the harness had a dozen `runtime == "node"` branches (matrix, all_cells, locking, watch, upgrade,
registry, npm, here); a third runtime meant editing each. Now `fanin.model.runtime` (data),
`fanin.run.runtimes` (install and run) and `fanin.versions.registry` (releases and locks) hold one entry
per runtime, and a fake third runtime registered only there runs through every command's path.
"""

from __future__ import annotations

import ast
import hashlib
import io
import tarfile
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

import pytest

from fanin.model import exits
from fanin.model import runtime as runtimes_data
from fanin.model.catalog import DeclaredProbe
from fanin.model.matrix import LOCKS, MatrixError, parse
from fanin.model.results import ResultFileError, ResultSet
from fanin.model.source import REPO_ROOT
from fanin.run import all_cells, identity, node_release, one_cell, runtimes
from fanin.versions import locking, registry, watch
from fanin.versions.pypi import RegistryError, Release

PACKAGE = REPO_ROOT / "fanin"


def _compared_names(tree: ast.AST) -> list[int]:
    """Lines comparing a runtime's name: `x.runtime == ...`, `runtime != ...`, `== "node"`, `in ("node", ...)`.
    Asking the registry (`runtime not in runtimes.names()`) is no comparison with a name."""
    names = set(runtimes_data.names())
    equality = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        named = any(
            (isinstance(o, ast.Attribute) and o.attr == "runtime") or (isinstance(o, ast.Name) and o.id == "runtime")
            for o in operands
        )
        literal = any(
            (isinstance(o, ast.Constant) and o.value in names)
            or (
                isinstance(o, (ast.Tuple, ast.List, ast.Set))
                and any(isinstance(e, ast.Constant) and e.value in names for e in o.elts)
            )
            for o in operands
        )
        if literal or (named and any(isinstance(op, equality) for op in node.ops)):
            found.append(node.lineno)
    return found


def test_no_module_of_the_harness_compares_a_runtimes_name() -> None:
    """Every question asked of a runtime goes through its implementation: a `runtime == "node"` branch is refused."""
    branches = [
        f"{path.relative_to(REPO_ROOT)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in _compared_names(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not branches, "compare a runtime's name; ask its implementation instead:\n" + "\n".join(branches)


def test_the_scan_finds_each_form_of_the_branch() -> None:
    """The scan can fail: each way the old code asked which runtime a cell is would be found."""
    for code in (
        'if cell.framework.runtime == "node":\n    pass',
        'where = "npm" if framework.runtime != "python" else "PyPI"',
        'ok = runtime in ("node", "deno")',
        'if kind == "node":\n    pass',
        "if fw.runtime is not NODE:\n    pass",
    ):
        assert _compared_names(ast.parse(code)) == [1], code
    assert _compared_names(ast.parse("if runtime not in runtimes.names():\n    pass")) == []


# --- a third runtime, registered as data plus its implementations, nothing else edited ---

FAKE = runtimes_data.Runtime(
    "fake",
    index="FakeHub",
    lock="{cell}.fakelock",
    target="{file}#{function}",
    settings=("engine",),
    setting_pattern=r"\d+",
    setting_example="7",
)
RELEASES = [Release("1.0", "2026-01-01T00:00:00Z", False), Release("2.0", "2026-02-01T00:00:00Z", False)]


class FakeRunner:
    def __init__(self) -> None:
        self.ran: list[runtimes.CellJob] = []

    def run(self, job: runtimes.CellJob, log: IO[str]) -> one_cell.CellOutcome:
        self.ran.append(job)
        log.write("fake: ran\n")
        return one_cell.CellOutcome(job.cell.id, exits.SAME, None, 1, "none")

    def pins(self, lock: Path, environment: Mapping[str, object]) -> dict[str, str]:
        name, _, version = lock.read_text(encoding="utf-8").strip().partition("==")
        return {name: version}


class FakeReleases:
    def releases(self, package: str, prereleases: bool = False) -> list[Release]:
        return list(RELEASES)

    def resolve(self, package: str, wanted: str) -> Release:
        return next(r for r in RELEASES if r.version == wanted)

    def lock_files(self, cell: object, matrix: object, lock: Path) -> dict[Path, str]:
        return {lock: f"fakefw=={cell.version}\n"}


@pytest.fixture
def fake() -> Iterator[FakeRunner]:
    runner = FakeRunner()
    runtimes_data.register(FAKE)
    runtimes.register("fake", runner)
    registry.register("fake", FakeReleases())
    try:
        yield runner
    finally:
        registry.unregister("fake")
        runtimes.unregister("fake")
        runtimes_data.unregister("fake")


def _matrix(runtime: str = "fake", **framework: object) -> dict[str, object]:
    return {
        "defaults": {"python": "3.11"},
        "frameworks": {
            "fakefw": {"package": "fakefw", "display": "Fake", "import": "fakefw", "runtime": runtime, **framework}
        },
        "cell": [
            {
                "framework": "fakefw",
                "version": "1.0",
                "resolution": "as-released",
                "exclude_newer": "2026-01-02T00:00:00Z",
            },
            {"framework": "fakefw", "version": "2.0", "resolution": "current", "exclude_newer": "2026-02-02T00:00:00Z"},
        ],
    }


def test_an_unregistered_runtime_is_refused_in_one_line() -> None:
    with pytest.raises(MatrixError, match=r"runtime 'fake'; expected one of python, node"):
        parse(_matrix())


def test_a_third_runtime_is_data_plus_its_implementations(fake: FakeRunner, tmp_path: Path) -> None:
    """Registered in the three registries only, a `runtime = "fake"` framework gets the matrix's validation, its lock
    layout, its registry in every message, locking, the identity check and a run, with no harness module edited."""
    matrix = parse(_matrix(engine="7"))
    framework = matrix.frameworks["fakefw"]
    cell = matrix.newest("fakefw")
    assert cell.lock_path == LOCKS / "fakefw-2.0.fakelock"
    assert cell.setting("engine") == "7"

    assert registry.releases(framework) == RELEASES
    assert registry.resolve(framework, "1.0").version == "1.0"
    assert registry.resolve(framework, ">=1.5").version == "2.0"
    with pytest.raises(RegistryError, match=r"no release matching >=3 on FakeHub \(newest is 2.0\)"):
        registry.resolve(framework, ">=3")
    assert registry.lock_path(cell, tmp_path) == tmp_path / "locks" / "fakefw-2.0.fakelock"
    probe = DeclaredProbe("fakefw/t/c", "suites/fakefw/t.fake", "c", "0")
    assert registry.target(probe, framework) == f"{REPO_ROOT}/suites/fakefw/t.fake#c"

    lock = registry.lock_path(cell, tmp_path)
    lock.parent.mkdir(parents=True)
    locking.lock(cell, matrix, lock)
    assert lock.read_text() == "fakefw==2.0\n"
    assert locking.resolve_files(cell, matrix) == {cell.lock_path: "fakefw==2.0\n"}

    status = watch.Status(framework, cell, (*RELEASES, Release("3.0", "2026-03-01T00:00:00Z", False)))
    assert status.index_name == "FakeHub" and status.due is not None

    sha = hashlib.sha256(lock.read_bytes()).hexdigest()
    made = ResultSet(cell.id, "fakefw", "2.0", {"lock_sha256": sha, "packages": {"fakefw": "2.0"}})
    identity.check_lock(made, cell, lock, "made")  # the fake runtime reads its own lock's pins
    drifted = ResultSet(cell.id, "fakefw", "2.0", {"lock_sha256": sha, "packages": {"fakefw": "1.0"}})
    with pytest.raises(ResultFileError, match=r"packages differ .*fakefw 1.0 \(lock: 2.0\)"):
        identity.check_lock(drifted, cell, lock, "drifted")

    result = all_cells.run_one(cell, matrix, all_cells.Options(results_dir=tmp_path / "results", lock=lock))
    assert result.code == exits.SAME
    assert [job.cell.id for job in fake.ran] == [cell.id] and fake.ran[0].lock == lock
    assert result.log.read_text() == "fake: ran\n"


def test_a_runtime_setting_is_checked_against_its_runtime(fake: FakeRunner) -> None:
    with pytest.raises(MatrixError, match=r"\[frameworks.fakefw\]: engine 'v7' must be a version like 7"):
        parse(_matrix(engine="v7"))
    with pytest.raises(MatrixError, match=r"\[frameworks.fakefw\]: 'node' is no setting of the fake runtime"):
        parse(_matrix(node="22.x"))
    with pytest.raises(MatrixError, match=r"\[frameworks.fakefw\]: 'engine' is no setting of the python runtime$"):
        parse(_matrix("python", engine="7"))


# --- a Node cell's own Node release ---


def _node_matrix(**cell: str) -> dict[str, object]:
    data = _matrix("node")
    cells = data["cell"]
    assert isinstance(cells, list)
    cells[1].update(cell)
    return data


def test_a_node_cell_names_its_node_release_on_its_framework_or_itself() -> None:
    framework_wide = parse(_node_matrix() | {"frameworks": {"fakefw": {**_node_fw(), "node": "22.13.x"}}})
    assert [c.setting("node") for c in framework_wide.cells] == ["22.13.x", "22.13.x"]
    own = parse(_node_matrix(node="22.13.1") | {"frameworks": {"fakefw": {**_node_fw(), "node": "22.x"}}})
    assert [c.setting("node") for c in own.cells] == ["22.x", "22.13.1"]
    assert [c.setting("node") for c in parse(_node_matrix()).cells] == [None, None]  # the machine's node
    with pytest.raises(MatrixError, match=r"cell #2 \(fakefw==2.0\): node 'latest' must be a version like 22.13.x"):
        parse(_node_matrix(node="latest"))
    with pytest.raises(MatrixError, match=r"'node' is no setting of the python runtime"):
        parse(_matrix("python", node="22.13.x"))


def _node_fw() -> dict[str, str]:
    return {"package": "fakefw", "display": "Fake", "import": "fakefw", "runtime": "node"}


def test_a_release_matches_a_range_part_by_part() -> None:
    for spec in ("22", "22.x", "22.13.x", "22.13.1", "22.x.x"):
        assert node_release.matches("22.13.1", spec), spec
    for spec in ("23", "22.12.x", "22.13.2", "2"):
        assert not node_release.matches("22.13.1", spec), spec


def _fake_npm(tmp_path: Path, version: str, says: str) -> Path:
    """An npm that lists `version` and packs a tarball whose bin/node answers `says` (no registry reached)."""
    node = f"#!/bin/sh\necho {says}\n".encode()
    tarball = tmp_path / f"{node_release.package()}-{version}.tgz"
    with tarfile.open(tarball, "w:gz") as archive:
        for name, data in (("package/bin/node", node), ("package/LICENSE", b"MIT\n"), ("package/include/x.h", b"")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    npm = tmp_path / "npm"
    npm.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {tmp_path}/npm.calls\n'
        f'case "$1" in view) echo "{version}";; pack) cp {tarball} "$4/"; echo {tarball.name};; esac\n'
    )
    npm.chmod(0o755)
    return npm


def test_a_node_release_is_unpacked_once_whole_and_reused(tmp_path: Path) -> None:
    npm = _fake_npm(tmp_path, "22.13.9", "v22.13.9")
    releases = tmp_path / "releases"
    node = node_release.ensure("22.13.x", releases, str(npm), tmp_path / "cache")
    assert node == releases / "22.13.9" / "bin" / "node"
    assert sorted(p.name for p in (releases / "22.13.9").rglob("*")) == ["LICENSE", "bin", "node"]
    assert [p.name for p in releases.iterdir()] == ["22.13.9"]  # no half-made directory left beside it
    calls = (tmp_path / "npm.calls").read_text().splitlines()
    package = node_release.package()
    assert [c.split()[:2] for c in calls] == [["view", f"{package}@22.13.x"], ["pack", f"{package}@22.13.9"]]
    assert node_release.ensure("22.x", releases, "/no/npm/here", tmp_path / "cache") == node  # cached: npm not asked


def test_a_release_whose_node_says_another_version_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    npm = _fake_npm(tmp_path, "22.13.9", "v20.0.0")
    releases = tmp_path / "releases"
    with pytest.raises(node_release.NodeReleaseError, match=r"bin/node says v20.0.0, not v22.13.9"):
        node_release.ensure("22.13.9", releases, str(npm), tmp_path / "cache")
    assert list(releases.iterdir()) == []


def test_a_node_cell_pinned_to_node_22_installs_and_runs_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One real cell (langgraphjs-1.7.3, one probe file) with `node = "22.13.x"`: the release comes from the npm
    registry (cached in .fanin/node-releases), npm ci and node --test run with it, and the result set says so."""
    from fanin.model.matrix import MATRIX_FILE
    from fanin.model.results import load
    from fanin.run import node_cell

    data = tomllib.loads(MATRIX_FILE.read_text(encoding="utf-8"))
    for raw in data["cell"]:
        if raw["framework"] == "langgraphjs" and raw["version"] == "1.7.3":
            raw["node"] = "22.13.x"
    matrix = parse(data)
    cell = matrix.cell("langgraphjs-1.7.3")
    assert cell.setting("node") == "22.13.x"
    monkeypatch.setattr(node_cell, "NODE_DIRS", tmp_path / "node")  # a fresh npm ci (from the shared npm cache)
    monkeypatch.setenv("FANIN_NODE_ROOTS", str(tmp_path / "node-roots.txt"))  # no clone of the user's
    options = all_cells.Options(results_dir=tmp_path / "results", targets=("suites/langgraphjs/same_key.test.mjs",))
    result = all_cells.run_one(cell, matrix, options)
    log = result.log.read_text()
    assert result.code == exits.SAME, log
    release = node_cell.NODE_RELEASES / "22.13.1" / "bin" / "node"
    assert f"{release} --test" in log  # node --test ran with the release, not the machine's node
    made = load(result.results)
    assert made.environment["node"] == "22.13.1" and made.environment["packages"]["@langchain/langgraph"] == "1.7.3"
    stamp = (tmp_path / "node" / cell.id / node_cell.STAMP).read_text()
    assert '"node": "22.13.1"' in stamp  # npm ci ran with it: another release (or none) reinstalls the directory
    assert set(made.observations) == {"langgraphjs/same-key/no-reducer", "langgraphjs/same-key/across-supersteps"}


def test_a_release_the_registry_cannot_give_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    """npm's own reason, one line (the cell is NOT RUN with it, exit 3); no releases directory is made."""
    npm = tmp_path / "npm"
    npm.write_text("#!/bin/sh\necho 'npm error code E404' >&2\necho 'npm error 404 No match found' >&2\nexit 1\n")
    npm.chmod(0o755)
    releases = tmp_path / "releases"
    with pytest.raises(node_release.NodeReleaseError) as failed:
        node_release.ensure("22.99.x", releases, str(npm), tmp_path / "cache")
    assert str(failed.value) == (
        f"npm view {node_release.package()}@22.99.x failed (exit 1): code E404 | 404 No match found"
    )
    assert failed.value.exit_code == exits.NOT_RUN
    assert not releases.exists()


def test_a_lock_other_than_the_cells_own_gets_a_venv_beside_the_cells(tmp_path: Path) -> None:
    """A bisect step (a release's as-released lock under the cell's id) once rebuilt the cell's own venv, under a
    cell run that was importing from it (crewai-1.15.30: ModuleNotFoundError mid-run); now it has its own."""
    from fanin.model import matrix as matrix_model
    from fanin.run import runtimes as runtimes_module

    cell = matrix_model.load().newest("crewai")

    def job(lock: Path) -> runtimes_module.CellJob:
        return runtimes_module.CellJob(cell, lock, None, None, tmp_path / "r.json", tmp_path / "j.xml")

    other = tmp_path / "bisect" / f"{cell.id}.txt"
    other.parent.mkdir()
    other.write_text(cell.lock_path.read_text())
    assert runtimes_module.venv_name(job(cell.lock_path)) == cell.id
    assert runtimes_module.venv_name(job(other)) == f"{cell.id}+other-lock"
