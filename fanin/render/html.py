"""One self-contained HTML page: the matrix coloured by hazard, the comparison, every probe.

No scripts, fonts or images from anywhere: the page opens offline, and every
probe id is an anchor (`matrix.html#langgraph/join/separate-edges`).
"""

from __future__ import annotations

from html import escape

from fanin.model import Observation
from fanin.render.markdown import CHANGED, MEANINGS, changed_text, cite, claim_verdicts, pretty_json
from fanin.report import Answer, FrameworkView, ProbeRow, Report, hazard_counts

COLOURS = {
    "silent": "#f8c4c4",
    "loud": "#fcd9b0",
    "order-coupled": "#fbefa8",
    "nondeterministic": "#dccaf5",
    "safe": "#c8ecc8",
    "n/a": "#e6e6e6",
}

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1600px; padding: 1rem 2rem; color: #1d1d1f; }
h1 { margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; } h3 { margin-top: 1.8rem; }
table { border-collapse: collapse; margin: .6rem 0; }
th, td { border: 1px solid #c9c9c9; padding: .25rem .45rem; vertical-align: top; text-align: left; }
th { background: #f3f3f3; position: sticky; top: 0; }
.matrix { table-layout: fixed; width: 100%; min-width: 60rem; }
.matrix th:first-child { width: 13rem; }
.matrix td.obs { font-size: 12px; overflow-wrap: anywhere; }
.matrix td.topic { background: #fafafa; font-weight: 600; }
.wrap { overflow-x: auto; }
code, pre { font: 12.5px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: .6rem; overflow-x: auto; }
.changed { font-weight: 700; }
.probe { border-top: 1px solid #e5e5e5; padding-top: .4rem; }
.meta { color: #555; }
.legend td:first-child { width: 2.5rem; }
"""
STYLE += "".join(f".h-{hazard.replace('/', '')} {{ background: {colour}; }}\n" for hazard, colour in COLOURS.items())


def hazard_class(hazard: str) -> str:
    return "h-" + hazard.replace("/", "")


def _obs_cell(observation: Observation | None, changed: bool) -> str:
    if observation is None:
        return '<td class="obs">not observed</td>'
    mark = f' <span class="changed" title="changed from the previous version">{CHANGED}</span>' if changed else ""
    return (
        f'<td class="obs {hazard_class(observation.hazard)}" title="{escape(observation.detail)}">'
        f"{escape(observation.label)}{mark}</td>"
    )


def _matrix(view: FrameworkView) -> str:
    head = "".join(f"<th>{escape(c.version)}</th>" for c in view.columns)
    head += "".join(f"<th>{escape(cell)}<br>(not run)</th>" for cell in sorted(view.missing))
    rows = []
    width = 1 + len(view.columns) + len(view.missing)
    for topic, probes in view.topics():
        rows.append(f'<tr><td class="topic" colspan="{width}">{escape(topic)}</td></tr>')
        for row in probes:
            cells = "".join(_obs_cell(row.observations.get(c.cell), c.cell in row.changed_cells) for c in view.columns)
            cells += "".join(
                f'<td class="obs">not run: {escape(view.missing[cell])}</td>' for cell in sorted(view.missing)
            )
            breakable = escape(row.id).replace("/", "/<wbr>")
            rows.append(f'<tr><td><a href="#{escape(row.id)}"><code>{breakable}</code></a></td>{cells}</tr>')
    return f'<div class="wrap"><table class="matrix"><tr><th>probe</th>{head}</tr>{"".join(rows)}</table></div>'


def _summary(view: FrameworkView) -> str:
    head = "".join(f'<th class="{hazard_class(h)}">{escape(h)}</th>' for h in COLOURS)
    rows = "".join(
        f"<tr><td>{escape(c.version)}</td>"
        + "".join(f"<td>{n}</td>" for _, n in hazard_counts(view.summary(c.cell)))
        + "</tr>"
        for c in view.columns
    )
    return f"<table><tr><th>{escape(view.name)}</th>{head}</tr>{rows}</table>"


def _answer(answer: Answer) -> str:
    link = f'<a href="#{escape(answer.probe_id)}"><code>{escape(answer.probe_id)}</code></a>'
    if answer.observation is None:
        return f"<div>not probed yet ({link} has no observation)</div>"
    o = answer.observation
    return f'<div><span class="{hazard_class(o.hazard)}">{escape(o.label)}</span> — {link}</div>'


def _comparison(report: Report) -> str:
    views = [v for v in report.frameworks if v.newest]
    head = "".join(f"<th>{escape(v.name)} {escape(v.newest.version)}</th>" for v in views if v.newest)
    rows = []
    for q in report.comparison:
        cells = "".join(
            "<td>" + ("".join(_answer(a) for a in q.answers.get(v.key, [])) or "no probe cited") + "</td>"
            for v in views
        )
        rows.append(f"<tr><td>{escape(q.question)}</td>{cells}</tr>")
    return f"<table><tr><th>question</th>{head}</tr>{''.join(rows)}</table>"


def _probe(report: Report, view: FrameworkView, row: ProbeRow) -> str:
    info = row.info
    parts = [
        f'<section class="probe" id="{escape(row.id)}"><h3><code>{escape(row.id)}</code></h3>',
        f"<p><strong>{escape(info.title)}</strong></p>",
        f'<p><strong>Claim:</strong> {escape(info.claim.text)} (<a href="{escape(info.claim.source)}">source</a>)<br>',
        f"<strong>Claim check:</strong> {escape(claim_verdicts(view, row))}</p>",
    ]
    parts.append(f"<p><strong>Changed:</strong> {escape(changed_text(report, row))}</p>")
    mitigation = report.mitigations.get(info.id)
    hazards = {o.hazard for o in row.observations.values()}
    if mitigation and hazards & {"silent", "loud", "order-coupled", "nondeterministic"}:
        parts.append(
            f'<p><strong>Mitigation:</strong> {escape(mitigation["text"])} (<a href="{escape(mitigation["source"])}">source</a>)</p>'
        )
    spans = view.spans(row)
    table = "".join(
        f'<tr><td>{escape(s.versions)}</td><td class="{hazard_class(s.observation.hazard)}">{escape(s.observation.label)}</td>'
        f"<td><code>{escape(s.observation.outcome)}</code></td><td>{escape(s.observation.detail)}</td>"
        f"<td><pre>{escape(pretty_json(s.observation.value, width=60))}</pre></td></tr>"
        for s in spans
    )
    parts.append(
        f"<table><tr><th>versions</th><th>observed</th><th>outcome</th><th>detail</th><th>value</th></tr>{table}</table>"
    )
    where = f"{info.file}::{info.function}"
    if row.reproducer is not None:
        note = "" if row.reproducer_current else " (edited since these observations were made)"
        parts.append(
            f"<p>Reproducer <code>{escape(where)}</code>{escape(note)}:</p><pre>{escape(row.reproducer)}</pre>"
        )
    parts.append(
        f'<p class="meta">Cite as: <code>{escape(cite(view, row, report.reference_date))}</code></p></section>'
    )
    return "\n".join(parts)


def page(report: Report) -> str:
    legend = "".join(
        f'<tr><td class="{hazard_class(h)}"></td><td>{escape(h)}</td><td>{escape(MEANINGS[h])}</td></tr>'
        for h in COLOURS
    )
    body = [
        f"<h1>{escape(report.title)}</h1>",
        (
            f'<p class="meta">Rendered from <code>{escape(report.source)}</code> by <code>python -m fanin report</code>; '
            f"observations of {escape(report.reference_date)}.</p>"
        ),
        (
            f'<h2 id="legend">Legend</h2><table class="legend">{legend}</table>'
            f"<p>{CHANGED} marks a cell whose outcome, hazard or value differs from the previous version. "
            "Hover a cell for its detail; click a probe id for its section.</p>"
        ),
        '<h2 id="summary">Summary: probes per hazard, per version</h2>',
        *(_summary(v) for v in report.frameworks if v.columns),
    ]
    for view in report.frameworks:
        body += [f'<h2 id="matrix-{escape(view.key)}">{escape(view.name)}</h2>', _matrix(view)]
    body += [
        f'<h2 id="comparison">{" vs ".join(escape(v.name) for v in report.frameworks)}</h2>',
        "<p>Each answer is the newest observation of the cited probe.</p>",
        _comparison(report),
        '<h2 id="probes">Probes</h2>',
    ]
    for view in report.frameworks:
        for _, rows in view.topics():
            body += [_probe(report, view, row) for row in rows]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(report.title)}</title><style>{STYLE}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
