"""A Node cell's live-thread seam: the earlier release's directory and Node reach its probes through the contract,
and the kit runs a writer whose imports resolve to that directory's packages, not the cell's own."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from fanin.model import contract
from fanin.model.errors import EnvironmentFault
from fanin.model.matrix import load
from fanin.model.source import SUITES
from fanin.run import node_cell, runtimes

MATRIX = load()


def test_the_earlier_cells_directory_and_node_are_passed_to_the_probes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its committed lock, under its own id (a cell's own directory is shared, never rebuilt for another lock)."""
    earlier = MATRIX.cell("mastra-1.30.0")
    asked: list[tuple[str, Path]] = []

    def ensure(cell_id: str, lock: Path, **_: object) -> Path:
        asked.append((cell_id, lock))
        return tmp_path / cell_id

    monkeypatch.setattr(node_cell, "ensure", ensure)
    monkeypatch.setattr(node_cell, "node_binary", lambda spec: tmp_path / spec / "bin" / "node")
    found = runtimes.NodeRunner()._earlier(earlier, None, io.StringIO())
    assert asked == [("mastra-1.30.0", earlier.lock_path)]
    assert found == {
        contract.EARLIER_VERSION: "1.30.0",
        contract.EARLIER_NODE_DIR: str(tmp_path / "mastra-1.30.0"),
        contract.EARLIER_NODE: str(tmp_path / "22.13.x" / "bin" / "node"),  # the release the cell names
    }


def test_an_earlier_directory_that_cannot_be_built_leaves_only_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe then ends as probe-error (a named release with no directory), never as n/a."""

    def ensure(*_: object, **__: object) -> Path:
        raise EnvironmentFault("npm ci failed (exit 1): E404")

    monkeypatch.setattr(node_cell, "ensure", ensure)
    log = io.StringIO()
    other = tmp_path / "package-lock.json"
    found = runtimes.NodeRunner()._earlier(MATRIX.cell("langgraphjs-1.5.3"), other, log)
    assert found == {contract.EARLIER_VERSION: "1.5.3"}
    assert "the earlier release's directory (langgraphjs-1.5.3) could not be built: npm ci failed" in log.getvalue()


def _project(root: Path, version: str) -> Path:
    package = root / "node_modules" / "fake-framework"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "fake-framework", "version": version, "main": "i.js"}))
    (package / "i.js").write_text(f"module.exports = {{ version: {json.dumps(version)} }};\n")
    return root


def _kit(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    head = f"import * as kit from {json.dumps((SUITES / 'fanin_node.mjs').as_uri())};\n"
    return subprocess.run(
        ["node", "--input-type=module", "-e", head + script],
        capture_output=True, text=True, timeout=60, cwd=cwd, env={"PATH": "/usr/bin:/bin:/usr/local/bin", **env},
    )  # fmt: skip


def test_a_writer_run_with_the_earlier_release_imports_its_packages(tmp_path: Path) -> None:
    earlier, here = _project(tmp_path / "earlier", "1.0.0"), _project(tmp_path / "here", "2.0.0")
    writer = tmp_path / "suite" / "writer.mjs"
    writer.parent.mkdir()
    (writer.parent / "helper.mjs").write_text("export const args = process.argv.slice(2);\n")
    writer.write_text(
        'import framework from "fake-framework";\nimport { args } from "./helper.mjs";\n'
        "console.log('noise');\nconsole.log(JSON.stringify({ version: framework.version, args }));\n"
    )
    env = {contract.EARLIER_VERSION: "1.0.0", contract.EARLIER_NODE_DIR: str(earlier), contract.EARLIER_NODE: "node"}
    script = (
        "const files = [" + json.dumps(str(writer)) + ", " + json.dumps(str(writer.parent / "helper.mjs")) + "];\n"
        "const then = await kit.runWith(kit.earlierRelease(), files, ['x']);\n"
        "const now = await kit.runWith(kit.thisRelease('fake-framework'), files, ['y']);\n"
        "console.log(JSON.stringify({ then, now, version: kit.thisRelease('fake-framework').version }));\n"
    )
    done = _kit(script, env, here)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "then": {"version": "1.0.0", "args": ["x"]},
        "now": {"version": "2.0.0", "args": ["y"]},
        "version": "2.0.0",
    }
    assert sorted(p.name for p in earlier.iterdir()) == ["node_modules"]  # neither directory was written


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({}, 'n/a {"needs_earlier_release":true,"reason":"no earlier release to write the store'),
        ({contract.EARLIER_VERSION: "1.0.0"}, "error the earlier release 1.0.0 was named but its directory was not"),
    ],
)
def test_no_earlier_release_is_not_applicable_and_an_unbuilt_one_is_an_error(
    tmp_path: Path, env: dict[str, str], said: str
) -> None:
    """n/a with the flag compare.py reads (recorded, then FrameworkRaised: probe() keeps what was recorded)."""
    script = (
        "const obs = new kit.Observer({ id: 'x' });\n"
        "try { kit.earlierRelease(obs); } catch (e) {\n"
        "  if (e instanceof kit.FrameworkRaised) {\n"
        "    const { outcome, value } = obs.observation;\n"
        "    console.log(outcome + ' ' + JSON.stringify(Object.fromEntries(Object.entries(value).sort())));\n"
        "  } else console.log('error ' + e.message);\n"
        "}\n"
    )
    done = _kit(script, env, tmp_path)
    assert done.stdout.startswith(said), done.stderr


def test_the_node_kits_live_labels_are_live_kits() -> None:
    import sys

    sys.path.insert(0, str(SUITES))
    import live_kit

    names = ["ResumeError", "AVeryLongErrorClassNameThatDoesNotFitAtAll"]
    script = (
        "console.log(JSON.stringify([kit.live.same('session'), kit.live.unlike('session'),"
        f" ...{json.dumps(names)}.map((n) => kit.live.raised('the resume', n))]));\n"
    )
    done = _kit(script, {}, SUITES)
    assert done.returncode == 0, done.stderr
    python = [live_kit.same("session"), live_kit.unlike("session"), *(live_kit.raised("the resume", n) for n in names)]
    assert json.loads(done.stdout) == python
