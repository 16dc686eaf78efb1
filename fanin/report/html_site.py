"""The published site's own pages: the index, one page per framework, the checklist and the comparison.

Every page is HTML (no Markdown is published) and links only HTML pages, so each permalink lands
on an element with that id: a probe's section is `probes/<key>.html#<probe id>`, the same anchor its
Markdown section has in reference/probes/<key>.md. One page per framework keeps each page within the
size budget as the catalogue grows (tests/test_site.py). Formatting only: the builder decided everything.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from fanin.report import documents, html
from fanin.report.common import escape
from fanin.report.documents import (
    CHECKLIST_HTML,
    COMPARISON_HTML,
    INDEX_HTML,
    MATRIX_HTML,
    NOT_FOUND_HTML,
    VERSIONS_DIR,
    compare_file,
    framework_html,
)
from fanin.report.html import hazard_class, observed_cell
from fanin.report.view import Answer, ChecklistMitigation, FrameworkView, KeyFinding, Report

WHAT = (
    "fanin is a conformance suite: it probes what happens to state when parallel agent branches fan back in,"
    " in pinned versions of each framework below. Every probe states a claim with its source and records what each"
    " version did, a hazard in words, cited by the hash of the probe's exact code."
)


def _nav(rep: Report, source: str) -> str:
    """The same few links atop every page of the site."""
    pages = documents.navigation((v.key, v.name) for v in rep.frameworks if v.probes)
    items = "".join(
        f'<li><a href="{escape(rep.links.href(doc, "", source))}"'
        + (' aria-current="page"' if doc == source else "")
        + f">{escape(name)}</a></li>"
        for doc, name in pages
    )
    return f'<nav class="site" aria-label="site"><ul>{items}</ul></nav>'


def _meta(rep: Report) -> str:
    commit = f" (suite commit {escape(rep.commit)})" if rep.commit else ""
    return (
        f'<p class="meta">Rendered from <code>{escape(rep.source)}</code> by <code>python -m fanin report</code>; '
        f"observations of {escape(rep.reference_date)}{commit}.</p>"
    )


def _page(rep: Report, source: str, title: str, body: list[str], script: bool = False) -> str:
    head = ['<header id="top">', _nav(rep, source), f"<h1>{escape(title)}</h1>", _meta(rep)]
    return html.document(title, [*head, *body], script=script)


def _key_finding(rep: Report, key: KeyFinding, source: str) -> str:
    view, column = key.framework, key.column
    page = escape(rep.links.href(framework_html(view.key), "", source))
    line = f'<a href="{page}"><strong>{escape(view.name)} {escape(column.label)}</strong></a>: '
    line += f"{escape(key.shares_text)}; {escape(key.coverage.text)}"
    if key.examples:
        worst = key.examples[0].default.observations[column.cell].hazard
        shown = ", ".join(html.probe_link(rep, p.id, p.id, source) for p in key.examples)
        line += f"; {escape(worst)}, e.g. {shown}"
    if key.biggest is not None:
        changed = key.biggest
        href = escape(rep.links.href(compare_file(changed.name, ".html"), "", source))
        line += (
            f'. Most changed: <a href="{href}">{escape(changed.a.label)} → {escape(changed.b.label)}</a>,'
            f" observations {escape(changed.counts_text)}"
        )
    return f"<li>{line}.</li>"


def _frameworks(rep: Report, source: str) -> str:
    rows = []
    for view in rep.frameworks:
        if not view.probes:
            continue
        newest = view.newest
        versions = f"{len(view.columns)} ({view.columns[0].label} – {newest.label})" if newest else "none"
        found = next((k for k in rep.key_findings if k.framework.key == view.key), None)
        coverage = found.coverage.text if found else "—"
        rows.append(
            f'<tr><th scope="row"><a href="{escape(rep.links.href(framework_html(view.key), "", source))}">'
            f"{escape(view.name)}</a></th><td><code>{escape(view.package)}</code></td>"
            f"<td>{escape(newest.label if newest else '—')}</td><td>{escape(versions)}</td><td>{len(view.probes)}</td>"
            f"<td>{escape(coverage)}</td></tr>"
        )
    return (
        '<div class="wrap"><table><thead><tr><th scope="col">framework</th><th scope="col">package</th>'
        '<th scope="col">newest version</th><th scope="col">versions</th><th scope="col">probes</th>'
        '<th scope="col">at the newest version</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _cite(rep: Report, source: str) -> str:
    example = next((p for k in rep.key_findings for p in k.examples), None)
    if example is None:
        example = next((p for v in rep.frameworks for p in v.probes), None)
    shown = (
        f'<p class="cite"><code class="cite-line">{escape(rep.cite_line(example, source))}</code></p>'
        if example
        else ""
    )
    permanent = (
        "<p>The link names this reference's permanent copy: it keeps landing on the same section after the next bless.</p>"
        if rep.links.cite_base
        else ""
    )
    return (
        "<p>Each probe section gives its cite line: <code>fanin &lt;probe id&gt;@&lt;hash of its code&gt; · "
        "&lt;package&gt; &lt;version&gt; · reference &lt;date&gt; @&lt;suite commit&gt;</code>, then its permalink. "
        "The hash names the exact probe code, so a later edit of the probe is visible. For example:</p>"
        f"{shown}{permanent}"
    )


def _copies(rep: Report, copies: Sequence[tuple[str, str]], source: str) -> str:
    if not copies:
        return ""
    items = "".join(
        f'<li><a href="{escape(rep.links.href(f"{VERSIONS_DIR}/{tag}/{INDEX_HTML}", "", source))}">'
        f"<code>{escape(tag)}</code></a>" + (f", observations of {escape(date)}" if date else "") + "</li>"
        for tag, date in copies
    )
    return (
        '<section id="copies"><h2>Permanent copies</h2><p>The site as it was at each reference commit, the newest observations first;'
        f" cite lines name one of these, so their links keep landing on the section they named.</p><ul>{items}</ul></section>"
    )


def index(rep: Report, source: str = INDEX_HTML) -> str:
    """The site's front page: what fanin is, the key findings (REPORT.md's), the frameworks, how to cite,
    and the permanent copies (tag, date of its observations) when the site has them."""
    findings = "".join(_key_finding(rep, key, source) for key in rep.key_findings)
    data = escape(rep.links.href("data/index.json", "", source))
    body = [
        "</header>",
        "<main>",
        f"<p>{escape(WHAT)}</p>",
        (
            '<section id="key-findings"><h2>Key findings</h2>'
            "<p>A <em>cell</em> is one framework version on one Python, installed from its lock; an <em>observation</em>"
            " is what one probe saw in one cell (under one backend and mode). At each framework's newest version:</p>"
            f"<ul>{findings}</ul></section>"
        ),
        (
            f'<section id="frameworks"><h2>Frameworks</h2>{_frameworks(rep, source)}'
            f'<p>Every framework asked the same questions: <a href="{escape(rep.links.href(COMPARISON_HTML, "", source))}">'
            f'the comparison</a>. For a design review: <a href="{escape(rep.links.href(CHECKLIST_HTML, "", source))}">'
            f'the checklist</a>. For tools: <a href="{data}">data/index.json</a> (every result set, with its schema).</p>'
            "</section>"
        ),
        f'<section id="cite"><h2>How to cite</h2>{_cite(rep, source)}</section>',
        _copies(rep, rep.site_copies, source),
        "</main>",
    ]
    return _page(rep, source, rep.title, body)


def framework_page(rep: Report, view: FrameworkView) -> str:
    """probes/<key>.html: one framework's summary, changes, matrix and every probe section."""
    source = framework_html(view.key)
    topics = " · ".join(f'<a href="#{escape(t.anchor)}">{escape(t.name)}</a>' for t in view.topics)
    contents = (
        '<nav class="toc" aria-labelledby="contents"><h2 id="contents">Contents</h2><ul>'
        '<li><a href="#legend">Legend</a></li><li><a href="#summary">Summary</a></li>'
        '<li><a href="#changes">Changes between versions</a> (compare pages)</li>'
        f'<li><a href="#{escape(view.anchor)}">Matrix</a>'
        + (f': <span class="topics">{topics}</span>' if topics else "")
        + '</li><li><a href="#probes">Probes</a></li></ul></nav>'
    )
    missing = html.not_run(view)
    body = [
        contents,
        "</header>",
        "<main>",
        f'<section id="legend"><h2>Legend</h2>{html.legend()}</section>',
        f'<section id="summary"><h2>Summary: probes per hazard, per version</h2>{html.summary_table(view)}</section>',
        '<section id="changes"><h2>Changes between versions</h2>'
        + (html.changes_of(rep, view, source) or "<p>Only one version: nothing to compare.</p>")
        + "</section>",
        (
            f'<section id="{escape(view.anchor)}" class="framework"><h2>Matrix</h2>{missing}'
            "<p>A cell spans the neighbouring versions that observed the same. ↳ rows are variants (backend, mode)"
            " that differ from the default in some version. Open a cell for its detail; a probe's name leads to its"
            f" section.</p>{html.matrix(rep, view, source)}</section>"
        ),
        f'<section id="probes"><h2>{escape(view.name)} probes</h2>',
        *(html.probe_section(rep, view, probe, source) for probe in view.probes),
        "</section>",
        "</main>",
    ]
    return _page(rep, source, f"{view.name} — {rep.title}", body, script=True)


FORWARD = html.static_text("forward.js")


def forward_page(rep: Report, source: str = MATRIX_HTML) -> str:
    """matrix.html, where the one-page matrix was: its permalinks (`matrix.html#<probe id>`, cited before the site
    had a page per framework) go on to the page that holds that id now; without JavaScript, a list of the pages."""
    targets = {"": rep.links.href(INDEX_HTML, "", source), "#comparison": rep.links.href(COMPARISON_HTML, "", source)}
    targets.update({v.key: rep.links.href(framework_html(v.key), "", source) for v in rep.frameworks if v.probes})
    table = json.dumps(targets, sort_keys=True).replace("</", "<\\/")
    listed = "".join(
        f'<li><a href="{escape(rep.links.href(framework_html(v.key), "", source))}">{escape(v.name)}</a></li>'
        for v in rep.frameworks
        if v.probes
    )
    body = [
        "</header>",
        "<main>",
        (
            "<p>The matrix of every framework is now one page per framework; a link to a probe here opens its section"
            " there. The pages:</p>"
        ),
        f"<ul>{listed}</ul>",
        f'<script type="application/json" id="pages">{table}</script>',
        f"<script>{FORWARD}</script>",
        "</main>",
    ]
    return _page(rep, source, f"The matrix has moved — {rep.title}", body)


MOVED = html.static_text("moved.js")


def not_found_page(rep: Report, source: str = NOT_FOUND_HTML) -> str:
    """404.html, which GitHub Pages serves for a path the site lacks: a permalink into the Markdown the site published
    before (probes/<key>.md#<probe id>, REPORT.md, CHECKLIST.md) goes on to the HTML page with that anchor."""
    body = [
        "</header>",
        "<main>",
        f'<p>No page here. The site starts at <a href="{escape(rep.links.href(INDEX_HTML, "", source))}">its front page</a>.</p>',
        f"<script>{MOVED}</script>",
        "</main>",
    ]
    return _page(rep, source, f"Not found — {rep.title}", body)


def comparison_page(rep: Report, source: str = COMPARISON_HTML) -> str:
    """The questions asked of every framework at its newest (or asked-for) version, and the Python twins."""
    which = "the version asked for" if rep.focused else "the newest version"
    names = " vs ".join(v.name for v in rep.frameworks)
    body = [
        "</header>",
        "<main>",
        (
            f'<section id="comparison"><h2>{escape(names)}</h2>'
            f"<p>Each answer is what the cited probe observed at {which} of its framework.</p>"
            f"{html.comparison(rep, source)}</section>"
        ),
    ]
    across = html.across_frameworks(rep, source)
    if across:
        body.append(f'<section id="between"><h2>Between frameworks, question by question</h2>{across}</section>')
    if any(v.twins for v in rep.frameworks):
        body.append(
            '<section id="twins"><h2>Python twins</h2><p>Cells that differ from a matrix cell only by Python, '
            f"and the observations where they differ.</p>{html.twins(rep, source)}</section>"
        )
    body.append("</main>")
    return _page(rep, source, f"Comparison — {rep.title}", body)


def _evidence(rep: Report, answer: Answer, source: str) -> str:
    link = html.probe_link(rep, rep.anchor(answer.probe_id), answer.probe_id, source)
    if answer.observation is None or answer.column is None or answer.cite is None:
        return f"{link}: not probed yet"
    where = f"{answer.cite.package} {answer.column.label}" + (", local run" if answer.column.origin else "")
    if answer.absent:
        return f"{link}@{escape(answer.cite.source_hash)}: {escape(answer.absent)}"
    o = answer.observation
    return (
        f"{link}@{escape(answer.cite.source_hash)} ({escape(where)}): "
        f'<span class="{hazard_class(o.hazard)}">{observed_cell(o)}</span> — {escape(o.detail)}'
    )


def _mitigation(rep: Report, m: ChecklistMitigation, source: str) -> str:
    text = escape(" ".join(m.text.split())) + (f' (<a href="{escape(m.source)}">source</a>)' if m.source else "")
    link = html.probe_link(rep, rep.anchor(m.probe_id), m.probe_id, source)
    if m.observed is None:
        return f"for {link}: {text}; no mitigation probe yet"
    if m.observed.observation is None:
        return f"for {link}: {text}; <code>{escape(m.observed.probe_id)}</code> has no observation at {escape(m.at)}"
    return f"for {link}: {text}; with it, {_evidence(rep, m.observed, source)}"


def checklist_page(rep: Report, source: str = CHECKLIST_HTML) -> str:
    """The design-review checklist as a page: the fields, then each item with its evidence and mitigations."""
    at = "the versions asked for" if rep.focused else "the newest version of each framework"
    fields = "".join(
        f'<tr><th scope="row">{escape(name)}</th><td>{escape(value) or "…"}</td></tr>'
        for name, value in rep.checklist_fields
    )
    body = [
        "</header>",
        "<main>",
        (
            '<div class="wrap"><table><thead><tr><th scope="col">field</th><th scope="col">answer</th></tr></thead>'
            f"<tbody>{fields}</tbody></table></div>"
        ),
        (
            "<p>Answer every item in the design doc. Each item cites the probes that show why it matters, with what they"
            f" observed at {escape(at)} (<code>probe@hash</code> names the exact probe code).</p>"
        ),
    ]
    number = 0
    for index, section in enumerate(rep.checklist, 1):
        items = []
        for item in section.items:
            number += 1
            facts = [f"<li>Why it matters: {escape(' '.join(item.why.split()))}</li>"] if item.why else []
            facts += [f"<li>Evidence: {_evidence(rep, a, source)}</li>" for a in item.evidence]
            facts += [f"<li>Evidence: no {escape(name)} probe is cited for this item</li>" for name in item.left_out]
            facts += [f"<li>Mitigation {_mitigation(rep, m, source)}</li>" for m in item.mitigations]
            if item.no_mitigation:
                facts.append(f"<li>Mitigation: {escape(item.no_mitigation)}</li>")
            items.append(
                f'<li id="item-{number}"><strong>{number}. {escape(item.question)}</strong>'
                f'<ul class="facts">{"".join(facts)}</ul></li>'
            )
        body.append(
            f'<section id="section-{index}"><h2>{escape(section.title)}</h2><ul class="items">{"".join(items)}</ul></section>'
        )
    body.append("</main>")
    return _page(rep, source, "Fan-out / fan-in design review checklist", body)
