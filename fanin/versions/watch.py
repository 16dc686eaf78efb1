"""`fanin watch`: a framework released a version newer than its newest cell; bring it into the reference.

Framework releases come weekly. For each framework of the registry, its package registry's (PyPI,
or npm for a Node framework) newest installable final release is compared with the framework's newest cell. `--dry-run` says what would happen
and writes nothing (what a daily job and its tests run against a recorded PyPI answer). Without
it, for each new release: add the cell (the previous newest becomes as-released and is re-locked),
probe both, bless both, bisect every change between adjacent cells of that framework, re-render
the report, and write the pull request's body: the upgrade table from the previous newest to the
new cell (.github/workflows/release-watch.yml opens the pull request; that step alone is YAML).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from fanin.model import compare, exits
from fanin.model import matrix as paths
from fanin.model.errors import EnvironmentFault
from fanin.model.matrix import Cell, Framework, Matrix
from fanin.model.staging import write_all
from fanin.report import outputs
from fanin.report.gate_table import changes_table
from fanin.run import all_cells
from fanin.run.identity import load_reference
from fanin.versions import add_cell, bless, pin_changes, pypi, registry


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


def due(matrix: Matrix, framework: str | None = None) -> list[Due]:
    """Every framework (or the one named) whose newest installable final release has no cell yet."""
    found = []
    for key, fw in matrix.frameworks.items():
        if framework and key != matrix.framework(framework).key:
            continue
        if not matrix.of(key):
            continue
        newest = max((c for c in matrix.of(key) if c.python == matrix.default_python), key=lambda c: Version(c.version))
        installable = [r for r in registry.releases(fw) if not r.yanked and not r.prerelease]  # PyPI or npm
        if installable and Version(installable[-1].version) > Version(newest.version):
            found.append(Due(fw, newest, installable[-1]))
    return found


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
    return f"{title}\n\n{changes_table(changes)}\n"


def run(matrix: Matrix, dry_run: bool, body: Path, framework: str | None = None) -> int:
    """Exit 0 with nothing new or after a dry run; otherwise the new cells are in the reference, body written."""
    items = due(matrix, framework)
    if not items:
        print("fanin: every framework's newest cell is its newest release (PyPI, npm)")
        return exits.SAME
    for item in items:
        print(f"fanin: {item.line}")
    if dry_run:
        for item in items:
            print(
                f"fanin: would add {matrix.cell_id(item.framework, item.release.version)}, re-lock {item.newest.id}"
                " as released, probe and bless both, bisect, re-render the report and write the pull request's body"
            )
        return exits.SAME
    sections = [_bring_in(item) for item in items]
    files, _ = outputs.reference(paths.load())
    files[body] = "# New framework releases in the fanin reference\n\n" + "\n".join(sections)
    write_all(files)
    print(f"fanin: wrote {body}")
    return exits.SAME
