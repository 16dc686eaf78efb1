"""A venv's bytecode: linked from sibling venvs where their source is the very same file, the rest compiled.

uv hard-links a venv's files to its cache, so a package at the same version in two venvs is the
same inode in both, and a `.pyc` compiled for it in one venv is valid in the other: a timestamp
`.pyc` is checked against its source's modification time (the same inode has the same), and the
code's file name is set from where it is loaded, not from where it was compiled. Compiling every
file again in every venv (`uv pip sync --compile-bytecode` compiles with `force=True`) is most of
the time a cell's venv takes to build (adk-2.13.0: 0.4 s to install, 5.4 s to compile).

So a new venv takes the `.pyc` of each source file that a sibling venv on the same Python (same
full version, so the same magic number) holds for the same inode, as a hard link (Python replaces a
`.pyc` atomically, never writes into one, so a shared link stays intact), and then compiles what is
left in parallel, skipping every `.pyc` whose header already matches its source (as `compileall`
does without `force`), so a stale link is recompiled rather than trusted. Compile errors are
ignored as uv and pip ignore them (vendored Python 2 code).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

# Run by the venv's own interpreter: compile each path given on stdin unless its .pyc is current.
_COMPILE = (
    "import compileall, sys, warnings\n"
    "warnings.filterwarnings('ignore')\n"
    "for line in sys.stdin:\n"
    "    path = line.strip()\n"
    "    if path:\n"
    "        compileall.compile_file(path, force=False, quiet=2)\n"
)


def _tag(python_version: str) -> str:
    major, minor = python_version.split(".")[:2]
    return f"cpython-{major}{minor}"


def sources(site: Path) -> list[Path]:
    """Every `.py` under site-packages, as uv's `--compile-bytecode` would compile them."""
    return [Path(root) / name for root, _, files in os.walk(site) for name in files if name.endswith(".py")]


def cached(source: Path, tag: str) -> Path:
    return source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"


def link_from(site: Path, donors: list[Path], tag: str) -> int:
    """Hard-link into `site` each `.pyc` a donor site-packages holds for the same source inode; how many."""
    linked = 0
    found = [donor for donor in donors if donor.is_dir()]
    if not found:
        return 0
    for source in sources(site):
        relative = source.relative_to(site)
        target = cached(source, tag)
        if target.exists():
            continue
        try:
            mine = source.stat()
        except OSError:
            continue
        for donor in found:
            theirs = donor / relative
            try:
                other = theirs.stat()
            except OSError:
                continue
            if (other.st_ino, other.st_dev) != (mine.st_ino, mine.st_dev):
                continue
            pyc = cached(theirs, tag)
            if not pyc.is_file():
                continue
            try:
                target.parent.mkdir(exist_ok=True)
                os.link(pyc, target)
                linked += 1
                break
            except OSError:
                continue
    return linked


def compile_rest(python: Path, site: Path, jobs: int | None = None) -> None:
    """Compile, in `jobs` processes of the venv's interpreter, every source whose `.pyc` is missing or stale.

    The sources are dealt out by size (largest first, to the least loaded process), and each process is fed
    from its own thread: a pipe holds 64 KiB, so writing one process's whole list first would leave the
    others waiting for theirs.
    """
    sized = []
    for source in sources(site):
        try:
            sized.append((source.stat().st_size, str(source)))
        except OSError:
            continue
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(sized) // 50 or 1))
    shares: list[list[str]] = [[] for _ in range(jobs)]
    loads = [0] * jobs
    for size, path in sorted(sized, reverse=True):
        least = loads.index(min(loads))
        shares[least].append(path)
        loads[least] += size
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def one(share: list[str]) -> None:
        subprocess.run(
            [str(python), "-c", _COMPILE],
            input="\n".join(share) + "\n",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            check=False,
        )

    threads = [threading.Thread(target=one, args=(share,)) for share in shares]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def donor_sites(roots: list[Path], name: str, python_version: str, full_version: str) -> list[Path]:
    """site-packages of the other finished venvs under `roots` built on exactly this Python."""
    found = []
    for root in roots:
        if not root.is_dir():
            continue
        for venv in sorted(root.iterdir()):
            if venv.name == name:
                continue
            try:
                stamp = json.loads((venv / ".fanin-stamp.json").read_text())
            except (OSError, ValueError):
                continue
            if stamp.get("python") == full_version:
                found.append(venv / "lib" / f"python{python_version}" / "site-packages")
    return found


def build(python: Path, site: Path, donors: list[Path], full_version: str) -> int:
    """Link what the donors have compiled, compile the rest: every source gets a current `.pyc`."""
    linked = link_from(site, donors, _tag(full_version))
    compile_rest(python, site)
    return linked
