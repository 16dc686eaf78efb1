"""Node cells: the registry's runtime, the locks, and how a .test.mjs probe is read and hashed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fanin.model import catalog, exits, js_source
from fanin.model.matrix import LOCKS, load
from fanin.run import all_cells, install_roots, node_cell

KIT = """// the kit
import { Annotation } from "@langchain/langgraph";

export function used() {
  return 1;
}

export function unused() {
  return 2;
}
"""

PROBES = """import { probe } from "./fanin_node.mjs";
import { used } from "./kit.mjs";

probe({
  "id": "fw/topic/one",
  "title": "one",
  "claim": {"text": "t", "source": "s", "expect": {"hazard": "safe"}}
}, async function one(obs) {
  obs.record({ n: used() }, { label: "x", detail: "x", hazard: "safe" });
});

// the second probe
probe({
  "id": "fw/topic/two",
  "title": "two",
  "claim": {"text": "t", "source": "s"}
}, async function two(obs) {
  obs.record({}, { label: "y", detail: "y", hazard: "safe" });
});
"""


def _suite(tmp_path: Path) -> Path:
    (tmp_path / "kit.mjs").write_text(KIT)
    (tmp_path / "fanin_node.mjs").write_text("export function probe() {}\n")
    path = tmp_path / "a.test.mjs"
    path.write_text(PROBES)
    return path


def test_a_node_probe_is_read_with_its_metadata_span_and_leading_comment(tmp_path: Path) -> None:
    parsed = js_source.parse_file(_suite(tmp_path))
    assert {p.id for p in parsed.probes.values()} == {"fw/topic/one", "fw/topic/two"}
    assert parsed.probes["one"].meta["claim"] == {"text": "t", "source": "s", "expect": {"hazard": "safe"}}
    assert parsed.function("two").startswith("// the second probe\nprobe({")
    first, last = parsed.spans["one"]
    assert PROBES.splitlines()[first - 1] == "probe({" and PROBES.splitlines()[last - 1] == "});"


def test_a_node_probes_hash_covers_the_kit_it_uses_and_nothing_else(tmp_path: Path) -> None:
    path = _suite(tmp_path)
    before = {name: js_source.probe_source_hash(path, name) for name in ("one", "two")}
    (tmp_path / "kit.mjs").write_text(KIT.replace("return 2", "return 3"))  # an unused helper
    assert {name: js_source.probe_source_hash(path, name) for name in ("one", "two")} == before
    (tmp_path / "kit.mjs").write_text(KIT.replace("return 1", "return 4"))  # the helper `one` uses
    assert js_source.probe_source_hash(path, "one") != before["one"]
    assert js_source.probe_source_hash(path, "two") == before["two"]
    path.write_text(PROBES.replace("\n\n", "\n\n\n"))  # blank lines do not count
    assert js_source.probe_source_hash(path, "two") == before["two"]


def test_every_node_cell_is_pinned_by_an_exact_package_json_and_its_lock() -> None:
    matrix = load()
    node = [c for c in matrix.cells if c.framework.runtime == "node"]
    assert len({c.version for c in node}) >= 6
    for cell in node:
        manifest = json.loads((cell.lock_path.parent / "package.json").read_text())
        assert manifest["dependencies"][cell.framework.package] == cell.version, cell.id
        for companion in cell.framework.companions:
            assert manifest["dependencies"][companion][0].isdigit(), (cell.id, companion)  # exact
        pins = node_cell.pins(cell.lock_path)
        assert pins[cell.framework.package] == cell.version, cell.id
        lock = json.loads(cell.lock_path.read_text())
        assert all(e.get("resolved", "").startswith("https://") for k, e in lock["packages"].items() if k), cell.id


def test_node_probes_are_in_the_catalogue_with_their_own_framework_key() -> None:
    node = [p for p in catalog.declared() if p.file.endswith(js_source.SUFFIX)]
    assert len(node) >= 6
    assert {p.framework for p in node} <= {"langgraphjs", "adkjs", "mastra"}


def test_an_optional_package_npm_installed_at_the_locks_version_is_no_drift(tmp_path: Path) -> None:
    lock = tmp_path / "package-lock.json"
    packages = {
        "": {},
        "node_modules/a": {"version": "1.0.0"},
        "node_modules/gyp": {"version": "8.4.1", "optional": True, "peer": True},
    }
    lock.write_text(json.dumps({"packages": packages}))
    for name, version in (("a", "1.0.0"), ("gyp", "8.4.1")):
        (tmp_path / "node_modules" / name).mkdir(parents=True)
        (tmp_path / "node_modules" / name / "package.json").write_text(json.dumps({"name": name, "version": version}))
    assert node_cell.pins(lock) == {"a": "1.0.0"}
    assert node_cell.drift(tmp_path, lock) == []
    (tmp_path / "node_modules" / "gyp" / "package.json").write_text(json.dumps({"name": "gyp", "version": "9.0.0"}))
    assert node_cell.drift(tmp_path, lock) == ["gyp: 9.0.0 -> not in the lock"]


def test_an_npm_alias_is_read_where_it_is_installed_and_is_no_drift(tmp_path: Path) -> None:
    """@mastra/core 0.24 depends on `"@ai-sdk/anthropic-v5": "npm:@ai-sdk/anthropic@2.0.33"`: the lock keys it by
    its install path, its package.json names the real package; npm ci's result must read as the lock."""
    lock = tmp_path / "package-lock.json"
    packages = {"": {}, "node_modules/@ai-sdk/anthropic-v5": {"name": "@ai-sdk/anthropic", "version": "2.0.33"}}
    lock.write_text(json.dumps({"packages": packages}))
    aliased = tmp_path / "node_modules" / "@ai-sdk" / "anthropic-v5"
    aliased.mkdir(parents=True)
    (aliased / "package.json").write_text(json.dumps({"name": "@ai-sdk/anthropic", "version": "2.0.33"}))
    assert node_cell.installed(tmp_path) == {"@ai-sdk/anthropic-v5": "2.0.33"}
    assert node_cell.drift(tmp_path, lock) == []


def _cell_lock(tmp_path: Path, cell_id: str, manifest_of: str, lock_of: str) -> Path:
    """A copy of `cell_id`'s lock directory with package.json and package-lock.json taken from other cells' (never
    the committed one)."""
    directory = tmp_path / "locks" / cell_id
    shutil.copytree(LOCKS / cell_id, directory)
    shutil.copy(LOCKS / manifest_of / "package.json", directory / "package.json")
    shutil.copy(LOCKS / lock_of / "package-lock.json", directory / "package-lock.json")
    return directory / "package-lock.json"


def test_another_node_cells_lock_is_refused_before_anything_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: langgraphjs-1.5.3's package.json and lock copied over langgraphjs-1.7.3's installed 1.5.3, ran it,
    and wrote a 1.5.3 result set as langgraphjs-1.7.3.json. As for a Python cell: refused, exit 3, nothing touched."""
    monkeypatch.setattr(node_cell, "NODE_DIRS", tmp_path / "node")
    monkeypatch.setenv("FANIN_NODE_ROOTS", str(tmp_path / "node-roots.txt"))  # no clone of the user's
    cell = load().cell("langgraphjs-1.7.3")
    lock = _cell_lock(tmp_path, cell.id, "langgraphjs-1.5.3", "langgraphjs-1.5.3")
    results = tmp_path / "results"
    results.mkdir()
    previous = results / f"{cell.id}.json"
    previous.write_text("the previous result set")
    result = all_cells.run_one(cell, load(), all_cells.Options(lock=lock, results_dir=results))
    assert result.code == exits.NOT_RUN
    assert result.outcome.reason is not None and result.outcome.reason.startswith(
        "install refused: package.json pins @langchain/langgraph 1.5.3, but the cell is @langchain/langgraph 1.7.3 "
        "(another cell's lock copied over this one?)"
    )
    assert previous.read_text() == "the previous result set"
    assert not (tmp_path / "node").exists()  # nothing installed, nothing copied

    # Only the lock swapped: its resolved version is checked too, before npm could see package.json disagree.
    lock = _cell_lock(tmp_path / "lock-only", cell.id, cell.id, "langgraphjs-1.5.3")
    with pytest.raises(node_cell.NodeInstallError) as refused:
        node_cell.ensure(cell.id, lock, framework=(cell.framework.package, cell.version))
    assert str(refused.value).startswith("install refused: package-lock.json pins @langchain/langgraph 1.5.3")
    assert refused.value.exit_code == exits.NOT_RUN
    assert not (tmp_path / "node").exists()
    (lock.parent / "package.json").write_text(json.dumps({"dependencies": {"@langchain/core": "1.4.0"}}))
    with pytest.raises(node_cell.NodeInstallError, match=r"package\.json does not pin @langchain/langgraph"):
        node_cell.check_lock_names(lock, cell.framework.package, cell.version)


def test_npms_reason_for_a_lock_out_of_sync_is_kept_in_the_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: the message kept npm's last 3 lines (its usage text and the log's path), never why it refused.
    Real npm, no network: a package.json dependency (a local directory) the lock lacks."""
    monkeypatch.setattr(node_cell, "NPM_CACHE", tmp_path / "npm-cache")
    locks = tmp_path / "lock"
    locks.mkdir()
    manifest = {"name": "cell", "private": True, "dependencies": {"fw": "1.0.0", "extra": "file:extra"}}
    (locks / "package.json").write_text(json.dumps(manifest))
    packages = {
        "": {"name": "cell", "dependencies": {"fw": "1.0.0"}},
        "node_modules/fw": {"version": "1.0.0", "resolved": "https://registry.npmjs.org/fw/-/fw-1.0.0.tgz"},
    }
    lock = locks / "package-lock.json"
    lock.write_text(json.dumps({"name": "cell", "lockfileVersion": 3, "requires": True, "packages": packages}))
    with pytest.raises(node_cell.NodeInstallError) as failed:
        node_cell.ensure("cell", lock, root=tmp_path / "node")
    message = str(failed.value)
    assert message.startswith("npm ci failed (exit 1): ")
    assert "can only install packages when your package.json and package-lock.json" in message
    assert "Missing: extra@ from lock file" in message  # (no directory extra/ where npm ci runs: no version)
    assert "Usage" not in message and "complete log" not in message and "\n" not in message


def _local_lock(tmp_path: Path) -> Path:
    """A cell lock whose one package is a local tarball: a real `npm ci` with no registry."""
    package = tmp_path / "fw"
    package.mkdir()
    (package / "package.json").write_text(json.dumps({"name": "fw", "version": "1.0.0", "main": "index.js"}))
    (package / "index.js").write_text("module.exports = 1;\n")
    subprocess.run(["npm", "pack", "--silent"], cwd=package, check=True, capture_output=True)
    locks = tmp_path / "lock"
    locks.mkdir()
    tarball = f"file:{package / 'fw-1.0.0.tgz'}"
    (locks / "package.json").write_text(json.dumps({"name": "cell", "private": True, "dependencies": {"fw": tarball}}))
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--offline", "--silent", "--cache", str(tmp_path / "npm-cache")],
        cwd=locks, check=True, capture_output=True,
    )  # fmt: skip
    lock = locks / "package-lock.json"
    data = json.loads(lock.read_text())
    data["packages"]["node_modules/fw"]["resolved"] = tarball  # absolute: npm ci runs in the cell's own directory
    lock.write_text(json.dumps(data))
    return lock


def test_a_new_clone_links_node_modules_from_another_clones_directory_of_the_same_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33 §2: a fresh clone hard-links another clone's node_modules (same lock, same Node) instead of npm ci;
    a donor that no longer matches its lock is passed over, and npm ci runs."""
    monkeypatch.setattr(node_cell, "NPM_CACHE", tmp_path / "npm-cache")
    monkeypatch.setenv("FANIN_NODE_ROOTS", str(tmp_path / "node-roots.txt"))
    lock = _local_lock(tmp_path)
    monkeypatch.setattr(node_cell, "NODE_DIRS", tmp_path / "clone-a")
    first = node_cell.ensure("cell", lock)
    assert install_roots.known(install_roots.NODE) == [(tmp_path / "clone-a").resolve()]
    ran: list[Path] = []
    real_npm_ci = node_cell._npm_ci
    monkeypatch.setattr(
        node_cell, "_npm_ci", lambda directory, node: (ran.append(directory), real_npm_ci(directory, node))
    )
    monkeypatch.setattr(node_cell, "NODE_DIRS", tmp_path / "clone-b")
    second = node_cell.ensure("cell", lock)
    module = Path("node_modules") / "fw" / "index.js"
    assert ran == [] and (second / module).stat().st_ino == (first / module).stat().st_ino
    assert node_cell.drift(second, lock) == []
    # Donors whose package no longer matches the lock are not used: npm ci gives the new clone files of its own.
    for donor in (first, second):
        manifest = donor / "node_modules" / "fw" / "package.json"
        manifest.unlink()
        manifest.write_text(json.dumps({"name": "fw", "version": "0.9.0"}))
    monkeypatch.setattr(node_cell, "NODE_DIRS", tmp_path / "clone-c")
    third = node_cell.ensure("cell", lock)
    assert ran == [third] and (third / module).stat().st_ino not in {
        (d / module).stat().st_ino for d in (first, second)
    }
    assert node_cell.drift(third, lock) == []


def test_npm_reason_is_its_error_lines_up_to_the_usage_text() -> None:
    said = "\n".join(
        f"npm error {line}".rstrip()
        for line in (
            "code EUSAGE",
            "",
            "`npm ci` can only install packages when your package.json and package-lock.json are in sync.",
            "",
            "Missing: a@1.0.0 from lock file",
            "Missing: a@1.0.0 from lock file",
            "",
            "Clean install a project",
            "",
            "Usage:",
            "npm ci",
            "A complete log of this run can be found in: /root/.npm/_logs/x.log",
        )
    )
    assert node_cell.npm_reason(said) == (
        "code EUSAGE | `npm ci` can only install packages when your package.json and package-lock.json are in sync."
        " | Missing: a@1.0.0 from lock file"
    )
    old = "npm ERR! code E404\nnpm ERR! 404 Not Found - GET x\nnpm ERR! A complete log of this run can be found in: y"
    assert node_cell.npm_reason(old) == "code E404 | 404 Not Found - GET x"
    many = "\n".join(f"npm error Missing: p{i}@1 from lock file" for i in range(12))
    assert node_cell.npm_reason(many).endswith("Missing: p7@1 from lock file | ... (4 more)")


def test_npm_and_node_trust_the_systems_ca_file_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A fetched Node release has none of the machine's npm config: the system's CA file is passed to it."""
    from fanin.run import node_release

    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.delenv("NODE_EXTRA_CA_CERTS", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert node_release.tool_environ()["NODE_EXTRA_CA_CERTS"] == str(bundle)
    monkeypatch.setenv("NODE_EXTRA_CA_CERTS", "/mine.pem")
    assert node_release.tool_environ()["NODE_EXTRA_CA_CERTS"] == "/mine.pem"
    assert node_release.tool_environ()["NODE_DISABLE_COMPILE_CACHE"] == "1"
