"""The HTML page of two cells side by side: every change between them, or each comparison question."""

from __future__ import annotations

from fanin.report.common import escape
from fanin.report.documents import compare_file
from fanin.report.html import answer_cell, document, group_link, hazard_class, observed_cell, probe_link
from fanin.report.legend import NO_PROBE_CITED
from fanin.report.links import fragment
from fanin.report.view import CompareGroup, ComparePage, Part, Report, Step, mitigation_parts


def mitigation_cell(rep: Report, group: CompareGroup, source: str) -> str:
    """A compare row's mitigation, as the view model's parts say it."""
    return "".join(_part(rep, part, source) for part in mitigation_parts(group.proof))


def _part(rep: Report, part: Part, source: str) -> str:
    if part.kind == "probe":
        return probe_link(rep, part.text, part.text, source)
    if part.kind == "term":
        return f"<strong>{part.text}</strong>"
    return escape(part.text) if part.kind == "text" else part.text


def _step_details(step: Step) -> str:
    fields = "".join(
        f"<li>{escape(name)}: <code>{escape(str(getattr(step.before, name)))}</code> → "
        f"<code>{escape(str(getattr(step.after, name)))}</code></li>"
        for name in ("outcome", "hazard", "label", "detail")
        if name in step.fields and step.before is not None and step.after is not None
    )
    values = "".join(
        f"<tr><td><code>{escape(path)}</code></td><td><code>{escape(b)}</code></td><td><code>{escape(a)}</code></td></tr>"
        for path, b, a in step.values
    )
    table = (
        '<div class="wrap"><table><thead><tr><th scope="col">value path</th><th scope="col">before</th>'
        f'<th scope="col">after</th></tr></thead><tbody>{values}</tbody></table></div>'
        if values
        else ""
    )
    first = f"<p>First changed in {escape(step.first_changed)} (bisected).</p>" if step.first_changed else ""
    if step.companion_changed:
        first += f"<p>Changed with {escape(step.companion_changed)} (bisected over the companion).</p>"
    return f"{first}<ul>{fields}</ul>{table}"


def compare_page(rep: Report, page_: ComparePage) -> str:
    source = compare_file(page_.name, ".html")
    matrix = rep.links.matrix("" if page_.across_frameworks else page_.a.framework, source)
    # Landmarks and headings as assistive technology reads them (checked with axe-core in the browser session).
    body = [
        "<header>",
        f"<h1>{escape(page_.title)}</h1>",
        (
            f'<p class="meta">Rendered by <code>python -m fanin report</code> from <code>{escape(rep.source)}</code>; '
            f"observations of {escape(rep.reference_date)}. <strong>{escape(page_.summary)}.</strong></p>"
        ),
        f'<nav class="nav"><a href="{escape(matrix)}">↑ the matrix</a></nav>',
        "</header>",
        "<main>",
    ]
    if page_.across_frameworks:
        rows = "".join(
            f'<tr><th scope="row">{escape(q.question)}</th>'
            f"<td>{''.join(answer_cell(rep, a, source) for a in q.answers.get(page_.a.framework, ())) or NO_PROBE_CITED}</td>"
            f"<td>{''.join(answer_cell(rep, a, source) for a in q.answers.get(page_.b.framework, ())) or NO_PROBE_CITED}</td>"
            f"<td>{escape(q.verdict)}</td></tr>"
            for q in page_.questions
        )
        body += [
            (
                "<p>Each side is the most harmful of the cited probes' observations, compared with compare's order of harm;"
                " no verdict where a side was not probed (no probe cited, or a cited probe not run at that version).</p>"
            ),
            (
                f'<div class="wrap"><table><thead><tr><th scope="col">question</th><th scope="col">{escape(page_.a_name)} '
                f'{escape(page_.a.label)}</th><th scope="col">{escape(page_.b_name)} {escape(page_.b.label)}</th>'
                f'<th scope="col">compared</th></tr></thead><tbody>{rows}</tbody></table></div>'
            ),
            "</main>",
        ]
        return document(page_.title, body)
    if not page_.entries:
        body += ["<p>No observation differs.</p>", "</main>"]
        return document(page_.title, body)
    rows = "".join(
        f'<tr><th scope="row">{escape(g.step.label)}</th><td>{group_link(rep, g, source)}</td>'
        + "".join(
            f'<td class="obs {hazard_class(o.hazard)}">{observed_cell(o)}</td>' if o is not None else "<td>—</td>"
            for o in (g.step.before, g.step.after)
        )
        + f"<td>{mitigation_cell(rep, g, source)}</td>"
        + f'<td><a href="#{escape(fragment(g.anchor))}">values</a></td></tr>'
        for g in page_.grouped
    )
    body.append(
        "<p>Variants of a probe that changed alike share a row. Beside each regression and changed row, its mitigation"
        f" (reference/mitigations.toml) and whether the probe that tests it observed safe at {escape(page_.b.label)}.</p>"
        '<div class="wrap"><table><thead><tr><th scope="col">change</th><th scope="col">observation</th>'
        f'<th scope="col">{escape(page_.a.label)}</th><th scope="col">{escape(page_.b.label)}</th>'
        '<th scope="col">mitigation</th><th scope="col">values</th>'
        f"</tr></thead><tbody>{rows}</tbody></table></div>"
    )
    body.append("<h2>Each change, value by value</h2>")
    for group in page_.grouped:
        variants = f"<p>Variants: {escape(group.variants)}.</p>" if group.variants else ""
        body.append(
            f'<section class="probe" id="{escape(group.anchor)}"><h3><code>{escape(group.probe_id)}</code>: '
            f"{escape(group.step.label)}</h3>{variants}{_step_details(group.step)}</section>"
        )
    body.append("</main>")
    return document(page_.title, body)
