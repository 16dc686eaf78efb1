"""Write several files all or nothing: stage every one beside its target, then move them into place.

A full disk, a read-only directory or an interrupt while staging leaves every target as it
was (the staged copies are removed). Renames need no space; should one fail anyway, the
targets already replaced are put back from hard-linked backups. Files get the permissions
a plain `open()` would give (0644 under umask 022), not mkstemp's 0600.

With a `journal` (bless passes reference/.fanin-staging.json), the step survives even kill -9
between two moves: the journal is written once every staged copy is complete and on disk, and
removed after the last move, so `recover()` (run by every fanin command before anything else)
finds it and completes the moves; staging files without a journal are reported as strays.
"""

from __future__ import annotations

import json
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


def write_all(files: dict[Path, str], journal: Path | None = None) -> None:
    """Every file in `files` gets its new text, or none does (with a journal: even across a kill)."""
    staged: dict[Path, Path] = {}
    try:
        for path, text in files.items():
            staged[path] = _stage(path, text)
        if journal is not None:
            entries = [{"target": str(path), "staged": str(temporary)} for path, temporary in staged.items()]
            _write_journal(journal, entries)
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
    if journal is not None:
        journal.unlink(missing_ok=True)


def _write_journal(journal: Path, entries: list[dict[str, str]]) -> None:
    fd, name = tempfile.mkstemp(prefix=f"{journal.name}.", suffix=".tmp", dir=journal.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"moves": entries}, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(name, journal)


def recover(journal: Path, directories: tuple[Path, ...] = ()) -> list[str]:
    """Complete a journalled step that a kill cut short; then name staging files in `directories` no step accounts for."""
    said: list[str] = []
    if journal.exists():
        try:
            moves = json.loads(journal.read_text(encoding="utf-8"))["moves"]
        except (OSError, ValueError, KeyError, TypeError):
            moves = None
        if moves is None:
            said.append(f"{journal} is unreadable; left for you to inspect")
        else:
            done = 0
            for move in moves:
                staged, target = Path(move["staged"]), Path(move["target"])
                if staged.exists():  # complete and fsynced before the journal was written: roll forward
                    os.replace(staged, target)
                    done += 1
            journal.unlink(missing_ok=True)
            said.append(f"completed an interrupted write of {len(moves)} file(s) ({done} were left to move)")
            for move in moves:  # the step's own backups (hard links of the old texts) are no longer needed
                target = Path(move["target"])
                for backup in target.parent.glob(f".{target.name}.*.bak"):
                    backup.unlink(missing_ok=True)
    places = []
    for directory in directories:
        strays = (
            sorted(p.name for pattern in (".*.tmp", ".*.bak") for p in directory.glob(pattern) if p.is_file())
            if directory.is_dir()
            else []
        )
        if strays:
            more = f", and {len(strays) - 3} more" if len(strays) > 3 else ""
            places.append(f"{len(strays)} in {directory} ({', '.join(strays[:3])}{more})")
    if places:
        said.append(f"stray staging file(s) from an interrupted write, safe to remove: {'; '.join(places)}")
    return said


def write_atomic(path: Path, text: str) -> None:
    """One file: a reader sees the old text or the new, never half of either."""
    write_all({path: text})
