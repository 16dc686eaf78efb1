"""Is a cell's behaviour the same every time? Compare N result sets of one cell, made in separate
processes with different hash seeds.

Three kinds of probe come out: exact (identical in every run), nondeterministic
by design (the framework varies, so the probe records the set of outcomes over
its own repeats: hazard `nondeterministic`, and that set is identical in every
run), and flaky (anything else: a defect of the probe, to fix with gates).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from fanin.model.errors import FaninError
from fanin.model.results import Observation, load


@dataclass
class Stability:
    cell: str
    runs: int
    exact: list[str] = field(default_factory=list)
    nondeterministic: list[str] = field(default_factory=list)
    flaky: dict[str, list[Observation]] = field(default_factory=dict)


def _key(observation: Observation, with_text: bool) -> str:
    """The behaviour, and for exact probes the wording too (a varying detail means a loose probe)."""
    text = [observation.label, observation.detail] if with_text else []
    return json.dumps([observation.behaviour, *text])


def check(paths: list[Path]) -> Stability:
    if len(paths) < 2:
        raise FaninError(f"need at least two runs to compare, got {len(paths)}")
    sets = [load(path) for path in paths]
    cells = {rs.cell for rs in sets}
    if len(cells) != 1:
        raise FaninError(f"the runs are of different cells: {', '.join(sorted(cells))}")
    result = Stability(cells.pop(), len(sets))
    probe_ids = sorted(set().union(*(rs.observations for rs in sets)))
    for probe_id in probe_ids:
        seen = [rs.observations.get(probe_id) for rs in sets]
        # Counts of a nondeterministic probe live in its detail, so only its behaviour must repeat;
        # every other probe must repeat word for word (a varying detail means a loose probe).
        by_design = all(o is not None and o.hazard == "nondeterministic" for o in seen)
        distinct = {(_key(o, not by_design) if o else "absent"): o for o in seen}
        if len(distinct) > 1:
            result.flaky[probe_id] = [o for o in distinct.values() if o is not None]
        elif by_design:
            result.nondeterministic.append(probe_id)
        else:
            result.exact.append(probe_id)
    return result
