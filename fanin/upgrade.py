"""Plan an upgrade check: which cell to build for `framework==version`, and which reference to diff it with."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from fanin import pypi
from fanin.errors import FaninError
from fanin.matrix import Cell, Matrix

_SPEC = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*(?P<version>[^\s=]+)\s*$")


@dataclass(frozen=True)
class UpgradePlan:
    cell: Cell
    baseline: Cell


def parse_spec(args: list[str]) -> tuple[str, str]:
    if len(args) != 1:
        raise FaninError(
            f"upgrade takes one argument FRAMEWORK==VERSION (or FRAMEWORK==latest), got {len(args)}: "
            "e.g. nox -s upgrade -- langgraph==1.2.20"
        )
    match = _SPEC.match(args[0])
    if not match:
        raise FaninError(f"malformed spec {args[0]!r}: expected FRAMEWORK==VERSION or FRAMEWORK==latest")
    return match["name"], match["version"]


def plan(args: list[str], matrix: Matrix, today: _dt.date | None = None) -> UpgradePlan:
    """Validate against PyPI before anything is installed; the cell resolves as of today."""
    name, wanted = parse_spec(args)
    framework = matrix.framework(name)
    baseline = matrix.newest(framework.key)
    release = pypi.resolve(framework.package, wanted)
    stamp = (today or _dt.datetime.now(_dt.timezone.utc).date()).isoformat() + "T23:59:59Z"
    cell = matrix.make_cell(framework, release.version, matrix.default_python, "current", stamp)
    if not baseline.reference_path.exists():
        raise FaninError(f"no reference result set for {baseline.id} to compare with; run and bless it first")
    return UpgradePlan(cell=cell, baseline=baseline)
