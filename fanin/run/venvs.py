"""A cell's virtual environment: exactly its lock, on exactly its Python, or rebuilt before it is used.

Built with uv (`uv venv` + `uv pip sync`), its bytecode linked from sibling venvs or compiled
(fanin/run/bytecode.py: the same as `--compile-bytecode`, without compiling again what a sibling
venv already compiled from the very same file). A stamp records the lock's
SHA-256 and the interpreter's full version; on every use the installed distributions are
compared with the lock's pins (a directory listing, milliseconds), so a package someone
installed or upgraded by hand (drift), a changed lock, or a venv left from another Python
is rebuilt, never probed; so is a venv in which a file of the cell's framework was edited (its
RECORD's files, by size and modification time). A changed lock rebuilds the venv from nothing, so every package is
installed again and checked against the lock's hashes (uv does not re-check a package that is
already at its pinned version), and a lock that pins another version of the cell's framework
(another cell's lock copied over this one) is refused before anything is installed. Two fanin
processes (or threads) that need one venv at once take turns (a file lock per venv): the
second finds it built, so a test run beside a matrix run in one checkout builds nothing twice
and never removes a venv the other is installing into.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fanin.model.errors import EnvironmentFault
from fanin.model.names import canonicalize_name
from fanin.model.source import INSTALLED, REPO_ROOT, user_cache
from fanin.run import bytecode, install_roots
from fanin.run.environment import file_sha256
from fanin.run.uv_said import said

VENVS = Path(os.environ.get("FANIN_VENVS", (user_cache() / "venvs") if INSTALLED else REPO_ROOT / ".fanin" / "venvs"))
STAMP = ".fanin-stamp.json"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)\s*(?:;\s*([^\\#]+?))?\s*(?:\\)?$")


class InstallError(EnvironmentFault):
    """A cell's venv could not be built; the message says which step and why."""


@dataclass(frozen=True)
class Venv:
    path: Path

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


_UV_LOCK = threading.Lock()


@functools.cache
def _find_uv() -> str:
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            raise InstallError(
                "uv is not installed in the harness environment; re-run ./noxw to reinstall its tools"
            ) from None
        return found


def uv_binary() -> str:
    """uv from the harness's own environment (the `uv` package), else from PATH.

    Looked up once, under a lock: `uv.find_uv_bin` reads `sysconfig`, whose lazy set-up is not
    thread-safe, and cells are set up in threads.
    """
    with _UV_LOCK:
        return _find_uv()


def pins(lock: Path, environment: dict[str, str]) -> dict[str, str]:
    """The lock's `name==version` pins whose markers apply to this interpreter."""
    found: dict[str, str] = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line.strip())
        if not match:
            continue
        name, version, marker = match.groups()
        if marker:
            # here: packaging.markers imports packaging.tags, a fifth of a short command's start
            from packaging.markers import InvalidMarker, Marker

            try:
                if not Marker(marker).evaluate(environment):
                    continue
            except InvalidMarker:
                pass
        found[canonicalize_name(name)] = version
    return found


def installed(venv: Venv) -> dict[str, str]:
    """Distributions in the venv's site-packages, read from the dist-info directory names."""
    found: dict[str, str] = {}
    for site in venv.path.glob("lib/python*/site-packages"):
        for entry in site.glob("*.dist-info"):
            name, _, version = entry.name[: -len(".dist-info")].partition("-")
            found[canonicalize_name(name)] = version
    return found


def has_package(venv: Venv, name: str) -> bool:
    return canonicalize_name(name) in installed(venv)


def drift(venv: Venv, lock: Path, environment: dict[str, str]) -> list[str]:
    """What differs between the venv and its lock: `name: installed -> locked` lines."""
    wanted, have = pins(lock, environment), installed(venv)
    changes = []
    for name in sorted(set(wanted) | set(have)):
        if name in ("pip", "setuptools", "wheel") and name not in wanted:
            continue
        if wanted.get(name) != have.get(name):
            changes.append(f"{name}: {have.get(name, 'absent')} -> {wanted.get(name, 'not in the lock')}")
    return changes


def files_fingerprint(venv: Venv, package: str) -> str:
    """The framework's installed files as its RECORD lists them: path, size and modification time, hashed.

    An edit inside the venv (a framework module changed by hand, so it no longer imports or behaves
    otherwise) leaves every version as pinned; this notices it, in a stat per file of one distribution.
    """
    wanted = canonicalize_name(package)
    lines: list[str] = []
    for site in sorted(venv.path.glob("lib/python*/site-packages")):
        for entry in sorted(site.glob("*.dist-info")):
            if canonicalize_name(entry.name[: -len(".dist-info")].partition("-")[0]) != wanted:
                continue
            try:
                record = (entry / "RECORD").read_text(encoding="utf-8").splitlines()
            except OSError:
                return "no RECORD"
            for row in record:
                name = row.split(",", 1)[0]
                if not name or name.endswith(".pyc"):
                    continue
                try:
                    info = (site / name).stat()
                except OSError:
                    lines.append(f"{name}:missing")
                    continue
                lines.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _interpreter(python: str) -> dict[str, str]:
    """The interpreter's full version and the marker environment its pins are evaluated in."""
    script = (
        "import json, platform, sys, os;"
        "print(json.dumps({'python_full_version': platform.python_version(),"
        "'python_version': '%d.%d' % sys.version_info[:2], 'sys_platform': sys.platform,"
        "'platform_system': platform.system(), 'platform_machine': platform.machine(),"
        "'os_name': os.name, 'implementation_name': sys.implementation.name,"
        "'platform_python_implementation': platform.python_implementation()}))"
    )
    try:
        done = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise InstallError(f"the interpreter {python} does not run ({exc})") from None
    data: dict[str, str] = json.loads(done.stdout)
    return data


def locked_version(lock: Path, package: str) -> str | None:
    """The version the lock pins `package` at, whatever the markers say (None: not pinned)."""
    wanted = canonicalize_name(package)
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line.strip())
        if match and canonicalize_name(match.group(1)) == wanted:
            return match.group(2)
    return None


REFUSED = "install refused"


def other_cells_lock(file: str, package: str, pinned: str | None, version: str) -> str | None:
    """Why `file` is not this cell's lock (None: it pins the cell's framework at the cell's version).

    One wording for every runtime: a Python cell's uv lock, a Node cell's package.json and package-lock.json.
    """
    if pinned == version:
        return None
    what = f"pins {package} {pinned}" if pinned else f"does not pin {package}"
    return (
        f"{REFUSED}: {file} {what}, but the cell is {package} {version} "
        "(another cell's lock copied over this one?); restore it or re-lock the cell"
    )


def install_reason(exc: Exception) -> str:
    """A cell's NOT RUN reason when its install stopped: a refusal says so itself, anything else failed."""
    return str(exc) if str(exc).startswith(REFUSED) else f"install failed: {exc}"


def check_lock_names(lock: Path, package: str, version: str) -> None:
    """The lock is this cell's: it pins the cell's framework at the cell's version (checked before any install)."""
    refused = other_cells_lock(lock.name, package, locked_version(lock, package), version)
    if refused:
        raise InstallError(refused)


def _run(step: str, command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise InstallError(f"{step} failed (exit {done.returncode}): {said(done.stderr or done.stdout)}")


def _sync(step: str, uv: str, options: list[str], python: Path, lock: Path) -> None:
    """`uv pip sync` of the lock, from uv's cache alone when it holds every pinned file.

    Online, uv asks the index about every pinned package even when its cache holds the very
    wheel, and even when the venv already has it: 0.3-0.5 s a sync on a warm cache, twice per
    venv (the install, then the compile). A pin it has never fetched (a version new to this
    machine) fails offline, and the sync runs again online."""
    command = [uv, "pip", "sync", "--quiet", *options, "--python", str(python), str(lock)]
    if subprocess.run([*command[:4], "--offline", *command[4:]], capture_output=True, text=True).returncode == 0:
        return
    _run(step, command)


def ensure(
    name: str,
    python: str,
    lock: Path,
    root: Path | None = None,
    framework: tuple[str, str] | None = None,
    share_bytecode: bool = True,
) -> Venv:
    """The venv `name`, built from `lock` on `python`; rebuilt when anything has drifted from them.

    `framework` (package, version): the lock must pin exactly that, or nothing is installed.
    `share_bytecode=False` compiles every file here, linking none from sibling venvs (for measuring).
    """
    if not lock.is_file():
        raise InstallError(f"no lock {lock}; make it with ./noxw -s lock -- {name}")
    if framework is not None:
        check_lock_names(lock, *framework)
    venv = Venv((root or VENVS) / name)
    with _building(venv):
        return _ensure(venv, name, python, lock, framework, share_bytecode)


@contextlib.contextmanager
def _building(venv: Venv) -> Iterator[None]:
    """One builder of a venv at a time, across processes and threads (flock: one lock per open file)."""
    locks = venv.path.parent / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{venv.path.name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _ensure(
    venv: Venv, name: str, python: str, lock: Path, framework: tuple[str, str] | None, share_bytecode: bool
) -> Venv:
    marker = _interpreter(python)
    stamp_path = venv.path / STAMP
    try:
        stamp = json.loads(stamp_path.read_text())
    except (OSError, ValueError):
        stamp = {}
    uv = uv_binary()
    wanted = file_sha256(lock)
    edited = framework is not None and stamp.get("files") not in (None, files_fingerprint(venv, framework[0]))
    if (
        stamp.get("lock_sha256") == wanted
        and venv.python.exists()
        and stamp.get("python") == marker["python_full_version"]
        and not edited  # a file of the framework changed by hand: rebuilt from nothing
    ):
        if not drift(venv, lock, marker):
            _listed(venv)  # a clone that built before the list existed is listed too
            return venv
    else:
        # Another lock (or Python, or no finished install): start from nothing, so that every package is
        # installed, and hash-checked, from the lock; a package already at its pin would not be.
        shutil.rmtree(venv.path, ignore_errors=True)
        _run("creating the venv", [uv, "venv", "--quiet", "--python", python, str(venv.path)])
    stamp_path.unlink(missing_ok=True)  # a half-done sync must never look finished
    # uv links installed files to its cache, so an edit made in place inside the venv edited the cached copy
    # too: the framework is fetched afresh, never re-linked from what was edited.
    refresh = ["--refresh-package", framework[0]] if edited and framework is not None else []
    if refresh:  # fetched afresh: online
        _run("installing the lock", [uv, "pip", "sync", "--quiet", *refresh, "--python", str(venv.python), str(lock)])
    else:
        _sync("installing the lock", uv, [], venv.python, lock)
    if share_bytecode:
        minor = ".".join(marker["python_full_version"].split(".")[:2])
        site = venv.path / "lib" / f"python{minor}" / "site-packages"
        roots = list(
            dict.fromkeys([venv.path.parent.resolve(), VENVS.resolve(), *install_roots.known(install_roots.VENVS)])
        )
        donors = bytecode.donor_sites(roots, venv.path, minor, marker["python_full_version"])
        bytecode.link_from(site, donors, bytecode.tag(marker["python_full_version"]))
    # uv compiles what has no current .pyc yet (everything, when nothing was linked); the install is a no-op now.
    _sync("compiling the venv", uv, ["--compile-bytecode"], venv.python, lock)
    left = drift(venv, lock, marker)
    if left:
        raise InstallError(f"the venv still differs from {lock.name} after installing it: {'; '.join(left[:3])}")
    written = {"lock_sha256": wanted, "python": marker["python_full_version"]}
    if framework is not None:
        written["files"] = files_fingerprint(venv, framework[0])
    stamp_path.write_text(json.dumps(written))
    _listed(venv)  # its .pyc may now serve another clone's venvs
    return venv


def _listed(venv: Venv) -> None:
    """The folder of a venv in the default place (a clone's .fanin/venvs, an installed fanin's cache) is listed for
    other clones' builds; a folder a caller chose (a test's, the sensitivity check's copies) is not."""
    if venv.path.parent.resolve() == VENVS.resolve():
        install_roots.remember(VENVS, install_roots.VENVS)
