"""The sensitivity machinery (fanin sensitivity): the data file, patching a venv copy without touching the
original's inodes, and the verdict that only a change of hazard or label counts. No framework needed:
the probes' runs are stood in for by observations, the venv by a directory tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fanin.model import catalog
from fanin.model.matrix import load as load_matrix
from fanin.model.results import Observation
from fanin.model.sensitivity import Edit, Patch, PatchError, apply, load
from fanin.model.source import REPO_ROOT
from fanin.report.sensitivity import table
from fanin.run import sensitivity

PATCHES = load()


def obs(label: str, hazard: str = "safe", value: object = 1, outcome: str = "ok") -> Observation:
    return Observation(outcome=outcome, value=value, label=label, detail=f"saw {label}", hazard=hazard)


def patch(pid: str = "p", probes: tuple[str, ...] = ("fw/t/one",), search: str = "old", cell: str = "c") -> Patch:
    return Patch(pid, cell, "pkg/mod.py", "a behaviour", probes, (Edit(search, "new"),))


def test_the_data_file_has_ten_patches_across_frameworks_naming_real_probes_and_cells() -> None:
    matrix = load_matrix()
    declared = {p.id for p in catalog.declared()}
    assert len(PATCHES) >= 10
    assert len({matrix.cell(p.cell).framework.key for p in PATCHES}) >= 4
    for p in PATCHES:
        assert set(p.probes) <= declared, p.id
        assert all(probe.startswith(matrix.cell(p.cell).framework.key + "/") for probe in p.probes), p.id


def test_an_edit_must_match_exactly_once() -> None:
    assert apply("a old b", patch()) == "a new b"
    for text in ("nothing here", "old and old"):
        with pytest.raises(PatchError, match="must be once"):
            apply(text, patch())


def test_patching_a_copy_never_writes_the_original_inode(tmp_path: Path) -> None:
    """The worst case: a copy whose files are hard links of the original's (as uv's are of its cache)."""
    original = tmp_path / "venv"
    module = original / "lib" / "python3.11" / "site-packages" / "pkg" / "mod.py"
    module.parent.mkdir(parents=True)
    module.write_text("x = 'old'\n")
    (module.parent / "__pycache__").mkdir()
    (module.parent / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"stale")
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-al", str(original), str(copy)], check=True)
    copied = sensitivity.package_root(copy) / "pkg" / "mod.py"
    inode = module.stat().st_ino
    assert copied.stat().st_ino == inode
    with sensitivity.patched(copy, original, patch()):
        assert copied.read_text() == "x = 'new'\n"
        assert copied.stat().st_ino != inode
        assert not (copied.parent / "__pycache__" / "mod.cpython-311.pyc").exists()
    assert copied.read_text() == "x = 'old'\n"
    assert module.read_text() == "x = 'old'\n" and module.stat().st_ino == inode
    assert (module.parent / "__pycache__" / "mod.cpython-311.pyc").read_bytes() == b"stale"


def test_a_node_cell_is_patched_in_its_copys_node_modules(tmp_path: Path) -> None:
    """A Node cell's `file` is relative to node_modules; the copy is patched, the cell's own file never written."""
    original = tmp_path / "adkjs-2.0.0"
    module = original / "node_modules" / "@scope" / "pkg" / "mod.js"
    module.parent.mkdir(parents=True)
    module.write_text("const x = 'old';\n")
    copy = sensitivity.copy_venv(original, tmp_path / "work" / "adkjs-2.0.0")
    js = Patch("p", "adkjs-2.0.0", "@scope/pkg/mod.js", "a behaviour", ("adkjs/t/one",), (Edit("old", "new"),))
    assert sensitivity.package_root(copy) == copy / "node_modules"
    inode = module.stat().st_ino
    with sensitivity.patched(copy, original, js):
        assert (copy / "node_modules" / "@scope" / "pkg" / "mod.js").read_text() == "const x = 'new';\n"
    assert module.read_text() == "const x = 'old';\n" and module.stat().st_ino == inode
    assert (copy / "node_modules" / "@scope" / "pkg" / "mod.js").read_text() == "const x = 'old';\n"


def test_copy_venv_gives_new_inodes(tmp_path: Path) -> None:
    source = tmp_path / "venv"
    (source / "bin").mkdir(parents=True)
    (source / "bin" / "tool").write_text("t")
    os.symlink(sys.executable, source / "bin" / "python")
    copy = sensitivity.copy_venv(source, tmp_path / "work" / "venv")
    assert (copy / "bin" / "tool").stat().st_ino != (source / "bin" / "tool").stat().st_ino
    assert (copy / "bin" / "python").is_symlink()


def _fake_observe(table_: dict[str, dict[str, Observation]]) -> sensitivity.Observe:
    def observe(cell: str, p: Patch | None, probes: tuple[str, ...]) -> dict[str, Observation]:
        if p is not None and p.id == "does-not-apply":
            raise PatchError("does-not-apply: search text found 0 times (must be once)")
        return table_["baseline" if p is None else p.id]

    return observe


def test_only_a_change_of_hazard_or_label_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    probes = {"fw/t/one": ["fw/t/one"], "fw/t/two": ["fw/t/two", "fw/t/two[async]"]}
    monkeypatch.setattr(sensitivity, "targets", lambda ids: ((), {p: probes[p] for p in ids}))
    base = {"fw/t/one": obs("join ×1"), "fw/t/two": obs("kept"), "fw/t/two[async]": obs("kept")}
    runs = {
        "baseline": base,
        "detected": {**base, "fw/t/one": obs("join ×1, run 1 without b2", "silent")},
        "label-only": {**base, "fw/t/two[async]": obs("kept: B, A")},
        "value-only": {**base, "fw/t/one": obs("join ×1", value=2)},
        "broke-it": {**base, "fw/t/one": obs("probe-error", "n/a", outcome="probe-error")},
        "unchanged": base,
    }
    patches = [patch(pid) for pid in ("detected", "value-only", "broke-it", "unchanged", "does-not-apply")]
    patches.append(patch("label-only", probes=("fw/t/two",)))
    moves = {m.patch: m for m in sensitivity.check(patches, _fake_observe(runs), say=lambda line: None)}
    assert moves["detected"].moved and "[safe] join ×1 -> [silent]" in moves["detected"].why
    assert moves["label-only"].moved
    assert not moves["value-only"].moved and "only the value" in moves["value-only"].why
    assert not moves["broke-it"].moved and "probe-error" in moves["broke-it"].why
    assert not moves["unchanged"].moved and "nothing changed" in moves["unchanged"].why
    assert not moves["does-not-apply"].moved and "must be once" in moves["does-not-apply"].why
    assert not sensitivity.Outcome(list(moves.values()), 0.0).ok
    assert sensitivity.Outcome([moves["detected"], moves["label-only"]], 0.0).ok


def test_the_readme_table_is_rendered_from_the_data_file() -> None:
    readme = (REPO_ROOT / "docs" / "PROBES.md").read_text(encoding="utf-8")
    assert table(PATCHES) in readme, "re-render it: python -m fanin sensitivity --table"


def test_an_unknown_patch_is_bad_input() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fanin", "sensitivity", "--patch", "no-such-patch"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "fanin: error: no such patch in reference/sensitivity.toml: no-such-patch"
