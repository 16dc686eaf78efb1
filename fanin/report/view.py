"""The report's view model: frozen dataclasses holding everything a renderer shows, decided by the builder.

The renderers (Markdown, HTML, checklist) import only this module, `legend`, `links` and `documents`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from fanin.model.mitigations import Entry, Proof
from fanin.model.results import (
    HARMFUL,
    NOT_APPLICABLE,
    Observation,
    ProbeInfo,
    probe_of,
)
from fanin.report.documents import compare_page
from fanin.report.legend import CHANGE_WORDS, NO_PROVEN_MITIGATION, NOT_APPLICABLE_THERE, NOT_PROBED, OBSERVED
from fanin.report.links import Links
from fanin.report.sameness import shown_key


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
    companions: tuple[tuple[str, str], ...] = ()  # its versions of the packages a companion bisect names

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
    companion_changed: str = (
        ""  # a companion bisect in this step: `langgraph-checkpoint 4.3.0 (its framework held at 1.2.14)`
    )

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
        if self.companion_changed:
            text += f", changed with {self.companion_changed} (bisected)"
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
    title: str = ""  # the topic registry's (reference/topics.toml); empty for a topic it lacks
    about: str = ""

    @property
    def anchor(self) -> str:
        return f"matrix-{self.framework}-{self.name}"


@dataclass(frozen=True)
class CompareEntry:
    """One observation id that differs between two cells, classified by compare."""

    step: Step
    proof: Proof | None = None  # a regression's or changed row's mitigation at the newer cell (fanin.model.mitigations)

    @property
    def observation_id(self) -> str:
        return self.step.observation_id

    @property
    def probe_id(self) -> str:
        return probe_of(self.step.observation_id)


@dataclass(frozen=True)
class Part:
    """A piece of a sentence both renderers say alike: words they escape, a probe they link, a legend term they
    mark, or a sign they write as it is."""

    text: str
    kind: str = "text"  # "text", "probe" (a link to that probe's section), "term" or "sign"


def mitigation_parts(proof: Proof | None) -> tuple[Part, ...]:
    """A compare row's mitigation: its text and the probe that proves it at the newer version, or why there is none."""
    if proof is None:
        return (Part("—", "sign"),)
    if proof.proven and proof.entry is not None:
        return (
            Part(proof.entry.text),
            Part(" — proven: ", "sign"),
            Part(proof.mitigated, "probe"),
            Part(" safe at ", "sign"),
            Part(proof.at),
        )
    before, pid, after = proof.reason
    parts = [Part(NO_PROVEN_MITIGATION, "term"), Part(" (", "sign"), Part(before)]
    parts += [Part(pid, "probe")] if pid else []
    parts += [Part(after), Part(")", "sign")]
    if proof.entry and proof.entry.text:
        parts += [Part("; suggested: ", "sign"), Part(proof.entry.text)]
    return tuple(parts)


@dataclass(frozen=True)
class CompareGroup:
    """Variants of one probe that changed alike (same direction, same before and after): one row."""

    probe_id: str
    observation_ids: tuple[str, ...]
    step: Step  # the first variant's change; the others' are the same
    of: int = 1  # how many variants of the probe were compared
    proof: Proof | None = None  # the probe's mitigation at the newer cell, where the row is a regression or changed

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
    disagreement: str = ""  # a scenario's row: "2 of 4 frameworks disagree (silent: …; loud: …)"
    coverage: Mapping[str, str] = field(default_factory=dict)  # framework key -> observed / n/a / not probed


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
        return compare_page(self.a.cell, self.b.cell)

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

    @functools.cached_property
    def grouped(self) -> tuple[CompareGroup, ...]:
        """The entries with the variants of a probe that changed alike folded into one group (made once a page:
        the Markdown and the HTML page each ask for it twice)."""
        groups: dict[tuple[str, str, str, str, str], list[CompareEntry]] = {}
        for entry in self.entries:
            step = entry.step
            # variants that changed with different companions are told apart (SQLite's saver, not the core's)
            key = (entry.probe_id, step.label, shown_key(step.before), shown_key(step.after), step.companion_changed)
            groups.setdefault(key, []).append(entry)
        return tuple(
            CompareGroup(
                found[0].probe_id,
                tuple(e.observation_id for e in found),
                found[0].step,
                self.variant_counts.get(found[0].probe_id, 1),
                found[0].proof,
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
            both = sum(1 for q in self.questions if q.coverage and NOT_PROBED not in q.coverage.values())
            share = f"{round(100 * both / len(self.questions))}%" if self.questions else "—"
            return (
                f"{len(self.questions)} {unit}, {both} probed on both sides ({share}), the rest not compared:"
                f" {counts or 'none'}"
            )
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
    not_probed: int = 0  # the framework's probes with no observation at this version (newer than its run)

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
    port_of: str = ""  # the registry's port_of: the framework whose probes of the same case this one lines up with

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
class Coverage:
    """How much a count speaks of: of `of` probes (or questions), how many observed, n/a or not probed there.

    A count alone ("22 silent") follows how many probes a framework has and reads as a ranking; a share of
    what was observed, with the rest said apart, does not.
    """

    observed: int  # an applicable observation
    not_applicable: int  # observed n/a: the API is missing there
    not_probed: int  # no observation there (no probe cited, or none ran at that version)
    unit: str = "probes"

    @property
    def of(self) -> int:
        return self.observed + self.not_applicable + self.not_probed

    def percent(self, n: int) -> str:
        return f"{round(100 * n / self.observed)}%" if self.observed else "—"

    def share(self, n: int) -> str:
        """`22 of 94 observed (23%)`."""
        return f"{n} of {self.observed} {OBSERVED} ({self.percent(n)})"

    @property
    def text(self) -> str:
        """`of 100 probes: 94 observed, 5 n/a, 1 not probed`."""
        parts = ((OBSERVED, self.observed), (NOT_APPLICABLE_THERE, self.not_applicable), (NOT_PROBED, self.not_probed))
        return f"of {self.of} {self.unit}: " + ", ".join(f"{n} {word}" for word, n in parts)


@dataclass(frozen=True)
class KeyFinding:
    """A framework in one line at the report's top: its worst hazards at the newest version, its biggest change."""

    framework: FrameworkView
    column: Column  # the newest version
    counts: tuple[tuple[str, int], ...]  # (harmful hazard, probes) at that version, worst first, zeros left out
    examples: tuple[ProbeView, ...]  # up to three probes with the worst hazard there
    biggest: ComparePage | None  # the step between adjacent versions with the most behaviour changes
    coverage: Coverage = field(default_factory=lambda: Coverage(0, 0, 0))  # the framework's probes at that version

    @property
    def shares_text(self) -> str:
        """`silent in 22 of 94 observed (23%), hangs in 1 (1%)`: shares of what was observed, worst first."""
        c = self.coverage
        parts = [
            f"{hazard} in {c.share(n)}" if i == 0 else f"{hazard} in {n} ({c.percent(n)})"
            for i, (hazard, n) in enumerate(self.counts)
        ]
        return ", ".join(parts) or f"no harmful hazard in {c.observed} {OBSERVED}"


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
    site_copies: tuple[tuple[str, str], ...] = ()  # the site's permanent copies, (tag, date), its index lists
    key_findings: tuple[KeyFinding, ...] = ()  # the opening: one line per framework
    # Python vs JavaScript: (Python framework, its Node framework, the probe ids both observe)
    runtime_pairs: tuple[tuple[FrameworkView, FrameworkView, tuple[RuntimePair, ...]], ...] = ()
    mitigations: Mapping[str, Entry] = field(default_factory=dict)  # reference/mitigations.toml, by hazard probe id
    comparison_coverage: Mapping[str, Coverage] = field(default_factory=dict)  # framework key -> over the questions

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
            return f"{probe.cite.text} · {self.links.cite(probe.id, source)}"
        return probe.cite.text

    def with_links(self, links: Links, inline_reproducers: bool | None = None) -> Report:
        keep = self.inline_reproducers if inline_reproducers is None else inline_reproducers
        return dataclasses.replace(self, links=links, inline_reproducers=keep)

    def retitled(self, title: str) -> Report:
        return dataclasses.replace(self, title=title)

    @property
    def frameworks_with_columns(self) -> tuple[FrameworkView, ...]:
        return tuple(v for v in self.frameworks if v.columns)


@dataclass(frozen=True)
class Badge:
    """One framework at its newest version, or one cell: its probes per hazard, said small (badges/<name>.svg)."""

    name: str  # the file's stem: the framework key, or the cell id
    subject: str  # "LangGraph 1.2.24"
    counts: tuple[tuple[str, int], ...]  # (hazard, probes), worst first by the order of harm, n/a last, no zeros
    worst: str  # the hazard that colours it: the worst applicable one (n/a only when every probe is)


@dataclass(frozen=True)
class Trend:
    """A framework's probes per hazard across its versions (trend/<key>.svg), the Summary's numbers drawn."""

    key: str
    name: str
    hazards: tuple[str, ...]  # the order the bars stack, worst first; every hazard, shown or not
    points: tuple[tuple[Column, tuple[int, ...]], ...]  # per version, oldest first: probes per hazard


@dataclass(frozen=True)
class FeedEntry:
    """One behaviour change between adjacent versions, as the report's step says it (feed.atom, feed.json)."""

    id: str  # stable: the observation id and the two cells
    framework: str  # the framework key
    name: str  # its display name
    page: ComparePage  # the two versions' compare page
    step: Step
    date: str  # when the newer version was probed (its result set's date)
