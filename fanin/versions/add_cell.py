"""Add a version to the matrix with one command: the cell, its as-released date, its lock.

`fanin add-cell langgraph==1.2.25` asks PyPI when the release was uploaded, writes the
`[[cell]]` block (exclude_newer = upload + 1 day) after the framework's other cells, and
locks it. A version newer than the framework's newest becomes the `current` cell and the
previous newest is moved to `as-released` with its own date and a new lock. matrix.toml
is edited with tomlkit, so its comments and layout stay; the matrix and every lock are
written in one staged step, or not at all. Then: probe the cell, review, bless.
"""

from __future__ import annotations

import datetime as _dt

import tomlkit
from packaging.version import Version

from fanin.model.errors import FaninError
from fanin.model.matrix import MATRIX_FILE, Matrix, parse
from fanin.model.source import shown
from fanin.model.staging import write_all
from fanin.versions import locking, registry
from fanin.versions.upgrade import parse_spec


def add(args: list[str], matrix: Matrix, python: str | None = None, today: _dt.date | None = None) -> list[str]:
    """Write the new cell (and re-date the previous newest), lock what changed; returns the ids locked."""
    name, wanted = parse_spec(args)
    framework = matrix.framework(name)
    release = registry.resolve(framework, wanted)  # PyPI, or npm for a Node framework
    python = python or matrix.default_python
    new = matrix.make_cell(framework, release.version, python, "as-released", release.as_released)
    if any(cell.id == new.id for cell in matrix.cells):
        raise FaninError(f"{new.id} is already in the matrix")
    document = tomlkit.parse(MATRIX_FILE.read_text(encoding="utf-8"))
    cells = document["cell"]
    if not matrix.of(framework.key):  # a framework's first cell is its newest: current, as of today
        newest = new
        becomes_newest = True
    else:
        newest = matrix.newest(framework.key)
        becomes_newest = Version(release.version) > Version(newest.version)
    stamp = (today or _dt.datetime.now(_dt.UTC).date()).isoformat() + "T00:00:00Z"
    twin_of_newest = newest is not new and Version(release.version) == Version(newest.version)
    if twin_of_newest:
        stamp = newest.exclude_newer  # resolved as of the same moment as its twin, so only the Python differs
    table = tomlkit.table()
    table["framework"] = framework.key
    table["version"] = release.version
    if python != matrix.default_python:
        table["python"] = python
    current = becomes_newest or twin_of_newest
    table["resolution"] = "current" if current else "as-released"
    table["exclude_newer"] = stamp if current else release.as_released
    if not current:
        table["exclude_newer"].comment(f"released {release.uploaded[:16].replace('T', ' ')} UTC")
    demoted = []
    if becomes_newest and newest is not new:
        previous = registry.resolve(framework, newest.version)
        for raw in cells:
            if raw["framework"] == framework.key and raw["version"] == newest.version:
                raw["resolution"] = "as-released"
                raw["exclude_newer"] = previous.as_released
                raw["exclude_newer"].comment(f"released {previous.uploaded[:16].replace('T', ' ')} UTC")
                demoted.append(raw)
    position = _position(cells, framework.key, Version(release.version))
    if position > 0:  # what follows the cell before it in the file (a blank line, the next section's comments)
        _hand_on_trailing(cells[position - 1], table)
    cells.insert(position, table)
    text = tomlkit.dumps(document)
    updated = parse(tomlkit.parse(text).unwrap(), origin=shown(MATRIX_FILE))  # the result must validate
    to_lock = [
        c
        for c in updated.cells
        if c.id == new.id or (becomes_newest and c.framework == framework and c.version == newest.version)
    ]
    files = {MATRIX_FILE: text}
    for cell in to_lock:
        files.update(locking.resolve_files(cell, updated))
    write_all(files)
    return [cell.id for cell in to_lock]


def _position(cells: tomlkit.items.AoT, framework: str, version: Version) -> int:
    """Where the new cell goes: before its framework's first cell of a higher version, else after its framework's
    last cell (a framework's first cell goes at the end of the file)."""
    own = [i for i, raw in enumerate(cells) if raw["framework"] == framework]
    higher = [i for i in own if Version(str(cells[i]["version"])) > version]
    if higher:
        return higher[0]
    return own[-1] + 1 if own else len(cells)


def _hand_on_trailing(before: tomlkit.items.Table, new: tomlkit.items.Table) -> None:
    """tomlkit keeps the blank line and comments after a table's last key (the next framework's header) in that
    table: the new cell takes them over, so it lands right after `before`, not under the next section's heading."""
    body = before.value.body
    trailing: list[tomlkit.items.Comment | tomlkit.items.Whitespace] = []
    while body and body[-1][0] is None:
        item = body[-1][1]
        if not isinstance(item, tomlkit.items.Comment | tomlkit.items.Whitespace):
            break
        body.pop()
        trailing.insert(0, item)
    for item in trailing:
        new.add(item)
    before.add(tomlkit.nl())
