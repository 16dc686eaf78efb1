"""probe --here: which registered companions (checkpointer and session-store packages) a probe needed but this environment lacks.

A finder at the end of `sys.meta_path` sees every import that failed; a failed module belongs to a
companion by its dotted name, so an uninstalled companion is known without its files. The journal
keeps what was found across a resume.
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from fanin.model.names import canonicalize_name

NOT_INSTALLED = "not-installed"  # the journal event that keeps `Recorder.not_installed` across a resume


def canonical_name(requirement: str) -> str:
    """A distribution's name as PyPI compares them (PEP 503), from a requirement such as `psycopg[binary]`."""
    match = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    return canonicalize_name(match.group(0) if match else requirement)


class FailedImports:
    """A finder at the end of `sys.meta_path`: it is asked only for modules no other finder found,
    so it sees every failed import (and `importlib.util.find_spec` that found nothing), and finds nothing."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        self.names.append(fullname)
        return None


def missing(modules: list[str], companions: dict[str, str]) -> list[str]:
    """The companions (not installed here) that these failed imports belong to.

    A module belongs to a companion when a dotted prefix of it, joined by dashes, is the companion's
    name (`langgraph.checkpoint.postgres.aio` -> langgraph-checkpoint-postgres, `psycopg` -> psycopg):
    how each registered companion names its modules, so an uninstalled one is known without its files.
    """
    found = set()
    for module in set(modules):
        parts = module.split(".")
        for end in range(len(parts), 0, -1):
            name = canonical_name("-".join(parts[:end]))
            if name in companions and not installed(name):
                found.add(companions[name])
    return sorted(found)


def installed(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def resumed_not_installed(journal: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    if not journal.exists():
        return found
    for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("event") == NOT_INSTALLED:
            found[entry["id"]] = list(entry["companions"])
    return found
