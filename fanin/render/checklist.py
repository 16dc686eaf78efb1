"""The design-review checklist: Markdown a reviewer pastes into a design doc.

Each item cites probes, with what each observed at the newest reference version,
so the reason an item matters is evidence, not opinion.
"""

from __future__ import annotations

from fanin.render.markdown import MARKS, label
from fanin.report import Report


def evidence(report: Report, probe_id: str) -> str:
    answer = report.newest_answer(probe_id)
    link = f"[`{probe_id}`](REPORT.md#{probe_id})"
    if answer.observation is None or answer.column is None:
        return f"{link}: not probed yet"
    package = report.package_of(answer.column.framework)
    o = answer.observation
    return f"{link} ({package} {answer.column.version}): {MARKS[o.hazard]} {label(o.label)} — {label(o.detail, 160)}"


def checklist(report: Report) -> str:
    lines = [
        "# Fan-out / fan-in design review checklist",
        "",
        "Paste this into the design doc and answer every item. Each item cites the fanin probes that show why",
        f"it matters, with what they observed at the newest version in the reference of {report.reference_date}",
        "(details, reproducers and every version in [REPORT.md](REPORT.md)). Rendered by `python -m fanin report`;",
        "edit `reference/checklist.toml`, not this file.",
        "",
    ]
    number = 0
    for section in report.checklist:
        lines += [f"## {section.title}", ""]
        for item in section.items:
            number += 1
            lines.append(f"- [ ] **{number}. {item.question}**")
            lines.append("  - Answer: _…_")
            if item.why:
                lines.append(f"  - Why it matters: {item.why}")
            for probe_id in item.probes:
                lines.append(f"  - Evidence: {evidence(report, probe_id)}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
