"""`fanin probes`: list and search the catalogue, grouped by the topic registry (reference/topics.toml).

Each entry is what the reference holds for the probe at its framework's newest cell (title, claim, the
hazard observed there); a declared probe that cell has not run yet is listed as such, never hidden.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass

from fanin.model import catalog, topics
from fanin.model.errors import FaninError
from fanin.model.matrix import Matrix
from fanin.model.results import ResultFileError, load
from fanin.model.suggest import did_you_mean


@dataclass(frozen=True)
class Entry:
    id: str
    framework: str
    topic: str
    title: str
    claim: str
    at: str  # the newest cell of its framework
    observed: str  # the hazard of its default observation there, or why there is none


def entries(matrix: Matrix, framework: str | None = None, topic: str | None = None, text: str = "") -> list[Entry]:
    """The catalogue's probes, filtered; an unknown framework or topic is refused in one line (exit 2)."""
    key = matrix.framework(framework).key if framework else None
    registry = topics.load()
    if topic is not None and topic not in registry:
        raise FaninError(
            f"no topic {topic!r} in reference/topics.toml" + did_you_mean(topic, registry, "see `fanin probes`")
        )
    words = text.lower().split()
    found = []
    for fw in matrix.frameworks.values():
        if (key is not None and fw.key != key) or not matrix.of(fw.key):
            continue
        cell = matrix.newest(fw.key)
        try:
            reference = load(cell.reference_path, expect_cell=cell.id)
        except ResultFileError:
            reference = None
        for declared in catalog.declared():
            if declared.framework != fw.key or (topic is not None and declared.id.split("/")[1] != topic):
                continue
            info = reference.probes.get(declared.id) if reference else None
            observation = reference.observations.get(declared.id) if reference else None
            entry = Entry(
                declared.id,
                fw.key,
                declared.id.split("/")[1],
                info.title if info else "",
                info.claim.text if info else "",
                cell.id,
                observation.hazard if observation else f"not in {cell.id}'s reference yet",
            )
            haystack = " ".join((entry.id, entry.title, entry.claim)).lower()
            if all(word in haystack for word in words):
                found.append(entry)
    order = {name: i for i, name in enumerate(registry)}
    return sorted(found, key=lambda e: (order.get(e.topic, len(order)), e.topic, e.id))


def text(found: list[Entry]) -> str:
    """Grouped by topic, each under its registered title and question."""
    out: list[str] = []
    for topic, group in itertools.groupby(found, key=lambda e: e.topic):
        registered = topics.get(topic)
        heading = f"{registered.title}: {registered.about}" if registered else "(not in reference/topics.toml)"
        out += [*([""] if out else []), f"{topic} — {heading}"]
        out += [f"  {e.id}  [{e.observed} at {e.at}]  {e.title}" for e in group]
    return "\n".join(out)


def as_json(found: list[Entry]) -> str:
    return json.dumps([asdict(e) for e in found], indent=1)
