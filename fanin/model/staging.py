"""Write several files all or nothing: stage every one beside its target, then move them into place.

A full disk, a read-only directory or an interrupt while staging leaves every target as it
was (the staged copies are removed). Renames need no space; should one fail anyway, the
targets already replaced are put back from hard-linked backups. Files get the permissions
a plain `open()` would give (0644 under umask 022), not mkstemp's 0600.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _stage(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    staged = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(staged, 0o666 & ~_umask())
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return staged


def write_all(files: dict[Path, str]) -> None:
    """Every file in `files` gets its new text, or none does."""
    staged: dict[Path, Path] = {}
    try:
        for path, text in files.items():
            staged[path] = _stage(path, text)
    except BaseException:
        for temporary in staged.values():
            temporary.unlink(missing_ok=True)
        raise
    backups: dict[Path, Path | None] = {}
    try:
        for path, temporary in staged.items():
            backup = None
            if path.exists():
                backup = path.with_name(f".{path.name}.{os.getpid()}.bak")
                backup.unlink(missing_ok=True)
                os.link(path, backup)
            backups[path] = backup
            os.replace(temporary, path)
    except BaseException:
        for path, backup in backups.items():
            if backup is not None:
                os.replace(backup, path)
            else:
                path.unlink(missing_ok=True)
        for temporary in staged.values():
            temporary.unlink(missing_ok=True)
        raise
    for backup in backups.values():
        if backup is not None:
            backup.unlink(missing_ok=True)


def write_atomic(path: Path, text: str) -> None:
    """One file: a reader sees the old text or the new, never half of either."""
    write_all({path: text})
