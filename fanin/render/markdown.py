"""Markdown with tabulate: the reference report, the local matrix, and the gate's table of changes."""

from __future__ import annotations

import json

from tabulate import tabulate

from fanin import compare
from fanin.model import Observation
from fanin.report import Answer, FrameworkView, ProbeRow, Report, hazard_counts

LABEL_WIDTH = 48

MARKS = {
    "silent": "🔴",
    "loud": "🟠",
    "order-coupled": "🟡",
    "nondeterministic": "🟣",
    "safe": "🟢",
    "n/a": "⚪",
}
MEANINGS = {
    "silent": "data lost or wrong, and no error",
    "loud": "an error stops the run",
    "order-coupled": "the result depends on the order the framework folds writes in",
    "nondeterministic": "the framework gives different results run to run (outcomes seen over N runs)",
    "safe": "every write kept, no ordering dependence",
    "n/a": "the probe does not apply to this version (the reason is given)",
}
CHANGED = "Δ"


def pretty_json(value: object, indent: str = "", width: int = 88) -> str:
    """JSON that stays on one line while it fits, so observed values read like the probe's data."""
    flat = json.dumps(value, sort_keys=True, ensure_ascii=False)
    if len(indent) + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + " "
    if isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {pretty_json(v, inner, width).lstrip()}"
            for k, v in sorted(value.items())
        ]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [inner + pretty_json(v, inner, width).lstrip() for v in value]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"


def label(text: str, width: int = LABEL_WIDTH) -> str:
    """A cell label short enough for a table, escaped for Markdown."""
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def anchor(probe_id: str) -> str:
    return f"#{probe_id}"


def cell_text(observation: Observation | None, changed: bool = False) -> str:
    if observation is None:
        return "not observed"
    return f"{MARKS[observation.hazard]} {label(observation.label)}" + (f" {CHANGED}" if changed else "")


def _legend() -> str:
    rows = [[MARKS[h], h, MEANINGS[h]] for h in MARKS]
    return (
        tabulate(rows, headers=["mark", "hazard", "meaning"], tablefmt="github")
        + f"\n\n{CHANGED} marks a cell whose outcome, hazard or value differs from the previous version of the"
        " same framework. Cell text is the observation's label; each probe's section has the detail and the value.\n"
    )


def _summary(views: list[FrameworkView]) -> str:
    out = []
    for view in views:
        if not view.columns:
            continue
        rows = [[c.version, *(n for _, n in hazard_counts(view.summary(c.cell)))] for c in view.columns]
        headers = ["version", *(f"{MARKS[h]} {h}" for h in MARKS)]
        out.append(f"**{view.name}**\n\n" + tabulate(rows, headers=headers, tablefmt="github") + "\n")
    return "\n".join(out)


def _matrix(view: FrameworkView) -> str:
    if not view.columns and not view.missing:
        return "No result sets.\n"
    headers = ["probe", *(c.version for c in view.columns), *(f"{cell} (not run)" for cell in sorted(view.missing))]
    rows = []
    for topic, probes in view.topics():
        rows.append([f"**{topic}**", *([""] * (len(headers) - 1))])
        for row in probes:
            cells = [cell_text(row.observations.get(c.cell), c.cell in row.changed_cells) for c in view.columns]
            cells += [f"not run: {view.missing[cell]}" for cell in sorted(view.missing)]
            rows.append([f"[`{row.id}`]({anchor(row.id)})", *cells])
    return tabulate(rows, headers=headers, tablefmt="github") + "\n"


def answer_text(answer: Answer) -> str:
    link = f"[`{answer.probe_id}`]({anchor(answer.probe_id)})"
    if answer.observation is None or answer.column is None:
        return f"not probed yet ({link} has no observation)"
    return f"{MARKS[answer.observation.hazard]} {label(answer.observation.label)} — {link}"


def _comparison(report: Report) -> str:
    if not report.comparison:
        return "No comparison questions (reference/comparison.toml).\n"
    views = [v for v in report.frameworks if v.newest]
    headers = ["question", *(f"{v.name} {v.newest.version}" for v in views if v.newest)]
    rows = [
        [
            q.question,
            *("<br>".join(answer_text(a) for a in q.answers.get(v.key, [])) or "no probe cited" for v in views),
        ]
        for q in report.comparison
    ]
    return tabulate(rows, headers=headers, tablefmt="github") + "\n"


def claim_verdicts(view: FrameworkView, row: ProbeRow) -> str:
    if not row.info.claim.expect:
        return "not machine-checked (the claim states no expected observation)"
    parts = []
    for span in view.spans(row):
        holds = row.info.claim.holds(span.observation)
        verdict = {True: "holds", False: "does not hold", None: "not applicable"}[holds]
        parts.append(f"{verdict} in {span.versions}")
    return "; ".join(parts)


def cite(view: FrameworkView, row: ProbeRow, reference_date: str) -> str:
    version = view.newest.version if view.newest else "?"
    package = view.package
    return f"fanin {row.id}@{row.info.source_hash} · {package} {version} · reference {reference_date}"


def changed_text(report: Report, row: ProbeRow) -> str:
    """Where the behaviour changed: the matrix range, and the exact release when bisected."""
    parts = []
    for before, after, change in row.changes:
        if not change.is_breaking:
            continue
        text = f"between {before.version} and {after.version} ({', '.join(change.fields)})"
        first = report.first_changed(row.id, before.version, after.version)
        parts.append(text + (f", first in {first} (bisected)" if first else ""))
    return "; ".join(parts) or f"no behaviour change across {len(row.observations)} versions"


def _probe_section(report: Report, view: FrameworkView, row: ProbeRow) -> str:
    info = row.info
    lines = [
        f'### <a id="{row.id}"></a>`{row.id}`',
        "",
        f"**{info.title}**",
        "",
        f"- **Claim:** {info.claim.text} ([source]({info.claim.source}))",
        f"- **Claim check:** {claim_verdicts(view, row)}",
    ]
    if info.sources:
        lines.append("- **See also:** " + ", ".join(f"<{s}>" for s in info.sources))
    lines.append(f"- **Changed:** {changed_text(report, row)}")
    minor = [(b, a) for b, a, c in row.changes if not c.is_breaking]
    if minor:
        lines.append("- **Wording changed:** " + "; ".join(f"between {b.version} and {a.version}" for b, a in minor))
    hazards = {o.hazard for o in row.observations.values()}
    mitigation = report.mitigations.get(info.id)
    if mitigation and hazards & {"silent", "loud", "order-coupled", "nondeterministic"}:
        lines.append(f"- **Mitigation:** {mitigation['text']} ([source]({mitigation['source']}))")
    lines += ["", "| versions | observed | outcome | detail |", "|---|---|---|---|"]
    for span in view.spans(row):
        o = span.observation
        lines.append(f"| {span.versions} | {cell_text(o)} | `{o.outcome}` | {label(o.detail, 200)} |")
    lines += ["", "<details><summary>observed values</summary>", ""]
    for span in view.spans(row):
        lines += [f"{span.versions}:", "", "```json", pretty_json(span.observation.value), "```", ""]
    lines += ["</details>", ""]
    where = f"{info.file}::{info.function}"
    if row.reproducer is None:
        lines.append(f"Reproducer: `{where}` (not in this checkout)")
    else:
        note = "" if row.reproducer_current else " — edited since these observations were made"
        lines += [f"Reproducer (`{where}`{note}):", "", "```python", row.reproducer.rstrip(), "```"]
    lines += ["", f"Cite as: `{cite(view, row, report.reference_date)}`", ""]
    return "\n".join(lines)


def report(rep: Report) -> str:
    parts = [f"# {rep.title}", ""]
    cells = ", ".join(
        f"{len(v.columns)} {v.name} cells ({v.columns[0].version} – {v.columns[-1].version})"
        for v in rep.frameworks
        if v.columns
    )
    parts += [
        (
            f"Rendered from `{rep.source}` by `python -m fanin report`; do not edit by hand. "
            f"Observations of {rep.reference_date}: {cells or 'no cells'}. "
            "The review checklist is in [CHECKLIST.md](CHECKLIST.md)."
        ),
        "",
        "## Legend",
        "",
        _legend(),
        "## Summary: probes per hazard, per version",
        "",
        _summary(rep.frameworks),
    ]
    for view in rep.frameworks:
        parts += [f"## {view.name}", "", _matrix(view)]
    names = " vs ".join(v.name for v in rep.frameworks)
    parts += [f"## {names}", "", "Each answer is the newest observation of the cited probe.", "", _comparison(rep)]
    parts += ["## Probes", ""]
    for view in rep.frameworks:
        for _, rows in view.topics():
            for row in rows:
                parts.append(_probe_section(rep, view, row))
    return "\n".join(parts).rstrip() + "\n"


def divergence(before: str, after: str) -> tuple[str, str]:
    """Drop the words two texts share at the start, so a table shows where they differ."""
    shared = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        shared += 1
    cut = before.rfind(" ", 0, shared) + 1 if shared < min(len(before), len(after)) else shared
    if cut <= 0:
        return before, after
    return "…" + before[cut:], "…" + after[cut:]


def changes(rows: list[compare.Change]) -> str:
    """The gate's table: one line per changed probe, before and after, from where they differ."""
    table = []
    for change in rows:
        before = f"[{change.before.hazard}] {change.before.detail}" if change.before else "—"
        after = f"[{change.after.hazard}] {change.after.detail}" if change.after else "—"
        if change.before and change.after:
            before, after = divergence(before, after)
        table.append([change.label, change.probe_id, label(before, 64), label(after, 64)])
    return tabulate(table, headers=["change", "probe", "before", "after"], tablefmt="github")
