"""`fanin sensitivity`: apply each patch of reference/sensitivity.toml in a copy of its cell's venv (a Node
cell's directory) and run the probes it names; each must change its hazard or label
(fanin.model.sensitivity.verdict).

The cell's own venv is never written: uv hard-links venv files to its cache, so an edit in place
would corrupt every venv sharing that file. The copy is made once per cell with `cp -a` (new
inodes), and a patched file is written beside its target and renamed over it (a new inode again,
checked against the original's); undoing a patch writes the original text back the same way, so one
copy serves every patch of its cell. Only the named probes run (`file::function` targets): first
unpatched (the baseline), then once per patch. Bytecode is neither read from nor written to the copy
for a patched module (its .pyc files are removed; PYTHONDONTWRITEBYTECODE is set). A Node cell is
copied the same way (its directory, node_modules and all) and run by fanin.run.node_cell from the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from fanin.model import catalog, exits
from fanin.model.errors import FaninError
from fanin.model.matrix import REPORTS, Cell, Matrix
from fanin.model.results import Observation, ResultFileError, load
from fanin.model.sensitivity import Move, Patch, PatchError, apply, verdict
from fanin.model.source import REPO_ROOT
from fanin.run import one_cell, runtimes, venvs

WORK = venvs.VENVS.parent / "sensitivity"  # the venv copies, beside the venvs (.fanin/ or the user cache)
RESULTS = REPORTS / "sensitivity"

Observe = Callable[[str, Patch | None, tuple[str, ...]], dict[str, Observation]]


@dataclass(frozen=True)
class Outcome:
    moves: list[Move]
    seconds: float

    @property
    def ok(self) -> bool:
        return bool(self.moves) and all(m.moved for m in self.moves)


def package_root(directory: Path) -> Path:
    """The folder a patch's `file` is relative to: a Node cell's node_modules, or a venv's one site-packages."""
    if (directory / "node_modules").is_dir():
        return directory / "node_modules"
    found = sorted(directory.glob("lib/python*/site-packages"))
    if len(found) != 1:
        raise FaninError(f"{directory}: expected one lib/python*/site-packages, found {len(found)}")
    return found[0]


def copy_venv(source: Path, copy: Path) -> Path:
    """A private copy of a venv with its own inodes (`cp -a`: symlinks kept, hard links to the cache not)."""
    shutil.rmtree(copy, ignore_errors=True)
    copy.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(source), str(copy)], check=True)
    return copy


def _replace(path: Path, text: str, original_inode: int) -> None:
    """Write `text` to a new file and rename it over `path`: the old inode (maybe the cache's) is never written."""
    fresh = path.with_name(path.name + ".fanin-new")
    fresh.write_text(text, encoding="utf-8")
    shutil.copymode(path, fresh)
    os.replace(fresh, path)
    if path.stat().st_ino == original_inode:  # cannot happen with a rename; checked because the cost of it is high
        raise FaninError(f"{path} still shares its inode with the cell's venv; nothing was run")
    for stale in path.parent.glob(f"__pycache__/{path.stem}.*.pyc"):
        stale.unlink()


@contextmanager
def patched(copy: Path, original: Path, patch: Patch) -> Iterator[None]:
    """The patch applied to the copy's file for the block, then the original text back (both by rename)."""
    target, source = package_root(copy) / patch.file, package_root(original) / patch.file
    if not target.is_file():
        raise PatchError(f"{patch.id}: {patch.file} is not installed in {patch.cell}")
    text = source.read_text(encoding="utf-8")
    inode = source.stat().st_ino
    _replace(target, apply(text, patch), inode)
    try:
        yield
    finally:
        _replace(target, text, inode)


def targets(probe_ids: tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, list[str]]]:
    """`file::function` node ids for the probes, and each probe's observation ids (its variants)."""
    declared = {p.id: p for p in catalog.declared()}
    unknown = [p for p in probe_ids if p not in declared]
    if unknown:
        raise FaninError(f"sensitivity.toml names probes that do not exist: {', '.join(unknown)}")
    nodes = tuple(dict.fromkeys(f"{REPO_ROOT / declared[p].file}::{declared[p].function}" for p in probe_ids))
    return nodes, {p: declared[p].observation_ids() for p in probe_ids}


def check(patches: list[Patch], observe: Observe, say: Callable[[str], None] = print, jobs: int = 1) -> list[Move]:
    """Per cell: the baseline of every named probe, then each patch; a verdict per (patch, probe).

    Cells run side by side (`jobs`, one per core by default from the CLI); a cell's patches one after another,
    since they share its venv copy.
    """

    def one_cell(cell: str) -> list[Move]:
        moves: list[Move] = []
        mine = [p for p in patches if p.cell == cell]
        probes = tuple(dict.fromkeys(probe for p in mine for probe in p.probes))
        _, variants = targets(probes)
        baseline = observe(cell, None, probes)
        for patch in mine:
            try:
                seen = observe(cell, patch, patch.probes)
            except PatchError as exc:
                moves += [Move(patch.id, probe, False, str(exc)) for probe in patch.probes]
                say(f"fanin: {patch.id}: does not apply: {exc}")
                continue
            for probe in patch.probes:
                move = verdict(patch.id, probe, variants[probe], baseline, seen)
                moves.append(move)
                say(f"fanin: {patch.id} -> {probe}: {'moved' if move.moved else 'NOT MOVED'}: {move.why}")
        return moves

    cells = list(dict.fromkeys(p.cell for p in patches))
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(cells)))) as pool:
        return [move for moves in pool.map(one_cell, cells) for move in moves]


class CellCopies:
    """One venv copy per cell, made on first use; `observe` runs the named probes in it, patched or not."""

    def __init__(self, matrix: Matrix, work: Path = WORK) -> None:
        self.matrix, self.work = matrix, work
        self.copies: dict[str, tuple[Path, Path]] = {}

    def _copy(self, cell: Cell) -> tuple[Path, Path]:
        if cell.id not in self.copies:
            original = runtimes.of(cell).installed(cell)  # a venv, or a Node cell's npm ci directory
            self.copies[cell.id] = (original, copy_venv(original, self.work / cell.id))
        return self.copies[cell.id]

    def observe(self, cell_id: str, patch: Patch | None, probes: tuple[str, ...]) -> dict[str, Observation]:
        cell = self.matrix.cell(cell_id)
        original, copy = self._copy(cell)
        nodes, _ = targets(probes)
        name = patch.id if patch else "baseline"
        results = RESULTS / cell.id / f"{name}.json"

        def start(log: IO[str]) -> one_cell.CellOutcome:
            return runtimes.of(cell).run_copy(cell, copy, nodes, results, log)

        results.parent.mkdir(parents=True, exist_ok=True)
        with (results.with_suffix(".log")).open("w", encoding="utf-8") as log:
            if patch is None:
                outcome = start(log)
            else:
                with patched(copy, original, patch):
                    outcome = start(log)
        if outcome.code not in (exits.SAME, exits.CHANGED):
            raise FaninError(f"{cell.id} ({name}) did not run: {outcome.reason}")
        try:
            return load(results, expect_cell=cell.id).observations
        except ResultFileError as exc:
            raise FaninError(f"{cell.id} ({name}): {exc}") from None

    def close(self) -> None:
        for _, copy in self.copies.values():
            shutil.rmtree(copy, ignore_errors=True)


def run(patches: list[Patch], matrix: Matrix, jobs: int = 1) -> Outcome:
    """Every patch against its probes, `jobs` cells at a time, in venv copies removed afterwards."""
    started = time.monotonic()
    copies = CellCopies(matrix)
    venvs.uv_binary()  # found once, in this thread, before any cell thread needs it
    try:
        with one_cell.signals_end_children():
            moves = check(patches, copies.observe, jobs=jobs)
    finally:
        copies.close()
    return Outcome(moves, time.monotonic() - started)
