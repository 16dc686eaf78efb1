"""Issue 34 §2: a behaviour can move with a companion package, not the framework; the gate names what moved."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_helpers import result_set

from fanin.model import matrix
from fanin.model.results import ResultSet
from fanin.versions import dependencies

LOCK = """\
langgraph==1.2.9 \\
    --hash=sha256:00
    # via -r -
langgraph-checkpoint==4.1.1 \\
    --hash=sha256:00
    # via
    #   langgraph
    #   langgraph-prebuilt
orjson==3.11.0 \\
    --hash=sha256:00
    # via langsmith
xxhash==3.8.1 \\
    --hash=sha256:00
    # via langgraph
"""


def _with(packages: dict[str, str]) -> ResultSet:
    rs = result_set("langgraph-1.2.9", {}, [])
    rs.environment = {**rs.environment, "packages": packages}
    return rs


def test_the_frameworks_own_dependencies_that_moved_are_named(tmp_path: Path) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text(LOCK)
    assert dependencies.direct(lock, "langgraph") == {"langgraph-checkpoint", "xxhash"}
    framework = matrix.load().frameworks["langgraph"]
    base = _with({"langgraph": "1.2.9", "langgraph-checkpoint": "4.1.1", "orjson": "3.11.0", "aiosqlite": "0.21.0"})
    here = _with({"langgraph": "1.2.9", "langgraph-checkpoint": "4.3.0", "orjson": "3.12.0", "aiosqlite": "0.22.1"})
    moves = dependencies.moved(framework, base, here, [lock])
    assert moves == [
        ("aiosqlite", "0.21.0", "0.22.1"),
        ("langgraph-checkpoint", "4.1.1", "4.3.0"),
    ]  # orjson: not its own
    line = dependencies.said(framework, moves)
    assert line.startswith("fanin: beside langgraph, its own dependencies moved: aiosqlite 0.21.0 → 0.22.1, ")
    assert dependencies.said(framework, []) == ""
    assert dependencies.moved(framework, base, base, [lock]) == []


# --- the companion named as the cause: a companion bisect, and the gates of upgrade and probe --here ----------------

DELTA = "langgraph/reducers/delta-channel-parallel"
DELTAS = (DELTA, f"{DELTA}[sqlite]", f"{DELTA}[postgres]")


def test_a_companion_pin_is_in_the_cells_id_its_requirements_and_only_it_passes_the_cells_moment() -> None:
    from dataclasses import replace

    from fanin.versions import locking

    framework = matrix.load().frameworks["langgraph"]
    cell = matrix.load().make_cell(framework, "1.2.14", "3.11", "as-released", "2026-10-07T14:41:18Z")
    pinned = replace(cell, pins=(matrix.Pin("langgraph-checkpoint", "4.3.0", "2026-10-13T22:26:30Z"),))
    assert pinned.id == "langgraph-1.2.14+langgraph-checkpoint-4.3.0"
    assert locking.requirements(pinned, matrix.load()).splitlines()[:2] == [
        "langgraph==1.2.14",
        "langgraph-checkpoint==4.3.0",
    ]
    command = locking.compile_command(pinned, Path("out.txt"))
    assert command[command.index("--exclude-newer") + 1] == "2026-10-07T14:41:18Z"  # everything else as of the cell
    assert command[command.index("--exclude-newer-package") + 1] == "langgraph-checkpoint=2026-10-13T22:26:30Z"
    assert "--exclude-newer-package" not in locking.compile_command(cell, Path("out.txt"))


def test_the_real_companion_bisect_of_delta_channel_parallel_is_keyed_by_the_companion() -> None:
    """Recorded by `bisect langgraph PROBE 4.1.1 4.3.0 --companion langgraph-checkpoint --at 1.2.14` (real installs,
    real runs): langgraph held, only the companion moved, and the finding names the companion's release."""
    from fanin.versions.first_release import findings, span

    entries = {e["at"]: e for e in findings()[DELTA] if e.get("companion") == "langgraph-checkpoint"}
    assert sorted(entries) == ["1.2.14", "1.2.9"] and entries["1.2.9"]["first_changed"] == "4.3.0"
    entry = entries["1.2.14"]
    assert (entry["at"], entry["first_changed"], span(entry)) == (
        "1.2.14",
        "4.3.0",
        ("4.1.1", "4.3.0", "langgraph-checkpoint", "1.2.14"),
    )
    steps = entry["observed"]
    assert [steps[v]["label"].split(";")[0] for v in ("4.1.1", "4.2.0", "4.3.0")] == ["replay reorders"] * 2 + [
        "replay = live"
    ]
    others = [{k: v for k, v in steps[v]["packages"].items() if k != "langgraph-checkpoint"} for v in steps]
    assert all(o == others[0] for o in others)  # nothing else moved between the steps
    assert [steps[v]["packages"]["langgraph-checkpoint"] for v in steps] == list(steps)


def test_a_companion_finding_is_not_taken_for_a_framework_range(tmp_path: Path) -> None:
    from fanin.model.results import Observation
    from fanin.versions.first_release import findings, record

    seen = {v: Observation("ok", {}, label, "d", "safe") for v, label in (("4.1.1", "a"), ("4.3.0", "b"))}
    path = tmp_path / "bisect.json"
    record("x/y/z", "4.1.1", "4.3.0", "4.3.0", seen, path=path, packages={"4.1.1": {"p": "4.1.1"}})
    record("x/y/z", "4.1.1", "4.3.0", "4.3.0", seen, path=path, companion=("p", "1.0"), held={"q": "2"})
    entries = findings(path)["x/y/z"]
    assert [e.get("companion") for e in entries] == [None, "p"]  # the same range of two packages: two findings
    assert entries[0]["observed"]["4.1.1"]["packages"] == {"p": "4.1.1"} and entries[1]["with"] == {"q": "2"}


def _recorded(cell: str) -> ResultSet:
    from fanin.model.results import load

    return load(matrix.REFERENCE_RESULTS / f"{cell}.json")


def test_probe_here_names_the_companion_when_the_framework_is_the_references_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """langgraph 1.2.9 as the reference has it, but langgraph-checkpoint 4.3.1 (what 1.2.18's cell installs): the
    DeltaChannel replay is as 1.2.18's cell recorded it. The gate says langgraph did not move, the companion did,
    and names the companion release the companion bisect pinned the change to."""
    from fanin.project import here as here_gate

    base, newer = _recorded("langgraph-1.2.9"), _recorded("langgraph-1.2.18")
    packages = {
        **base.environment["packages"],
        "langgraph-checkpoint": newer.environment["packages"]["langgraph-checkpoint"],
    }
    observations = {**base.observations, **{oid: newer.observations[oid] for oid in DELTAS}}
    installed = ResultSet(
        base.cell, "langgraph", "1.2.9", {**base.environment, "packages": packages}, base.probes, observations
    )
    framework = matrix.load().frameworks["langgraph"]
    here_gate._compare(framework, base, installed, locks=(matrix.load().cell("langgraph-1.2.9").lock_path,))
    out = capsys.readouterr().out
    assert (
        "fanin: langgraph is 1.2.9 on both sides: the changes above came with what moved beside it, not with"
        " langgraph: langgraph-checkpoint 4.1.1 → 4.3.1 (with it, or with another package)"
    ) in out
    assert (
        f"fanin: changed with langgraph-checkpoint 4.3.0 (bisected, langgraph held at 1.2.9, 1.2.14): {DELTA};" in out
    )


def test_upgrade_across_the_companion_release_names_it() -> None:
    """Two reference cells (nothing installed): 1.2.9 (langgraph-checkpoint 4.1.1) -> 1.2.18 (4.3.1)."""
    import subprocess
    import sys

    from fanin.model.source import REPO_ROOT

    done = subprocess.run(
        [sys.executable, "-m", "fanin", "upgrade", "langgraph==1.2.18", "--from", "1.2.9"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "fanin: changed with langgraph-checkpoint 4.3.0 (bisected, langgraph held at 1.2.9, 1.2.14): " in done.stdout
    assert "langgraph-checkpoint is 4.1.1 → 4.3.1 here" in done.stdout
    assert "is 1.2.9 on both sides" not in done.stdout  # the framework moved too: not named as held


def test_the_gate_names_no_companion_release_both_sides_are_past(tmp_path: Path) -> None:
    framework = matrix.load().frameworks["langgraph"]
    finding = {DELTA: [{"companion": "langgraph-checkpoint", "first_changed": "4.3.0", "at": "1.2.14"}]}
    a = _with({"langgraph": "1.2.9", "langgraph-checkpoint": "4.3.1"})
    b = _with({"langgraph": "1.2.9", "langgraph-checkpoint": "4.3.2"})
    assert dependencies.bisected(framework, a, b, [DELTA], finding) == []
    back = dependencies.bisected(framework, b, _with({"langgraph-checkpoint": "4.2.0"}), [DELTA], finding)
    assert back == [
        (
            f"fanin: changed with langgraph-checkpoint 4.3.0 (bisected, langgraph held at 1.2.14): {DELTA};"
            " langgraph-checkpoint is 4.3.2 → 4.2.0 here"
        )
    ]  # a downgrade across it names it too
    assert dependencies.explained(framework, a, a, [], [], finding) == []  # nothing changed: nothing said


def test_a_node_companion_pin_is_its_tarball_forced_through_the_tree_and_only_it_passes_the_cells_moment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Node companion bisect's step: npm's `--before` filters registry versions, not a tarball address, so the
    pinned companion is named by its tarball and `overrides` makes it the copy the framework loads (one copy)."""
    import json
    from dataclasses import replace

    from fanin.versions import npm

    framework = matrix.load().frameworks["langgraphjs"]
    cell = matrix.load().make_cell(framework, "1.3.7", "3.11", "as-released", "2026-06-10T17:03:27Z")
    pin = matrix.Pin("@langchain/langgraph-checkpoint", "1.1.5", "2026-09-01T00:00:00Z")
    pinned = replace(cell, pins=(pin,))
    assert pinned.id == "langgraphjs-1.3.7+langchain-langgraph-checkpoint-1.1.5"  # a directory name: no scope
    url = "https://registry.npmjs.org/@langchain/langgraph-checkpoint/-/langgraph-checkpoint-1.1.5.tgz"
    monkeypatch.setattr(npm, "tarball", lambda package, version: url)
    manifests: list[dict[str, object]] = []
    befores: list[str] = []

    def install(directory: Path, cell: matrix.Cell, manifest: str) -> dict[str, object]:
        manifests.append(json.loads(manifest))
        befores.append(cell.exclude_newer)
        (directory / "package-lock.json").write_text("{}")
        return {"packages": {"node_modules/@langchain/core": {"version": "1.1.48"}}}

    monkeypatch.setattr(npm, "_install", install)
    monkeypatch.setattr(npm, "_storage", lambda cell, packages, held: [])  # tests/test_npm_storage.py
    files = npm.resolve_files(pinned, matrix.load(), tmp_path)
    final = json.loads(files[tmp_path / "package.json"])
    assert final["dependencies"] == {
        "@langchain/core": "1.1.48",  # as of the cell's day, from the first pass
        "@langchain/langgraph": "1.3.7",
        "@langchain/langgraph-checkpoint": url,
    }
    assert final["overrides"] == {"@langchain/langgraph-checkpoint": "$@langchain/langgraph-checkpoint"}
    assert all(m["dependencies"]["@langchain/langgraph-checkpoint"] == url for m in manifests)  # type: ignore[index]
    assert befores == [cell.exclude_newer] * 2  # everything else resolved as of the cell's moment
    assert "overrides" not in json.loads(npm._manifest(cell, {framework.package: cell.version}))


def test_a_node_frameworks_own_dependencies_come_from_its_package_lock_entry() -> None:
    framework = matrix.load().frameworks["langgraphjs"]
    lock = next(c for c in matrix.load().of("langgraphjs") if c.version == "1.3.7").lock_path
    own = dependencies.direct(lock, framework.package)
    assert {"@langchain/langgraph-checkpoint", "@langchain/core", "@langchain/langgraph-sdk"} <= own
    assert "@langchain/langgraph" not in own


def test_bisect_companion_refuses_what_it_cannot_hold_in_one_line() -> None:
    import subprocess
    import sys

    from fanin.model.source import REPO_ROOT

    for args, said in (
        (["--companion", "langgraph-checkpoint"], "go together"),
        (["--with", "langgraph-checkpoint==4.3.0"], "--with goes with --companion"),
        (["--companion", "orjson", "--at", "1.2.14"], "is not one of langgraph's own dependencies"),
        (["--companion", "left-pad", "--at", "1.3.7", "@"], "is not one of @langchain/langgraph's own dependencies"),
    ):
        words = ["langgraph", DELTA, "4.1.1", "4.3.0"]
        if args[-1] == "@":  # a Node framework's companion is checked the same way, from its package-lock entries
            args, words = args[:-1], ["langgraphjs", "langgraphjs/scenario/fail-resume", "1.0.4", "1.1.5"]
        done = subprocess.run(
            [sys.executable, "-m", "fanin", "bisect", *words, *args],
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            timeout=120,
        )
        assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_reports_step_names_a_companion_release_only_where_its_two_cells_lie_either_side_of_it() -> None:
    """A step 1.1.10 -> 1.2.9 (both cells without 4.3.0) is not "changed with langgraph-checkpoint 4.3.0", though the
    companion was bisected at 1.2.9; 1.2.9 (4.1.1) -> 1.2.18 (4.3.1) is, either way round."""
    from fanin.report import pages
    from fanin.report.view import Column

    def column(version: str, checkpoint: str | None) -> Column:
        held = (("langgraph-checkpoint", checkpoint),) if checkpoint else ()
        return Column(f"langgraph-{version}", "langgraph", version, companions=held)

    entry = {"companion": "langgraph-checkpoint", "first_changed": "4.3.0", "at": "1.2.9"}
    old, mid, new = column("1.1.10", "4.0.3"), column("1.2.9", "4.1.1"), column("1.2.18", "4.3.1")
    assert pages._companion_change(entry, mid, new) == "langgraph-checkpoint 4.3.0"
    assert pages._companion_change(entry, new, mid) == "langgraph-checkpoint 4.3.0"
    assert pages._companion_change(entry, old, mid) == ""
    assert pages._companion_change(entry, mid, column("1.2.18", None)) == ""  # a cell without it says nothing


def test_a_framework_bisect_names_the_own_dependencies_that_moved_beside_the_first_changed_release() -> None:
    from fanin.model.results import Observation
    from fanin.versions.first_release import beside_first

    seen = {v: Observation("ok", {}, "x", "d", "safe") for v in ("1.2.9", "1.2.14", "1.2.15", "1.2.18")}
    packages = {
        "1.2.14": {"langgraph-checkpoint": "4.2.0", "xxhash": "3.5.0"},
        "1.2.15": {"langgraph-checkpoint": "4.3.0", "xxhash": "3.5.0"},
    }
    said = beside_first("1.2.15", seen, packages)
    assert said == ", with langgraph-checkpoint 4.2.0 → 4.3.0 beside it (bisect over it: --companion)"
    assert beside_first("1.2.15", seen, {**packages, "1.2.14": packages["1.2.15"]}) == ""
