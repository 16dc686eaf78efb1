"""Everything a report shows, decided once from result sets and the reference's data files.

The renderers (Markdown, HTML, checklist) only format what is built here: which
observation goes in which cell, which versions collapse into one span, whether a
claim holds per span, which way a change went (compare's classifier) and where it
first appeared (bisect.json), when a mitigation is shown, which variants differ from
the default, the cite line and every link. They never read files or decide anything.
Nothing here imports a network client: bisect findings are read from
reference/bisect.json as plain JSON.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fanin.model import compare, scenarios, topics
from fanin.model import mitigations as mitigation_entries
from fanin.model.errors import FaninError
from fanin.model.matrix import Matrix
from fanin.model.names import canonicalize_name
from fanin.model.results import (
    HARMFUL,
    HAZARDS,
    NOT_APPLICABLE,
    Observation,
    ProbeInfo,
    ResultSet,
    probe_of,
)
from fanin.model.source import shown
from fanin.report import pages as report_pages
from fanin.report import sameness
from fanin.report.gcpause import while_paused
from fanin.report.legend import CHANGE_WORDS, NOT_APPLICABLE_THERE, NOT_PROBED, OBSERVED, UNREADABLE
from fanin.report.links import Links
from fanin.report.pages import (
    answers_at,
    compare_page,
    coverage_of,
    page_from_views,
    runtime_pairs,
    step_between,
    versions_page,
)
from fanin.report.read import bisect_findings, commit_of, load_dir, probe_reproducer, python_of, read_toml, version_key
from fanin.report.sameness import same_span
from fanin.report.view import (
    Answer,
    ChecklistItem,
    ChecklistMitigation,
    ChecklistSection,
    Cite,
    Column,
    ColumnGroup,
    ComparePage,
    Coverage,
    FrameworkView,
    KeyFinding,
    MatrixCell,
    MatrixRow,
    Mitigation,
    ProbeView,
    Question,
    Report,
    Span,
    Step,
    SummaryRow,
    TopicView,
    TwinView,
    VariantView,
)

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
    return KeyFinding(view, newest, tuple((h, hazards[h]) for h in order), examples, biggest, _coverage(at_newest))


def _coverage(observed: Sequence[tuple[ProbeView, Observation | None]]) -> Coverage:
    """Of a framework's probes at one version: how many observed an applicable behaviour, observed n/a, or none."""
    missing = sum(1 for _, o in observed if o is None)
    na = sum(1 for _, o in observed if o is not None and o.outcome == NOT_APPLICABLE)
    return Coverage(len(observed) - missing - na, na, missing)


def _question_coverage(questions: Sequence[Question], views: Sequence[FrameworkView]) -> dict[str, Coverage]:
    """Of the comparison's questions, per framework with a focus version: how many it observed, n/a, not probed."""
    found = {}
    for view in views:
        if view.focus is None:
            continue
        said = Counter(q.coverage.get(view.key, NOT_PROBED) for q in questions)
        found[view.key] = Coverage(said[OBSERVED], said[NOT_APPLICABLE_THERE], said[NOT_PROBED], "questions")
    return found


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
        step = step_between(
            observation_id, before, after, observations[before.cell], observations[after.cell], bisected
        )
        if step is not None:
            steps.append(step)
    by_after = {step.after_column.cell: step for step in steps if step.after_column and step.behaviour}
    spans: list[tuple[list[Column], Observation | None, str, Step | None]] = []  # made into Spans once whole
    for column in columns:
        observation = observations.get(column.cell)
        if spans and same_span(spans[-1][1], observation):
            spans[-1][0].append(column)
            continue
        verdict = ""
        if observation is not None and info.claim.expect:
            holds = info.claim.holds(observation)
            verdict = {True: "holds", False: "does not hold", None: "not applicable"}[holds]
        spans.append(([column], observation, verdict, by_after.get(column.cell)))
    made = tuple(Span(tuple(cols), observation, verdict, step) for cols, observation, verdict, step in spans)
    return VariantView(observation_id, suffix, dict(observations), made, tuple(steps), True)


def _differs(variant: VariantView, default: VariantView) -> bool:
    cells = set(variant.observations) | set(default.observations)
    return (
        any(not same_span(variant.observations.get(c), default.observations.get(c)) for c in cells)
        or variant.observations.keys() != default.observations.keys()
    )


def _columns(
    sets: Sequence[ResultSet], key: str, matrix: Matrix, origins: Mapping[str, str], named: frozenset[str] = frozenset()
) -> list[Column]:
    """`named`: the packages a companion bisect names; each column keeps its versions of them (a step's "changed with")."""
    built = []
    for rs in sorted(sets, key=lambda r: (version_key(r.version), r.cell)):
        installed = {canonicalize_name(k): str(v) for k, v in (rs.environment.get("packages") or {}).items()}
        python = python_of(rs, matrix)
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
                commit_of(rs),
                tuple((name, installed[name]) for name in sorted(named) if name in installed),
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
            same_span(v.observations.get(groups[-1][-1].cell), v.observations.get(column.cell)) for v in variants
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
    registered = topics.get(name)
    return TopicView(
        framework,
        name,
        tuple(probes),
        tuple(ColumnGroup(tuple(g)) for g in groups),
        tuple(rows),
        title=registered.title if registered else "",
        about=registered.about if registered else "",
    )


def _framework_view(
    key: str,
    sets: list[ResultSet],
    missing: dict[str, str],
    matrix: Matrix,
    origins: Mapping[str, str],
    focus_cell: str | None,
    bisected: Mapping[str, list[dict[str, Any]]],
    mitigations: Mapping[str, mitigation_entries.Entry],
) -> FrameworkView:
    named = frozenset(str(e["companion"]) for entries in bisected.values() for e in entries if "companion" in e)
    all_columns = _columns(sets, key, matrix, origins, named)
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
        reproducer, current, lines = probe_reproducer(info)
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
            mitigated = by_id.get(entry.probe)
            seen: Observation | None = None
            seen_at: Column | None = None
            if mitigated is not None:
                for candidate in reversed(
                    [c for c in main if focus is None or version_key(c.version) <= version_key(focus.version)]
                ):
                    if candidate.cell in mitigated.default.observations:
                        seen, seen_at = mitigated.default.observations[candidate.cell], candidate
                        break
            mitigation = Mitigation(
                entry.text,
                entry.source,
                mitigated.id if mitigated else "",
                seen,
                seen_at,
            )
            probe = dataclasses.replace(probe, mitigation=mitigation)
        finished.append(probe)

    steps = tuple(versions_page(name, a, b, by_cell, bisected, mitigations) for a, b in itertools.pairwise(main))
    twins = tuple(
        TwinView(c, twin, versions_page(name, twin, c, by_cell, {}, mitigations))
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
            len(finished) - sum(hazards.values()),
        )
        for column in main
        for hazards in [Counter(o.hazard for p in finished for o in [p.default.observations.get(column.cell)] if o)]
    )
    missing_here = tuple(sorted((cell, reason) for cell, reason in missing.items() if cell.startswith(f"{key}-")))
    return FrameworkView(
        key,
        name,
        package,
        tuple(main),
        twins,
        tuple(finished),
        topics,
        missing_here,
        focus,
        summary,
        steps,
        port_of=registered.port_of if registered else "",
    )


def _checklist_mitigations(
    views: Sequence[FrameworkView],
    view: FrameworkView | None,
    answers: Sequence[Answer],
    mitigations: Mapping[str, mitigation_entries.Entry],
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
        target = entry.probe
        observed = None
        if target:
            owner = next((v for v in views if v.probe(probe_of(target))), view)
            (observed,) = answers_at(owner, [target], owner.focus)
        at = f"{view.package} {answer.column.label}"
        out.append(ChecklistMitigation(answer.probe_id, entry.text, entry.source, observed, at))
    return out


def run_pages(cells: list[str], pages: Path, relative_to: Path) -> tuple[tuple[str, str], ...]:
    """The pytest-html page of each cell of a local run that has one, linked from the run's report."""
    found = []
    for cell in cells:
        page = pages / f"{cell}.html"
        if page.exists():
            found.append((cell, os.path.relpath(page, relative_to)))
    return tuple(found)


def core_questions(views: Sequence[FrameworkView], rows: Sequence[Mapping[str, Any]]) -> list[Question]:
    """The comparison's questions (reference/comparison.toml): per framework, the probes the row cites, then its
    probe of each scenario the row names (`scenarios = [...]`), or the framework's own probe the scenario names as
    observing exactly it (`same_as`: one source per framework, never both). Every framework with an adapter has a probe of
    every scenario, an observation or n/a with the adapter's reason, so a question a scenario answers has an
    answer for every such framework, never "no probe cited"."""
    catalogue = scenarios.catalogue()
    questions = []
    for row in rows:
        named = list(row.get("scenarios", []))
        unknown = [sid for sid in named if sid not in catalogue]
        if unknown:
            raise FaninError(f"reference/comparison.toml: {row['question']!r} names no such scenario {unknown}")
        answers = {}
        for view in views:
            cited = list(row.get(view.key, []))
            for sid in named:
                # A framework probe that observes exactly the scenario is that framework's source (same_as).
                probe_id = catalogue[sid].same_as(view.key) or f"{view.key}/{scenarios.TOPIC}/{sid}"
                if view.probe(probe_of(probe_id)) and probe_id not in cited:
                    cited.append(probe_id)
            answers[view.key] = answers_at(view, cited, view.focus)
        coverage = {key: coverage_of(found) for key, found in answers.items()}
        questions.append(Question(row["question"], answers, "", "", coverage))
    return questions


@while_paused
def scenario_questions(views: Sequence[FrameworkView]) -> list[Question]:
    """One comparison row per scenario (scenarios/*.toml): each framework's scenario probe at its focus version,
    and how many of the frameworks that observed it disagree with the most common hazard (the least harmful
    one on a tie), Bowtie's "N of M implementations disagree"."""
    rows = []
    for scenario in scenarios.catalogue().values():
        answers: dict[str, tuple[Answer, ...]] = {}
        groups: dict[str, list[str]] = {}
        for view in views:
            probe_id = f"{view.key}/{scenarios.TOPIC}/{scenario.id}"
            answers[view.key] = answers_at(view, [probe_id], view.focus) if view.probe(probe_id) else ()
            for answer in answers[view.key]:
                if answer.observation is not None and answer.observation.hazard != "n/a":
                    groups.setdefault(answer.observation.hazard, []).append(view.name)
        observed = sum(len(names) for names in groups.values())
        common = max(sorted(groups, key=compare.harm), key=lambda hazard: len(groups[hazard]), default="")
        shown = "; ".join(f"{hazard}: {', '.join(groups[hazard])}" for hazard in sorted(groups, key=compare.harm))
        said = f"{observed - len(groups.get(common, []))} of {observed} frameworks disagree ({shown})" if groups else ""
        coverage = {key: coverage_of(found) for key, found in answers.items()}
        rows.append(Question(f"Scenario {scenario.id}: {scenario.question}", answers, "", said, coverage))
    return rows


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
    sameness.clear()
    report_pages.clear()
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
    mitigations = mitigation_entries.entries(read_toml("mitigations.toml"))
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
    comparison = core_questions(views, read_toml("comparison.toml").get("question", []))
    comparison += scenario_questions(views)
    checklist = []
    asked = [v for v in views if focus and v.key in focus]
    for section in read_toml("checklist.toml").get("section", []):
        items = []
        for item in section.get("item", []):
            evidence: list[Answer] = []
            helps: list[ChecklistMitigation] = []
            for pid in item.get("probes", []):
                view = next((v for v in views if v.probe(probe_of(pid))), None)
                if focus and (view is None or view.key not in focus):
                    continue  # report --for: only the frameworks asked for
                found = answers_at(view, [pid], view.focus if view else None)
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
        mitigations=mitigations,
        comparison_coverage=_question_coverage(comparison, views),
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
            pages.append(page_from_views(view, view.columns[0], view.columns[-1], mitigations))
        pages += [t.page for t in view.twins]
    with_columns = [v for v in views if v.focus]
    for left, right in itertools.combinations(with_columns, 2):
        assert left.focus and right.focus
        pages.append(compare_page(report, left.focus.cell, right.focus.cell))
    keys_found = tuple(k for k in (_key_finding(v) for v in views) if k is not None)
    report = dataclasses.replace(report, compare_pages=tuple(pages), key_findings=keys_found)
    return dataclasses.replace(report, runtime_pairs=runtime_pairs(report))
