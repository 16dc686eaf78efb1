"""Find an installed interpreter for a minor version such as "3.10".

pyenv's shims answer `python3.10` with an error unless that version is active,
so nox's and uv's own discovery miss pyenv installs; look in pyenv's versions
directory first, then for a `python3.X` on PATH that really runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from packaging.version import InvalidVersion, Version


def _pyenv_root() -> Path:
    """PYENV_ROOT; else the pyenv whose shims are on PATH; else ~/.pyenv. A run with a new HOME (CI's fresh-machine
    check, `sudo -H`) still finds the machine's pyenv through its shims."""
    if "PYENV_ROOT" in os.environ:
        return Path(os.environ["PYENV_ROOT"])
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        shims = Path(entry)
        if shims.name == "shims" and (shims.parent / "versions").is_dir():
            return shims.parent
    return Path.home() / ".pyenv"


def _runs_as(executable: str, minor: str) -> bool:
    try:
        out = subprocess.run(
            [executable, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == minor


@cache
def find(minor: str) -> str | None:
    """The newest installed patch release of `minor`, or None."""
    candidates: list[tuple[Version, Path]] = []
    versions = _pyenv_root() / "versions"
    if versions.is_dir():
        for entry in versions.iterdir():
            try:
                version = Version(entry.name)
            except InvalidVersion:
                continue
            executable = entry / "bin" / f"python{minor}"
            if f"{version.major}.{version.minor}" == minor and executable.exists():
                candidates.append((version, executable))
    if candidates:
        return str(max(candidates)[1])
    on_path = shutil.which(f"python{minor}")
    if on_path and _runs_as(on_path, minor):
        return on_path
    return None
