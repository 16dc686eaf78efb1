"""Everything a report shows, assembled once from result sets and the reference's data files.

The renderers (Markdown, HTML, checklist) only format this; they never read
files or decide anything. One unreadable result file never hides the other
cells: it shows as "not run" with the reason.
"""

from __future__ import annotations

import itertools
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import Version

from fanin import bisect, compare, failures
from fanin.errors import FaninError
from fanin.matrix import Matrix
from fanin.model import HAZARDS, Observation, ProbeInfo, ResultFileError, ResultSet, load, probe_of
from fanin.source import REPO_ROOT, parse_file, probe_source_hash, shown

REFERENCE = REPO_ROOT / "reference"


@dataclass(frozen=True)
class Column:
    cell: str
    framework: str
    version: str
    python: str


@dataclass(frozen=True)
class Span:
    """Consecutive versions with the same observation."""

    first: Column
    last: Column
    observation: Observation

    @property
    def versions(self) -> str:
        return self.first.version if self.first == self.last else f"{self.first.version} – {self.last.version}"


@dataclass
class ProbeRow:
    """One observation id (a probe, or one variant of it: `id[postgres]`) across the cells."""

    info: ProbeInfo
    reproducer: str | None
    reproducer_current: bool
    observations: dict[str, Observation]
    changes: list[tuple[Column, Column, compare.Change]] = field(default_factory=list)
    id: str = ""

    def __post_init__(self) -> None:
        self.id = self.id or self.info.id

    @property
    def changed_cells(self) -> set[str]:
        return {after.cell for _, after, change in self.changes if change.is_breaking}


@dataclass
class FrameworkView:
    key: str
    columns: list[Column]
    probes: list[ProbeRow]
    missing: dict[str, str]
    name: str = ""  # the registry's display name
    package: str = ""  # the PyPI distribution, as a cite line names it

    @property
    def newest(self) -> Column | None:
        return self.columns[-1] if self.columns else None

    def topics(self) -> list[tuple[str, list[ProbeRow]]]:
        grouped: dict[str, list[ProbeRow]] = {}
        for row in self.probes:
            grouped.setdefault(row.info.topic, []).append(row)
        return list(grouped.items())

    def summary(self, cell: str) -> Counter[str]:
        return Counter(row.observations[cell].hazard for row in self.probes if cell in row.observations)

    def spans(self, row: ProbeRow) -> list[Span]:
        spans: list[Span] = []
        for column in self.columns:
            observation = row.observations.get(column.cell)
            if observation is None:
                continue
            if spans and _same(spans[-1].observation, observation):
                spans[-1] = Span(spans[-1].first, column, spans[-1].observation)
            else:
                spans.append(Span(column, column, observation))
        return spans


@dataclass(frozen=True)
class Answer:
    probe_id: str
    column: Column | None
    observation: Observation | None


@dataclass(frozen=True)
class Question:
    question: str
    answers: dict[str, list[Answer]]


@dataclass(frozen=True)
class ChecklistItem:
    question: str
    why: str
    probes: tuple[str, ...]


@dataclass(frozen=True)
class ChecklistSection:
    title: str
    items: tuple[ChecklistItem, ...]


@dataclass
class Report:
    title: str
    source: str
    reference_date: str
    frameworks: list[FrameworkView]
    comparison: list[Question]
    checklist: list[ChecklistSection]
    mitigations: dict[str, dict[str, str]]
    bisected: dict[str, list[dict[str, Any]]]
    unreadable: int

    def first_changed(self, probe_id: str, good: str, bad: str) -> str | None:
        """The release `bisect` found for this change, when someone ran it."""
        for entry in self.bisected.get(probe_id, []):
            if (entry["good"], entry["bad"]) == (good, bad):
                return str(entry["first_changed"])
        return None

    def package_of(self, framework: str) -> str:
        return next((v.package for v in self.frameworks if v.key == framework), framework)

    def probe(self, probe_id: str) -> tuple[FrameworkView, ProbeRow] | None:
        for view in self.frameworks:
            for row in view.probes:
                if row.id == probe_id:
                    return view, row
        return None

    def newest_answer(self, probe_id: str) -> Answer:
        found = self.probe(probe_id)
        if found is None:
            return Answer(probe_id, None, None)
        view, row = found
        for column in reversed(view.columns):
            if column.cell in row.observations:
                return Answer(probe_id, column, row.observations[column.cell])
        return Answer(probe_id, None, None)


def _same(a: Observation, b: Observation) -> bool:
    """One span of versions: the same behaviour, shown with the same label."""
    return (a.behaviour, a.label) == (b.behaviour, b.label)


UNREADABLE = "unreadable result set"


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
        marker = None if name in replace else failures.reason(path)
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
            missing[cell.id] = failures.reason(source / f"{cell.id}.json") or "no result set"
    return sets, missing


def _reproducer(info: ProbeInfo) -> tuple[str | None, bool]:
    """The probe's code as it is in suites/ now, and whether it is the code that was observed."""
    path = REPO_ROOT / info.file
    if not info.file or not path.is_file():
        return None, False
    try:
        return parse_file(path).function(info.function), probe_source_hash(path, info.function) == info.source_hash
    except LookupError:
        return None, False


def _framework_view(key: str, sets: list[ResultSet], missing: dict[str, str], matrix: Matrix) -> FrameworkView:
    sets = sorted(sets, key=lambda rs: Version(rs.version))
    columns = [Column(rs.cell, key, rs.version, rs.environment.get("python", "?")) for rs in sets]
    infos: dict[str, ProbeInfo] = {}
    for rs in sets:  # the newest declaration wins: it is the one the report shows
        infos.update(rs.probes)
    rows = []
    observation_ids = sorted({oid for rs in sets for oid in rs.observations if probe_of(oid) in infos})
    for observation_id in observation_ids:
        info = infos[probe_of(observation_id)]
        reproducer, current = _reproducer(info)
        observations = {rs.cell: rs.observations[observation_id] for rs in sets if observation_id in rs.observations}
        row = ProbeRow(info, reproducer, current, observations, id=observation_id)
        present = [c for c in columns if c.cell in observations]
        for before, after in itertools.pairwise(present):
            change = compare.classify(observation_id, observations[before.cell], observations[after.cell])
            if change.kind != compare.SAME:
                row.changes.append((before, after, change))
        rows.append(row)
    framework_missing = {cell: reason for cell, reason in missing.items() if cell.startswith(f"{key}-")}
    registered = matrix.frameworks.get(key)
    name, package = (registered.display, registered.package) if registered else (key, key)
    return FrameworkView(key, columns, rows, framework_missing, name, package)


def _read_toml(name: str) -> dict[str, Any]:
    path = REFERENCE / name
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise FaninError(f"{shown(path)}: not valid TOML ({exc})") from None


def build(source: Path, matrix: Matrix, reference: bool, replace: dict[str, ResultSet] | None = None) -> Report:
    sets, missing = load_dir(source, matrix, replace)
    # The registry's order (matrix.toml), then any framework a result set names that the registry no longer has.
    keys = [*matrix.frameworks, *sorted({rs.framework for rs in sets} - set(matrix.frameworks))]
    views = [_framework_view(key, [rs for rs in sets if rs.framework == key], missing, matrix) for key in keys]
    dates = sorted(str(rs.environment.get("date", "")) for rs in sets)
    report = Report(
        title="fanin reference report" if reference else "fanin matrix (local run)",
        source=shown(source),
        reference_date=dates[-1] if dates else "none",
        frameworks=views,
        comparison=[],
        checklist=[],
        mitigations={k: dict(v) for k, v in _read_toml("mitigations.toml").get("probe", {}).items()},
        bisected=bisect.findings(),
        unreadable=sum(reason == UNREADABLE for reason in missing.values()),
    )
    for row in _read_toml("comparison.toml").get("question", []):
        answers = {key: [report.newest_answer(pid) for pid in row.get(key, [])] for key in keys}
        report.comparison.append(Question(row["question"], answers))
    for section in _read_toml("checklist.toml").get("section", []):
        items = tuple(
            ChecklistItem(item["question"], item.get("why", ""), tuple(item.get("probes", [])))
            for item in section.get("item", [])
        )
        report.checklist.append(ChecklistSection(section["title"], items))
    return report


def hazard_counts(counter: Counter[str]) -> list[tuple[str, int]]:
    return [(hazard, counter.get(hazard, 0)) for hazard in HAZARDS]
