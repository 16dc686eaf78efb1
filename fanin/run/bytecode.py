"""A venv's bytecode linked from sibling venvs where their source is the very same file; uv compiles the rest.

uv hard-links a venv's files to its cache, so a package at the same version in two venvs is the
same inode in both, and a `.pyc` compiled for it in one venv is valid in the other: a timestamp
`.pyc` is checked against its source's modification time (the same inode has the same), and the
code's file name is set from where it is loaded, not from where it was compiled. Compiling is most
of the time a cell's venv takes to build (adk-2.13.0: 0.4 s to install, 5.4 s to compile).

So a new venv takes the `.pyc` of each source file that a sibling venv (in this clone, or another clone's folder
of venvs: fanin/run/install_roots.py) on the same Python (same
full version, so the same magic number) holds for the same inode, as a hard link (Python replaces a
`.pyc` atomically, never writes into one, so a shared link stays intact), before uv compiles the
venv: uv's compile skips every `.pyc` whose header matches its source (timestamp mode, `force=False`)
and compiles the rest, so a linked `.pyc` that does not match is compiled again, never trusted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def tag(python_version: str) -> str:
    major, minor = python_version.split(".")[:2]
    return f"cpython-{major}{minor}"


def cached(source: Path, tag: str) -> Path:
    return source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"


def _record_sources(dist_info: Path) -> list[str]:
    """The `.py` files a distribution installed (its RECORD), relative to site-packages."""
    try:
        rows = (dist_info / "RECORD").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    names = (row.split(",", 1)[0] for row in rows)
    return [name for name in names if name.endswith(".py") and not name.startswith("..")]


def link_from(site: Path, donors: list[Path], tag: str) -> int:
    """Hard-link into `site` each `.pyc` a donor site-packages holds for the same source inode; how many.

    Only donors that installed the same distribution at the same version (the same dist-info directory)
    are looked at, for that distribution's files: a stat or two per file, whatever the number of donors."""
    linked = 0
    for dist_info in sorted(site.glob("*.dist-info")):
        holders = [donor for donor in donors if (donor / dist_info.name).is_dir()]
        if not holders:
            continue
        for relative in _record_sources(dist_info):
            source, target = site / relative, cached(site / relative, tag)
            try:
                mine = source.stat()
            except OSError:
                continue
            if target.exists():
                continue
            for donor in holders:
                theirs = donor / relative
                try:
                    other = theirs.stat()
                except OSError:
                    continue
                pyc = cached(theirs, tag)
                if (other.st_ino, other.st_dev) != (mine.st_ino, mine.st_dev) or not pyc.is_file():
                    continue
                try:
                    target.parent.mkdir(exist_ok=True)
                    os.link(pyc, target)
                except OSError:
                    continue
                linked += 1
                break
    return linked


def donor_sites(roots: list[Path], own: Path, python_version: str, full_version: str) -> list[Path]:
    """site-packages of the other finished venvs under `roots` (this clone's, other clones': fanin/run/install_roots.py)
    built on exactly this Python; `own` (the venv being built) is not one."""
    found = []
    for root in roots:
        if not root.is_dir():
            continue
        for venv in sorted(root.iterdir()):
            if venv.resolve() == own.resolve():
                continue
            try:
                stamp = json.loads((venv / ".fanin-stamp.json").read_text())
            except (OSError, ValueError):
                continue
            if stamp.get("python") == full_version:
                found.append(venv / "lib" / f"python{python_version}" / "site-packages")
    return found
