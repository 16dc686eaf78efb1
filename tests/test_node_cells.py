"""Node cells: the registry's runtime, the locks, and how a .test.mjs probe is read and hashed."""

from __future__ import annotations

import json
from pathlib import Path

from fanin.model import catalog, js_source
from fanin.model.matrix import load
from fanin.run import node_cell

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
    assert {p.framework for p in node} <= {"langgraphjs", "adkjs"}


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
