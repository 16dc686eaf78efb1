"""Compare pages and answers: a probe's observation at a column, two cells side by side, a question asked of two frameworks."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from packaging.version import InvalidVersion, Version

from fanin.model import compare, mitigations
from fanin.model.errors import FaninError
from fanin.model.results import (
    NOT_APPLICABLE,
    Observation,
    ResultSet,
    probe_of,
)
from fanin.model.suggest import LIST_CELLS, did_you_mean
from fanin.report.legend import CHANGE_WORDS, NOT_APPLICABLE_THERE, NOT_PROBED, OBSERVED
from fanin.report.sameness import same_behaviour
from fanin.report.view import (
    Answer,
    Column,
    CompareEntry,
    ComparePage,
    FrameworkView,
    Question,
    Report,
    RuntimePair,
    Step,
)

# A build asks for the step between two neighbouring columns twice (the probe's own steps, then the
# versions page of that pair): each is made once per build (kept until the next build starts).
_STEPS: dict[tuple[object, ...], tuple[tuple[object, ...], Step | None]] = {}


def clear() -> None:
    """Forget the steps made during the last build (a new build starts)."""
    _STEPS.clear()


def step_between(
    observation_id: str,
    before_column: Column | None,
    after_column: Column | None,
    before: Observation | None,
    after: Observation | None,
    bisected: Mapping[str, list[dict[str, Any]]],
) -> Step | None:
    asked = (before_column, after_column, before, after, bisected)
    key: tuple[object, ...] = (observation_id, *map(id, asked))
    found = _STEPS.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], asked, strict=True)):
        return found[1]
    step = _step_between(observation_id, before_column, after_column, before, after, bisected)
    _STEPS[key] = (asked, step)
    return step


def _step_between(
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
        and same_behaviour(before, after)
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
    first, skipped, crossed = "", tuple[str, ...](), dict[str, list[str]]()
    if before_column and after_column and change.is_breaking:
        for entry in bisected.get(observation_id, []):
            if "companion" in entry:
                release = _companion_change(entry, before_column, after_column)
                if release:
                    crossed.setdefault(release, []).append(str(entry.get("at", "?")))
            elif (entry.get("good"), entry.get("bad")) == (before_column.version, after_column.version):
                first = str(entry.get("first_changed") or "")
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
        "; ".join(
            f"{release} (its framework held at {', '.join(sorted(held, key=Version))})"
            for release, held in crossed.items()
        ),
    )


def _companion_change(entry: Mapping[str, Any], before: Column, after: Column) -> str:
    """`langgraph-checkpoint 4.3.0`: a companion release a companion bisect pinned this observation to, where the
    two cells' versions of that companion lie either side of it (else "")."""
    package, first = str(entry.get("companion", "")), str(entry.get("first_changed") or "")
    a, b = dict(before.companions).get(package), dict(after.companions).get(package)
    if not first or a is None or b is None:
        return ""
    try:
        crossed = Version(a) < Version(first) <= Version(b) or Version(b) < Version(first) <= Version(a)
    except InvalidVersion:
        return ""
    return f"{package} {first}" if crossed else ""


def worst_of(observations: Iterable[Observation], probe_id: str) -> Observation | None:
    """The most harmful of some observations, by compare's own order of harm (n/a only when all are)."""
    found = list(observations)
    applicable = [o for o in found if o.outcome != NOT_APPLICABLE] or found
    worst: Observation | None = None
    for observation in applicable:
        if worst is None or compare.classify(probe_id, worst, observation).direction == compare.Direction.REGRESSION:
            worst = observation
    return worst


def versions_page(
    name: str,
    a: Column,
    b: Column,
    by_cell: Mapping[str, ResultSet],
    bisected: Mapping[str, list[dict[str, Any]]],
    table: Mapping[str, mitigations.Entry],
) -> ComparePage:
    before, after = by_cell[a.cell], by_cell[b.cell]
    ids = sorted(set(before.observations) | set(after.observations))
    entries = []
    for oid in ids:
        step = step_between(oid, a, b, before.observations.get(oid), after.observations.get(oid), bisected)
        if step is not None:
            entries.append(CompareEntry(step, _proof(table, step, after.observations, b)))
    order = {word: index for index, word in enumerate(CHANGE_WORDS)}
    entries.sort(key=lambda e: (order.get(e.step.label, len(order)), e.observation_id))
    return ComparePage(a, b, name, name, tuple(entries), (), len(ids), Counter(probe_of(i) for i in ids))


def _proof(
    table: Mapping[str, mitigations.Entry], step: Step, target: Mapping[str, Observation], at: Column
) -> mitigations.Proof | None:
    """The mitigation beside a regression or changed row, proven (or not) by the newer cell's own observations."""
    found = mitigations.of_changes(table, [(step.observation_id, step.label)], target, at.label)
    return found.get(step.observation_id)


def answers_at(view: FrameworkView | None, probe_ids: Sequence[str], column: Column | None) -> tuple[Answer, ...]:
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


def runtime_pairs(rep: Report) -> tuple[tuple[FrameworkView, FrameworkView, tuple[RuntimePair, ...]], ...]:
    """Python vs JavaScript: a framework with `port_of` in the registry lines up every case the framework it ports has."""
    views = {v.key: v for v in rep.frameworks}
    found = []
    for node in rep.frameworks:
        python = views.get(node.port_of) if node.port_of else None
        if python is None:
            continue
        pairs = []
        for probe in node.probes:
            case = probe.id.split("/", 1)[1]
            if python.probe(f"{python.key}/{case}") is None:
                continue
            (py_answer,) = answers_at(python, [f"{python.key}/{case}"], python.focus)
            (js_answer,) = answers_at(node, [probe.id], node.focus)
            pairs.append(RuntimePair(case, py_answer, js_answer))
        found.append((python, node, tuple(pairs)))
    return tuple(found)


def coverage_of(answers: Sequence[Answer]) -> str:
    """One framework's answers to a question: not probed (no probe cited, or a cited one has no observation at
    that version), n/a (every cited probe observed the API missing), else observed."""
    if not answers or any(a.observation is None for a in answers):
        return NOT_PROBED
    if all(a.observation is not None and a.observation.outcome == NOT_APPLICABLE for a in answers):
        return NOT_APPLICABLE_THERE
    return OBSERVED


def _question_verdict(a_name: str, b_name: str, a: Sequence[Answer], b: Sequence[Answer], question: str) -> str:
    """Compare's classifier over the most harmful answer of each side, said between frameworks; no verdict where
    a side was not probed (its worst observation so far could be anything the unprobed case would outrank)."""
    unprobed = [name for name, side in ((a_name, a), (b_name, b)) if coverage_of(side) == NOT_PROBED]
    if len(unprobed) == 2:
        return "not comparable: neither side probed"
    if unprobed:
        return f"not comparable: {unprobed[0]} not probed"
    worst_a = worst_of([x.observation for x in a if x.observation], question)
    worst_b = worst_of([x.observation for x in b if x.observation], question)
    if worst_a is None or worst_b is None:
        return "not comparable: neither side probed"
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
            known = [c.cell for v in report.frameworks for c in (*v.columns, *(t.column for t in v.twins))]
            raise FaninError(f"no cell {cell!r} in this report{did_you_mean(cell, known, LIST_CELLS)}")
    if a == b:
        raise FaninError(f"compare names {a!r} twice; give two different cells")
    (view_a, col_a), (view_b, col_b) = found[a], found[b]
    if view_a.key == view_b.key:
        for page in (*view_a.steps, *(t.page for t in view_a.twins)):
            if (page.a.cell, page.b.cell) == (a, b):
                return page
        return page_from_views(view_a, col_a, col_b, report.mitigations)
    questions = []
    for question in report.comparison:
        ans_a = answers_at(view_a, [x.probe_id for x in question.answers.get(view_a.key, ())], col_a)
        ans_b = answers_at(view_b, [x.probe_id for x in question.answers.get(view_b.key, ())], col_b)
        verdict = _question_verdict(view_a.name, view_b.name, ans_a, ans_b, question.question)
        coverage = {view_a.key: coverage_of(ans_a), view_b.key: coverage_of(ans_b)}
        questions.append(Question(question.question, {view_a.key: ans_a, view_b.key: ans_b}, verdict, "", coverage))
    return ComparePage(col_a, col_b, view_a.name, view_b.name, (), tuple(questions), len(questions))


def page_from_views(view: FrameworkView, a: Column, b: Column, table: Mapping[str, mitigations.Entry]) -> ComparePage:
    """Two cells of one framework that are not neighbours: every variant's observation at each."""
    entries = []
    compared = 0
    counts: Counter[str] = Counter()
    at_b = {v.observation_id: o for p in view.probes for v in p.variants if (o := v.observations.get(b.cell))}
    for probe in view.probes:
        for variant in probe.variants:
            before, after = variant.observations.get(a.cell), variant.observations.get(b.cell)
            if before is None and after is None:
                continue
            compared += 1
            counts[probe.id] += 1
            step = step_between(variant.observation_id, a, b, before, after, {})
            if step is not None:
                entries.append(CompareEntry(step, _proof(table, step, at_b, b)))
    order = {word: index for index, word in enumerate(CHANGE_WORDS)}
    entries.sort(key=lambda e: (order.get(e.step.label, len(order)), e.observation_id))
    return ComparePage(a, b, view.name, view.name, tuple(entries), (), compared, counts)
