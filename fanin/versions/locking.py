"""Locks: a cell's full dependency resolution with hashes, made once with uv, installed forever after.

The lock is resolved for every platform (`--universal`) at the cell's Python, as of
the cell's `exclude_newer` moment, so installing it next year, or on a laptop,
gives the packages the reference was made with.
"""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
import tempfile
from pathlib import Path

from fanin.model import matrix as paths
from fanin.model.errors import EnvironmentFault, FaninError
from fanin.model.matrix import Cell, Matrix
from fanin.model.staging import write_all
from fanin.run.uv_said import said
from fanin.run.venvs import uv_binary


class LockError(EnvironmentFault):
    """uv could not resolve a cell; the message carries uv's last lines."""


def requirements(cell: Cell, matrix: Matrix) -> str:
    pinned = [pin.requirement for pin in cell.pins]
    return "\n".join([cell.requirement, *pinned, *cell.framework.companions, *matrix.harness_requirements]) + "\n"


def compile_command(cell: Cell, output: Path, uv: str = "uv") -> list[str]:
    return [
        uv,
        "pip",
        "compile",
        "-",
        "--quiet",
        "--universal",
        "--generate-hashes",
        "--python-version",
        cell.python,
        "--exclude-newer",
        cell.exclude_newer,
        # A pinned companion newer than the cell's moment is let in alone; everything else stays as of the cell.
        *(arg for pin in cell.pins for arg in ("--exclude-newer-package", f"{pin.package}={pin.exclude_newer}")),
        "--index-url",
        "https://pypi.org/simple",
        "--custom-compile-command",
        f"nox -s lock -- {cell.id}",
        "--output-file",
        str(output),
    ]


def check_moment(cell: Cell, now: _dt.datetime | None = None) -> None:
    """A lock says what was installable at its moment: a moment in the future would move as time passes.

    As-released moments are an upload plus one day, so up to a day ahead is allowed. A moment ahead of a
    clock that is itself behind (a reference result set is dated later than the clock's today) is the
    clock's fault, not matrix.toml's: said so, with both, as could-not-run.
    """
    clock = now or _dt.datetime.now(_dt.UTC)
    moment = _dt.datetime.fromisoformat(cell.exclude_newer.replace("Z", "+00:00"))
    if moment <= clock + _dt.timedelta(days=1):
        return
    said = clock.strftime("%Y-%m-%dT%H:%M:%SZ")
    recorded = latest_record()
    if recorded is not None and recorded[0] > clock.date().isoformat():
        raise EnvironmentFault(
            f"this machine's clock says {said}, before {cell.id}'s lock moment (exclude_newer {cell.exclude_newer}) "
            f"and before {recorded[1]} was recorded ({recorded[0]}): the clock looks behind; set it right and run again"
        )
    raise FaninError(
        f"{cell.id}: exclude_newer {cell.exclude_newer} is in the future (this machine's clock says {said}); "
        "a lock is resolved as of a moment that has passed (fix it in reference/matrix.toml)"
    )


def latest_record(directory: Path | None = None) -> tuple[str, str] | None:
    """The newest day a reference result set was recorded on, and its file's name: a clock must be past it."""
    newest: tuple[str, str] | None = None
    for path in sorted((directory or paths.REFERENCE_RESULTS).glob("*.json")):
        try:
            day = json.loads(path.read_text(encoding="utf-8"))["environment"]["date"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(day, str) and (newest is None or day > newest[0]):
            newest = (day, path.name)
    return newest


def resolve(cell: Cell, matrix: Matrix, uv: str | None = None) -> str:
    """The cell's lock text, resolved by uv as of the cell's `exclude_newer` (nothing is written)."""
    check_moment(cell)
    with tempfile.TemporaryDirectory(prefix="fanin-lock-") as tmp:
        output = Path(tmp) / f"{cell.id}.txt"
        done = subprocess.run(
            compile_command(cell, output, uv or uv_binary()),
            input=requirements(cell, matrix),
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise LockError(f"cannot lock {cell.id}: {said(done.stderr)}")
        return output.read_text(encoding="utf-8")


def lock(cell: Cell, matrix: Matrix, output: Path) -> None:
    """Resolve, then write atomically: a failed resolution leaves the old lock intact (every file, or none).

    `output` is where the lock's main file goes (uv's file; a Node cell's package-lock.json, package.json beside it).
    """
    from fanin.versions import registry  # the cell's runtime resolves it: uv here, npm for a Node cell

    write_all(registry.lock_files(cell, matrix, output))


def resolve_files(cell: Cell, matrix: Matrix) -> dict[Path, str]:
    """Every file of the cell's lock, by path: one uv lock, or a Node cell's package.json and package-lock.json."""
    from fanin.versions import registry

    return registry.lock_files(cell, matrix)
