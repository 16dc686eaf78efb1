"""Everything a report shows, decided once from result sets and the reference's data files.

The renderers (Markdown, HTML, checklist) only format what is built here: which
observation goes in which cell, which versions collapse into one span, whether a
claim holds per span, which way a change went (compare's classifier) and where it
first appeared (bisect.json), when a mitigation is shown, which variants differ from
the default, the cite line and every link. They never read files or decide anything.

One unreadable result file never hides the other cells: it shows as "not run" with
the reason. Nothing here imports a network client: bisect findings are read from
reference/bisect.json as plain JSON.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import os
import posixpath
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from packaging.version import InvalidVersion, Version

from fanin.model import compare, js_source, markers
from fanin.model.errors import FaninError
from fanin.model.matrix import BISECT_FINDINGS, REFERENCE, Matrix
from fanin.model.results import (
    HARMFUL,
    HAZARDS,
    NOT_APPLICABLE,
    Hazard,
    Observation,
    ProbeInfo,
    ResultFileError,
    ResultSet,
    load,
    probe_of,
)
from fanin.model.source import REPO_ROOT, parse_file, probe_source_hash, shown

UNREADABLE = "unreadable result set"
NOT_OBSERVED = "not observed"

# --- the legend: every renderer says a hazard with these words ----------------------------


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
assert tuple(HAZARD_STYLES) == HAZARDS

# The words of compare's classifier, in the order a summary counts them.
CHANGE_WORDS = ("regression", "fix", "new coverage", "changed", "wording", "new", "missing")
CHANGE_MEANINGS = {
    "regression": "the hazard got worse, or an observed probe became n/a",
    "fix": "the hazard got better",
    "new coverage": "n/a before, observed now (the API appeared)",
    "changed": "same hazard, another outcome or value",
    "wording": "only the label or detail text changed",
    "new": "no observation before",
    "missing": "no observation after",
}
CHANGED_MARK = "Δ"

# --- columns, spans, changes ------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One result set: a cell (framework, version, Python) and where its observations come from."""

    cell: str
    framework: str
    version: str
    python: str = ""  # the cell's Python (3.11), not the patch level
    python_note: str = ""  # "py3.10" when not the matrix's default Python
    twin_of: str = ""  # the default-Python cell of the same version, when this cell is its twin
    origin: str = ""  # "" = the report's source; else the local result file it was read from
    date: str = ""
    commit: str = ""  # environment.suite_commit, 12 hex digits, "+dirty" stripped

    @property
    def label(self) -> str:
        """The column heading: the version, its Python when not the default, and `local` for a local run."""
        return " ".join(filter(None, (self.version, self.python_note, "local" if self.origin else "")))


@dataclass(frozen=True)
class Step:
    """A change between two observations of one observation id, as compare classifies it."""

    observation_id: str
    before_column: Column | None
    after_column: Column | None
    before: Observation | None
    after: Observation | None
    label: str  # regression / fix / new coverage / changed / wording / new / missing
    gates: bool
    fields: tuple[str, ...]
    values: tuple[tuple[str, str, str], ...]  # (value path, before, after), compact JSON
    first_changed: str = ""  # the release bisect found
    skipped_yanked: tuple[str, ...] = ()

    @property
    def behaviour(self) -> bool:
        return self.label != "wording"

    @property
    def text(self) -> str:
        """`new coverage between 0.3.34 and 0.4.10 (outcome, hazard, value), first in 0.4.5 (bisected)`."""
        before = self.before_column.label if self.before_column else "?"
        after = self.after_column.label if self.after_column else "?"
        text = f"{self.label} between {before} and {after}"
        if self.fields:
            text += f" ({', '.join(self.fields)})"
        if self.first_changed:
            text += f", first in {self.first_changed} (bisected"
            if self.skipped_yanked:
                text += f"; yanked, skipped: {', '.join(self.skipped_yanked)}"
            text += ")"
        return text


@dataclass(frozen=True)
class Span:
    """Consecutive columns with the same observation (or with none: `observation` is None)."""

    columns: tuple[Column, ...]
    observation: Observation | None
    verdict: str = ""  # the claim per span: holds / does not hold / not applicable; "" when not checkable
    change: Step | None = None  # from the previous span with an observation

    @property
    def first(self) -> Column:
        return self.columns[0]

    @property
    def last(self) -> Column:
        return self.columns[-1]

    @property
    def versions(self) -> str:
        return self.first.label if len(self.columns) == 1 else f"{self.first.label} – {self.last.label}"


@dataclass(frozen=True)
class VariantView:
    """One observation id of a probe (`id` or `id[postgres,async]`) across the main columns."""

    observation_id: str
    suffix: str  # "" for the default variant
    observations: Mapping[str, Observation]
    spans: tuple[Span, ...]  # over the main columns, gaps included (observation None)
    steps: tuple[Step, ...]  # every change between present neighbours, behaviour and wording
    same_as_default: bool

    @property
    def label(self) -> str:
        return f"[{self.suffix}]" if self.suffix else "default"

    @property
    def observed_spans(self) -> tuple[Span, ...]:
        return tuple(span for span in self.spans if span.observation is not None)

    @property
    def changes(self) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if step.behaviour)

    @property
    def wording(self) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if not step.behaviour)

    @property
    def changed_cells(self) -> set[str]:
        return {step.after_column.cell for step in self.changes if step.after_column}


@dataclass(frozen=True)
class Cite:
    """`fanin <probe>@<hash> · <package> <version> · reference <date> @<commit>`: the probe's exact code, where seen."""

    probe_id: str
    source_hash: str
    package: str
    version: str
    date: str
    commit: str
    local: bool = False

    @property
    def text(self) -> str:
        where = "local run" if self.local else "reference"
        text = f"fanin {self.probe_id}@{self.source_hash} · {self.package} {self.version} · {where} {self.date}"
        return text + (f" @{self.commit}" if self.commit else "")


@dataclass(frozen=True)
class Mitigation:
    """What the write-ups recommend, and what the mitigation probe observed (when it exists)."""

    text: str
    source: str
    probe_id: str = ""  # the `<id>-mitigated` probe named in mitigations.toml
    observation: Observation | None = None
    column: Column | None = None


@dataclass(frozen=True)
class ProbeView:
    """A probe: its variants across the main columns and everything its section says."""

    id: str
    info: ProbeInfo
    variants: tuple[VariantView, ...]  # the default first
    cite: Cite
    mitigation: Mitigation | None
    reproducer: str | None
    reproducer_current: bool
    reproducer_lines: tuple[int, int] | None
    python_twins: tuple[Step, ...] = ()  # from a default-Python cell to its twin on another Python, where they differ

    @property
    def framework(self) -> str:
        return self.info.framework

    @property
    def topic(self) -> str:
        return self.info.topic

    @property
    def case(self) -> str:
        """The id without its framework and topic: a row label under its topic's heading."""
        return self.id.split("/", 2)[2]

    @property
    def default(self) -> VariantView:
        return self.variants[0]

    @property
    def differing(self) -> tuple[VariantView, ...]:
        """Variants other than the default whose observations differ from the default's in some version."""
        return tuple(v for v in self.variants[1:] if not v.same_as_default)

    @property
    def alike(self) -> tuple[VariantView, ...]:
        return tuple(v for v in self.variants[1:] if v.same_as_default)

    @property
    def matrix_variants(self) -> tuple[VariantView, ...]:
        """The rows the matrix shows: the default, then each variant that differs from it."""
        return (self.default, *self.differing)

    @property
    def default_name(self) -> str:
        """The default variant in words: `backend=memory, mode=sync`."""
        return ", ".join(f"{name}={values[0]}" for name, values in self.info.dimensions) or "default"

    @property
    def claim_checked(self) -> bool:
        return bool(self.info.claim.expect)

    @property
    def harmful(self) -> bool:
        return any(o.hazard in HARMFUL for v in self.variants for o in v.observations.values())


@dataclass(frozen=True)
class MatrixCell:
    """One cell of a collapsed matrix: an observation shown for a group of columns, and its change from the last."""

    observation: Observation | None
    change: Step | None


@dataclass(frozen=True)
class MatrixRow:
    probe: ProbeView
    variant: VariantView
    cells: tuple[MatrixCell, ...]  # one per column group of the topic


@dataclass(frozen=True)
class ColumnGroup:
    """Neighbouring versions where every probe of a topic observed the same (compat-table style)."""

    columns: tuple[Column, ...]

    @property
    def label(self) -> str:
        first, last = self.columns[0], self.columns[-1]
        return first.label if len(self.columns) == 1 else f"{first.label} – {last.label}"


@dataclass(frozen=True)
class TopicView:
    framework: str
    name: str
    probes: tuple[ProbeView, ...]
    groups: tuple[ColumnGroup, ...]
    rows: tuple[MatrixRow, ...]

    @property
    def anchor(self) -> str:
        return f"matrix-{self.framework}-{self.name}"


@dataclass(frozen=True)
class CompareEntry:
    """One observation id that differs between two cells, classified by compare."""

    step: Step

    @property
    def observation_id(self) -> str:
        return self.step.observation_id

    @property
    def probe_id(self) -> str:
        return probe_of(self.step.observation_id)


@dataclass(frozen=True)
class CompareGroup:
    """Variants of one probe that changed alike (same direction, same before and after): one row."""

    probe_id: str
    observation_ids: tuple[str, ...]
    step: Step  # the first variant's change; the others' are the same
    of: int = 1  # how many variants of the probe were compared

    @property
    def variants(self) -> str:
        """`default, [async]`, or `all 6 variants`; "" when the probe has only its default."""
        names = [oid[len(self.probe_id) :] or "default" for oid in self.observation_ids]
        if self.of <= 1 and names == ["default"]:
            return ""
        if len(names) == self.of:
            return f"all {self.of} variants"
        return ", ".join(names)

    @property
    def anchor(self) -> str:
        return self.observation_ids[0]


@dataclass(frozen=True)
class Answer:
    """A cited probe's observation at one column (the focus version of its framework, unless said otherwise)."""

    probe_id: str
    column: Column | None
    observation: Observation | None
    cite: Cite | None = None

    @property
    def absent(self) -> str:
        """An n/a observation in words, from its reason: "not in google-adk 1.15.1: no module google.adk.workflow …".

        "" when the observation is not n/a, or when its reason says nothing beyond "n/a".
        """
        o = self.observation
        if o is None or o.outcome != NOT_APPLICABLE or self.cite is None or self.column is None:
            return ""
        reason = " ".join(o.detail.split())
        if reason.lower().startswith("n/a"):
            reason = reason[3:].lstrip(" :—-")
        reason = reason.replace(" in this version", "")
        if not reason:
            return ""
        return f"not in {self.cite.package} {self.column.label}: {reason}"

    @property
    def said(self) -> bool:
        """Whether the answer says anything: an n/a with no reason is left out of the checklist."""
        return self.observation is None or self.observation.outcome != NOT_APPLICABLE or bool(self.absent)


@dataclass(frozen=True)
class Question:
    question: str
    answers: Mapping[str, tuple[Answer, ...]]  # framework key -> answers
    verdict: str = ""  # only on a compare page between two frameworks


@dataclass(frozen=True)
class ComparePage:
    """Two cells: of one framework (only the observations that differ), or of two (the comparison questions)."""

    a: Column
    b: Column
    a_name: str
    b_name: str
    entries: tuple[CompareEntry, ...] = ()
    questions: tuple[Question, ...] = ()
    compared: int = 0  # observation ids (or questions) looked at
    variant_counts: Mapping[str, int] = field(default_factory=dict)  # probe id -> variants compared

    @property
    def name(self) -> str:
        return f"compare-{self.a.cell}-{self.b.cell}"

    @property
    def across_frameworks(self) -> bool:
        return self.a.framework != self.b.framework

    @property
    def title(self) -> str:
        return f"{self.a_name} {self.a.label} → {self.b_name} {self.b.label}"

    @property
    def counts(self) -> tuple[tuple[str, int], ...]:
        """How many of each kind of change: regressions, fixes, new coverage, changed, wording kept apart."""
        if self.across_frameworks:
            found = Counter(q.verdict for q in self.questions)
            return tuple((word, found[word]) for word in sorted(found))
        found = Counter(entry.step.label for entry in self.entries)
        return tuple((word, found[word]) for word in CHANGE_WORDS if found[word])

    @property
    def grouped(self) -> tuple[CompareGroup, ...]:
        """The entries with the variants of a probe that changed alike folded into one group."""
        groups: dict[tuple[str, str, str, str], list[CompareEntry]] = {}
        for entry in self.entries:
            step = entry.step
            key = (entry.probe_id, step.label, _shown(step.before), _shown(step.after))
            groups.setdefault(key, []).append(entry)
        return tuple(
            CompareGroup(
                found[0].probe_id,
                tuple(e.observation_id for e in found),
                found[0].step,
                self.variant_counts.get(found[0].probe_id, 1),
            )
            for found in groups.values()
        )

    @property
    def counts_text(self) -> str:
        """`14 fix, 10 new coverage, 2 changed`, or `none`."""
        return ", ".join(f"{n} {word}" for word, n in self.counts) or "none"

    @property
    def summary(self) -> str:
        counts = ", ".join(f"{n} {word}" for word, n in self.counts)
        unit = "questions" if self.across_frameworks else "observations"
        if self.across_frameworks:
            return f"{len(self.questions)} {unit} compared: {counts or 'none'}"
        return f"{len(self.entries)} of {self.compared} {unit} differ" + (f": {counts}" if counts else "")


@dataclass(frozen=True)
class TwinView:
    """A cell on another Python than its default-Python twin, and the observations where they differ."""

    column: Column
    twin: Column
    page: ComparePage


@dataclass(frozen=True)
class SummaryRow:
    column: Column
    counts: tuple[tuple[str, int], ...]  # (hazard, probes) over each probe's default variant
    changes: tuple[tuple[str, int], ...] = ()  # (direction, probes) whose default changed from the version before

    @property
    def changes_text(self) -> str:
        return ", ".join(f"{n} {word}" for word, n in self.changes)


@dataclass(frozen=True)
class FrameworkView:
    key: str
    name: str  # the registry's display name
    package: str  # the PyPI distribution, as a cite line names it
    columns: tuple[Column, ...]  # main columns: one per version
    twins: tuple[TwinView, ...]
    probes: tuple[ProbeView, ...]
    topics: tuple[TopicView, ...]
    missing: tuple[tuple[str, str], ...]  # (cell, why it is not shown)
    focus: Column | None  # the version the comparison, checklist and cite lines speak of
    summary: tuple[SummaryRow, ...]
    steps: tuple[ComparePage, ...]  # each main column against the previous one

    @property
    def newest(self) -> Column | None:
        return self.columns[-1] if self.columns else None

    @property
    def anchor(self) -> str:
        return f"matrix-{self.key}"

    def probe(self, probe_id: str) -> ProbeView | None:
        return next((p for p in self.probes if p.id == probe_id), None)

    def column(self, cell: str) -> Column | None:
        return next((c for c in (*self.columns, *(t.column for t in self.twins)) if c.cell == cell), None)


@dataclass(frozen=True)
class KeyFinding:
    """A framework in one line at the report's top: its worst hazards at the newest version, its biggest change."""

    framework: FrameworkView
    column: Column  # the newest version
    counts: tuple[tuple[str, int], ...]  # (harmful hazard, probes) at that version, worst first, zeros left out
    examples: tuple[ProbeView, ...]  # up to three probes with the worst hazard there
    biggest: ComparePage | None  # the step between adjacent versions with the most behaviour changes


KEY_EXAMPLES = 3


def _key_finding(view: FrameworkView) -> KeyFinding | None:
    newest = view.newest
    if newest is None:
        return None
    at_newest = [(p, p.default.observations.get(newest.cell)) for p in view.probes]
    hazards = Counter(o.hazard for _, o in at_newest if o is not None and o.hazard in HARMFUL)
    order = sorted(hazards, key=lambda h: (-compare.harm(h), HARMFUL.index(h)))
    worst = order[0] if order else None
    examples = tuple(p for p, o in at_newest if worst and o is not None and o.hazard == worst)[:KEY_EXAMPLES]
    changes = [(sum(1 for e in page.entries if e.step.behaviour), page) for page in view.steps]
    most = max((n for n, _ in changes), default=0)
    biggest = next((page for n, page in changes if n == most), None) if most else None
    return KeyFinding(view, newest, tuple((h, hazards[h]) for h in order), examples, biggest)


@dataclass(frozen=True)
class ChecklistMitigation:
    """An evidence probe's mitigation (mitigations.toml) and what its mitigation probe observed at the same version."""

    probe_id: str  # the hazard probe the mitigation is for
    text: str
    source: str
    observed: Answer | None  # the `-mitigated` probe's answer; None when mitigations.toml names no probe
    at: str  # the version the evidence was observed at ("google-adk 1.15.1")


@dataclass(frozen=True)
class ChecklistItem:
    question: str
    why: str
    evidence: tuple[Answer, ...]
    mitigations: tuple[ChecklistMitigation, ...] = ()
    left_out: tuple[str, ...] = ()  # names of the frameworks asked for that no cited probe is of (report --for)
    no_mitigation: str = ""  # why the item has no mitigation line, when it has none


@dataclass(frozen=True)
class ChecklistSection:
    title: str
    items: tuple[ChecklistItem, ...]


# --- links ------------------------------------------------------------------------------

# The documents a report is made of, by their place in a published bundle (`report --out DIR`).
REPORT_MD = "REPORT.md"
PROBES_DIR = "probes"  # one Markdown file of probe sections per framework, beside REPORT.md


def probes_md(framework: str) -> str:
    """The document holding a framework's probe sections (`probes/langgraph.md`)."""
    return f"{PROBES_DIR}/{framework}.md"


CHECKLIST_MD = "CHECKLIST.md"
MATRIX_HTML = "matrix.html"
COMPARE_DIR = "compare"


def fragment(anchor: str) -> str:
    """An anchor as a URL fragment: ids keep their slashes; brackets and other signs are escaped."""
    return quote(anchor, safe="/,-_.~")


@dataclass(frozen=True)
class Links:
    """Every href a report holds. With a base URL each is absolute (a permalink); else relative.

    `places` says where each document is written, as a path relative to one common root, so
    relative links between documents in different directories (reference/REPORT.md,
    reports/matrix.html, reports/compare/) resolve. `repo` is the checkout's place, for links
    to a probe's source file; "" when the documents are not beside the checkout.
    """

    base_url: str = ""
    places: tuple[tuple[str, str], ...] = ()
    repo: str = ""

    def _place(self, document: str) -> str:
        places = dict(self.places)
        head, _, rest = document.partition("/")
        if document in places:
            return places[document]
        if rest and head in places:
            return f"{places[head]}/{rest}"
        return document

    def href(self, document: str, anchor: str = "", source: str = "") -> str:
        """A link from `source` (a document) to `anchor` in `document`."""
        tail = f"#{fragment(anchor)}" if anchor else ""
        if self.base_url:
            return f"{self.base_url.rstrip('/')}/{document}{tail}"
        if document == source:
            return tail or "#"
        start = posixpath.dirname(self._place(source)) or "."
        return posixpath.relpath(self._place(document), start) + tail

    def probe(self, anchor: str, source: str) -> str:
        """A probe's section: in its framework's probes/<key>.md from Markdown, in the HTML page from HTML."""
        if source.endswith(".html"):
            return self.href(MATRIX_HTML, anchor, source)
        return self.href(probes_md(anchor.split("/", 1)[0]) if "/" in anchor else REPORT_MD, anchor, source)

    def source_file(self, path: str, lines: tuple[int, int] | None, source: str) -> str:
        """A probe's file in the checkout (GitHub line anchors); "" when the checkout is not reachable."""
        if not self.repo:
            return ""
        start = posixpath.dirname(self._place(source)) or "."
        target = posixpath.relpath(posixpath.join(self.repo, path), start)
        return target + (f"#L{lines[0]}-L{lines[1]}" if lines else "")


# --- the report -------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    title: str
    source: str
    reference_date: str
    commit: str
    frameworks: tuple[FrameworkView, ...]
    comparison: tuple[Question, ...]
    checklist: tuple[ChecklistSection, ...]
    unreadable: int
    links: Links = field(default_factory=Links)
    focus_notes: tuple[str, ...] = ()  # where each focus version's observations come from (report --for)
    focused: bool = False  # the focus versions were asked for (report --for), not the newest
    compare_pages: tuple[ComparePage, ...] = ()  # the pages the matrix links
    inline_reproducers: bool = True  # False where the probe's file is linked instead (the committed REPORT.md)
    checklist_fields: tuple[tuple[str, str], ...] = ()  # (field, prefilled answer or "") at the checklist's top
    anchors: Mapping[str, str] = field(default_factory=dict)  # observation id -> the anchor of its section
    run_pages: tuple[tuple[str, str], ...] = ()  # (cell, href of its pytest-html page) for a local run
    key_findings: tuple[KeyFinding, ...] = ()  # the opening: one line per framework

    def anchor(self, observation_id: str) -> str:
        """Where an observation's section is: its own when it has one (the default, a differing variant), else its probe's."""
        return self.anchors.get(observation_id, observation_id)

    def probe(self, probe_id: str) -> tuple[FrameworkView, ProbeView] | None:
        for view in self.frameworks:
            found = view.probe(probe_of(probe_id))
            if found is not None:
                return view, found
        return None

    def variant(self, observation_id: str) -> VariantView | None:
        found = self.probe(observation_id)
        if found is None:
            return None
        return next((v for v in found[1].variants if v.observation_id == observation_id), None)

    def cite_line(self, probe: ProbeView, source: str) -> str:
        """The cite line as a document shows it: with a base URL, the permalink follows the text."""
        if self.links.base_url:
            return f"{probe.cite.text} · {self.links.probe(probe.id, source)}"
        return probe.cite.text

    def with_links(self, links: Links, inline_reproducers: bool | None = None) -> Report:
        keep = self.inline_reproducers if inline_reproducers is None else inline_reproducers
        return dataclasses.replace(self, links=links, inline_reproducers=keep)

    def retitled(self, title: str) -> Report:
        return dataclasses.replace(self, title=title)

    @property
    def frameworks_with_columns(self) -> tuple[FrameworkView, ...]:
        return tuple(v for v in self.frameworks if v.columns)


# --- building ---------------------------------------------------------------------------


# Observation.behaviour is JSON made on every call, and a build compares each observation with its
# neighbours many times: each is made once per build (kept until the next build starts).
_BEHAVIOUR: dict[int, tuple[Observation, str]] = {}


def _behaviour(observation: Observation) -> str:
    found = _BEHAVIOUR.get(id(observation))
    if found is None or found[0] is not observation:
        found = (observation, observation.behaviour)
        _BEHAVIOUR[id(observation)] = found
    return found[1]


def _same_behaviour(a: Observation, b: Observation) -> bool:
    """`a.behaviour == b.behaviour`, the one definition of same behaviour, each side's JSON made once."""
    return a is b or (a.outcome == b.outcome and a.hazard == b.hazard and _behaviour(a) == _behaviour(b))


def _shown(observation: Observation | None) -> str:
    """What a reader sees of an observation, and what it is: one key for grouping alike changes."""
    if observation is None:
        return ""
    return json.dumps([_behaviour(observation), observation.label, observation.detail], ensure_ascii=False)


def _same(a: Observation | None, b: Observation | None) -> bool:
    """One span: the same behaviour, shown with the same label (or both not observed)."""
    if a is None or b is None:
        return a is b
    return a.label == b.label and _same_behaviour(a, b)


def load_dir(
    source: Path, matrix: Matrix, replace: dict[str, ResultSet] | None = None
) -> tuple[list[ResultSet], dict[str, str]]:
    """Result sets in matrix order, and a reason for every matrix cell that has none.

    A cell whose last run failed (a `<cell>.error` marker beside its result set) is shown as
    not run, with the marker's reason: its previous result set is kept on disk but is stale.
    `replace` puts result sets in place of files (bless renders what the reference is about to be).
    """
    order = {cell.id: index for index, cell in enumerate(sorted(matrix.cells, key=lambda c: c.sort_key))}
    replace = replace or {}
    names = {p.stem for p in source.glob("*.json")} | set(replace)
    sets: list[ResultSet] = []
    missing: dict[str, str] = {}
    for name in sorted(names, key=lambda n: (order.get(n, len(order)), n)):
        path = source / f"{name}.json"
        marker = None if name in replace else markers.reason(path)
        if marker is not None:
            missing[name] = marker
            continue
        try:
            sets.append(replace[name] if name in replace else load(path, expect_cell=name))
        except ResultFileError as exc:
            missing[name] = UNREADABLE
            sys.stderr.write(f"fanin: error: {exc}\n")
    seen = {rs.cell for rs in sets}
    for cell in matrix.cells:
        if cell.id not in seen and cell.id not in missing:
            missing[cell.id] = markers.reason(source / f"{cell.id}.json") or "no result set"
    return sets, missing


def bisect_findings(path: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """reference/bisect.json as data: per observation id, the releases `bisect` pinned."""
    path = path or REFERENCE / BISECT_FINDINGS.name  # beside the other data (tests point REFERENCE elsewhere)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FaninError(f"{shown(path)}: cannot be read as bisect findings ({exc})") from None
    if not isinstance(data, dict):
        raise FaninError(f"{shown(path)}: expected an object of observation ids")
    return data


def _read_toml(name: str) -> dict[str, Any]:
    path = REFERENCE / name  # comparison.toml, checklist.toml, mitigations.toml
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise FaninError(f"{shown(path)}: not valid TOML ({exc})") from None


def _reproducer(info: ProbeInfo) -> tuple[str | None, bool, tuple[int, int] | None]:
    """The probe's code as it is in suites/ now, whether it is the code that was observed, and its lines."""
    path = REPO_ROOT / info.file
    if not info.file or not path.is_file():
        return None, False, None
    stat = path.stat()
    return _reproducer_of(path, info.function, info.source_hash, (stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=4096)
def _reproducer_of(
    path: Path, function: str, observed_hash: str, stamp: tuple[int, int]
) -> tuple[str | None, bool, tuple[int, int] | None]:
    """Once per function and file version: hashing follows the probe's dependencies through the kits."""
    try:
        if path.name.endswith(js_source.SUFFIX):  # a Node probe (fanin.model.js_source)
            js = js_source.parse_file(path)
            return (
                js.function(function),
                js_source.probe_source_hash(path, function) == observed_hash,
                js.spans[function],
            )
        parsed = parse_file(path)
        code = parsed.function(function)
        return code, probe_source_hash(path, function) == observed_hash, parsed.spans[function]
    except LookupError:
        return None, False, None


def _commit(rs: ResultSet) -> str:
    commit = str(rs.environment.get("suite_commit") or "").split("+", 1)[0].strip()
    return commit[:12]


def _python(rs: ResultSet, matrix: Matrix) -> str:
    """The cell's Python: from the matrix, the cell id's `-pyX.Y`, or the recorded interpreter."""
    for cell in matrix.cells:
        if cell.id == rs.cell:
            return cell.python
    if "-py" in rs.cell:
        return rs.cell.rsplit("-py", 1)[1]
    return ".".join(str(rs.environment.get("python", "")).split(".")[:2])


def _version_key(version: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


def _step(
    observation_id: str,
    before_column: Column | None,
    after_column: Column | None,
    before: Observation | None,
    after: Observation | None,
    bisected: Mapping[str, list[dict[str, Any]]],
) -> Step | None:
    if (
        before is not None
        and after is not None
        and (before.label, before.detail) == (after.label, after.detail)
        and _same_behaviour(before, after)
    ):
        return None  # what compare would call the same, without making its JSON twice again
    change = compare.classify(observation_id, before, after)
    if change.kind == compare.SAME:
        return None
    values: tuple[tuple[str, str, str], ...] = ()
    if before is not None and after is not None and "value" in change.fields:
        values = tuple(
            (path, compare.compact(b), compare.compact(a))
            for path, b, a in compare.value_differences(before.value, after.value)
        )
    first, skipped = "", tuple[str, ...]()
    if before_column and after_column and change.is_breaking:
        for entry in bisected.get(observation_id, []):
            if (entry.get("good"), entry.get("bad")) == (before_column.version, after_column.version):
                first = str(entry.get("first_changed", ""))
                skipped = tuple(str(v) for v in entry.get("skipped_yanked", []))
    return Step(
        observation_id,
        before_column,
        after_column,
        before,
        after,
        change.label,
        change.gates,
        change.fields,
        values,
        first,
        skipped,
    )


def _variant(
    observation_id: str,
    suffix: str,
    info: ProbeInfo,
    columns: Sequence[Column],
    observations: Mapping[str, Observation],
    bisected: Mapping[str, list[dict[str, Any]]],
) -> VariantView:
    steps: list[Step] = []
    present = [c for c in columns if c.cell in observations]
    for before, after in itertools.pairwise(present):
        step = _step(observation_id, before, after, observations[before.cell], observations[after.cell], bisected)
        if step is not None:
            steps.append(step)
    by_after = {step.after_column.cell: step for step in steps if step.after_column and step.behaviour}
    spans: list[Span] = []
    for column in columns:
        observation = observations.get(column.cell)
        if spans and _same(spans[-1].observation, observation):
            spans[-1] = dataclasses.replace(spans[-1], columns=(*spans[-1].columns, column))
            continue
        verdict = ""
        if observation is not None and info.claim.expect:
            holds = info.claim.holds(observation)
            verdict = {True: "holds", False: "does not hold", None: "not applicable"}[holds]
        spans.append(Span((column,), observation, verdict, by_after.get(column.cell)))
    return VariantView(observation_id, suffix, dict(observations), tuple(spans), tuple(steps), True)


def _differs(variant: VariantView, default: VariantView) -> bool:
    cells = set(variant.observations) | set(default.observations)
    return (
        any(not _same(variant.observations.get(c), default.observations.get(c)) for c in cells)
        or variant.observations.keys() != default.observations.keys()
    )


def _columns(sets: Sequence[ResultSet], key: str, matrix: Matrix, origins: Mapping[str, str]) -> list[Column]:
    built = []
    for rs in sorted(sets, key=lambda r: (_version_key(r.version), r.cell)):
        python = _python(rs, matrix)
        note = f"py{python}" if python and python != matrix.default_python else ""
        built.append(
            Column(
                rs.cell,
                key,
                rs.version,
                python,
                note,
                "",
                origins.get(rs.cell, ""),
                str(rs.environment.get("date", "")),
                _commit(rs),
            )
        )
    default_cells = {c.version: c for c in built if not c.python_note}
    return [
        dataclasses.replace(c, twin_of=default_cells[c.version].cell)
        if c.python_note and c.version in default_cells
        else c
        for c in built
    ]


def _topic_rows(framework: str, name: str, probes: Sequence[ProbeView], columns: Sequence[Column]) -> TopicView:
    """Collapse neighbouring columns in which every observation of the topic is the same."""
    variants = [v for p in probes for v in p.variants]
    groups: list[list[Column]] = []
    for column in columns:
        if groups and all(
            _same(v.observations.get(groups[-1][-1].cell), v.observations.get(column.cell)) for v in variants
        ):
            groups[-1].append(column)
        else:
            groups.append([column])
    rows = []
    for probe in probes:
        for variant in probe.matrix_variants:
            by_after = {s.after_column.cell: s for s in variant.changes if s.after_column}
            cells = []
            for group in groups:
                first = group[0]
                cells.append(MatrixCell(variant.observations.get(first.cell), by_after.get(first.cell)))
            rows.append(MatrixRow(probe, variant, tuple(cells)))
    return TopicView(framework, name, tuple(probes), tuple(ColumnGroup(tuple(g)) for g in groups), tuple(rows))


def _worst(observations: Iterable[Observation], probe_id: str) -> Observation | None:
    """The most harmful of some observations, by compare's own order of harm (n/a only when all are)."""
    found = list(observations)
    applicable = [o for o in found if o.outcome != NOT_APPLICABLE] or found
    worst: Observation | None = None
    for observation in applicable:
        if worst is None or compare.classify(probe_id, worst, observation).direction == compare.Direction.REGRESSION:
            worst = observation
    return worst


def _framework_view(
    key: str,
    sets: list[ResultSet],
    missing: dict[str, str],
    matrix: Matrix,
    origins: Mapping[str, str],
    focus_cell: str | None,
    bisected: Mapping[str, list[dict[str, Any]]],
    mitigations: Mapping[str, Mapping[str, str]],
) -> FrameworkView:
    all_columns = _columns(sets, key, matrix, origins)
    main = [c for c in all_columns if not c.twin_of]
    by_cell = {rs.cell: rs for rs in sets}
    infos: dict[str, ProbeInfo] = {}
    for column in main:  # the newest declaration wins: it is the one the report shows
        infos.update(by_cell[column.cell].probes)
    for column in all_columns:
        for pid, info in by_cell[column.cell].probes.items():
            infos.setdefault(pid, info)
    registered = matrix.frameworks.get(key)
    name, package = (registered.display, registered.package) if registered else (key, key)
    focus = next((c for c in main if c.cell == focus_cell), main[-1] if main else None)

    observation_ids = sorted({oid for rs in sets for oid in rs.observations if probe_of(oid) in infos})
    by_probe: dict[str, list[str]] = {}
    for oid in observation_ids:
        by_probe.setdefault(probe_of(oid), []).append(oid)
    probes: list[ProbeView] = []
    for probe_id in sorted(by_probe):
        info = infos[probe_id]
        declared = info.observation_ids()
        ordered = sorted(by_probe[probe_id], key=lambda o: (declared.index(o) if o in declared else len(declared), o))
        variants = []
        for oid in ordered:
            observations = {
                c.cell: by_cell[c.cell].observations[oid] for c in main if oid in by_cell[c.cell].observations
            }
            suffix = oid[len(probe_id) + 1 : -1] if oid != probe_id else ""
            variants.append(_variant(oid, suffix, info, main, observations, bisected))
        default = variants[0]
        variants = [default, *(dataclasses.replace(v, same_as_default=not _differs(v, default)) for v in variants[1:])]
        reproducer, current, lines = _reproducer(info)
        cite_column = focus
        hash_ = info.source_hash
        if cite_column is not None and probe_id in by_cell[cite_column.cell].probes:
            hash_ = by_cell[cite_column.cell].probes[probe_id].source_hash
        cite = Cite(
            probe_id,
            hash_,
            package,
            cite_column.version if cite_column else "?",
            cite_column.date if cite_column else "",
            cite_column.commit if cite_column else "",
            bool(cite_column and cite_column.origin),
        )
        probes.append(ProbeView(probe_id, info, tuple(variants), cite, None, reproducer, current, lines))

    # Mitigations: shown only where some version observed a hazard a reader must act on.
    by_id = {p.id: p for p in probes}
    finished: list[ProbeView] = []
    for probe in probes:
        entry = mitigations.get(probe.id)
        if entry and probe.harmful:
            mitigated = by_id.get(str(entry.get("probe", "")))
            seen: Observation | None = None
            seen_at: Column | None = None
            if mitigated is not None:
                for candidate in reversed(
                    [c for c in main if focus is None or _version_key(c.version) <= _version_key(focus.version)]
                ):
                    if candidate.cell in mitigated.default.observations:
                        seen, seen_at = mitigated.default.observations[candidate.cell], candidate
                        break
            mitigation = Mitigation(
                str(entry.get("text", "")),
                str(entry.get("source", "")),
                mitigated.id if mitigated else "",
                seen,
                seen_at,
            )
            probe = dataclasses.replace(probe, mitigation=mitigation)
        finished.append(probe)

    steps = tuple(_versions_page(name, a, b, by_cell, bisected) for a, b in itertools.pairwise(main))
    twins = tuple(
        TwinView(c, twin, _versions_page(name, twin, c, by_cell, {}))
        for c in all_columns
        if c.twin_of
        for twin in [next(m for m in main if m.cell == c.twin_of)]
    )
    twin_steps: dict[str, list[Step]] = {}
    for twin in twins:
        for compared in twin.page.entries:
            twin_steps.setdefault(compared.probe_id, []).append(compared.step)
    finished = [
        dataclasses.replace(p, python_twins=tuple(twin_steps[p.id])) if p.id in twin_steps else p for p in finished
    ]
    grouped: dict[str, list[ProbeView]] = {}
    for probe in finished:
        grouped.setdefault(probe.topic, []).append(probe)
    topics = tuple(_topic_rows(key, topic, rows, main) for topic, rows in grouped.items())
    moved: dict[str, Counter[str]] = {}
    for probe in finished:
        for step in probe.default.steps:
            if step.after_column is not None:
                moved.setdefault(step.after_column.cell, Counter())[step.label] += 1
    summary = tuple(
        SummaryRow(
            column,
            tuple((hazard, hazards[hazard]) for hazard in HAZARDS),
            tuple((word, n) for word in CHANGE_WORDS if (n := moved.get(column.cell, Counter())[word])),
        )
        for column in main
        for hazards in [Counter(o.hazard for p in finished for o in [p.default.observations.get(column.cell)] if o)]
    )
    missing_here = tuple(sorted((cell, reason) for cell, reason in missing.items() if cell.startswith(f"{key}-")))
    return FrameworkView(
        key, name, package, tuple(main), twins, tuple(finished), topics, missing_here, focus, summary, steps
    )


def _versions_page(
    name: str,
    a: Column,
    b: Column,
    by_cell: Mapping[str, ResultSet],
    bisected: Mapping[str, list[dict[str, Any]]],
) -> ComparePage:
    before, after = by_cell[a.cell], by_cell[b.cell]
    ids = sorted(set(before.observations) | set(after.observations))
    entries = []
    for oid in ids:
        step = _step(oid, a, b, before.observations.get(oid), after.observations.get(oid), bisected)
        if step is not None:
            entries.append(CompareEntry(step))
    order = {word: index for index, word in enumerate(CHANGE_WORDS)}
    entries.sort(key=lambda e: (order.get(e.step.label, len(order)), e.observation_id))
    return ComparePage(a, b, name, name, tuple(entries), (), len(ids), Counter(probe_of(i) for i in ids))


def _answers(view: FrameworkView | None, probe_ids: Sequence[str], column: Column | None) -> tuple[Answer, ...]:
    answers = []
    for pid in probe_ids:
        probe = view.probe(probe_of(pid)) if view else None
        variant = next((v for v in probe.variants if v.observation_id == pid), None) if probe else None
        observation = variant.observations.get(column.cell) if variant and column else None
        cite = (
            dataclasses.replace(probe.cite, version=column.version, date=column.date, commit=column.commit)
            if probe and column
            else None
        )
        answers.append(Answer(pid, column if observation else None, observation, cite if observation else None))
    return tuple(answers)


def _checklist_mitigations(
    views: Sequence[FrameworkView],
    view: FrameworkView | None,
    answers: Sequence[Answer],
    mitigations: Mapping[str, Mapping[str, str]],
) -> list[ChecklistMitigation]:
    """The mitigation of each observed evidence probe, with its mitigation probe's answer at the same version.

    An n/a evidence probe gets none: there is nothing to mitigate where the API is missing.
    """
    out = []
    for answer in answers:
        entry = mitigations.get(probe_of(answer.probe_id))
        if entry is None or view is None or answer.observation is None or answer.column is None:
            continue
        if answer.observation.outcome == NOT_APPLICABLE:
            continue
        target = str(entry.get("probe", ""))
        observed = None
        if target:
            owner = next((v for v in views if v.probe(probe_of(target))), view)
            (observed,) = _answers(owner, [target], owner.focus)
        at = f"{view.package} {answer.column.label}"
        out.append(
            ChecklistMitigation(answer.probe_id, str(entry.get("text", "")), str(entry.get("source", "")), observed, at)
        )
    return out


@dataclass(frozen=True)
class RuntimePair:
    """One scenario observed on both runtimes: `<fw>/<topic>/<case>` (Python) and `<fw>js/<topic>/<case>` (Node)."""

    case: str  # topic/case
    python: Answer
    node: Answer

    @property
    def same(self) -> bool | None:
        """Same outcome, hazard and matrix label at the focus versions; None if either is unobserved.

        The values differ in shape between the two suites, so they are not compared; the label is the
        behaviour in a few words (`join ×2`), so "sibling cancelled" and "sibling ran on" differ.
        """
        a, b = self.python.observation, self.node.observation
        if a is None or b is None:
            return None
        return (a.outcome, a.hazard, a.label) == (b.outcome, b.hazard, b.label)


def runtime_pairs(rep: Report) -> tuple[tuple[FrameworkView, FrameworkView, tuple[RuntimePair, ...]], ...]:
    """Python vs JavaScript: a Node framework keyed `<key>js` lines up every probe id its Python `<key>` also has."""
    views = {v.key: v for v in rep.frameworks}
    found = []
    for node in rep.frameworks:
        python = views.get(node.key[:-2]) if node.key.endswith("js") else None
        if python is None:
            continue
        pairs = []
        for probe in node.probes:
            case = probe.id.split("/", 1)[1]
            if python.probe(f"{python.key}/{case}") is None:
                continue
            (py_answer,) = _answers(python, [f"{python.key}/{case}"], python.focus)
            (js_answer,) = _answers(node, [probe.id], node.focus)
            pairs.append(RuntimePair(case, py_answer, js_answer))
        found.append((python, node, tuple(pairs)))
    return tuple(found)


def _question_verdict(a_name: str, b_name: str, a: Sequence[Answer], b: Sequence[Answer], question: str) -> str:
    """Compare's classifier over the most harmful answer of each side, said between frameworks."""
    worst_a = _worst([x.observation for x in a if x.observation], question)
    worst_b = _worst([x.observation for x in b if x.observation], question)
    if worst_a is None or worst_b is None:
        return "not comparable: a side has no observation"
    change = compare.classify(question, worst_a, worst_b)
    direction = change.direction
    if direction is None:
        return "same"
    if direction == compare.Direction.NEW_COVERAGE:
        return f"only {b_name} applies"
    if direction == compare.Direction.REGRESSION and worst_b.outcome == NOT_APPLICABLE:
        return f"only {a_name} applies"
    if direction == compare.Direction.REGRESSION:
        return f"{b_name} more harmful"
    if direction == compare.Direction.FIX:
        return f"{a_name} more harmful"
    return "same hazard, other behaviour"


def compare_page(report: Report, a: str, b: str) -> ComparePage:
    """The page for two cells the report holds: one framework, or two (then its comparison questions)."""
    found: dict[str, tuple[FrameworkView, Column]] = {}
    for view in report.frameworks:
        for cell in (a, b):
            column = view.column(cell)
            if column is not None:
                found[cell] = (view, column)
    for cell in (a, b):
        if cell not in found:
            known = ", ".join(c.cell for v in report.frameworks for c in (*v.columns, *(t.column for t in v.twins)))
            raise FaninError(f"no cell {cell!r} in this report; known cells: {known}")
    if a == b:
        raise FaninError(f"compare names {a!r} twice; give two different cells")
    (view_a, col_a), (view_b, col_b) = found[a], found[b]
    if view_a.key == view_b.key:
        for page in (*view_a.steps, *(t.page for t in view_a.twins)):
            if (page.a.cell, page.b.cell) == (a, b):
                return page
        return _page_from_views(view_a, col_a, col_b)
    questions = []
    for question in report.comparison:
        ans_a = _answers(view_a, [x.probe_id for x in question.answers.get(view_a.key, ())], col_a)
        ans_b = _answers(view_b, [x.probe_id for x in question.answers.get(view_b.key, ())], col_b)
        verdict = _question_verdict(view_a.name, view_b.name, ans_a, ans_b, question.question)
        questions.append(Question(question.question, {view_a.key: ans_a, view_b.key: ans_b}, verdict))
    return ComparePage(col_a, col_b, view_a.name, view_b.name, (), tuple(questions), len(questions))


def _page_from_views(view: FrameworkView, a: Column, b: Column) -> ComparePage:
    """Two cells of one framework that are not neighbours: every variant's observation at each."""
    entries = []
    compared = 0
    counts: Counter[str] = Counter()
    for probe in view.probes:
        for variant in probe.variants:
            before, after = variant.observations.get(a.cell), variant.observations.get(b.cell)
            if before is None and after is None:
                continue
            compared += 1
            counts[probe.id] += 1
            step = _step(variant.observation_id, a, b, before, after, {})
            if step is not None:
                entries.append(CompareEntry(step))
    order = {word: index for index, word in enumerate(CHANGE_WORDS)}
    entries.sort(key=lambda e: (order.get(e.step.label, len(order)), e.observation_id))
    return ComparePage(a, b, view.name, view.name, tuple(entries), (), compared, counts)


def run_pages(cells: list[str], pages: Path, relative_to: Path) -> tuple[tuple[str, str], ...]:
    """The pytest-html page of each cell of a local run that has one, linked from the run's report."""
    found = []
    for cell in cells:
        page = pages / f"{cell}.html"
        if page.exists():
            found.append((cell, os.path.relpath(page, relative_to)))
    return tuple(found)


def build(
    source: Path,
    matrix: Matrix,
    reference: bool,
    replace: dict[str, ResultSet] | None = None,
    *,
    extra: Mapping[str, tuple[ResultSet, str]] | None = None,
    focus: Mapping[str, str] | None = None,
    links: Links | None = None,
) -> Report:
    """The report over the result sets in `source`.

    `replace` puts result sets in place of files (bless renders what the reference is about to be);
    `extra` adds local result sets as columns ({cell: (result set, where it was read)});
    `focus` names, per framework key, the cell the comparison, checklist and cite lines
    speak of (default: each framework's newest version).
    """
    _BEHAVIOUR.clear()
    return _build(source, matrix, reference, replace, extra, focus, links)


def _build(
    source: Path,
    matrix: Matrix,
    reference: bool,
    replace: dict[str, ResultSet] | None,
    extra: Mapping[str, tuple[ResultSet, str]] | None,
    focus: Mapping[str, str] | None,
    links: Links | None,
) -> Report:
    sets, missing = load_dir(source, matrix, replace)
    origins: dict[str, str] = {}
    for cell, (rs, origin) in (extra or {}).items():
        sets = [s for s in sets if s.cell != cell] + [rs]
        missing.pop(cell, None)
        origins[cell] = origin
    # The registry's order (matrix.toml), then any framework a result set names that the registry no longer has.
    keys = [*matrix.frameworks, *sorted({rs.framework for rs in sets} - set(matrix.frameworks))]
    bisected = bisect_findings()
    mitigations = {k: dict(v) for k, v in _read_toml("mitigations.toml").get("probe", {}).items()}
    views = tuple(
        _framework_view(
            key,
            [rs for rs in sets if rs.framework == key],
            missing,
            matrix,
            origins,
            (focus or {}).get(key),
            bisected,
            mitigations,
        )
        for key in keys
    )
    reference_sets = [rs for rs in sets if rs.cell not in origins]
    dates = sorted(str(rs.environment.get("date", "")) for rs in reference_sets)
    newest = [v.newest for v in views if v.newest and not v.newest.origin]
    commits = sorted({c.commit for c in newest if c.commit})
    comparison = []
    for row in _read_toml("comparison.toml").get("question", []):
        answers = {v.key: _answers(v, list(row.get(v.key, [])), v.focus) for v in views}
        comparison.append(Question(row["question"], answers))
    checklist = []
    asked = [v for v in views if focus and v.key in focus]
    for section in _read_toml("checklist.toml").get("section", []):
        items = []
        for item in section.get("item", []):
            evidence: list[Answer] = []
            helps: list[ChecklistMitigation] = []
            for pid in item.get("probes", []):
                view = next((v for v in views if v.probe(probe_of(pid))), None)
                if focus and (view is None or view.key not in focus):
                    continue  # report --for: only the frameworks asked for
                found = _answers(view, [pid], view.focus if view else None)
                evidence += [a for a in found if a.said]
                helps += _checklist_mitigations(views, view, found, mitigations)
            absent = [a for a in evidence if a.absent and probe_of(a.probe_id) in mitigations]
            if helps:
                why_none = ""
            elif not evidence:
                why_none = "none: no probe is cited at the versions asked for"
            elif absent:
                why_none = (
                    "none applies: "
                    + ", ".join(f"`{a.probe_id}`" for a in absent)
                    + " has one, but is not in this version"
                )
            else:
                why_none = "none recorded for the probes cited (`reference/mitigations.toml`)"
            items.append(
                ChecklistItem(
                    item["question"],
                    item.get("why", ""),
                    tuple(evidence),
                    tuple(helps),
                    tuple(v.name for v in asked if not any(a.probe_id.startswith(f"{v.key}/") for a in evidence)),
                    why_none,
                )
            )
        checklist.append(ChecklistSection(section["title"], tuple(items)))
    notes = tuple(
        f"{v.name} {v.focus.label}: "
        + (
            f"local result set {v.focus.origin} (not in the reference)"
            if v.focus.origin
            else f"reference cell {v.focus.cell}"
        )
        for v in views
        if v.focus is not None and focus and v.key in focus
    )
    focused_views = [v for v in views if v.focus is not None and focus and v.key in focus]
    evidence_at = ", ".join(
        f"{v.package} {v.focus.label}" + (" (local run)" if v.focus.origin else "")
        for v in (focused_views or views)
        if v.focus
    )
    fields = (
        ("Framework", ", ".join(f"{v.name} ({v.package})" for v in focused_views)),
        ("Version", ", ".join(f"{v.package}=={v.focus.version}" for v in focused_views if v.focus)),
        ("Owner", ""),
        ("Decision", ""),
        (
            "Evidence",
            f"fanin reference {dates[-1] if dates else 'none'}"
            + (f" @{', '.join(commits)}" if commits else "")
            + (f"; observations at {evidence_at}" if evidence_at else ""),
        ),
    )
    report = Report(
        title="fanin reference report" if reference else "fanin matrix (local run)",
        source=shown(source),
        reference_date=dates[-1] if dates else "none",
        commit=", ".join(commits),
        frameworks=views,
        comparison=tuple(comparison),
        checklist=tuple(checklist),
        unreadable=sum(reason == UNREADABLE for reason in missing.values()),
        links=links or Links(),
        focus_notes=notes,
        focused=bool(focus),
        checklist_fields=fields,
        anchors={
            variant.observation_id: variant.observation_id
            if variant.suffix == "" or not variant.same_as_default
            else probe.id
            for view in views
            for probe in view.probes
            for variant in probe.variants
        },
    )
    pages: list[ComparePage] = []
    for view in views:
        pages += view.steps
        if len(view.columns) > 2:
            pages.append(_page_from_views(view, view.columns[0], view.columns[-1]))
        pages += [t.page for t in view.twins]
    with_columns = [v for v in views if v.focus]
    for left, right in itertools.combinations(with_columns, 2):
        assert left.focus and right.focus
        pages.append(compare_page(report, left.focus.cell, right.focus.cell))
    keys_found = tuple(k for k in (_key_finding(v) for v in views) if k is not None)
    return dataclasses.replace(report, compare_pages=tuple(pages), key_findings=keys_found)
