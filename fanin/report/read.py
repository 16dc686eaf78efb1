"""What a report is built from: the result sets in a directory, bisect.json and the reference's TOML files, each read once.

One unreadable result file never hides the other cells: it shows as "not run" with the reason.
"""

from __future__ import annotations

import functools
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from fanin.model import js_source, markers
from fanin.model.errors import FaninError
from fanin.model.matrix import BISECT_FINDINGS, REFERENCE, Matrix
from fanin.model.results import (
    ProbeInfo,
    ResultFileError,
    ResultSet,
    load,
)
from fanin.model.source import REPO_ROOT, parse_file, probe_source_hash, shown
from fanin.report.legend import UNREADABLE


def load_dir(
    source: Path, matrix: Matrix, replace: dict[str, ResultSet] | None = None
) -> tuple[list[ResultSet], dict[str, str]]:
    """Result sets in matrix order, and a reason for every matrix cell that has none.

    A cell whose last run failed (a `<cell>.error` marker beside its result set) is shown as
    not run, with the marker's reason: its previous result set is kept on disk but is stale.
    `replace` puts result sets in place of files (bless renders what the reference is about to be).
    """
    order = {cell.id: index for index, cell in enumerate(sorted(matrix.cells, key=lambda c: c.sort_key))}
    replace = replace or {}
    names = {p.stem for p in source.glob("*.json")} | set(replace)
    sets: list[ResultSet] = []
    missing: dict[str, str] = {}
    for name in sorted(names, key=lambda n: (order.get(n, len(order)), n)):
        path = source / f"{name}.json"
        marker = None if name in replace else markers.reason(path)
        if marker is not None:
            missing[name] = marker
            continue
        try:
            sets.append(replace[name] if name in replace else load(path, expect_cell=name))
        except ResultFileError as exc:
            missing[name] = UNREADABLE
            sys.stderr.write(f"fanin: error: {exc}\n")
    seen = {rs.cell for rs in sets}
    for cell in matrix.cells:
        if cell.id not in seen and cell.id not in missing:
            missing[cell.id] = markers.reason(source / f"{cell.id}.json") or "no result set"
    return sets, missing


def bisect_findings(path: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """reference/bisect.json as data: per observation id, the releases `bisect` pinned."""
    path = path or REFERENCE / BISECT_FINDINGS.name  # beside the other data (tests point REFERENCE elsewhere)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FaninError(f"{shown(path)}: cannot be read as bisect findings ({exc})") from None
    if not isinstance(data, dict):
        raise FaninError(f"{shown(path)}: expected an object of observation ids")
    return data


def read_toml(name: str) -> dict[str, Any]:
    path = REFERENCE / name  # comparison.toml, checklist.toml, mitigations.toml
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise FaninError(f"{shown(path)}: not valid TOML ({exc})") from None


def probe_reproducer(info: ProbeInfo) -> tuple[str | None, bool, tuple[int, int] | None]:
    """The probe's code as it is in suites/ now, whether it is the code that was observed, and its lines."""
    path = REPO_ROOT / info.file
    if not info.file or not path.is_file():
        return None, False, None
    stat = path.stat()
    return reproducer_of(path, info.function, info.source_hash, (stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=4096)
def reproducer_of(
    path: Path, function: str, observed_hash: str, stamp: tuple[int, int]
) -> tuple[str | None, bool, tuple[int, int] | None]:
    """Once per function and file version: hashing follows the probe's dependencies through the kits."""
    try:
        if path.name.endswith(js_source.SUFFIX):  # a Node probe (fanin.model.js_source)
            js = js_source.parse_file(path)
            return (
                js.function(function),
                js_source.probe_source_hash(path, function) == observed_hash,
                js.spans[function],
            )
        parsed = parse_file(path)
        code = parsed.function(function)
        return code, probe_source_hash(path, function) == observed_hash, parsed.spans[function]
    except LookupError:
        return None, False, None


def commit_of(rs: ResultSet) -> str:
    commit = str(rs.environment.get("suite_commit") or "").split("+", 1)[0].strip()
    return commit[:12]


def python_of(rs: ResultSet, matrix: Matrix) -> str:
    """The cell's Python: from the matrix, the cell id's `-pyX.Y`, or the recorded interpreter."""
    for cell in matrix.cells:
        if cell.id == rs.cell:
            return cell.python
    if "-py" in rs.cell:
        return rs.cell.rsplit("-py", 1)[1]
    return ".".join(str(rs.environment.get("python", "")).split(".")[:2])


def version_key(version: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)
