"""What a `probe --here` run will import: each package's version and where its code comes from.

Run in the user's interpreter with the very environment the probe run gets (its text is given to
`python -c`, so sys.path is the run's: the working directory, PYTHONPATH, then site-packages), and
prints one JSON object. Detection that looked anywhere else judged one version and ran another (a
PYTHONPATH tree of an older release in front of the venv's newer one).

A package is named as the release only when its code is the release's:
- `editable`: installed with `pip install -e` (direct_url.json's `dir_info.editable`); `editable,
  modified` when its folder is a git work tree with uncommitted changes, `editable, changes unknown`
  when it is not a git work tree (nothing to compare it with);
- `modified`: a file the wheel installed no longer has the SHA-256 its RECORD lists (patched in place);
- `shadowed`: the framework's module imports from a file that is not the distribution's (a source tree
  on the path without metadata).

Standard library only, Python 3.10+: it runs where the framework is, not where fanin is.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse


def _editable(dist: metadata.Distribution) -> Path | None:
    """The source folder of an editable install, from direct_url.json (PEP 610)."""
    try:
        info = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return None
    if not (info.get("dir_info") or {}).get("editable"):
        return None
    url = urlparse(str(info.get("url", "")))
    return Path(unquote(url.path)) if url.scheme == "file" else None


def _git_state(folder: Path) -> str:
    """', modified' (uncommitted changes to tracked files), '' (clean), or ', changes unknown' (no git work tree)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ", changes unknown"
    if done.returncode != 0:
        return ", changes unknown"
    return ", modified" if done.stdout.strip() else ""


def _patched(dist: metadata.Distribution) -> list[str]:
    """The installed files whose content is not what RECORD says the wheel installed (missing ones too)."""
    changed = []
    for file in dist.files or ():
        if file.hash is None or file.hash.mode != "sha256":
            continue  # RECORD lists itself and compiled files without a hash
        path = Path(str(dist.locate_file(file)))
        try:
            digest = hashlib.sha256(path.read_bytes()).digest()
        except OSError:
            changed.append(str(file))
            continue
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != file.hash.value:
            changed.append(str(file))
    return changed


def _imported_from(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    return Path(spec.origin).resolve()


def describe(package: str, module: str | None) -> dict[str, str] | None:
    """The version importlib finds first on sys.path (as the run's `metadata.version`), and its origin."""
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return None
    found = {"version": dist.version, "origin": "release"}
    editable = _editable(dist)
    if editable is not None:
        found["origin"] = "editable" + _git_state(editable)
        found["where"] = str(editable)
    else:
        patched = _patched(dist)
        if patched:
            found["origin"] = "modified"
            found["where"] = f"{len(patched)} installed file(s) differ from the wheel's RECORD, e.g. {patched[0]}"
    origin = _imported_from(module) if module else None
    if origin is not None:
        files = {Path(str(dist.locate_file(f))).resolve() for f in dist.files or ()}
        inside = editable is not None and origin.is_relative_to(editable.resolve())
        if origin not in files and not inside:
            found["origin"] = "shadowed"
            found["where"] = f"{module} imports from {origin}, not from the installed distribution"
    return found


def main(arguments: list[str]) -> None:
    """`python -c <this file> PACKAGE=MODULE ...`: one JSON object, {python, packages: {name: {version, origin}}}."""
    packages = {}
    for argument in arguments:
        package, _, module = argument.partition("=")
        try:
            found = describe(package, module or None)
        except Exception as exc:  # a broken distribution: name it as such, never crash detection
            found = {"version": "?", "origin": f"unreadable ({type(exc).__name__}: {exc})"}
        if found is not None:
            packages[package] = found
    print(json.dumps({"python": f"{sys.version_info[0]}.{sys.version_info[1]}", "packages": packages}))


if __name__ == "__main__":
    main(sys.argv[1:])
