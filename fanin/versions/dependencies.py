"""Which of a framework's own dependencies moved between two result sets: a change may come from one of them.

A behaviour can move with a companion package rather than the framework (LangGraph's DeltaChannel
replay order moved with langgraph-checkpoint, not langgraph). Every result set records every installed
package's version; the framework's own dependencies are its registry companions, its storage companions, and
what its uv lock installs `via` the framework itself (a lock the harness wrote, `uv pip compile`'s annotations),
or, for a Node framework, what its package-lock.json entry depends on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from packaging.version import Version

from fanin.model.matrix import Framework
from fanin.model.names import canonicalize_name
from fanin.model.results import ResultSet

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==")
_VIA = re.compile(r"^#\s+(?:via\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*$")


def _npm_direct(lock: Path, package: str) -> set[str]:
    """A package-lock.json's entry of the framework: what it depends on itself (peers included)."""
    try:
        entry = json.loads(lock.read_text(encoding="utf-8")).get("packages", {}).get(f"node_modules/{package}", {})
    except (OSError, UnicodeDecodeError, ValueError):
        return set()
    names = {*entry.get("dependencies", {}), *entry.get("peerDependencies", {})}
    return {canonicalize_name(name) for name in names}


def direct(lock: Path, package: str) -> set[str]:
    """The packages a lock installs because the framework asks for them (its direct dependencies): uv's `via`
    annotations, or a Node cell's package-lock.json entry of the framework."""
    if lock.name == "package-lock.json":
        return _npm_direct(lock, package)
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
    """Its registry companions and storage companions (a saver's move can move a live-thread probe's observation)."""
    names = {canonicalize_name(re.split(r"[\[<>=!~; ]", c, maxsplit=1)[0]) for c in framework.companions}
    return names | {canonicalize_name(name) for name in framework.storage}


def own_names(framework: Framework, locks: Iterable[Path]) -> set[str]:
    """The framework's own dependencies: its registry companions and what these locks install via it."""
    names = _companion_names(framework)
    for lock in locks:
        names |= direct(lock, framework.package)
    names.discard(canonicalize_name(framework.package))
    return names


def versions(result_set: ResultSet) -> dict[str, str]:
    return {canonicalize_name(k): str(v) for k, v in (result_set.environment.get("packages") or {}).items()}


def own(framework: Framework, result_set: ResultSet, locks: Iterable[Path]) -> dict[str, str]:
    """The versions a run installed of the framework's own dependencies (what bisect records beside each step)."""
    installed = versions(result_set)
    return {name: installed[name] for name in sorted(own_names(framework, locks)) if name in installed}


def moved(
    framework: Framework, base: ResultSet, target: ResultSet, locks: Iterable[Path]
) -> list[tuple[str, str, str]]:
    """(package, version before, version after) of each of the framework's own dependencies that differ."""
    names = own_names(framework, locks)
    before, after = versions(base), versions(target)
    return sorted(
        (name, before.get(name, "absent"), after.get(name, "absent"))
        for name in names
        if before.get(name) != after.get(name) and (name in before or name in after)
    )


def said(framework: Framework, moves: list[tuple[str, str, str]], held: str | None = None) -> str:
    """The line the gate prints under its table (empty when nothing moved and the framework did).

    `held` is the framework's version when both sides have the same one: then the change did not come with the
    framework, and what moved beside it is named as the cause."""
    listed = ", ".join(f"{name} {a} → {b}" for name, a, b in moves)
    if held is not None:
        if not moves:
            return (
                f"fanin: {framework.package} is {held} on both sides and none of its own dependencies moved:"
                " the changes above come from another package or the Python"
            )
        which = "it" if len(moves) == 1 else "one of them"
        return (
            f"fanin: {framework.package} is {held} on both sides: the changes above came with what moved beside it,"
            f" not with {framework.package}: {listed} (with {which}, or with another package)"
        )
    if not moves:
        return ""
    return (
        f"fanin: beside {framework.package}, its own dependencies moved: {listed}; a change above may come from"
        " one of them (a probe's claim names the package a behaviour moves with, where that is known)"
    )


def bisected(
    framework: Framework,
    base: ResultSet,
    target: ResultSet,
    changed: Iterable[str],
    findings: Mapping[str, list[dict[str, Any]]],
) -> list[str]:
    """One line per companion release a companion bisect pinned a changed observation to, where the two sides'
    versions of that companion lie either side of it: the change is named as coming with that release."""
    before, after = versions(base), versions(target)
    named: dict[tuple[str, str], dict[str, list[str]]] = {}  # (companion, release) -> the framework's held versions
    for oid in changed:
        for entry in findings.get(oid, []):
            package, first = entry.get("companion"), entry.get("first_changed")
            if not package or not first or package not in before or package not in after:
                continue
            a, b, f = Version(before[package]), Version(after[package]), Version(first)
            if a < f <= b or b < f <= a:
                named.setdefault((package, first), {}).setdefault(oid, []).append(str(entry.get("at", "?")))
    lines = []
    for (package, first), oids in sorted(named.items()):
        held = ", ".join(sorted({at for ats in oids.values() for at in ats}, key=Version))
        lines.append(
            f"fanin: changed with {package} {first} (bisected, {framework.package} held at {held}): {', '.join(oids)};"
            f" {package} is {before[package]} → {after[package]} here"
        )
    return lines


def explained(
    framework: Framework,
    base: ResultSet,
    target: ResultSet,
    locks: Iterable[Path],
    changed: Iterable[str],
    findings: Mapping[str, list[dict[str, Any]]],
) -> list[str]:
    """What upgrade and probe --here print under their table about packages beside the framework."""
    changed = list(changed)
    held = base.version if changed and base.version == target.version else None
    lines = bisected(framework, base, target, changed, findings)
    line = said(framework, moved(framework, base, target, locks), held)
    return [*lines, line] if line else lines
