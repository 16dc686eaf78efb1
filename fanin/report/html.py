"""One self-contained HTML page (and compare pages): the matrix with hazards in words, every probe.

No fonts, images or network: the page opens offline, prints, and works without
JavaScript; one small inline script only adds a picker that shows any two columns (and, on request,
the versions between them), with only the rows that differ.
Every probe id is an anchor (`matrix.html#langgraph/join/separate-edges`). Formatting
only: every choice was made in fanin.report.build.
"""

from __future__ import annotations

from importlib import resources

from fanin.model.results import Observation
from fanin.report.common import escape, escape_text, pretty_json
from fanin.report.documents import MATRIX_HTML, compare_file
from fanin.report.legend import CHANGE_MEANINGS, CHANGED_MARK, HAZARD_STYLES, NO_PROBE_CITED, NOT_OBSERVED, NOT_PROBED
from fanin.report.view import (
    Answer,
    CompareGroup,
    ComparePage,
    FrameworkView,
    ProbeView,
    Report,
    Span,
    Step,
    VariantView,
)


def static_text(name: str) -> str:
    """A stylesheet or script shipped beside this module (fanin/report/static/), inlined so the page stays one file."""
    return resources.files("fanin.report").joinpath("static", name).read_text(encoding="utf-8")


# Okabe-Ito hues (distinguishable with every common colour-vision deficiency), each hazard also
# with its own border style, so the matrix reads in black-and-white print too.
PALETTE = {
    "silent": ("#f6d2bf", "6px solid #d55e00"),
    "loud": ("#fbe7b8", "6px double #b57d00"),
    "hangs": ("#d9d9d9", "6px groove #000000"),
    "order-coupled": ("#cfe2f0", "6px dashed #0072b2"),
    "nondeterministic": ("#f2dbe8", "6px dotted #a8527f"),
    "safe": ("#cdece2", "2px solid #009e73"),
    "n/a": ("#f1f1f1", "2px solid #f1f1f1"),
}

STYLE = static_text("report.css")
STYLE += "".join(
    f".h-{css} {{background-color:{bg};border-left:{border}}}\n"
    for css, (bg, border) in ((h.replace("/", ""), PALETTE[h]) for h in PALETTE)
)
STYLE += (
    ".h-silent{background-image:repeating-linear-gradient(135deg,rgba(213,94,0,.16) 0 3px,transparent 3px 9px)}\n"
    ".h-na{font-style:italic}\n"
)

SCRIPT = static_text("report.js")


def hazard_class(hazard: str) -> str:
    return "h-" + hazard.replace("/", "")


def observed_cell(observation: Observation | None) -> str:
    """The hazard in words, then the label."""
    if observation is None:
        return f"<b class='hz'>{NOT_OBSERVED}</b>"
    word = HAZARD_STYLES[observation.hazard].word
    return f'<b class="hz">{escape(word)}</b>{escape(observation.label)}'


def _delta(step: Step | None) -> str:
    if step is None:
        return ""
    return f' <span class="delta" title="{escape(step.text)}">{CHANGED_MARK} {escape(step.label)}</span>'


def probe_link(rep: Report, anchor: str, text: str, source: str) -> str:
    return f'<a href="{escape(rep.links.probe(rep.anchor(anchor), source))}"><code>{escape(text)}</code></a>'


def _cell(rep: Report, probe: ProbeView, variant: VariantView, span: Span, start: int, source: str, same: int) -> str:
    """`data-same`: cells of a row with the same number observed the same behaviour (the picker compares them)."""
    end = start + len(span.columns) - 1
    attrs = f'data-from="{start}" data-to="{end}" data-same="{same}"' + (
        f' colspan="{len(span.columns)}"' if len(span.columns) > 1 else ""
    )
    o = span.observation
    if o is None:
        return f'<td class="obs h-none" {attrs}>{NOT_OBSERVED}</td>'
    section = probe_link(rep, variant.observation_id, "section", source)
    return (
        f'<td class="obs {hazard_class(o.hazard)}" {attrs}><details><summary>{observed_cell(o)}{_delta(span.change)}</summary>'
        f"<p>{escape(o.detail)}</p><p><code>{escape(o.outcome)}</code> · {escape(span.versions)} · {section}</p>"
        "</details></td>"
    )


def _page_href(rep: Report, page: ComparePage, source: str) -> str:
    return rep.links.href(compare_file(page.name, ".html"), "", source)


def matrix(rep: Report, view: FrameworkView, source: str) -> str:
    if not view.columns:
        return "<p>No result sets.</p>"
    steps = {page.b.cell: page for page in view.steps}
    head = ['<th scope="col" class="corner">probe</th>']
    for index, column in enumerate(view.columns):
        page = steps.get(column.cell)
        link = (
            f'<a class="cmp" href="{escape(_page_href(rep, page, source))}">{CHANGED_MARK} from {escape(page.a.label)}</a>'
            if page is not None and page in rep.compare_pages
            else ""
        )
        head.append(f'<th scope="col" data-col="{index}">{escape(column.label)}{link}</th>')
    width = len(view.columns) + 1
    bodies = []
    for topic in view.topics:
        rows = [
            f'<tr class="topic"><th scope="rowgroup" colspan="{width}"><span>{escape(topic.name)}</span>'
            + (f' <span class="about">{escape(topic.title)}: {escape(topic.about)}</span>' if topic.title else "")
            + "</th></tr>"
        ]
        for probe in topic.probes:
            for variant in probe.matrix_variants:
                if variant.suffix:
                    name = probe_link(rep, variant.observation_id, f"↳ [{variant.suffix}]", source)
                    css = ' class="variant"'
                else:
                    name = probe_link(rep, probe.id, f"{probe.case}", source)
                    css = ""
                cells, start = [], 0
                kinds: dict[str | None, int] = {}  # behaviour -> its number in this row
                for span in variant.spans:
                    kind = span.observation.behaviour if span.observation is not None else None
                    same = kinds.setdefault(kind, len(kinds))
                    cells.append(_cell(rep, probe, variant, span, start, source, same))
                    start += len(span.columns)
                rows.append(f'<tr{css}><th scope="row">{name}</th>{"".join(cells)}</tr>')
        bodies.append(f'<tbody id="{escape(topic.anchor)}">' + "".join(rows) + "</tbody>")
    table_id = f"table-{view.key}"
    spanning = _spanning(rep, view)
    pages = "".join(
        f' · <a href="{escape(_page_href(rep, p, source))}">{escape(p.a.label)} → {escape(p.b.label)}</a>'
        for p in spanning
    )
    return (
        f'<p class="compare">Compare pages: under each version, {CHANGED_MARK} from the version before{pages}'
        ' · <a href="#changes">every change</a></p>'
        + _picker(rep, view, table_id, source)
        + f'<div class="matrix-wrap" role="region" aria-label="{escape(view.name)} matrix" tabindex="0">'
        f'<table class="matrix" id="{table_id}"><thead><tr>{"".join(head)}</tr></thead>{"".join(bodies)}</table></div>'
    )


def _picker(rep: Report, view: FrameworkView, table_id: str, source: str) -> str:
    """Two columns to compare, side by side (the versions between on request): hidden without JavaScript.

    Compare pages need none: they have exactly two columns. Without JavaScript the compare links above work.
    """
    index = {c.cell: i for i, c in enumerate(view.columns)}
    pages = {
        f"{min(index[p.a.cell], index[p.b.cell])}-{max(index[p.a.cell], index[p.b.cell])}": _page_href(rep, p, source)
        for p in rep.compare_pages
        if p.a.cell in index and p.b.cell in index
    }
    pairs = ",".join(f'"{k}":"{v}"' for k, v in sorted(pages.items()))
    options = "".join(f'<option value="{i}">{escape(c.label)}</option>' for i, c in enumerate(view.columns))
    last = len(view.columns) - 1
    options_b = options.replace(f'<option value="{last}">', f'<option value="{last}" selected>')
    return (
        f'<form class="pick" hidden data-table="{table_id}" data-pages="{escape("{" + pairs + "}")}">'
        f'Compare <label>version <select name="a">{options}</select></label> '
        f'<label>with <select name="b">{options_b}</select></label> '
        '<label><input type="checkbox" name="between"> and the versions between</label> '
        '<label><input type="checkbox" name="page" checked> open its compare page when there is one</label> '
        '<button type="submit">show these columns, rows that differ</button> <button type="reset">show all</button> '
        "<output></output></form>"
    )


def summary_table(view: FrameworkView) -> str:
    """One framework's probes per hazard, per version (the matrix page shows every framework's; the site one each)."""
    head = "".join(
        f'<th scope="col" class="{hazard_class(h)}"><b class="hz">{escape(s.word)}</b></th>'
        for h, s in HAZARD_STYLES.items()
    )
    rows = "".join(
        f'<tr><th scope="row">{escape(r.column.label)}</th>'
        + "".join(f"<td>{n}</td>" for _, n in r.counts)
        + f"<td>{r.not_probed}</td><td>{escape(r.changes_text)}</td></tr>"
        for r in view.summary
    )
    return (
        f'<div class="wrap"><table><thead><tr><th scope="col">{escape(view.name)} ({len(view.probes)} probes)</th>'
        f'{head}<th scope="col">{NOT_PROBED}</th><th scope="col">changed from the version before</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def not_run(view: FrameworkView) -> str:
    """The line naming a framework's cells that did not run, and why ("" when every cell ran)."""
    if not view.missing:
        return ""
    return (
        "<p>Not run: "
        + "; ".join(f"<code>{escape(cell)}</code> not run: {escape(reason)}" for cell, reason in view.missing)
        + "</p>"
    )


def _spanning(rep: Report, view: FrameworkView) -> list[ComparePage]:
    """The framework's compare pages that are not between neighbouring versions (oldest to newest, twins)."""
    return [
        p
        for p in rep.compare_pages
        if p.a.framework == p.b.framework == view.key and not any(p is step for step in view.steps)
    ]


def _summary(rep: Report) -> str:
    return "".join(summary_table(view) for view in rep.frameworks_with_columns)


def group_link(rep: Report, group: CompareGroup, source: str) -> str:
    link = probe_link(rep, group.anchor, group.probe_id, source)
    return link + (f" ({escape(group.variants)})" if group.variants else "")


def _step_list(rep: Report, page: ComparePage, source: str) -> str:
    by_word: dict[str, list[str]] = {}
    for group in page.grouped:
        by_word.setdefault(group.step.label, []).append(group_link(rep, group, source))
    return "; ".join(f"{escape(word)}: {', '.join(links)}" for word, links in by_word.items()) or "—"


def changes_of(rep: Report, view: FrameworkView, source: str) -> str:
    """One framework's changes between versions: a row per neighbouring pair, then its other compare pages."""
    if not view.steps:
        return ""
    rows = "".join(
        f'<tr><th scope="row"><a href="{escape(_page_href(rep, p, source))}">{escape(p.a.label)} → {escape(p.b.label)}</a></th>'
        f"<td>{escape(p.counts_text)}</td><td>{_step_list(rep, p, source)}</td></tr>"
        for p in view.steps
    )
    others = _spanning(rep, view)
    extra = "".join(
        f'<li><a href="{escape(_page_href(rep, p, source))}">{escape(p.title)}</a>: {escape(p.summary)}</li>'
        for p in others
    )
    return (
        f'<div class="wrap"><table><thead><tr><th scope="col">versions (compare page)</th><th scope="col">changes</th>'
        f'<th scope="col">observations</th></tr></thead><tbody>{rows}</tbody></table></div>'
        + (f"<ul>{extra}</ul>" if extra else "")
    )


def across_frameworks(rep: Report, source: str) -> str:
    """The compare pages between two frameworks, as a list ("" when there are none)."""
    across = "".join(
        f'<li><a href="{escape(_page_href(rep, p, source))}">{escape(p.title)}</a>: {escape(p.summary)}</li>'
        for p in rep.compare_pages
        if p.across_frameworks
    )
    return f"<ul>{across}</ul>" if across else ""


def _changes(rep: Report, source: str) -> str:
    out = [
        f"<h3>{escape(view.name)}</h3>{changes_of(rep, view, source)}"
        for view in rep.frameworks_with_columns
        if view.steps
    ]
    across = across_frameworks(rep, source)
    if across:
        out.append(f"<h3>Between frameworks</h3>{across}")
    return "".join(out) or "<p>Only one version per framework: nothing to compare.</p>"


def answer_cell(rep: Report, answer: Answer, source: str) -> str:
    link = probe_link(rep, rep.anchor(answer.probe_id), answer.probe_id, source)
    if answer.observation is None:
        return f"<div>not probed yet ({link} has no observation)</div>"
    o = answer.observation
    return f'<div class="{hazard_class(o.hazard)} answer">{observed_cell(o)} — {link}</div>'


def comparison(rep: Report, source: str) -> str:
    if not rep.comparison:
        return "<p>No comparison questions (reference/comparison.toml).</p>"
    views = [v for v in rep.frameworks if v.focus]
    head = "".join(f'<th scope="col">{escape(v.name)} {escape(v.focus.label)}</th>' for v in views if v.focus)
    coverage = "".join(
        f"<td>{escape(c.text) if (c := rep.comparison_coverage.get(v.key)) else '—'}</td>" for v in views
    )
    rows = [f'<tr><th scope="row">coverage</th>{coverage}</tr>']
    for q in rep.comparison:
        cells = "".join(
            "<td>"
            + ("".join(answer_cell(rep, a, source) for a in q.answers.get(v.key, ())) or NO_PROBE_CITED)
            + "</td>"
            for v in views
        )
        said = f'<br><strong class="disagree">{escape(q.disagreement)}</strong>' if q.disagreement else ""
        rows.append(f'<tr><th scope="row">{escape(q.question)}{said}</th>{cells}</tr>')
    return (
        f'<div class="wrap"><table><thead><tr><th scope="col">question</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def twins(rep: Report, source: str) -> str:
    items = []
    for view in rep.frameworks:
        for twin in view.twins:
            items.append(
                f"<li><code>{escape(twin.column.cell)}</code> (Python {escape(twin.column.python)}) against "
                f"<code>{escape(twin.twin.cell)}</code> (Python {escape(twin.twin.python)}): "
                f'<a href="{escape(_page_href(rep, twin.page, source))}">{escape(twin.page.summary)}</a>'
                + (f" — {_step_list(rep, twin.page, source)}" if twin.page.entries else "")
                + "</li>"
            )
    return f"<ul>{''.join(items)}</ul>"


def _variant_block(rep: Report, probe: ProbeView, variant: VariantView, source: str) -> str:
    parts = []
    if variant.suffix:
        parts.append(f'<h4 id="{escape(variant.observation_id)}">Variant <code>{escape(variant.label)}</code></h4>')
    facts = []
    if probe.claim_checked:
        verdicts = "; ".join(f"{s.verdict} in {s.versions}" for s in variant.observed_spans)
        facts.append(f"<li><strong>Claim check:</strong> {escape(verdicts)}</li>")
    changed = "; ".join(step.text for step in variant.changes) or (
        f"no behaviour change across {len(variant.observations)} versions"
    )
    facts.append(f"<li><strong>Changed:</strong> {escape(changed)}</li>")
    if variant.wording:
        wording = "; ".join(
            f"between {s.before_column.label} and {s.after_column.label}"
            for s in variant.wording
            if s.before_column and s.after_column
        )
        facts.append(f"<li><strong>Wording changed:</strong> {escape(wording)}</li>")
    parts.append(f'<ul class="facts">{"".join(facts)}</ul>')
    rows = "".join(
        f'<tr><th scope="row">{escape(s.versions)}</th><td class="obs {hazard_class(s.observation.hazard)}">{observed_cell(s.observation)}</td>'
        f"<td><code>{escape(s.observation.outcome)}</code></td><td>{escape(s.observation.detail)}</td>"
        f"<td><details><summary>value</summary><pre>{escape_text(pretty_json(s.observation.value, width=60))}</pre></details></td></tr>"
        for s in variant.observed_spans
        if s.observation is not None
    )
    parts.append(
        '<div class="wrap"><table class="spans"><thead><tr><th scope="col">versions</th><th scope="col">observed</th>'
        '<th scope="col">outcome</th><th scope="col">detail</th><th scope="col">observed value</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )
    return "".join(parts)


def probe_section(rep: Report, view: FrameworkView, probe: ProbeView, source: str) -> str:
    info = probe.info
    topic = next(t for t in view.topics if t.name == probe.topic)
    permalink = rep.links.probe(probe.id, source)
    parts = [
        f'<section class="probe" id="{escape(probe.id)}">',
        f'<h3><a href="{escape(permalink)}"><code>{escape(probe.id)}</code></a></h3>',
        f'<p class="cite"><span class="cite-label">Cite as:</span> <code class="cite-line">{escape(rep.cite_line(probe, source))}</code></p>',
        (
            f'<p class="nav"><a href="#{escape(topic.anchor)}">↑ {escape(view.name)} · {escape(probe.topic)}</a> · '
            '<a href="#contents">contents</a></p>'
        ),
        f"<p><strong>{escape(info.title)}</strong></p>",
    ]
    facts = [
        f'<li><strong>Claim:</strong> {escape(info.claim.text)} (<a href="{escape(info.claim.source)}">source</a>)</li>'
    ]
    if not probe.claim_checked:
        facts.append(
            "<li><strong>Claim check:</strong> not machine-checked (the claim states no expected observation)</li>"
        )
    if info.sources:
        facts.append(
            "<li><strong>See also:</strong> "
            + ", ".join(f'<a href="{escape(s)}">{escape(s)}</a>' for s in info.sources)
            + "</li>"
        )
    if probe.mitigation is not None:
        m = probe.mitigation
        text = f'<li><strong>Mitigation:</strong> {escape(m.text)} (<a href="{escape(m.source)}">source</a>)'
        if m.probe_id and m.observation is not None and m.column is not None:
            text += (
                f"; with it, {probe_link(rep, m.probe_id, m.probe_id, source)} observes at {escape(m.column.label)}: "
                f'<span class="{hazard_class(m.observation.hazard)}">{observed_cell(m.observation)}</span>'
            )
        elif m.probe_id:
            text += f"; {probe_link(rep, m.probe_id, m.probe_id, source)} has no observation yet"
        facts.append(text + "</li>")
    if probe.variants[1:]:
        said = []
        if probe.alike:
            said.append(
                ", ".join(f"<code>{escape(v.label)}</code>" for v in probe.alike)
                + " observe what the default does in every version"
            )
        if probe.differing:
            said.append(
                ", ".join(f"<code>{escape(v.label)}</code>" for v in probe.differing)
                + " differ: each has its own table below"
            )
        facts.append(
            f"<li><strong>Variants</strong> (default: <code>{escape(probe.default_name)}</code>): {'; '.join(said)}</li>"
        )
    for step in probe.python_twins:
        if step.after_column is None or step.before_column is None:
            continue
        facts.append(
            f"<li><strong>On Python {escape(step.after_column.python)}</strong> (<code>{escape(step.after_column.cell)}</code>): "
            f"{observed_cell(step.after)} — {escape(step.label)} against Python {escape(step.before_column.python)}</li>"
        )
    parts.append(f'<ul class="facts">{"".join(facts)}</ul>')
    parts.append(_variant_block(rep, probe, probe.default, source))
    parts += [_variant_block(rep, probe, variant, source) for variant in probe.differing]
    where = f"{info.file}::{info.function}"
    href = rep.links.source_file(info.file, probe.reproducer_lines, source)
    if probe.reproducer is None:
        parts.append(f"<p>Reproducer: <code>{escape(where)}</code> (not in this checkout)</p>")
    else:
        note = "" if probe.reproducer_current else " — edited since these observations were made"
        parts.append(
            f"<details><summary>Reproducer <code>{escape(where)}</code>{escape(note)}</summary>"
            f"<pre>{escape_text(probe.reproducer)}</pre></details>"
        )
    if info.file.endswith(".py"):
        parts.append(
            f"<p>Standalone: <code>fanin repro {escape(info.id)}</code> writes it as one script for <code>uv run</code>.</p>"
        )
    if href:
        parts.append(f'<p class="nav">Source: <a href="{escape(href)}">{escape(info.file)}</a></p>')
    parts.append("</section>")
    return "\n".join(parts)


def _contents(rep: Report) -> str:
    items = [
        '<li><a href="#legend">Legend</a></li>',
        '<li><a href="#summary">Summary</a></li>',
        '<li><a href="#changes">Changes between versions</a> (compare pages)</li>',
    ]
    for view in rep.frameworks:
        topics = " · ".join(f'<a href="#{escape(t.anchor)}">{escape(t.name)}</a>' for t in view.topics)
        items.append(
            f'<li><a href="#{escape(view.anchor)}">{escape(view.name)} matrix</a>'
            + (f': <span class="topics">{topics}</span>' if topics else "")
            + "</li>"
        )
    items.append(f'<li><a href="#comparison">{" vs ".join(escape(v.name) for v in rep.frameworks)}</a></li>')
    if any(v.twins for v in rep.frameworks):
        items.append('<li><a href="#twins">Python twins</a></li>')
    items.append(
        "<li>Probes: "
        + " · ".join(f'<a href="#probes-{escape(v.key)}">{escape(v.name)}</a>' for v in rep.frameworks)
        + "</li>"
    )
    return f'<nav class="toc" aria-labelledby="contents"><h2 id="contents">Contents</h2><ul>{"".join(items)}</ul></nav>'


def legend() -> str:
    rows = "".join(
        f'<tr><td class="obs {hazard_class(h)}"><b class="hz">{escape(s.word)}</b></td><td>{escape(s.meaning)}</td></tr>'
        for h, s in HAZARD_STYLES.items()
    )
    words = "".join(
        f"<tr><th scope='row'>{escape(w)}</th><td>{escape(m)}</td></tr>"
        for w, m in CHANGE_MEANINGS.items()
        if w not in ("new", "missing")
    )
    return (
        f'<div class="wrap"><table class="legend"><thead><tr><th scope="col">hazard</th><th scope="col">meaning</th></tr>'
        f"</thead><tbody>{rows}</tbody></table></div>"
        f"<p>Every cell states its hazard in words; colour and border style only repeat it. Open a cell for its detail."
        f" {CHANGED_MARK} marks the first version of a span whose outcome, hazard or value differs from the version"
        " before, with the direction of the change:</p>"
        f'<div class="wrap"><table><tbody>{words}</tbody></table></div>'
    )


def document(title: str, body: list[str], script: bool = False) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>\n"
        + "\n".join(body)
        + (f"\n<script>{SCRIPT}</script>" if script else "")
        + "\n</body></html>\n"
    )


def page(rep: Report, source: str = MATRIX_HTML) -> str:
    cells = ", ".join(
        f"{len(v.columns)} {v.name} cells ({v.columns[0].label} – {v.columns[-1].label})"
        for v in rep.frameworks_with_columns
    )
    commit = f" (suite commit {escape(rep.commit)})" if rep.commit else ""
    body = [
        '<header id="top">',
        f"<h1>{escape(rep.title)}</h1>",
        (
            f'<p class="meta">Rendered from <code>{escape(rep.source)}</code> by <code>python -m fanin report</code>; '
            f"observations of {escape(rep.reference_date)}{commit}: {escape(cells or 'no cells')}.</p>"
        ),
    ]
    if rep.focus_notes:
        body.append(
            "<p><strong>Versions asked for</strong> (the comparison, the checklist and every cite line speak of these): "
            + escape("; ".join(rep.focus_notes))
            + ".</p>"
        )
    if rep.run_pages:
        body.append(
            "<p><strong>Each cell's run</strong> (pytest-html: every observation, and the before/after of a change): "
            + ", ".join(f'<a href="{escape(href)}">{escape(cell)}</a>' for cell, href in rep.run_pages)
            + ".</p>"
        )
    body += [_contents(rep), "</header>", "<main>"]
    body += [
        f'<section id="legend"><h2>Legend</h2>{legend()}</section>',
        (
            '<section id="summary"><h2>Summary: probes per hazard, per version</h2>'
            "<p>Each probe counted once, by its default variant (backend and mode); variants are in the matrices. "
            "A count also moves when a probe's API appears (n/a → observed, <em>new coverage</em>), so each version "
            "says how its probes changed from the version before, by direction.</p>"
            f"{_summary(rep)}</section>"
        ),
        (
            '<section id="changes"><h2>Changes between versions</h2>'
            "<p>Every observation that differs from the version before, by the direction of the change. "
            f"Each row links its compare page: only what differs, with a before/after of the changed values.</p>{_changes(rep, source)}</section>"
        ),
    ]
    for view in rep.frameworks:
        missing = not_run(view)
        body.append(
            f'<section id="{escape(view.anchor)}" class="framework"><h2>{escape(view.name)}</h2>{missing}'
            "<p>A cell spans the neighbouring versions that observed the same. ↳ rows are variants (backend, mode)"
            " that differ from the default in some version; every other variant observes what the default does."
            " Open a cell for its detail; a probe's name leads to its section.</p>"
            f"{matrix(rep, view, source)}</section>"
        )
    which = "the version asked for" if rep.focused else "the newest version"
    body.append(
        f'<section id="comparison"><h2>{" vs ".join(escape(v.name) for v in rep.frameworks)}</h2>'
        f"<p>Each answer is what the cited probe observed at {which} of its framework.</p>{comparison(rep, source)}</section>"
    )
    if any(v.twins for v in rep.frameworks):
        body.append(
            '<section id="twins"><h2>Python twins</h2><p>Cells that differ from a matrix cell only by Python, '
            f"and the observations where they differ.</p>{twins(rep, source)}</section>"
        )
    for view in rep.frameworks:
        body.append(f'<section id="probes-{escape(view.key)}"><h2>{escape(view.name)} probes</h2>')
        body += [probe_section(rep, view, probe, source) for probe in view.probes]
        body.append("</section>")
    body.append("</main>")
    return document(rep.title, body, script=True)
