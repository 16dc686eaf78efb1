"""Run one Node cell: `npm ci` from its lock, `node --test` in the network namespace, the same result set.

A Node cell (a framework with `runtime = "node"` in matrix.toml) is pinned by
`reference/locks/<cell>/package.json` + `package-lock.json`. Its directory under
`.fanin/node/<cell>/` is exactly that lock: installed with `npm ci` (offline from npm's cache
when it can), stamped with the lock's SHA-256, and reinstalled when the lock changes or a
package in `node_modules` differs from the lock (drift), as `fanin.run.venvs` does for Python.

The probes (`suites/<framework>/*.test.mjs` and the kit they import) are copied into the cell's
directory for each run, so `import "@langchain/langgraph"` resolves to the cell's node_modules.
`node --test` runs them one at a time, in one process (an entry module that imports every probe
file: Node 20 has no `--test-isolation=none`, and a process per file paid the framework's import
once per file, most of a Node cell's time), inside `fanin.run.isolation`'s network namespace; each
probe writes its observation as JSON (suites/fanin_node.mjs), and this module turns them into
the result set a Python cell has: the same schema, probes (metadata, file, function and hash
from `fanin.model.js_source`), environment (`packages` read from the installed node_modules,
the lock and its SHA-256, Node's version), and the same comparison with the reference, so
identity checks, bless, diff, upgrade and the report need nothing else. A probe with no
observation (the process died, or node's per-test timeout fired) is `probe-error`.

A cell that names its Node release (`node = "22.13.x"` on the framework or the cell in matrix.toml) gets it
from the npm registry (fanin.run.node_release); its npm ci and node --test run with that Node, the stamp
holds its version (another release reinstalls the directory), and the result set records it. A cell that
names none uses the machine's `node`, as before.

As for a Python cell, a package.json or lock that pins another version of the cell's framework
(another cell's lock copied over this one) is refused before anything is installed: `npm ci` would
install it without a word, and the run would write the other version's result set under this cell's name.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from fanin.model import catalog, compare, contract, markers, scenarios
from fanin.model.errors import EnvironmentFault
from fanin.model.exits import CHANGED, NOT_RUN, SAME
from fanin.model.js_source import SUFFIX
from fanin.model.results import (
    PROBE_ERROR,
    Observation,
    ProbeInfo,
    ResultFileError,
    ResultSet,
    canonical,
    load,
    normalize_message,
    save,
)
from fanin.model.scenarios import ScenarioError
from fanin.model.source import INSTALLED, REPO_ROOT, SUITES, shown, user_cache
from fanin.run import install_roots, isolation, memory, node_release
from fanin.run.environment import file_sha256, suite_commit
from fanin.run.one_cell import CellOutcome, not_run
from fanin.run.venvs import install_reason, other_cells_lock

NODE_DIRS = Path(
    os.environ.get("FANIN_NODE_DIRS", (user_cache() / "node") if INSTALLED else REPO_ROOT / ".fanin" / "node")
)
# What is the same whatever the clone (npm's content-addressed cache, a Node release checked when unpacked) is the
# user's, so a fresh clone downloads neither again; a cell's directory (its npm ci) stays the clone's.
NPM_CACHE = Path(os.environ.get("FANIN_NPM_CACHE", user_cache() / "npm-cache"))
NODE_RELEASES = Path(os.environ.get("FANIN_NODE_RELEASES", user_cache() / "node-releases"))  # fanin.run.node_release
STAMP = ".fanin-stamp.json"
PER_PROBE_SECONDS = 60


class NodeInstallError(EnvironmentFault):
    """A Node cell's directory could not be installed; the message says which step and why."""


@dataclass(frozen=True)
class NodeRun:
    cell_id: str
    framework: str
    package: str
    version: str  # the cell's: its package.json and lock must pin the framework at it
    lock: Path  # reference/locks/<cell>/package-lock.json (package.json and .npmrc beside it)
    reference: Path | None
    results: Path
    junit: Path | None = None
    targets: tuple[str, ...] = ()  # probe files (suites/<framework>/x.test.mjs) instead of the whole suite
    accept_new: bool = False
    reference_error: str | None = None
    isolate: bool = True
    node: str | None = None  # the Node release the cell names (`22.13.x`); None: the machine's node
    root: Path | None = None  # the folder holding the cell's directory (NODE_DIRS; the sensitivity check's copy)
    env: dict[str, str] = field(default_factory=dict)  # more of the contract (the earlier release: EARLIER_*)


def pins(lock: Path, optional: bool = False) -> dict[str, str]:
    """The lock's top-level packages (`node_modules/<name>`), name -> version; optional ones only if asked."""
    data = json.loads(lock.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for key, entry in data.get("packages", {}).items():
        if not key.startswith("node_modules/") or "/node_modules/" in key or (entry.get("optional") and not optional):
            continue
        if entry.get("dev") or entry.get("link"):
            continue
        found[key[len("node_modules/") :]] = str(entry.get("version"))
    return dict(sorted(found.items()))


def installed(directory: Path) -> dict[str, str]:
    """Top-level packages in the directory's node_modules: where each is installed -> its package.json's version.

    Keyed by the install path, as the lock keys them (`node_modules/<path>`), never by package.json's name: an npm
    alias (`"@ai-sdk/anthropic-v5": "npm:@ai-sdk/anthropic@2.0.33"`, @mastra/core 0.24) installs a package under
    another name, which keyed by its own name read as one package missing and another not in the lock."""
    found: dict[str, str] = {}
    modules = directory / "node_modules"
    if not modules.is_dir():
        return found
    candidates = [p for p in modules.iterdir() if not p.name.startswith(".")]
    for entry in candidates:
        for package in sorted(entry.iterdir()) if entry.name.startswith("@") and entry.is_dir() else [entry]:
            try:
                data = json.loads((package / "package.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            found[package.relative_to(modules).as_posix()] = str(data.get("version"))
    return dict(sorted(found.items()))


def drift(directory: Path, lock: Path) -> list[str]:
    """What differs from the lock; an optional package npm chose to install is no drift at the lock's version
    (npm ci installs optional entries a platform allows: @google/adk 0.6.1's optional peer chain, node-gyp's)."""
    wanted, have, allowed = pins(lock), installed(directory), pins(lock, optional=True)
    return [
        f"{name}: {have.get(name, 'absent')} -> {wanted.get(name, 'not in the lock')}"
        for name in sorted(set(wanted) | set(have))
        if wanted.get(name) != have.get(name) and not (name not in wanted and have[name] == allowed.get(name))
    ]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NodeInstallError(f"{shown(path)} is not readable JSON ({exc}); restore it or re-lock the cell") from None


def _dig(data: Any, *keys: str) -> str | None:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, str) else None


def framework_pins(lock: Path, package: str) -> dict[str, str | None]:
    """What the cell's package.json (`dependencies`) and its lock (`node_modules/<package>`) pin the framework at."""
    return {
        "package.json": _dig(_read_json(lock.parent / "package.json"), "dependencies", package),
        lock.name: _dig(_read_json(lock), "packages", f"node_modules/{package}", "version"),
    }


NPM_PREFIX = re.compile(r"^npm (?:error|ERR!)\s?")
NPM_LINES = 8  # "code EUSAGE", npm's sentence, and the first Missing:/Invalid: lines


def npm_reason(output: str) -> str:
    """npm's own reason, one line: its error lines without the prefix, up to the usage text it appends
    (`npm ci` on a package.json the lock does not match: "can only install packages when your package.json and
    package-lock.json ... are in sync", then "Missing: x@1 from lock file"); the log file's path left out."""
    lines = [NPM_PREFIX.sub("", line).strip() for line in output.strip().splitlines()]
    lines = [line for line in lines if line and not line.startswith("A complete log of this run")]
    if "Usage:" in lines:  # the command's one-line summary, then its usage and options: no part of the reason
        lines = lines[: max(lines.index("Usage:") - 1, 0)]
    lines = list(dict.fromkeys(lines))  # npm says some Missing: lines twice
    more = f" | ... ({len(lines) - NPM_LINES} more)" if len(lines) > NPM_LINES else ""
    return " | ".join(lines[:NPM_LINES]) + more if lines else "(npm said nothing)"


def check_lock_names(lock: Path, package: str, version: str) -> None:
    """Both files are this cell's: each pins the cell's framework at the cell's version (checked before any install)."""
    for name, pinned in framework_pins(lock, package).items():
        refused = other_cells_lock(name, package, pinned, version)
        if refused:
            raise NodeInstallError(refused)


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise NodeInstallError(f"{name} is not installed; Node cells need Node 20+ and npm (see the README)")
    return found


def node_binary(spec: str) -> Path:
    """The Node release a cell names, installed from the npm registry the first time (fanin.run.node_release)."""
    return node_release.ensure(spec, NODE_RELEASES, tool("npm"), NPM_CACHE)


def npm_command(node: Path | None) -> list[str]:
    """npm, run by `node` when a cell names its Node (the machine's npm CLI is a script: `<node> npm-cli.js`)."""
    npm = tool("npm")
    if node is None:
        return [npm]
    script = Path(npm).resolve()
    if script.suffix not in (".js", ".cjs", ".mjs"):
        raise NodeInstallError(f"npm ({npm}) is no script a Node release can run; install npm from the npm registry")
    return [str(node), str(script)]


def tool_env(node: Path | None) -> dict[str, str]:
    """The environment of npm and node --test: the cell's Node first on PATH, so nothing below them finds another."""
    environ = node_release.tool_environ()
    if node is None:
        return environ
    return {**environ, "PATH": os.pathsep.join([str(node.parent), environ.get("PATH", "")])}


def check_lock(cell_id: str, lock: Path, framework: tuple[str, str] | None) -> None:
    """The lock is there beside its package.json, and (given the framework) it is this cell's."""
    if not lock.is_file() or not (lock.parent / "package.json").is_file():
        raise NodeInstallError(
            f"no lock {shown(lock)} beside its package.json; make it with ./noxw -s lock -- {cell_id}"
        )
    if framework is not None:
        check_lock_names(lock, *framework)


def ensure(
    cell_id: str,
    lock: Path,
    root: Path | None = None,
    framework: tuple[str, str] | None = None,
    node: Path | None = None,
) -> Path:
    """The cell's directory, `npm ci`'d from its lock; reinstalled when the lock, the cell's Node or a package drifted.

    `framework` (package, version): package.json and the lock must pin exactly that, or nothing is installed.
    `node`: the Node release npm runs with (None: the machine's npm and node).
    """
    check_lock(cell_id, lock, framework)
    directory = (root or NODE_DIRS) / cell_id
    directory.mkdir(parents=True, exist_ok=True)
    with _installing(directory):
        installed_here = _ensure(directory, lock, node)
    if directory.parent.resolve() == NODE_DIRS.resolve():  # a clone's own folder, not a test's or a copy's
        install_roots.remember(NODE_DIRS, install_roots.NODE)
    return installed_here


@contextlib.contextmanager
def _installing(directory: Path, wait: bool = True) -> Iterator[bool]:
    """One installer of a directory at a time, across processes and threads (a later cell builds its earlier
    release's directory while that cell's own run may be building it: fanin.run.runtimes.NodeRunner).

    `wait=False` (a donor read while this process installs its own directory: two clones linking from each other
    must not wait on each other) yields False at once where another holds it."""
    locks = directory.parent / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{directory.name}.lock", "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _ensure(directory: Path, lock: Path, node: Path | None) -> Path:
    stamp_path = directory / STAMP
    try:
        stamp = json.loads(stamp_path.read_text())
    except (OSError, ValueError):
        stamp = {}
    wanted = file_sha256(lock)
    used = None if node is None else _version([str(node), "--version"])  # stamped only when the cell names one
    if stamp.get("lock_sha256") == wanted and stamp.get("node") == used and not drift(directory, lock):
        # the same lock, so the same dependencies: package.json's notes may still have moved (`fanin.left_out`, why a
        # storage companion is not in the lock: the probes read it there)
        manifest = lock.parent / "package.json"
        if manifest.read_bytes() != (directory / "package.json").read_bytes():
            shutil.copy(manifest, directory / "package.json")
        return directory
    stamp_path.unlink(missing_ok=True)  # a half-done install must never look finished
    for name in ("package.json", "package-lock.json", ".npmrc"):
        if (lock.parent / name).is_file():
            shutil.copy(lock.parent / name, directory / name)
    stamp = {"lock_sha256": wanted, **({"node": used} if used else {})}
    if not _linked_from_another_clone(directory, lock, stamp):
        _npm_ci(directory, node)
    left = drift(directory, lock)
    if left:
        raise NodeInstallError(f"node_modules still differs from {lock.name} after npm ci: {'; '.join(left[:3])}")
    stamp_path.write_text(json.dumps(stamp))
    return directory


def _npm_ci(directory: Path, node: Path | None) -> None:
    base = [*npm_command(node), "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--cache", str(NPM_CACHE)]
    env = tool_env(node)
    done = subprocess.run([*base, "--offline"], cwd=directory, capture_output=True, text=True, env=env)
    if done.returncode != 0:  # not everything is in the cache yet: fetch from the registry
        done = subprocess.run(base, cwd=directory, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise NodeInstallError(f"npm ci failed (exit {done.returncode}): {npm_reason(done.stderr or done.stdout)}")


def _linked_from_another_clone(directory: Path, lock: Path, stamp: dict[str, str]) -> bool:
    """node_modules hard-linked from another clone's directory installed from the same lock with the same Node
    (fanin.run.install_roots), where one is intact: `npm ci` of a Mastra cell is 5-15 s, linking well under one.

    Only files are shared, never a directory, so whatever a run adds lands in this clone's copy; npm and the
    sensitivity check replace files rather than write into them (a copy of its own, `cp -a`). What was linked is
    compared with the lock like an `npm ci` (drift): a donor that no longer matches is not used."""
    for root in install_roots.known(install_roots.NODE):
        if root.resolve() == directory.parent.resolve():
            continue
        for donor in sorted(path for path in root.iterdir() if not path.name.startswith(".")):
            with _installing(donor, wait=False) as held:  # never a directory another process is installing
                if held and _link(donor, directory, lock, stamp):
                    return True
    return False


def _link(donor: Path, directory: Path, lock: Path, stamp: dict[str, str]) -> bool:
    try:
        if json.loads((donor / STAMP).read_text()) != stamp or drift(donor, lock):
            return False
    except (OSError, ValueError):
        return False
    shutil.rmtree(directory / "node_modules", ignore_errors=True)
    try:
        shutil.copytree(donor / "node_modules", directory / "node_modules", symlinks=True, copy_function=os.link)
    except (OSError, shutil.Error):
        shutil.rmtree(directory / "node_modules", ignore_errors=True)
        return False
    if drift(directory, lock):
        shutil.rmtree(directory / "node_modules", ignore_errors=True)
        return False
    return True


def _suite_files(framework: str, targets: tuple[str, ...]) -> list[Path]:
    """The probe files to run; a `file::function` target (bisect's) runs its whole file."""
    if targets:
        files = dict.fromkeys(Path(t.split("::", 1)[0]) for t in targets)
        return [f if f.is_absolute() else REPO_ROOT / f for f in files]
    return sorted((SUITES / framework).glob(f"*{SUFFIX}"))


def _copy_suite(directory: Path, framework: str) -> Path:
    """suites/<framework>/ and the shared kit, copied under the cell's directory (fresh each run)."""
    target = directory / "suites"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(SUITES / framework, target / framework, ignore=shutil.ignore_patterns("node_modules"))
    for kit in sorted(SUITES.glob("*.mjs")):  # fanin_node.mjs, scenario_kit.mjs
        shutil.copy(kit, target / kit.name)
    # The scenarios as JSON for scenario_kit.mjs (Node reads no TOML): each with the primitives it needs.
    catalogue = {s.id: {"scenario": s.data, "primitives": s.primitives()} for s in scenarios.catalogue().values()}
    (target / SCENARIOS_JSON).write_text(json.dumps(catalogue, sort_keys=True), encoding="utf-8")
    return target


ENTRY = "cell.test.mjs"
SCENARIOS_JSON = "scenarios.json"


def _entry(suite: Path, files: list[Path]) -> Path:
    """One module importing the probe files in order, so node --test runs them all in one process; their
    tests register as each import runs and node:test runs top-level tests one after another."""
    entry = suite / ENTRY
    lines = [f"await import({json.dumps('./' + f.relative_to(suite).as_posix())});" for f in files]
    entry.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return entry


def _declared(framework: str) -> dict[str, ProbeInfo]:
    infos = {}
    for declared in catalog.declared_node():
        if declared.framework == framework:
            infos[declared.id] = catalog.node_probe_info(REPO_ROOT / declared.file, declared.function)
    return infos


def _observation(raw: dict[str, Any]) -> Observation:
    if "scenario" in raw:  # a scenario probe's answers (suites/scenario_kit.mjs): the harness grades them
        try:
            answers = raw["scenario"]
            return scenarios.observation(
                scenarios.for_probe(str(raw["id"])), answers["capabilities"], answers["answers"]
            )
        except (ScenarioError, KeyError, TypeError) as exc:
            return _error(f"scenario answers not graded: {exc}")
    return Observation(
        outcome=str(raw["outcome"]),
        value=canonical(raw.get("value")),
        label=normalize_message(str(raw.get("label", ""))),
        detail=normalize_message(str(raw.get("detail", ""))),
        hazard=str(raw["hazard"]),
    )


def _error(message: str) -> Observation:
    return Observation(
        outcome=PROBE_ERROR,
        value={"error": message},
        label="probe-error",
        detail=f"probe-error: {message}",
        hazard="n/a",
    )


def _version(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, env=node_release.tool_environ())
        return done.stdout.strip().lstrip("v")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def environment(directory: Path, lock: Path, mode: str, seconds: float, node: Path | None = None) -> dict[str, Any]:
    """What the result set records of the run; `node` the Node it ran with (the one asked for its version)."""
    try:
        lock_shown = str(lock.resolve().relative_to(REPO_ROOT))
    except ValueError:
        lock_shown = str(lock)
    return {
        "runtime": "node",
        "node": _version([str(node or tool("node")), "--version"]),
        "npm": _version([*npm_command(node), "--version"]),
        "platform": f"{platform.system().lower()}-{platform.machine()}",
        "suite_commit": suite_commit(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "packages": installed(directory),
        "network_isolation": mode,
        "lock": lock_shown,
        "lock_sha256": file_sha256(lock),
        "run_seconds": round(seconds, 1),
    }


def run_cell(run: NodeRun, log: IO[str]) -> CellOutcome:
    """Install, run every probe under node --test, write the result set (or the marker saying why not)."""
    started = time.monotonic()
    try:
        check_lock(run.cell_id, run.lock, (run.package, run.version))  # before a Node release is fetched for it
        node = node_binary(run.node) if run.node is not None else None
        directory = ensure(run.cell_id, run.lock, root=run.root, framework=(run.package, run.version), node=node)
    except EnvironmentFault as exc:
        log.write(f"fanin: {exc}\n")
        return not_run(run.cell_id, run.results, NOT_RUN, install_reason(exc))
    declared = _declared(run.framework)
    suite = _copy_suite(directory, run.framework)
    files = [suite / run.framework / f.name for f in _suite_files(run.framework, run.targets)]
    if not files:
        return not_run(run.cell_id, run.results, NOT_RUN, "no probe was collected")
    wanted = {i for i, info in declared.items() if any(f.name == Path(info.file).name for f in files)}
    out = Path(tempfile.mkdtemp(prefix="fanin-node-"))
    command = [
        str(node or tool("node")),
        "--test",
        "--test-concurrency=1",
        f"--test-timeout={PER_PROBE_SECONDS * 1000}",
    ]
    if run.junit is not None:
        run.junit.parent.mkdir(parents=True, exist_ok=True)
        command += ["--test-reporter=spec", "--test-reporter-destination=stdout"]
        command += ["--test-reporter=junit", f"--test-reporter-destination={run.junit}"]
    command, mode = isolation.wrap([*command, str(_entry(suite, files))], run.isolate)
    env = {**tool_env(node), **memory.home(out), **run.env, contract.NODE_OUT: str(out), isolation.ENV: mode}
    env["NODE_OPTIONS"] = ""
    log.write(f"fanin: {' '.join(command)}\n")
    log.flush()
    process = subprocess.Popen(
        command, cwd=directory, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )
    limit = PER_PROBE_SECONDS * (len(wanted) + 2)
    try:
        code = process.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        code = process.wait()
        log.write(f"fanin: node --test ran past {limit} s and was killed\n")
    except KeyboardInterrupt:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        shutil.rmtree(out, ignore_errors=True)
        return not_run(run.cell_id, run.results, 130, "interrupted")
    observations: dict[str, Observation] = {}
    for path in sorted(out.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        probe_id = str(raw.get("id"))
        try:
            observations[probe_id] = _observation(raw)
        except (KeyError, ValueError, TypeError) as exc:
            observations[probe_id] = _error(f"malformed observation: {exc}")
    shutil.rmtree(out, ignore_errors=True)
    for probe_id in sorted(wanted - set(observations)):
        observations[probe_id] = _error(f"no observation written (node --test exit {code}: timed out or crashed)")
    unknown = sorted(set(observations) - set(declared))
    if unknown:
        return not_run(run.cell_id, run.results, NOT_RUN, f"observations of undeclared probes: {', '.join(unknown)}")
    reference, reference_error = None, run.reference_error
    if run.reference is not None and run.reference.exists() and reference_error is None:
        try:
            reference = load(run.reference)
        except ResultFileError as exc:
            reference_error = str(exc)
    failed = bool(reference_error)
    for probe_id in sorted(observations):
        before = reference.observations.get(probe_id) if reference else None
        change = compare.classify(probe_id, before, observations[probe_id])
        bad = change.is_breaking or observations[probe_id].outcome == PROBE_ERROR
        bad = bad or (change.kind == compare.NEW and not run.accept_new)
        failed = failed or bad
        log.write(f"fanin: {'FAIL' if bad else 'ok  '} {compare.describe(change)}\n")
    if reference is not None and not run.targets:
        vanished = sorted(p for p in reference.observations if p.startswith(f"{run.framework}/") and p not in declared)
        if vanished:
            failed = True
            log.write(f"fanin: error: the reference holds probes that no longer exist: {', '.join(vanished)}\n")
    if reference_error:
        log.write(f"fanin: error: unusable reference: {reference_error}\n")
    result_set = ResultSet(
        cell=run.cell_id,
        framework=run.framework,
        version=installed(directory).get(run.package, "not installed"),
        environment=environment(directory, run.lock, mode, time.monotonic() - started, node),
        probes={pid: declared[pid] for pid in observations},
        observations=observations,
    )
    save(result_set, run.results)
    markers.clear_marker(run.results)
    log.write(f"fanin: {len(observations)} observations of {run.cell_id} -> {shown(run.results)}\n")
    return CellOutcome(run.cell_id, CHANGED if failed else SAME, None, 1, mode, written=True)
