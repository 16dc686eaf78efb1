"""One self-contained HTML page (and compare pages): the matrix with hazards in words, every probe.

No fonts, images or network: the page opens offline, prints, and works without
JavaScript; one small inline script only adds a picker that shows any two columns (and, on request,
the versions between them), with only the rows that differ.
Every probe id is an anchor (`matrix.html#langgraph/join/separate-edges`). Formatting
only: every choice was made in fanin.report.build.
"""

from __future__ import annotations

from html import escape

from fanin.model.results import Observation
from fanin.report.build import (
    CHANGE_MEANINGS,
    CHANGED_MARK,
    COMPARE_DIR,
    HAZARD_STYLES,
    MATRIX_HTML,
    NOT_OBSERVED,
    Answer,
    CompareGroup,
    ComparePage,
    FrameworkView,
    ProbeView,
    Report,
    Span,
    Step,
    VariantView,
    fragment,
)
from fanin.report.common import pretty_json

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

STYLE = """
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1600px;padding:1rem 2rem 4rem;
 color:#1d1d1f;background:#fff;overflow-wrap:break-word}
h1{margin:.2rem 0}h2{margin-top:2.4rem;border-bottom:1px solid #bbb}h3{margin:0 0 .3rem}
h1,h2,h3,h4{overflow-wrap:anywhere}
h3 code{font-size:1.05rem}
a{color:#0b57a8}
code,pre{font:13px/1.4 ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace}
code{overflow-wrap:anywhere}
pre{background:#f6f8fa;border:1px solid #d9dde2;padding:.6rem;overflow:auto;max-width:100%;white-space:pre}
.meta{color:#444}
.wrap{max-width:100%;overflow:auto;margin:.6rem 0}
table{border-collapse:separate;border-spacing:0}
th,td{border:1px solid #c4c4c4;padding:.3rem .45rem;vertical-align:top;text-align:left}
th{background:#f0f0f0}
.toc ul{margin:.3rem 0;padding-left:1.2rem}.toc li{margin:.1rem 0}
.toc .topics a{white-space:nowrap}
.matrix-wrap{max-height:min(80vh,56rem);overflow:auto;border:1px solid #c4c4c4;position:relative}
.matrix{font-size:13px;width:max-content}
.matrix th,.matrix td{border-width:0 1px 1px 0}
.matrix thead th{position:sticky;top:0;z-index:3;min-width:8.5rem;max-width:14rem}
.matrix thead th.corner{left:0;z-index:4;width:15rem;min-width:15rem;max-width:15rem}
.matrix tbody th[scope=row]{position:sticky;left:0;z-index:2;background:#fff;font-weight:400;width:15rem;min-width:15rem;max-width:15rem}
.matrix tr.variant th[scope=row]{padding-left:1.3rem;background:#fafafa}
.matrix tr.topic th{background:#e8e8e8;font-weight:600;position:static}
.matrix tr.topic th span{position:sticky;left:.5rem}
.matrix td.obs>details{position:sticky;left:calc(15rem + 6px);display:inline-block;max-width:17rem;vertical-align:top}
.cmp{display:block;font-weight:400;font-size:12px}
td.obs summary{cursor:pointer}
td.obs details p{margin:.3rem 0 0}
.hz{font-weight:700;text-transform:uppercase;font-size:11px;letter-spacing:.03em;margin-right:.3rem}
.delta{font-weight:700;white-space:nowrap}
td.h-none{color:#555;font-style:italic;background:#fff}
td.h-na,.h-na .hz{color:#444}
section.probe{border-top:1px solid #ddd;padding:.8rem .6rem;margin:0 -.6rem;scroll-margin-top:.5rem}
section.probe:target,h4:target,tbody:target th,section:target>h2{outline:3px solid #0072b2;outline-offset:2px;background:#eef5fb}
.cite{margin:.2rem 0 .4rem}
.cite-line{display:inline-block;background:#f6f8fa;border:1px solid #d9dde2;padding:.1rem .35rem;user-select:all;white-space:normal}
.nav{font-size:13px;margin:.2rem 0}
.facts{padding-left:1.2rem}.facts li{margin:.15rem 0}
.spans td.obs{min-width:10rem}
.spans pre{margin:0;max-height:20rem}
.legend td:first-child{min-width:9rem}
form.pick{margin:.4rem 0;font-size:13px}
form.pick select,form.pick button{font:inherit}
.matrix.picked th.pick-col{outline:2px solid #0072b2;outline-offset:-2px}
.matrix.picked-two .delta,.matrix.picked-two .cmp{display:none}
@media (max-width:700px){
 body{padding:.5rem .6rem 3rem;font-size:14px}
 h1{font-size:1.35rem}
 .matrix thead th.corner,.matrix tbody th[scope=row]{width:9rem;min-width:9rem;max-width:9rem}
 .matrix td.obs>details{left:calc(9rem + 6px);max-width:12rem}
 .matrix thead th{min-width:7rem}
}
@media print{
 @page{size:landscape;margin:12mm}
 body{max-width:none;padding:0;font-size:9pt}
 .toc,form.pick,.nav,.cmp,.noprint{display:none!important}
 .wrap,.matrix-wrap{overflow:visible!important;max-height:none!important;border:0}
 .matrix{width:100%;table-layout:auto}
 .matrix thead{display:table-header-group}
 .matrix th,.matrix td,.matrix td.obs>details{position:static!important;max-width:none!important;width:auto!important}
 .matrix th,.matrix td{min-width:4.5rem!important}
 .matrix thead th.corner,.matrix tbody th[scope=row]{min-width:9rem!important}
 td,th,code{overflow-wrap:break-word;word-break:normal}
 pre{white-space:pre-wrap;overflow-wrap:anywhere}
 tr{break-inside:avoid}
 *{-webkit-print-color-adjust:exact;print-color-adjust:exact}
 details::details-content{content-visibility:visible;display:block}
 details>summary{list-style:none}
 section.probe:target{outline:0;background:none}
 a[href^="http"]::after{content:" <" attr(href) ">";font-size:7pt;color:#333}
}
"""
STYLE += "".join(
    f".h-{css} {{background-color:{bg};border-left:{border}}}\n"
    for css, (bg, border) in ((h.replace("/", ""), PALETTE[h]) for h in PALETTE)
)
STYLE += (
    ".h-silent{background-image:repeating-linear-gradient(135deg,rgba(213,94,0,.16) 0 3px,transparent 3px 9px)}\n"
    ".h-na{font-style:italic}\n"
)

SCRIPT = """
(function(){
function label(t,i){var h=t.querySelector('thead th[data-col="'+i+'"]');return h?h.firstChild.textContent:String(i);}
document.querySelectorAll('form.pick').forEach(function(f){
 f.hidden=false;
 var t=document.getElementById(f.dataset.table),out=f.querySelector('output');
 function show(){t.classList.remove('picked','picked-two');
  t.querySelectorAll('tr,th,td').forEach(function(e){e.hidden=false;});
  t.querySelectorAll('[data-span]').forEach(function(e){e.colSpan=+e.dataset.span;e.removeAttribute('data-span');});
  t.querySelectorAll('.pick-col').forEach(function(h){h.classList.remove('pick-col');});out.textContent='';}
 function keep(e,n){if(!e.hasAttribute('data-span'))e.dataset.span=e.colSpan;e.colSpan=n;}
 f.addEventListener('reset',show);
 f.addEventListener('submit',function(e){
  e.preventDefault();show();
  var a=+f.elements.a.value,b=+f.elements.b.value,lo=Math.min(a,b),hi=Math.max(a,b),
   between=f.elements.between.checked,pages=JSON.parse(f.dataset.pages||'{}'),key=lo+'-'+hi;
  if(a===b){out.textContent='pick two different versions';return;}
  if(pages[key]&&f.elements.page.checked){location.href=pages[key];return;}
  function shown(i){return between?lo<=i&&i<=hi:i===lo||i===hi;}
  var cols=0,n=0,topic=null,seen=0;
  t.querySelectorAll('thead th[data-col]').forEach(function(h){var on=shown(+h.dataset.col);h.hidden=!on;if(on)cols++;});
  t.querySelectorAll('tbody tr').forEach(function(r){
   if(r.classList.contains('topic')){if(topic)topic.hidden=!seen;topic=r;seen=0;keep(r.querySelector('th'),cols+1);return;}
   var kept=[],kinds={};
   r.querySelectorAll('td').forEach(function(c){var k=0;
    for(var i=+c.dataset.from;i<=+c.dataset.to;i++){if(shown(i))k++;}
    if(k){kept.push([c,k]);kinds[c.dataset.same]=1;}else c.hidden=true;});
   if(Object.keys(kinds).length<2){r.hidden=true;return;}
   kept.forEach(function(x){keep(x[0],x[1]);});n++;seen++;
  });
  if(topic)topic.hidden=!seen;
  t.classList.add('picked');if(!between)t.classList.add('picked-two');
  t.querySelectorAll('thead th[data-col="'+a+'"],thead th[data-col="'+b+'"]').forEach(function(h){h.classList.add('pick-col');});
  out.textContent=between?n+' rows change from '+label(t,lo)+' to '+label(t,hi)+' ('+cols+' versions shown)'
   :n+' rows differ between '+label(t,lo)+' and '+label(t,hi);
 });
});
})();
"""


def hazard_class(hazard: str) -> str:
    return "h-" + hazard.replace("/", "")


def _observed(observation: Observation | None) -> str:
    """The hazard in words, then the label."""
    if observation is None:
        return f"<b class='hz'>{NOT_OBSERVED}</b>"
    word = HAZARD_STYLES[observation.hazard].word
    return f'<b class="hz">{escape(word)}</b>{escape(observation.label)}'


def _delta(step: Step | None) -> str:
    if step is None:
        return ""
    return f' <span class="delta" title="{escape(step.text)}">{CHANGED_MARK} {escape(step.label)}</span>'


def _probe_link(rep: Report, anchor: str, text: str, source: str) -> str:
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
    section = _probe_link(rep, variant.observation_id, "section", source)
    return (
        f'<td class="obs {hazard_class(o.hazard)}" {attrs}><details><summary>{_observed(o)}{_delta(span.change)}</summary>'
        f"<p>{escape(o.detail)}</p><p><code>{escape(o.outcome)}</code> · {escape(span.versions)} · {section}</p>"
        "</details></td>"
    )


def _page_href(rep: Report, page: ComparePage, source: str) -> str:
    return rep.links.href(f"{COMPARE_DIR}/{page.name}.html", "", source)


def _matrix(rep: Report, view: FrameworkView, source: str) -> str:
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
        rows = [f'<tr class="topic"><th scope="rowgroup" colspan="{width}"><span>{escape(topic.name)}</span></th></tr>']
        for probe in topic.probes:
            for variant in probe.matrix_variants:
                if variant.suffix:
                    name = _probe_link(rep, variant.observation_id, f"↳ [{variant.suffix}]", source)
                    css = ' class="variant"'
                else:
                    name = _probe_link(rep, probe.id, f"{probe.case}", source)
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
    spanning = [
        p
        for p in rep.compare_pages
        if p.a.framework == p.b.framework == view.key and not any(p is step for step in view.steps)
    ]
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


def _summary(rep: Report) -> str:
    out = []
    for view in rep.frameworks_with_columns:
        head = "".join(
            f'<th scope="col" class="{hazard_class(h)}"><b class="hz">{escape(s.word)}</b></th>'
            for h, s in HAZARD_STYLES.items()
        )
        rows = "".join(
            f'<tr><th scope="row">{escape(r.column.label)}</th>'
            + "".join(f"<td>{n}</td>" for _, n in r.counts)
            + f"<td>{escape(r.changes_text)}</td></tr>"
            for r in view.summary
        )
        out.append(
            f'<div class="wrap"><table><thead><tr><th scope="col">{escape(view.name)} ({len(view.probes)} probes)</th>'
            f'{head}<th scope="col">changed from the version before</th></tr></thead><tbody>{rows}</tbody></table></div>'
        )
    return "".join(out)


def _group_link(rep: Report, group: CompareGroup, source: str) -> str:
    link = _probe_link(rep, group.anchor, group.probe_id, source)
    return link + (f" ({escape(group.variants)})" if group.variants else "")


def _step_list(rep: Report, page: ComparePage, source: str) -> str:
    by_word: dict[str, list[str]] = {}
    for group in page.grouped:
        by_word.setdefault(group.step.label, []).append(_group_link(rep, group, source))
    return "; ".join(f"{escape(word)}: {', '.join(links)}" for word, links in by_word.items()) or "—"


def _changes(rep: Report, source: str) -> str:
    out = []
    for view in rep.frameworks_with_columns:
        if not view.steps:
            continue
        rows = "".join(
            f'<tr><th scope="row"><a href="{escape(_page_href(rep, p, source))}">{escape(p.a.label)} → {escape(p.b.label)}</a></th>'
            f"<td>{escape(p.counts_text)}</td><td>{_step_list(rep, p, source)}</td></tr>"
            for p in view.steps
        )
        others = [
            p
            for p in rep.compare_pages
            if p.a.framework == p.b.framework == view.key and not any(p is step for step in view.steps)
        ]
        extra = "".join(
            f'<li><a href="{escape(_page_href(rep, p, source))}">{escape(p.title)}</a>: {escape(p.summary)}</li>'
            for p in others
        )
        out.append(
            f"<h3>{escape(view.name)}</h3>"
            f'<div class="wrap"><table><thead><tr><th scope="col">versions (compare page)</th><th scope="col">changes</th>'
            f'<th scope="col">observations</th></tr></thead><tbody>{rows}</tbody></table></div>'
            + (f"<ul>{extra}</ul>" if extra else "")
        )
    across = "".join(
        f'<li><a href="{escape(_page_href(rep, p, source))}">{escape(p.title)}</a>: {escape(p.summary)}</li>'
        for p in rep.compare_pages
        if p.across_frameworks
    )
    if across:
        out.append(f"<h3>Between frameworks</h3><ul>{across}</ul>")
    return "".join(out) or "<p>Only one version per framework: nothing to compare.</p>"


def _answer(rep: Report, answer: Answer, source: str) -> str:
    link = _probe_link(rep, rep.anchor(answer.probe_id), answer.probe_id, source)
    if answer.observation is None:
        return f"<div>not probed yet ({link} has no observation)</div>"
    o = answer.observation
    return f'<div class="{hazard_class(o.hazard)} answer">{_observed(o)} — {link}</div>'


def _comparison(rep: Report, source: str) -> str:
    if not rep.comparison:
        return "<p>No comparison questions (reference/comparison.toml).</p>"
    views = [v for v in rep.frameworks if v.focus]
    head = "".join(f'<th scope="col">{escape(v.name)} {escape(v.focus.label)}</th>' for v in views if v.focus)
    rows = []
    for q in rep.comparison:
        cells = "".join(
            "<td>" + ("".join(_answer(rep, a, source) for a in q.answers.get(v.key, ())) or "no probe cited") + "</td>"
            for v in views
        )
        rows.append(f'<tr><th scope="row">{escape(q.question)}</th>{cells}</tr>')
    return (
        f'<div class="wrap"><table><thead><tr><th scope="col">question</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _twins(rep: Report, source: str) -> str:
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
        f'<tr><th scope="row">{escape(s.versions)}</th><td class="obs {hazard_class(s.observation.hazard)}">{_observed(s.observation)}</td>'
        f"<td><code>{escape(s.observation.outcome)}</code></td><td>{escape(s.observation.detail)}</td>"
        f"<td><details><summary>value</summary><pre>{escape(pretty_json(s.observation.value, width=60))}</pre></details></td></tr>"
        for s in variant.observed_spans
        if s.observation is not None
    )
    parts.append(
        '<div class="wrap"><table class="spans"><thead><tr><th scope="col">versions</th><th scope="col">observed</th>'
        '<th scope="col">outcome</th><th scope="col">detail</th><th scope="col">observed value</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )
    return "".join(parts)


def _probe(rep: Report, view: FrameworkView, probe: ProbeView, source: str) -> str:
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
                f"; with it, {_probe_link(rep, m.probe_id, m.probe_id, source)} observes at {escape(m.column.label)}: "
                f'<span class="{hazard_class(m.observation.hazard)}">{_observed(m.observation)}</span>'
            )
        elif m.probe_id:
            text += f"; {_probe_link(rep, m.probe_id, m.probe_id, source)} has no observation yet"
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
            f"{_observed(step.after)} — {escape(step.label)} against Python {escape(step.before_column.python)}</li>"
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
            f"<pre>{escape(probe.reproducer)}</pre></details>"
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


def _legend() -> str:
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


def _document(title: str, body: list[str], script: bool = False) -> str:
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
        f'<section id="legend"><h2>Legend</h2>{_legend()}</section>',
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
        missing = (
            "<p>Not run: "
            + "; ".join(f"<code>{escape(cell)}</code> not run: {escape(reason)}" for cell, reason in view.missing)
            + "</p>"
            if view.missing
            else ""
        )
        body.append(
            f'<section id="{escape(view.anchor)}" class="framework"><h2>{escape(view.name)}</h2>{missing}'
            "<p>A cell spans the neighbouring versions that observed the same. ↳ rows are variants (backend, mode)"
            " that differ from the default in some version; every other variant observes what the default does."
            " Open a cell for its detail; a probe's name leads to its section.</p>"
            f"{_matrix(rep, view, source)}</section>"
        )
    which = "the version asked for" if rep.focused else "the newest version"
    body.append(
        f'<section id="comparison"><h2>{" vs ".join(escape(v.name) for v in rep.frameworks)}</h2>'
        f"<p>Each answer is what the cited probe observed at {which} of its framework.</p>{_comparison(rep, source)}</section>"
    )
    if any(v.twins for v in rep.frameworks):
        body.append(
            '<section id="twins"><h2>Python twins</h2><p>Cells that differ from a matrix cell only by Python, '
            f"and the observations where they differ.</p>{_twins(rep, source)}</section>"
        )
    for view in rep.frameworks:
        body.append(f'<section id="probes-{escape(view.key)}"><h2>{escape(view.name)} probes</h2>')
        body += [_probe(rep, view, probe, source) for probe in view.probes]
        body.append("</section>")
    body.append("</main>")
    return _document(rep.title, body, script=True)


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
    return f"{first}<ul>{fields}</ul>{table}"


def compare_page(rep: Report, page_: ComparePage) -> str:
    source = f"{COMPARE_DIR}/{page_.name}.html"
    matrix = rep.links.href(MATRIX_HTML, "", source)
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
            f"<td>{''.join(_answer(rep, a, source) for a in q.answers.get(page_.a.framework, ())) or 'no probe cited'}</td>"
            f"<td>{''.join(_answer(rep, a, source) for a in q.answers.get(page_.b.framework, ())) or 'no probe cited'}</td>"
            f"<td>{escape(q.verdict)}</td></tr>"
            for q in page_.questions
        )
        body += [
            "<p>Each side is the most harmful of the cited probes' observations, compared with compare's order of harm.</p>",
            (
                f'<div class="wrap"><table><thead><tr><th scope="col">question</th><th scope="col">{escape(page_.a_name)} '
                f'{escape(page_.a.label)}</th><th scope="col">{escape(page_.b_name)} {escape(page_.b.label)}</th>'
                f'<th scope="col">compared</th></tr></thead><tbody>{rows}</tbody></table></div>'
            ),
            "</main>",
        ]
        return _document(page_.title, body)
    if not page_.entries:
        body += ["<p>No observation differs.</p>", "</main>"]
        return _document(page_.title, body)
    rows = "".join(
        f'<tr><th scope="row">{escape(g.step.label)}</th><td>{_group_link(rep, g, source)}</td>'
        + "".join(
            f'<td class="obs {hazard_class(o.hazard)}">{_observed(o)}</td>' if o is not None else "<td>—</td>"
            for o in (g.step.before, g.step.after)
        )
        + f'<td><a href="#{escape(fragment(g.anchor))}">values</a></td></tr>'
        for g in page_.grouped
    )
    body.append(
        "<p>Variants of a probe that changed alike share a row.</p>"
        '<div class="wrap"><table><thead><tr><th scope="col">change</th><th scope="col">observation</th>'
        f'<th scope="col">{escape(page_.a.label)}</th><th scope="col">{escape(page_.b.label)}</th><th scope="col">values</th>'
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
    return _document(page_.title, body)
