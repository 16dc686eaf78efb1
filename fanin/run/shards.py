"""Spread the matrix over CI runners: balanced shards, and merging what they produced.

`FANIN_SHARD=i/n` (1-based) makes `fanin probe` run the i-th of n shards. Shards are balanced by
each cell's measured time (`run_seconds` in its reference result set; cells never measured count
as the slowest), longest first onto the least-loaded shard (LPT), so the partition is the same on
every runner without any coordination. `fanin merge DIR... --out DIR` gathers the result sets the
shards uploaded, refusing a file that is not what its name says or two different files for one cell.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from fanin.model import markers
from fanin.model.errors import FaninError
from fanin.model.matrix import Cell, Matrix
from fanin.model.results import ResultFileError, load
from fanin.model.source import shown
from fanin.run.identity import check


def parse(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    index, sep, total = text.partition("/")
    try:
        i, n = int(index), int(total)
    except ValueError:
        raise FaninError(f"FANIN_SHARD={text!r} is not i/n, e.g. FANIN_SHARD=2/4") from None
    if not sep or n < 1 or not 1 <= i <= n:
        raise FaninError(f"FANIN_SHARD={text!r}: need 1 <= i <= n, e.g. FANIN_SHARD=2/4")
    return i, n


def seconds(cell: Cell) -> float:
    try:
        return float(json.loads(cell.reference_path.read_text())["environment"].get("run_seconds", float("inf")))
    except (OSError, ValueError, KeyError, TypeError):
        return float("inf")


def partition(cells: list[Cell], n: int) -> list[list[Cell]]:
    """Longest processing time first, each cell onto the least-loaded shard; ties broken by cell id."""
    shards: list[list[Cell]] = [[] for _ in range(n)]
    load_of = [0.0] * n
    for cell in sorted(cells, key=lambda c: (-min(seconds(c), 1e9), c.id)):
        target = min(range(n), key=lambda k: (load_of[k], k))
        shards[target].append(cell)
        load_of[target] += min(seconds(cell), 1e9)
    return shards


def select(cells: list[Cell], spec: str | None = None) -> list[Cell]:
    shard = parse(spec if spec is not None else os.environ.get("FANIN_SHARD"))
    if shard is None:
        return cells
    index, total = shard
    return partition(cells, total)[index - 1]


def merge(sources: list[Path], out: Path, matrix: Matrix) -> list[str]:
    """Every `<cell>.json` under `sources` into `out`, each identity-checked; nothing written on any refusal.

    A shard's `.error` marker travels with its set, so a stale set from a failed shard is never merged as good.
    """
    cells = {cell.id: cell for cell in matrix.cells}
    chosen: dict[str, Path] = {}
    for source in sources:
        if not source.is_dir():
            raise FaninError(f"{shown(source)}: not a directory of result sets")
        for path in sorted(source.rglob("*.json")):
            if path.stem not in cells:
                continue
            try:
                check(load(path, expect_cell=path.stem), cells[path.stem], shown(path))
            except ResultFileError as exc:
                raise FaninError(str(exc)) from None
            if path.stem in chosen and chosen[path.stem].read_bytes() != path.read_bytes():
                raise FaninError(
                    f"two different result sets for {path.stem}: {shown(chosen[path.stem])} and {shown(path)}"
                )
            chosen[path.stem] = path
    if not chosen:
        raise FaninError(f"no result set of a matrix cell under {', '.join(shown(s) for s in sources)}")
    out.mkdir(parents=True, exist_ok=True)
    for cell_id, path in sorted(chosen.items()):
        shutil.copyfile(path, out / f"{cell_id}.json")
        why = markers.reason(path)
        if why is not None:  # the shard's run of this cell did not finish: its set is the stale one, and says so
            markers.record(out / f"{cell_id}.json", why)
        else:
            markers.clear_marker(out / f"{cell_id}.json")
    return sorted(chosen)
