"""When two observations read the same in a report: one definition, each observation's JSON made once per build."""

from __future__ import annotations

import json

from fanin.model.results import (
    Observation,
)

# Observation.behaviour is JSON made on every call, and a build compares each observation with its
# neighbours many times: each is made once per build (kept until the next build starts).
_BEHAVIOUR: dict[int, tuple[Observation, str]] = {}


def _behaviour(observation: Observation) -> str:
    found = _BEHAVIOUR.get(id(observation))
    if found is None or found[0] is not observation:
        found = (observation, observation.behaviour)
        _BEHAVIOUR[id(observation)] = found
    return found[1]


def same_behaviour(a: Observation, b: Observation) -> bool:
    """`a.behaviour == b.behaviour`, the one definition of same behaviour, each side's JSON made once."""
    return a is b or (a.outcome == b.outcome and a.hazard == b.hazard and _behaviour(a) == _behaviour(b))


def shown_key(observation: Observation | None) -> str:
    """What a reader sees of an observation, and what it is: one key for grouping alike changes."""
    if observation is None:
        return ""
    return json.dumps([_behaviour(observation), observation.label, observation.detail], ensure_ascii=False)


def same_span(a: Observation | None, b: Observation | None) -> bool:
    """One span: the same behaviour, shown with the same label (or both not observed)."""
    if a is None or b is None:
        return a is b
    return a.label == b.label and same_behaviour(a, b)


def clear() -> None:
    """Forget the JSON made during the last build (a new build starts)."""
    _BEHAVIOUR.clear()
