"""The legend: the words, marks and meanings every renderer says a hazard and a change with."""

from __future__ import annotations

from dataclasses import dataclass

from fanin.model import compare, mitigations
from fanin.model.results import (
    Hazard,
)

UNREADABLE = "unreadable result set"


NOT_OBSERVED = "not observed"


@dataclass(frozen=True)
class HazardStyle:
    """How a hazard is said: the word every matrix cell states, the Markdown mark beside it, its meaning."""

    hazard: str
    word: str
    mark: str
    meaning: str


HAZARD_STYLES: dict[str, HazardStyle] = {
    style.hazard: style
    for style in (
        HazardStyle(Hazard.SILENT.value, "silent", "🔴", "data lost or wrong, and no error"),
        HazardStyle(Hazard.LOUD.value, "loud", "🟠", "an error stops the run"),
        HazardStyle(Hazard.HANGS.value, "hangs", "⚫", "the run never ends, and no error (a liveness failure)"),
        HazardStyle(
            Hazard.ORDER_COUPLED.value,
            "order-coupled",
            "🟡",
            "the result depends on the order the framework folds writes in",
        ),
        HazardStyle(
            Hazard.NONDETERMINISTIC.value,
            "nondeterministic",
            "🟣",
            "the framework gives different results run to run (outcomes seen over N runs)",
        ),
        HazardStyle(Hazard.SAFE.value, "safe", "🟢", "every write kept, no ordering dependence"),
        HazardStyle(
            Hazard.NOT_APPLICABLE.value, "n/a", "⚪", "the probe does not apply to this version (the reason is given)"
        ),
    )
}


# The words of compare's classifier, said once there (`compare.CHANGE_MEANINGS`, in its order).
CHANGE_WORDS = compare.CHANGE_WORDS
CHANGE_MEANINGS = compare.CHANGE_MEANINGS
CHANGED_MARK = "Δ"

NO_PROVEN_MITIGATION = mitigations.NONE  # beside a regression or changed row whose mitigation is not proven there

# Coverage, said apart wherever frameworks are compared (as MDN separates unknown from unsupported): a probe
# observed an applicable behaviour, observed that the API is missing, or has no observation at that version.
OBSERVED = "observed"
NOT_APPLICABLE_THERE = "n/a"
NOT_PROBED = "not probed"
COVERAGE_WORDS = (OBSERVED, NOT_APPLICABLE_THERE, NOT_PROBED)
NO_PROBE_CITED = f"{NOT_PROBED}: no probe cited"  # a framework's cell of a question none of its probes answers
