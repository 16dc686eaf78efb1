"""The report in short forms: a badge per framework and per cell, a trend per framework, the feed of behaviour changes.

Part of the builder: it decides what each short form says (which counts, in which order, which hazard
colours a badge, which changes are news and in which order) from the built report, so the renderers
(`svg`, `feed`) only format. Counts are the Summary's (each probe once, by its default variant); a
change is a step of the report's own (compare's classifier) between two adjacent versions.
"""

from __future__ import annotations

from fanin.model import compare
from fanin.model.results import HAZARDS, NOT_APPLICABLE
from fanin.report.view import Badge, FeedEntry, FrameworkView, Report, Step, SummaryRow, Trend

# Worst first by the order of harm; among equals the legend's order; n/a (no harm: the probe does not apply) last.
STACK = tuple(sorted(HAZARDS, key=lambda h: (h == NOT_APPLICABLE, -compare.harm(h), HAZARDS.index(h))))
# The changes a feed reports: a behaviour that moved (not wording, not a probe new to the catalogue).
NEWS = tuple(d.value for d in compare.Direction)


def _badge(name: str, subject: str, row: SummaryRow) -> Badge:
    found = dict(row.counts)
    counts = tuple((h, found[h]) for h in STACK if found.get(h))
    applicable = [h for h, _ in counts if h != NOT_APPLICABLE]
    return Badge(name, subject, counts, applicable[0] if applicable else NOT_APPLICABLE)


def badges(rep: Report) -> tuple[Badge, ...]:
    """Per framework (its newest version, badges/<key>.svg), then per cell (badges/<cell>.svg)."""
    found: list[Badge] = []
    for view in rep.frameworks_with_columns:
        newest = view.summary[-1]
        found.append(_badge(view.key, f"{view.name} {newest.column.label}", newest))
        found += [_badge(row.column.cell, f"{view.name} {row.column.label}", row) for row in view.summary]
    return tuple(found)


def trend(view: FrameworkView) -> Trend:
    points = tuple((row.column, tuple(dict(row.counts).get(h, 0) for h in STACK)) for row in view.summary)
    return Trend(view.key, view.name, STACK, points)


def trends(rep: Report) -> tuple[Trend, ...]:
    return tuple(trend(view) for view in rep.frameworks_with_columns)


def entry_id(observation_id: str, before: str, after: str) -> str:
    """Stable across re-renders and re-probes: what changed, between which two cells."""
    return f"urn:fanin:change:{observation_id}:{before}:{after}"


def _harm(step: Step) -> tuple[int, int]:
    """How harmful the behaviour became, then was (a loud behaviour that went silent: (4, 2))."""
    after = step.after.hazard if step.after else NOT_APPLICABLE
    before = step.before.hazard if step.before else NOT_APPLICABLE
    return compare.harm(after), compare.harm(before)


def feed(rep: Report, framework: str | None = None) -> tuple[FeedEntry, ...]:
    """Every behaviour change between adjacent versions (of one framework, or all).

    Newest first (the newer version's probe date); within a date, regressions first, then by how harmful
    the behaviour became, then was, then the registry's order of frameworks, the newer version first.
    """
    ranked: list[tuple[tuple[object, ...], FeedEntry]] = []
    for place, view in enumerate(rep.frameworks_with_columns):
        if framework is not None and view.key != framework:
            continue
        for position, page in enumerate(view.steps):
            for compared in page.entries:
                step = compared.step
                if step.label not in NEWS:
                    continue
                became, was = _harm(step)
                key = (compare.change_order(step.label), -became, -was, place, -position, step.observation_id)
                uid = entry_id(step.observation_id, page.a.cell, page.b.cell)
                ranked.append((key, FeedEntry(uid, view.key, view.name, page, step, page.b.date)))
    ranked.sort(key=lambda pair: pair[0])
    ranked.sort(key=lambda pair: pair[1].date, reverse=True)  # stable: the order above holds within a date
    return tuple(entry for _, entry in ranked)
