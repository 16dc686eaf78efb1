"""A Node framework's storage companions: picked per cell by their peer ranges, else left out with the reason."""

import copy
import json
import tomllib
from pathlib import Path

import pytest

from fanin.model import matrix
from fanin.model.errors import FaninError
from fanin.model.matrix import MatrixError, parse
from fanin.versions import npm, npm_storage
from fanin.versions.pypi import Release

RAW = tomllib.loads(matrix.MATRIX_FILE.read_text())
PEERS = {
    "0.0.2": {"@langchain/core": ">=0.2.31 <0.4.0", "@langchain/langgraph-checkpoint": "~0.0.6"},
    "1.0.0": {"@langchain/core": "^1.0.1", "@langchain/langgraph-checkpoint": "^1.0.0"},
    "1.0.2": {"@langchain/core": "^1.1.44", "@langchain/langgraph-checkpoint": "^1.0.0"},
}
SAVER = "@langchain/langgraph-checkpoint-postgres"


def test_the_newest_release_whose_peers_accept_the_tree_is_picked_by_npms_own_semver() -> None:
    tree = {"@langchain/core": "1.1.40", "@langchain/langgraph-checkpoint": "1.0.1"}
    picked = npm_storage.pick(SAVER, ["0.0.2", "1.0.0", "1.0.2"], PEERS, tree, "2026-04-18")
    assert picked == npm_storage.Picked(SAVER, "1.0.0")  # 1.0.2 asks core ^1.1.44
    tree["@langchain/core"] = "1.1.48"
    assert npm_storage.pick(SAVER, ["0.0.2", "1.0.0", "1.0.2"], PEERS, tree, "2026-06-10").version == "1.0.2"


def test_none_accepting_is_left_out_with_the_peer_it_refuses_named() -> None:
    tree = {"@langchain/core": "1.0.6", "@langchain/langgraph-checkpoint": "1.0.0"}
    picked = npm_storage.pick(SAVER, ["0.0.2"], PEERS, tree, "2025-11-20")
    assert picked.version is None
    assert picked.reason.startswith(f"no {SAVER} release by 2025-11-20 accepts @langchain/core 1.0.6")
    assert "(the newest, 0.0.2, asks @langchain/core >=0.2.31 <0.4.0" in picked.reason
    assert npm_storage.pick(SAVER, [], PEERS, tree, "2020-01-01").reason == f"no {SAVER} release by 2020-01-01"


def test_a_peer_the_tree_lacks_is_npms_to_add_and_prereleases_match_as_npm_matches_them() -> None:
    peers = {"0.1.0": {"zod": "^3.0.0"}, "0.2.0": {"@mastra/core": ">=0.21.2 <0.25.0-0"}}
    assert npm_storage.pick("@mastra/libsql", ["0.1.0"], peers, {"@mastra/core": "1.0.4"}, "d").version == "0.1.0"
    assert npm_storage.pick("@mastra/libsql", ["0.1.0", "0.2.0"], peers, {"@mastra/core": "1.0.4"}, "d").version == (
        "0.1.0"
    )
    pairs = [("1.0.2", "^1.0.0-alpha"), ("1.0.0-beta.1", "^1.0.0"), ("0.24.9", ">=0.21.2 <0.25")]
    assert npm_storage.satisfies(pairs) == [True, False, True]


def test_the_lock_pins_the_picked_one_and_writes_why_another_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between npm's two passes: the first pass's tree decides, only releases by the cell's moment count."""
    data = copy.deepcopy(RAW)
    data["frameworks"]["langgraphjs"]["storage"] = [SAVER, "@fake/store"]
    loaded = parse(data)
    cell = loaded.make_cell(loaded.frameworks["langgraphjs"], "1.2.9", "3.11", "as-released", "2026-04-18T08:03:49Z")
    uploaded = {"0.0.2": "2024-12-13T10:19:45Z", "1.0.0": "2026-03-21T11:32:48.798Z", "1.0.2": "2026-06-04T18:02:09Z"}
    monkeypatch.setattr(
        npm, "releases", lambda package, prereleases=False: [Release(v, t, False) for v, t in uploaded.items()]
    )
    fake = {"0.0.2": {"@fake/core": "^8"}, "1.0.0": {"@fake/core": "^9"}}
    monkeypatch.setattr(npm_storage, "peers_of", lambda package, run, pinned: PEERS if package == SAVER else fake)
    manifests: list[dict[str, object]] = []

    def install(directory: Path, cell: matrix.Cell, manifest: str) -> dict[str, object]:
        manifests.append(json.loads(manifest))
        (directory / "package-lock.json").write_text("{}")
        tree = {"@langchain/core": "1.1.40", "@langchain/langgraph-checkpoint": "1.0.1", "@fake/core": "1.0.0"}
        return {"packages": {f"node_modules/{k}": {"version": v} for k, v in tree.items()}}

    monkeypatch.setattr(npm, "_install", install)
    final = json.loads(npm.resolve_files(cell, loaded, tmp_path)[tmp_path / "package.json"])
    assert final["dependencies"][SAVER] == "1.0.0"  # 1.0.2 is after the cell's moment
    assert SAVER not in manifests[0]["dependencies"]  # type: ignore[operator]
    why = "no @fake/store release by 2026-04-18 accepts @fake/core 1.0.0 (the newest, 1.0.0, asks @fake/core ^9)"
    assert final["fanin"] == {"left_out": {"@fake/store": why}}


def test_storage_is_package_names_on_a_runtime_whose_locker_picks_them() -> None:
    data = copy.deepcopy(RAW)
    data["frameworks"]["langgraph"]["storage"] = ["langgraph-checkpoint-postgres"]
    with pytest.raises(MatrixError, match=r"\[frameworks.langgraph\]: 'storage' is not picked by the python runtime"):
        parse(data)
    for bad in (["@mastra/libsql@1.0.0"], "@mastra/libsql", ["@langchain/core"]):
        data = copy.deepcopy(RAW)
        data["frameworks"]["langgraphjs"]["storage"] = bad
        with pytest.raises(MatrixError, match=r"\[frameworks.langgraphjs\]"):
            parse(data)
    assert matrix.load().frameworks["langgraphjs"].storage == (SAVER,)


def test_every_node_cell_pins_each_storage_companion_or_says_why_not() -> None:
    for cell in matrix.load().cells:
        if not cell.framework.storage:
            continue
        manifest = json.loads((cell.lock_path.parent / "package.json").read_text())
        left = manifest.get("fanin", {}).get("left_out", {})
        for package in cell.framework.storage:
            assert (package in manifest["dependencies"]) != (package in left), (cell.id, package)
            assert package not in left or left[package].startswith(f"no {package} release by "), cell.id


def test_peers_are_read_from_whole_manifests_never_guessed_from_bare_versions() -> None:
    """`npm view PKG@range version peerDependencies --json` printed bare versions for @mastra/libsql: no peers read,
    so every release passed, and the lock failed with ERESOLVE."""
    rows = [{"version": "0.0.1"}, {"version": "1.21.1", "peerDependencies": {"@mastra/core": ">=1.51.0-0 <2.0.0-0"}}]
    assert npm_storage.peers_of("@mastra/libsql", lambda args, step: json.dumps(rows)) == {
        "0.0.1": {},
        "1.21.1": {"@mastra/core": ">=1.51.0-0 <2.0.0-0"},
    }
    assert npm_storage.peers_of("x", lambda args, step: json.dumps(rows[1]))["1.21.1"]  # one version: an object
    with pytest.raises(FaninError, match="expected a manifest per version"):
        npm_storage.peers_of("@mastra/libsql", lambda args, step: json.dumps(["0.0.1", "1.21.1"]))


def test_a_plain_dependency_on_a_pinned_package_counts_as_a_peer() -> None:
    """@mastra/libsql 0.0.4 declares no peers but depends on @mastra/core ^0.9.4: a second core, not the cell's."""
    rows = [{"version": "0.0.4", "dependencies": {"@mastra/core": "^0.9.4", "@libsql/client": "^0.15.4"}}]
    peers = npm_storage.peers_of("@mastra/libsql", lambda args, step: json.dumps(rows), frozenset({"@mastra/core"}))
    assert peers == {"0.0.4": {"@mastra/core": "^0.9.4"}}
    picked = npm_storage.pick("@mastra/libsql", ["0.0.4"], peers, {"@mastra/core": "0.10.1"}, "2026-08-23")
    assert picked.reason == (
        "no @mastra/libsql release by 2026-08-23 accepts @mastra/core 0.10.1 (the newest, 0.0.4, asks @mastra/core ^0.9.4)"
    )
