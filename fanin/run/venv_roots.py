"""The folders of cell venvs this user has built in, so a new clone's venvs take the bytecode another clone compiled.

uv hard-links every installed file to its cache, so the venvs of two clones of this repository (or a clone and
an installed fanin) hold the very same inodes for a package at one version, and a `.pyc` compiled in one is valid
in the other (fanin/run/bytecode.py). Compiling is most of a venv's build (crewai-1.15.30: 6.7 s alone, 0.9 s with
a donor), and a fresh clone builds every cell's venv: it looks for donors in every folder listed here, not only
its own. The list is a text file in the user's cache (one absolute path a line), written under a file lock;
folders that no longer exist are dropped when it is written. Only `.pyc` files are shared, by hard link, and uv
still compiles any whose header does not match its source: nothing a clone builds depends on another's being
right. A cache that cannot be written (read-only HOME) only loses the sharing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from fanin.model.source import user_cache


def listing() -> Path:
    return Path(os.environ.get("FANIN_VENV_ROOTS", user_cache() / "venv-roots.txt"))


def known() -> list[Path]:
    """The listed folders that still exist, in the order they were first listed."""
    try:
        lines = listing().read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [Path(line) for line in dict.fromkeys(lines) if line.startswith("/") and Path(line).is_dir()]


def remember(root: Path) -> None:
    """Add `root` (a folder of venvs) to the list, dropping folders gone since; silent where it cannot write."""
    path = listing()
    root = root.resolve()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_name(path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            roots = known()
            if root in roots:
                return
            fresh = path.with_name(f"{path.name}.{os.getpid()}.new")
            fresh.write_text("".join(f"{r}\n" for r in [*roots, root]), encoding="utf-8")
            os.replace(fresh, path)
