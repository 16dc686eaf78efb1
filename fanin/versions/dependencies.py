"""Which of a framework's own dependencies moved between two result sets: a change may come from one of them.

A behaviour can move with a companion package rather than the framework (LangGraph's DeltaChannel
replay order moved with langgraph-checkpoint, not langgraph). Every result set records every installed
package's version; the framework's own dependencies are its registry companions and what its uv lock
installs `via` the framework itself (a lock the harness wrote, `uv pip compile`'s annotations).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from fanin.model.matrix import Framework
from fanin.model.names import canonicalize_name
from fanin.model.results import ResultSet

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==")
_VIA = re.compile(r"^#\s+(?:via\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*$")


def direct(lock: Path, package: str) -> set[str]:
    """The packages a uv lock installs because the framework asks for them (its direct dependencies)."""
    wanted = canonicalize_name(package)
    found: set[str] = set()
    current = None
    try:
        lines = lock.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return found
    for raw in lines:
        line = raw.strip()
        pin = _PIN.match(line)
        if pin:
            current = canonicalize_name(pin.group(1))
            continue
        via = _VIA.match(line)
        if via and current is not None and canonicalize_name(via.group(1)) == wanted:
            found.add(current)
    return found


def _companion_names(framework: Framework) -> set[str]:
    return {canonicalize_name(re.split(r"[\[<>=!~; ]", c, maxsplit=1)[0]) for c in framework.companions}


def moved(
    framework: Framework, base: ResultSet, target: ResultSet, locks: Iterable[Path]
) -> list[tuple[str, str, str]]:
    """(package, version before, version after) of each of the framework's own dependencies that differ."""
    names = _companion_names(framework)
    for lock in locks:
        names |= direct(lock, framework.package)
    names.discard(canonicalize_name(framework.package))
    before = {canonicalize_name(k): str(v) for k, v in (base.environment.get("packages") or {}).items()}
    after = {canonicalize_name(k): str(v) for k, v in (target.environment.get("packages") or {}).items()}
    return sorted(
        (name, before.get(name, "absent"), after.get(name, "absent"))
        for name in names
        if before.get(name) != after.get(name) and (name in before or name in after)
    )


def said(framework: Framework, moves: list[tuple[str, str, str]]) -> str:
    """The line the gate prints under its table (empty when nothing moved)."""
    if not moves:
        return ""
    listed = ", ".join(f"{name} {a} → {b}" for name, a, b in moves)
    return (
        f"fanin: beside {framework.package}, its own dependencies moved: {listed}; a change above may come from"
        " one of them (a probe's claim names the package a behaviour moves with, where that is known)"
    )
