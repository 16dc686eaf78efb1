"""Assemble a report from a directory of result sets: readable ones rendered, broken ones named.

One unreadable file never hides the other cells; it shows as "not run" with the reason.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fanin.matrix import Matrix
from fanin.model import ResultFileError, ResultSet, load
from fanin.render import markdown
from fanin.source import shown


def load_dir(source: Path, matrix: Matrix) -> tuple[list[ResultSet], dict[str, str]]:
    """Result sets in matrix order, and a reason for every matrix cell that has none."""
    order = {cell.id: index for index, cell in enumerate(sorted(matrix.cells, key=lambda c: c.sort_key))}
    paths = sorted(source.glob("*.json"), key=lambda p: (order.get(p.stem, len(order)), p.stem))
    sets: list[ResultSet] = []
    missing: dict[str, str] = {}
    for path in paths:
        try:
            sets.append(load(path, expect_cell=path.stem))
        except ResultFileError as exc:
            missing[path.stem] = "unreadable result set"
            sys.stderr.write(f"fanin: skipped {exc}\n")
    seen = {rs.cell for rs in sets}
    for cell in matrix.cells:
        if cell.id not in seen and cell.id not in missing:
            missing[cell.id] = "no result set"
    return sets, missing


def render(source: Path, matrix: Matrix, reference: bool) -> tuple[str, int]:
    """The Markdown text, and how many files could not be read."""
    title = "fanin reference report" if reference else "fanin matrix (local run)"
    sets, missing = load_dir(source, matrix)
    text = f"# {title}\n\nRendered from `{shown(source)}` by `python -m fanin report`.\n\n" + markdown.matrix(sets, missing)
    return text, sum(reason == "unreadable result set" for reason in missing.values())
