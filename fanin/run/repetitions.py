"""The stability pass: a cell's repetition probes run N times, and the set of outcomes each one saw.

A repetition probe (`repetition=True`) repeats its scenario inside one run under a stopping rule ("until two
outcomes, at most N runs") and reports the set it saw. That verdict, hazard and label, must itself be the same
run after run: a probe whose verdict varies has a stopping rule too narrow for the rate it samples (or a gate
that load defeats), and CI would find it one day as a spurious "behaviour changed". Each run is its own pytest
process with its own hash seed (PYTHONHASHSEED 0..N-1), only the chosen probes (`file::function` targets).
`repeat` + `stability DIRS` (fanin.run.stability) compare whole cells word for word; this pass is the cheap,
focused one a repetition probe must pass before it lands (docs/PROBES.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from fanin.model import exits, suggest
from fanin.model.catalog import DeclaredProbe
from fanin.model.errors import EnvironmentFault, FaninError
from fanin.model.matrix import Cell, Matrix
from fanin.model.results import Observation, ResultFileError, load
from fanin.model.source import REPO_ROOT

ABSENT = "absent"  # the run wrote no observation under this id


@dataclass(frozen=True)
class Tally:
    """One observation id of one cell over the pass's runs: each outcome seen and in how many runs."""

    cell: str
    observation_id: str
    seen: tuple[tuple[str, int], ...]  # (outcome, runs), most frequent first

    @property
    def varies(self) -> bool:
        return len(self.seen) > 1

    def line(self) -> str:
        shown = " | ".join(f"{outcome} ×{runs}" for outcome, runs in self.seen)
        return f"  {'VARIES' if self.varies else 'stable'} {self.observation_id}: {shown}"


def outcome(observation: Observation | None) -> str:
    """What must repeat: the outcome, hazard and label (the verdict a reader sees); counts live in the detail."""
    if observation is None:
        return ABSENT
    return f"{observation.outcome} {observation.hazard}: {observation.label}"


def tally(cell: str, runs: list[dict[str, Observation]], ids: Iterable[str]) -> list[Tally]:
    """Per observation id, the outcomes of every run (an id a run lacks counts as `absent`: that varies too)."""
    tallies = []
    for observation_id in ids:
        counts = Counter(outcome(run.get(observation_id)) for run in runs)
        seen = tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
        tallies.append(Tally(cell, observation_id, seen))
    return tallies


def chosen_probes(framework: str, wanted: tuple[str, ...], catalogue: list[DeclaredProbe]) -> list[DeclaredProbe]:
    """The framework's repetition probes, or the probes named (`--probe`, any probe: a suspected flake) of it."""
    if not wanted:
        return [p for p in catalogue if p.repetition and p.framework == framework]
    by_id = {p.id: p for p in catalogue}
    return [by_id[probe_id] for probe_id in wanted if by_id[probe_id].framework == framework]


def check_names(wanted: tuple[str, ...], catalogue: list[DeclaredProbe]) -> None:
    """Refuse a probe id the catalogue lacks before any cell runs (one line, exit 2)."""
    known = [p.id for p in catalogue]
    for probe_id in wanted:
        if probe_id not in known:
            raise FaninError(f"no probe {probe_id!r}" + suggest.did_you_mean(probe_id, known, suggest.LIST_PROBES))


Observe = Callable[[Cell, list[DeclaredProbe], int], dict[str, Observation]]


def check(
    cells: list[Cell],
    probes_of: Callable[[Cell], list[DeclaredProbe]],
    runs: int,
    observe: Observe,
    say: Callable[[str], None] = print,
) -> list[Tally]:
    """Every cell's chosen probes `runs` times (run i with seed i), then one tally per observation id."""
    if runs < 2:
        raise FaninError(f"the stability pass needs at least 2 runs to compare, got {runs}")
    tallies: list[Tally] = []
    for cell in cells:
        probes = probes_of(cell)
        if not probes:
            say(f"{cell.id}: no repetition probe to run")
            continue
        seen = [observe(cell, probes, seed) for seed in range(runs)]
        mine = tally(cell.id, seen, [oid for p in probes for oid in p.observation_ids()])
        varying = sum(t.varies for t in mine)
        say(f"{cell.id}: {runs} runs of {len(probes)} probe(s); {len(mine) - varying} stable, {varying} vary")
        for line in mine:
            say(line.line())
        tallies += mine
    return tallies


def exit_code(tallies: list[Tally]) -> int:
    return exits.CHANGED if any(t.varies for t in tallies) else exits.SAME


def cell_observer(matrix: Matrix, work: Path) -> Observe:
    """Run the probes in the cell's own venv (or Node directory): results in work/<cell>/run-<seed>/."""
    from fanin.run import all_cells

    def observe(cell: Cell, probes: list[DeclaredProbe], seed: int) -> dict[str, Observation]:
        nodes = tuple(dict.fromkeys(f"{REPO_ROOT / p.file}::{p.function}" for p in probes))
        options = all_cells.Options(
            results_dir=work / cell.id / f"run-{seed:03d}",
            accept_new=True,
            pytest_args=("-q",),
            targets=nodes,
            env={"PYTHONHASHSEED": str(seed)},
            quiet=True,
        )
        result = all_cells.run_one(cell, matrix, options)
        if result.code not in (exits.SAME, exits.CHANGED):
            raise EnvironmentFault(f"{cell.id} run {seed + 1} did not run: {result.outcome.reason} (log {result.log})")
        try:
            return load(result.results, expect_cell=cell.id).observations
        except ResultFileError as exc:
            raise EnvironmentFault(f"{cell.id} run {seed + 1}: {exc}") from None

    return observe
