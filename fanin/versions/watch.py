"""`fanin watch`: a framework released a version newer than its newest cell; bring it into the reference.

Framework releases come weekly. For each framework of the registry, its package registry's (PyPI,
or npm for a Node framework) newest installable final release is compared with the framework's newest cell. `--dry-run` says what would happen
and writes nothing (what a daily job and its tests run against a recorded PyPI answer). Without
it, for each new release: add the cell (the previous newest becomes as-released and is re-locked),
probe both, bless both, bisect every change between adjacent cells of that framework, re-render
the report, and write the pull request's body: the upgrade table from the previous newest to the
new cell (.github/workflows/release-watch.yml opens the pull request; that step alone is YAML).

Every run says how fresh the index it read is (the newest upload it saw), and warns when the
newest cell's own version is yanked or gone from the index. `--json FILE` writes what is due, per
framework, for the workflow: it opens a pull request only when something was due, so a quiet day
is green. A run that adds cells holds a file lock (.fanin/watch.lock): a second one refuses (exit 3)
instead of adding the same cell twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from fanin.model import compare, exits
from fanin.model import matrix as paths
from fanin.model.errors import EnvironmentFault
from fanin.model.matrix import Cell, Framework, Matrix
from fanin.model.source import REPO_ROOT
from fanin.model.staging import write_all
from fanin.report import outputs
from fanin.report.gate_table import changes_table
from fanin.run import all_cells
from fanin.run.identity import load_reference
from fanin.versions import add_cell, bless, pin_changes, pypi, registry

LOCK = REPO_ROOT / ".fanin" / "watch.lock"  # per checkout: the reference it adds cells to is the checkout's


class WatchBusy(EnvironmentFault):
    """Another watch holds the lock: it is adding cells to this checkout's reference right now (could not run)."""


@dataclass(frozen=True)
class Due:
    """A release newer than the framework's newest cell."""

    framework: Framework
    newest: Cell
    release: pypi.Release

    @property
    def line(self) -> str:
        uploaded = self.release.uploaded[:10]
        return (
            f"{self.framework.package} {self.release.version} (uploaded {uploaded}) is newer than the newest cell"
            f" {self.newest.id}"
        )


@dataclass(frozen=True)
class Status:
    """What one framework's registry said, beside its newest cell: what is due, how fresh the index is."""

    framework: Framework
    newest: Cell
    releases: tuple[pypi.Release, ...]  # every release the index lists, pre-releases included, oldest first

    @property
    def index_name(self) -> str:
        return self.framework.runs_on.index

    @property
    def installable(self) -> list[pypi.Release]:
        return [r for r in self.releases if not r.yanked and not r.prerelease]

    @property
    def newer(self) -> list[pypi.Release]:
        """Installable final releases newer than the newest cell, oldest first (the newest is the one added)."""
        return [r for r in self.installable if Version(r.version) > Version(self.newest.version)]

    @property
    def due(self) -> Due | None:
        return Due(self.framework, self.newest, self.newer[-1]) if self.newer else None

    @property
    def newest_cell_on_index(self) -> str:
        """`listed`, `yanked`, or `missing`: the newest cell's own version as the index has it today."""
        for release in self.releases:
            if Version(release.version) == Version(self.newest.version):
                return "yanked" if release.yanked else "listed"
        return "missing"

    @property
    def freshest(self) -> str:
        """The newest upload the index answer holds: how fresh the index read is."""
        return max((r.uploaded for r in self.releases), default="")

    @property
    def warning(self) -> str | None:
        state = self.newest_cell_on_index
        if state == "listed":
            return None
        how = "was yanked on" if state == "yanked" else "is no longer in"
        return (
            f"{self.framework.package} {self.newest.version}, the newest cell's version ({self.newest.id}), {how}"
            f" {self.index_name}'s index; the cell stays in the matrix, decide whether to keep it"
        )

    def to_json(self, matrix: Matrix) -> dict[str, Any]:
        due = self.due
        return {
            "framework": self.framework.key,
            "package": self.framework.package,
            "index": self.index_name,
            "index_newest_upload": self.freshest,
            "newest_cell": self.newest.id,
            "newest_cell_version": self.newest.version,
            "newest_cell_on_index": self.newest_cell_on_index,
            "newest_release": self.installable[-1].version if self.installable else None,
            "due": [r.version for r in self.newer],
            "adds": matrix.cell_id(self.framework, due.release.version) if due else None,
            "warning": self.warning,
        }


def survey(matrix: Matrix, framework: str | None = None) -> list[Status]:
    """Every framework (or the one named) with cells: its registry's answer beside its newest cell."""
    found = []
    for key, fw in matrix.frameworks.items():
        if framework and key != matrix.framework(framework).key:
            continue
        if not matrix.of(key):
            continue
        newest = max((c for c in matrix.of(key) if c.python == matrix.default_python), key=lambda c: Version(c.version))
        found.append(Status(fw, newest, tuple(registry.releases(fw, prereleases=True))))  # PyPI or npm
    return found


def due(matrix: Matrix, framework: str | None = None) -> list[Due]:
    """Every framework (or the one named) whose newest installable final release has no cell yet."""
    return [status.due for status in survey(matrix, framework) if status.due is not None]


def report(statuses: list[Status], matrix: Matrix) -> str:
    """`--json`: whether anything is due (the workflow's condition), and per framework what the index said."""
    data = {"due": any(s.due for s in statuses), "frameworks": [s.to_json(matrix) for s in statuses]}
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


@contextlib.contextmanager
def exclusive(lock: Path | None = None) -> Iterator[None]:
    """One watch that adds cells at a time per checkout; a second is refused at once, never queued behind it."""
    lock = lock or LOCK
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WatchBusy(
                f"another fanin watch is adding cells to this checkout (it holds {lock}); let it finish, then run again"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _bring_in(item: Due) -> str:
    """Add, probe, bless and bisect one new release; the pull request's section for it."""
    locked = add_cell.add([f"{item.framework.package}=={item.release.version}"], paths.load())
    matrix = paths.load()
    cells = [matrix.cell(cell_id) for cell_id in locked]
    results = all_cells.run_cells(cells, matrix, all_cells.Options(accept_new=True))
    broken = [r for r in results if r.code not in (exits.SAME, exits.CHANGED)]
    if broken:
        raise EnvironmentFault(f"{', '.join(r.cell.id for r in broken)} could not run; see reports/logs/")
    bless.bless(matrix, locked)
    pin_changes.run(matrix, item.framework.key)
    matrix = paths.load()
    new = matrix.cell(matrix.cell_id(item.framework, item.release.version))
    before, after = load_reference(item.newest.reference_path, item.newest), load_reference(new.reference_path, new)
    changes = compare.diff(before, after)
    title = f"## {item.framework.package} {item.newest.version} → {item.release.version}"
    if not changes:
        return f"{title}\n\nNo fan-in behaviour changed ({len(after.observations)} observations).\n"
    from fanin.versions.upgrade import proofs_at  # the mitigation beside each row, proven by the new cell or not

    return f"{title}\n\n{changes_table(changes, proofs_at(changes, after))}\n"


def _say(statuses: list[Status], matrix: Matrix, dry_run: bool) -> list[Due]:
    """The run's lines: how fresh each index is, any vanished newest cell, what is due; the due items."""
    fresh = ", ".join(f"{s.framework.package} ({s.index_name}) {s.freshest[:19] or 'no upload'}" for s in statuses)
    print(f"fanin: the indexes read are as fresh as their newest uploads: {fresh}")
    for status in statuses:
        if status.warning:
            print(f"fanin: warning: {status.warning}")
    items = [s.due for s in statuses if s.due is not None]
    if not items:
        print("fanin: every framework's newest cell is its newest release (PyPI, npm)")
    for item in items:
        print(f"fanin: {item.line}")
        if dry_run:
            print(
                f"fanin: would add {matrix.cell_id(item.framework, item.release.version)}, re-lock {item.newest.id}"
                " as released, probe and bless both, bisect, re-render the report and write the pull request's body"
            )
    return items


def run(matrix: Matrix, dry_run: bool, body: Path, framework: str | None = None, json_out: Path | None = None) -> int:
    """Exit 0 with nothing new or after a dry run; otherwise the new cells are in the reference, body written.

    `json_out` (`--json FILE`) gets what is due whether or not anything was: the workflow's condition.
    """
    if dry_run:
        statuses = survey(matrix, framework)
        _say(statuses, matrix, dry_run=True)
        files = {json_out: report(statuses, matrix)} if json_out else {}
        write_all(files)  # the JSON alone: a dry run writes nothing else
    else:
        with exclusive():  # held from the look at the index to the last write: two runs never add one cell twice
            matrix = paths.load()  # read again under the lock: a watch that just finished has added its cells
            statuses = survey(matrix, framework)
            items = _say(statuses, matrix, dry_run=False)
            files = {}
            if items:
                sections = [_bring_in(item) for item in items]
                files, _ = outputs.reference(paths.load())
                files[body] = "# New framework releases in the fanin reference\n\n" + "\n".join(sections)
            if json_out:
                files[json_out] = report(statuses, matrix)
            write_all(files)
    for path in (p for p in (body, json_out) if p in files):
        print(f"fanin: wrote {path}")
    return exits.SAME
