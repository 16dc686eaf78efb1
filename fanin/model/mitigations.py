"""A hazard probe's mitigation (reference/mitigations.toml), and whether its `-mitigated` probe proves it at a version.

One decision for everything that lists a change beside what to do about it: the upgrade gate's table,
`diff`, and the compare pages (Markdown and HTML). A mitigation is proven at a version only when its
`-mitigated` probe was observed `safe` in that version's own result set (the target of the change); an
observation at another version, a hazard other than safe, no probe or no entry at all is said as
"no proven mitigation", with the reason, never left blank.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fanin.model.errors import FaninError
from fanin.model.results import Hazard, Observation, probe_of
from fanin.model.source import shown

NONE = "no proven mitigation"
MITIGATED = "-mitigated"  # a mitigation's own probe is its hazard probe's id with this suffix

# The rows a mitigation is shown beside: the behaviour got worse, or moved in a way code may depend on.
SHOWN_FOR = ("regression", "changed")


@dataclass(frozen=True)
class Entry:
    """One `[probe."<id>"]` of mitigations.toml: what the write-ups recommend, and the probe that tests it."""

    text: str
    source: str
    probe: str = ""  # the `<id>-mitigated` probe; "" when none is named


def entries(table: Mapping[str, Any]) -> dict[str, Entry]:
    """mitigations.toml's `[probe]` table (as read) as entries by hazard probe id."""
    return {
        str(pid): Entry(str(e.get("text", "")), str(e.get("source", "")), str(e.get("probe", "")))
        for pid, e in table.get("probe", {}).items()
        if isinstance(e, Mapping)
    }


def read(path: Path) -> dict[str, Entry]:
    """The entries of a mitigations.toml ({} when there is none)."""
    try:
        return entries(tomllib.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise FaninError(f"{shown(path)}: not valid TOML ({exc})") from None


@dataclass(frozen=True)
class Proof:
    """A changed probe's mitigation, and what its `-mitigated` probe observed at the target version."""

    probe_id: str  # the changed probe (without its variant)
    at: str  # the target version, as the page or table names it ("2.13.0")
    entry: Entry | None  # None: mitigations.toml has nothing for the probe
    observation: Observation | None = None  # the `-mitigated` probe's default observation at the target

    @property
    def proven(self) -> bool:
        return self.entry is not None and self.observation is not None and self.observation.hazard == Hazard.SAFE.value

    @property
    def mitigated(self) -> str:
        """The `-mitigated` probe's id, or ""."""
        return self.entry.probe if self.entry else ""

    @property
    def reason(self) -> tuple[str, str, str]:
        """Why the mitigation is not proven, as (text, the `-mitigated` probe's id or "", text): a page links the id."""
        if self.proven:
            return "", "", ""
        if self.entry is None and self.probe_id.endswith(MITIGATED):
            return "this probe is a mitigation's own test", "", ""
        if self.entry is None:
            return "none recorded in reference/mitigations.toml", "", ""
        if not self.entry.probe:
            return "no probe tests it", "", ""
        if self.observation is None:
            return "", self.entry.probe, f" was not observed at {self.at}"
        return "", self.entry.probe, f" observes {self.observation.hazard} at {self.at}"

    @property
    def why_not(self) -> str:
        """Why the mitigation is not proven at the target, in words; "" when it is."""
        return "".join(self.reason)

    @property
    def words(self) -> str:
        """The plain-text form (the gate's table): the text and the probe that proves it, or why there is none."""
        if self.proven:
            assert self.entry is not None
            return f"{self.entry.text} (proven: {self.entry.probe} safe at {self.at})"
        suggested = f"; suggested: {self.entry.text}" if self.entry and self.entry.text else ""
        return f"{NONE} ({self.why_not}){suggested}"


def proof(table: Mapping[str, Entry], observation_id: str, target: Mapping[str, Observation], at: str) -> Proof:
    """The mitigation of the probe an observation id belongs to, judged by the target's own observations."""
    pid = probe_of(observation_id)
    entry = table.get(pid)
    observed = target.get(entry.probe) if entry and entry.probe else None
    return Proof(pid, at, entry, observed)


def of_changes(
    table: Mapping[str, Entry], changes: Iterable[tuple[str, str]], target: Mapping[str, Observation], at: str
) -> dict[str, Proof]:
    """The proof beside each (observation id, change word) a mitigation is shown for (SHOWN_FOR), by observation id."""
    return {oid: proof(table, oid, target, at) for oid, word in changes if word in SHOWN_FOR}
