"""A cell's virtual environment: exactly its lock, on exactly its Python, or rebuilt before it is used.

Built with uv (`uv venv` + `uv pip sync --compile-bytecode`). A stamp records the lock's
SHA-256 and the interpreter's full version; on every use the installed distributions are
compared with the lock's pins (a directory listing, milliseconds), so a package someone
installed or upgraded by hand (drift), a changed lock, or a venv left from another Python
is rebuilt, never probed.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import InvalidMarker, Marker
from packaging.utils import canonicalize_name

from fanin.model.errors import EnvironmentFault
from fanin.model.source import INSTALLED, REPO_ROOT
from fanin.run.environment import file_sha256

VENVS = Path(
    os.environ.get(
        "FANIN_VENVS", (Path.home() / ".cache" / "fanin" / "venvs") if INSTALLED else REPO_ROOT / ".fanin" / "venvs"
    )
)
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


def _run(step: str, command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = " | ".join(line.strip() for line in (done.stderr or done.stdout).strip().splitlines()[-3:])
        raise InstallError(f"{step} failed (exit {done.returncode}): {tail}")


def ensure(name: str, python: str, lock: Path, root: Path | None = None) -> Venv:
    """The venv `name`, built from `lock` on `python`; rebuilt when anything has drifted from them."""
    if not lock.is_file():
        raise InstallError(f"no lock {lock}; make it with ./noxw -s lock -- {name}")
    venv = Venv((root or VENVS) / name)
    marker = _interpreter(python)
    stamp_path = venv.path / STAMP
    try:
        stamp = json.loads(stamp_path.read_text())
    except (OSError, ValueError):
        stamp = {}
    uv = uv_binary()
    if stamp.get("python") != marker["python_full_version"] or not venv.python.exists():
        shutil.rmtree(venv.path, ignore_errors=True)
        _run("creating the venv", [uv, "venv", "--quiet", "--python", python, str(venv.path)])
        stamp = {}
    wanted = file_sha256(lock)
    if stamp.get("lock_sha256") == wanted and not drift(venv, lock, marker):
        return venv
    stamp_path.unlink(missing_ok=True)  # a half-done sync must never look finished
    _run(
        "installing the lock",
        [uv, "pip", "sync", "--quiet", "--compile-bytecode", "--python", str(venv.python), str(lock)],
    )
    left = drift(venv, lock, marker)
    if left:
        raise InstallError(f"the venv still differs from {lock.name} after installing it: {'; '.join(left[:3])}")
    stamp_path.write_text(json.dumps({"lock_sha256": wanted, "python": marker["python_full_version"]}))
    return venv
