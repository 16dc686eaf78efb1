"""The folders of installs (cell venvs, Node cells' directories) this user has made, so a new clone reuses them.

uv hard-links every installed file to its cache, so the venvs of two clones of this repository (or a clone and an
installed fanin) hold the very same inodes for a package at one version, and a `.pyc` compiled in one is valid in
the other (fanin/run/bytecode.py): compiling is most of a venv's build (crewai-1.15.30: 6.7 s alone, 0.9 s with a
donor). A Node cell's node_modules is exactly its lock, so another clone's directory with the same lock and Node
is hard-linked rather than `npm ci`'d again (fanin/run/node_cell.py). A fresh clone builds every cell: it looks for
donors in every folder listed here, not only its own.

Each listing is a text file in the user's cache (one absolute path a line), written under a file lock; folders
that no longer exist are dropped when it is written. Only the default folders are listed (a clone's
`.fanin/venvs` and `.fanin/node`, an installed fanin's cache), never one a caller chose (a test's, the sensitivity
check's copies). Whatever is taken from a donor is checked as a build of its own would be (uv recompiles a `.pyc`
whose header does not match; a linked node_modules is compared with the lock): nothing a clone builds depends on
another's being right. A cache that cannot be written (read-only HOME) only loses the reuse.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from fanin.model.source import user_cache

VENVS = "venv-roots.txt"
NODE = "node-roots.txt"
_OVERRIDE = {VENVS: "FANIN_VENV_ROOTS", NODE: "FANIN_NODE_ROOTS"}  # tests point them elsewhere


def listing(kind: str) -> Path:
    return Path(os.environ.get(_OVERRIDE[kind], user_cache() / kind))


def known(kind: str) -> list[Path]:
    """The listed folders that still exist, in the order they were first listed."""
    try:
        lines = listing(kind).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [Path(line) for line in dict.fromkeys(lines) if line.startswith("/") and Path(line).is_dir()]


def remember(root: Path, kind: str) -> None:
    """Add `root` to the listing, dropping folders gone since; silent where it cannot write."""
    path = listing(kind)
    root = root.resolve()
    if root in known(kind):  # every use of a listed folder: a read, no lock, no write
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_name(path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            roots = known(kind)
            if root in roots:
                return
            fresh = path.with_name(f"{path.name}.{os.getpid()}.new")
            fresh.write_text("".join(f"{r}\n" for r in [*roots, root]), encoding="utf-8")
            os.replace(fresh, path)
