"""The design-review checklist: Markdown a reviewer pastes into a design doc.

Fields to fill at the top; each item cites probes with what each observed at the
version the review is about (`report --for`) or else the newest, with the cite hash,
so the reason an item matters is evidence, not opinion. Nothing is truncated.
"""

from __future__ import annotations

from fanin.report.documents import CHECKLIST_MD, REPORT_MD
from fanin.report.legend import HAZARD_STYLES
from fanin.report.view import Answer, ChecklistMitigation, Report

BLANK = "_…_"
HINTS = {"Owner": "name, team", "Decision": "adopt / adopt with mitigations / do not adopt"}


def _text(text: str) -> str:
    return " ".join(text.split())


def evidence(report: Report, answer: Answer, source: str = CHECKLIST_MD) -> str:
    link = f"[`{answer.probe_id}`]({report.links.probe(report.anchor(answer.probe_id), source)})"
    if answer.observation is None or answer.column is None or answer.cite is None:
        return f"{link}: not probed yet"
    o = answer.observation
    where = f"{answer.cite.package} {answer.column.label}" + (", local run" if answer.column.origin else "")
    if answer.absent:
        return f"{link}@{answer.cite.source_hash}: {_text(answer.absent)}"
    style = HAZARD_STYLES[o.hazard]
    return (
        f"{link}@{answer.cite.source_hash} ({where}): {style.mark} {style.word} · {_text(o.label)} — {_text(o.detail)}"
    )


def mitigation(report: Report, m: ChecklistMitigation, source: str = CHECKLIST_MD) -> str:
    text = f"{_text(m.text)} ([source]({m.source}))" if m.source else _text(m.text)
    link = f"[`{m.probe_id}`]({report.links.probe(report.anchor(m.probe_id), source)})"
    if m.observed is None:
        return f"for {link}: {text}; no mitigation probe yet"
    if m.observed.observation is None:
        return f"for {link}: {text}; `{m.observed.probe_id}` has no observation at {m.at}"
    return f"for {link}: {text}; with it, {evidence(report, m.observed, source)}"


def checklist(report: Report, source: str = CHECKLIST_MD) -> str:
    at = "the versions asked for" if report.focused else "the newest version of each framework"
    full = report.links.href(REPORT_MD, "", source)
    lines = [
        "# Fan-out / fan-in design review checklist",
        "",
        "| field | answer |",
        "|---|---|",
        *(
            f"| {name} | {value or BLANK + (f' ({HINTS[name]})' if name in HINTS else '')} |"
            for name, value in report.checklist_fields
        ),
        "",
        "Paste this into the design doc, fill in the fields and answer every item. Each item cites the fanin probes",
        f"that show why it matters, with what they observed at {at} (`probe@hash` names the exact",
        f"probe code; details, reproducers and every version in [REPORT.md]({full})). Rendered by",
        "`python -m fanin report`; edit `reference/checklist.toml`, not this file.",
        "",
    ]
    number = 0
    for section in report.checklist:
        lines += [f"## {section.title}", ""]
        for item in section.items:
            number += 1
            lines.append(f"- [ ] **{number}. {item.question}**")
            lines.append(f"  - Answer: {BLANK}")
            if item.why:
                lines.append(f"  - Why it matters: {_text(item.why)}")
            for answer in item.evidence:
                lines.append(f"  - Evidence: {evidence(report, answer, source)}")
            for name in item.left_out:
                lines.append(f"  - Evidence: no {name} probe is cited for this item")
            for m in item.mitigations:
                lines.append(f"  - Mitigation {mitigation(report, m, source)}")
            if item.no_mitigation:
                lines.append(f"  - Mitigation: {item.no_mitigation}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
