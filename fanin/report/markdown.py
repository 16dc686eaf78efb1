"""Markdown: the reference report (GitHub-width), compare pages, and the gate's table of changes.

Formatting only: every choice (spans, verdicts, change words, variants shown, links,
cite lines) was made in fanin.report.build.
"""

from __future__ import annotations

import itertools

from tabulate import tabulate

from fanin.model.results import Hazard, Observation
from fanin.report.documents import MATRIX_HTML, REPORT_MD, compare_file, probes_md
from fanin.report.legend import (
    CHANGE_MEANINGS,
    CHANGED_MARK,
    HAZARD_STYLES,
    NO_PROBE_CITED,
    NOT_PROBED,
)
from fanin.report.view import (
    Answer,
    CompareGroup,
    ComparePage,
    FrameworkView,
    Part,
    ProbeView,
    Report,
    Step,
    TopicView,
    VariantView,
    mitigation_parts,
)

LABEL_WIDTH = 48
# The widest a Markdown table may be (columns); a topic with more distinct version groups is split.
MAX_GROUPS = 6


def label(text: str, width: int = LABEL_WIDTH) -> str:
    """A cell label short enough for a table, escaped for Markdown."""
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def escape(text: str) -> str:
    """Text in a table cell, whole: pipes escaped, one line."""
    return " ".join(text.replace("|", "\\|").split())


def code(text: str) -> str:
    """An inline code span that survives any backticks in the text."""
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A GitHub table without padding: wide cells cost their text only, so the file stays small."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def observed(observation: Observation | None) -> str:
    """A hazard in words (with its mark) and the label: `🔴 silent · last write wins: C`."""
    if observation is None:
        return "not observed"
    style = HAZARD_STYLES[observation.hazard]
    return f"{style.mark} {style.word} · {escape(observation.label)}"


def _change_mark(step: Step | None) -> str:
    return f" {CHANGED_MARK} {step.label}" if step is not None else ""


def _link(rep: Report, anchor: str, text: str, source: str) -> str:
    return f"[{code(text)}]({rep.links.probe(rep.anchor(anchor), source)})"


def _legend() -> str:
    rows = [[s.mark, s.word, s.meaning] for s in HAZARD_STYLES.values()]
    words = [[word, meaning] for word, meaning in CHANGE_MEANINGS.items() if word not in ("new", "missing")]
    return (
        tabulate(rows, headers=["mark", "hazard", "meaning"], tablefmt="github")
        + f"\n\nEvery cell states its hazard in words; the mark only repeats it. {CHANGED_MARK} marks a cell whose"
        " outcome, hazard or value differs from the version before, with the direction of the change"
        " (compare's classifier, the same as the upgrade gate's):\n\n"
        + tabulate(words, headers=["change", "meaning"], tablefmt="github")
        + "\n"
    )


def _summary(rep: Report) -> str:
    out = []
    for view in rep.frameworks_with_columns:
        # A hazard no version of this framework shows gets no column: the table stays within the width bound.
        # n/a is said beside the version rather than in a column of its own, for the same reason.
        na = HAZARD_STYLES[Hazard.NOT_APPLICABLE.value]
        shown = [h for h in HAZARD_STYLES if h != na.hazard and any(dict(row.counts).get(h) for row in view.summary)]
        rows = [
            [
                row.column.label
                + (f" ({n} {na.mark} n/a)" if (n := dict(row.counts).get(na.hazard)) else "")
                + (f" ({row.not_probed} {NOT_PROBED})" if row.not_probed else "")
                + (f"<br>{row.changes_text}" if row.changes else ""),
                *(dict(row.counts)[h] for h in shown),
            ]
            for row in view.summary
        ]
        headers = ["version", *(f"{HAZARD_STYLES[h].mark} {HAZARD_STYLES[h].word}" for h in shown)]
        out.append(
            f"**{view.name}** ({len(view.probes)} probes)\n\n" + tabulate(rows, headers=headers, tablefmt="github")
        )
    return "\n\n".join(out) + "\n"


def _group_link(rep: Report, group: CompareGroup, source: str) -> str:
    link = _link(rep, group.anchor, group.probe_id, source)
    return link + (f" ({group.variants})" if group.variants else "")


def _step_list(rep: Report, page: ComparePage, source: str) -> str:
    by_word: dict[str, list[str]] = {}
    for group in page.grouped:
        by_word.setdefault(group.step.label, []).append(_group_link(rep, group, source))
    return "; ".join(f"{word}: {', '.join(links)}" for word, links in by_word.items()) or "—"


def _changes(rep: Report, source: str) -> str:
    out = []
    for view in rep.frameworks_with_columns:
        if not view.steps:
            continue
        rows = [
            [
                f"{page.a.label} → {page.b.label}",
                page.counts_text,
                _step_list(rep, page, source),
            ]
            for page in view.steps
        ]
        out.append(
            f"**{view.name}** (observations: each probe under each backend and mode)\n\n"
            + table(["versions", "changes", "observations"], rows)
        )
    return "\n\n".join(out) + "\n" if out else "Only one version per framework: nothing to compare.\n"


def _chunks(topic: TopicView) -> list[range]:
    """The topic's version groups in as few tables as the width allows, split evenly (7 -> 4 + 3)."""
    return _even(len(topic.groups))


def _even(count: int) -> list[range]:
    """`count` columns in as few tables of at most MAX_GROUPS as possible, split evenly."""
    tables = -(-count // MAX_GROUPS)
    bounds = [round(i * count / tables) for i in range(tables + 1)]
    return [range(a, b) for a, b in itertools.pairwise(bounds)]


def _topic_table(rep: Report, topic: TopicView, source: str) -> str:
    tables = []
    for chunk in _chunks(topic):
        headers = ["probe", *(topic.groups[i].label for i in chunk)]
        rows = []
        for row in topic.rows:
            if row.variant.suffix:
                name = f"↳ [{code(f'[{row.variant.suffix}]')}]({rep.links.probe(row.variant.observation_id, source)})"
            else:
                name = _link(rep, row.probe.id, row.probe.case, source)
            cells = [observed(row.cells[i].observation) + _change_mark(row.cells[i].change) for i in chunk]
            rows.append([name, *cells])
        tables.append(table(headers, rows))
    return "\n\n".join(tables) + "\n"


def _matrix(rep: Report, view: FrameworkView, source: str) -> str:
    parts = []
    if view.missing:
        parts.append(
            "Not run: " + "; ".join(f"{code(cell)} not run: {escape(reason)}" for cell, reason in view.missing) + "\n"
        )
    if not view.columns:
        parts.append("No result sets.\n")
        return "\n".join(parts)
    parts.append(
        "Columns are versions; neighbouring versions in which every probe of the topic observed the same"
        " share one column. ↳ rows are variants (backend, mode) that differ from the default in some version;"
        " every other variant observes what the default does.\n"
    )
    for topic in view.topics:
        parts += [f'### <a id="{topic.anchor}"></a>{view.name} · {topic.name}', ""]
        if topic.title:
            parts += [f"*{topic.title}*: {topic.about}", ""]
        parts.append(_topic_table(rep, topic, source))
    return "\n".join(parts)


def answer_text(rep: Report, answer: Answer, source: str) -> str:
    link = _link(rep, rep.anchor(answer.probe_id), answer.probe_id, source)
    if answer.observation is None or answer.column is None:
        return f"not probed yet ({link} has no observation)"
    return f"{observed(answer.observation)} — {link}"


def _comparison(rep: Report, source: str) -> str:
    if not rep.comparison:
        return "No comparison questions (reference/comparison.toml).\n"
    every = [v for v in rep.frameworks if v.focus]
    out = []
    for chunk in _even(len(every)):  # more frameworks than the width allows: tables side by side, split evenly
        views = [every[i] for i in chunk]
        headers = ["question", *(f"{v.name} {v.focus.label}" for v in views if v.focus)]
        coverage = [
            "**coverage**",
            *(escape(c.text) if (c := rep.comparison_coverage.get(v.key)) else "—" for v in views),
        ]
        rows = [coverage] + [
            [
                escape(q.question) + (f"<br>**{escape(q.disagreement)}**" if q.disagreement else ""),
                *(
                    "<br>".join(answer_text(rep, a, source) for a in q.answers.get(v.key, ())) or NO_PROBE_CITED
                    for v in views
                ),
            ]
            for q in rep.comparison
        ]
        out.append(table(headers, rows))
    return "\n\n".join(out) + "\n"


def _runtimes(rep: Report, source: str) -> str:
    out = []
    for python, node, pairs in rep.runtime_pairs:
        py_at = python.focus.label if python.focus else "?"
        js_at = node.focus.label if node.focus else "?"
        rows = [
            [
                code(pair.case),
                answer_text(rep, pair.python, source),
                answer_text(rep, pair.node, source),
                {True: "same", False: "**differs**", None: "—"}[pair.same],
            ]
            for pair in pairs
        ]
        headers = [
            "scenario",
            f"{python.name} {py_at} (Python)",
            f"{node.name} {js_at} (Node)",
            "outcome, hazard, label",
        ]
        out.append(table(headers, rows) if rows else f"No probe id of {node.name} has a {python.name} twin.")
    return "\n\n".join(out) + "\n"


def _twins(rep: Report, source: str) -> str:
    out = []
    for view in rep.frameworks:
        for twin in view.twins:
            page = twin.page
            listed = _step_list(rep, page, source)
            out.append(
                f"- {code(twin.column.cell)} (Python {twin.column.python}) against {code(twin.twin.cell)}"
                f" (Python {twin.twin.python}): {page.summary}" + (f" — {listed}" if page.entries else "")
            )
    return "\n".join(out) + "\n"


def _verdicts(variant: VariantView) -> str:
    return "; ".join(f"{span.verdict} in {span.versions}" for span in variant.observed_spans)


def _changed(variant: VariantView) -> str:
    return "; ".join(step.text for step in variant.changes) or (
        f"no behaviour change across {len(variant.observations)} versions"
    )


def _variant_block(rep: Report, probe: ProbeView, variant: VariantView, source: str) -> list[str]:
    lines = []
    if variant.suffix:
        lines += [f'#### <a id="{variant.observation_id}"></a>Variant {code(variant.label)}', ""]
    if probe.claim_checked:
        lines.append(f"- **Claim check:** {_verdicts(variant)}")
    lines.append(f"- **Changed:** {_changed(variant)}")
    if variant.wording:
        lines.append(
            "- **Wording changed:** "
            + "; ".join(
                f"between {s.before_column.label} and {s.after_column.label}"
                for s in variant.wording
                if s.before_column and s.after_column
            )
        )
    lines += ["", "| versions | observed | outcome | detail |", "|---|---|---|---|"]
    for span in variant.observed_spans:
        o = span.observation
        assert o is not None
        lines.append(f"| {span.versions} | {observed(o)} | {code(o.outcome)} | {escape(o.detail)} |")
    lines.append("")
    return lines


def _probe_section(rep: Report, view: FrameworkView, probe: ProbeView, source: str) -> str:
    info = probe.info
    heading = code(probe.id)
    if rep.links.base_url:
        heading = f"[{heading}]({rep.links.probe(probe.id, source)})"
    where = f"{info.file}::{info.function}"
    file_href = rep.links.source_file(info.file, probe.reproducer_lines, source)
    topic = next(t for t in view.topics if t.name == probe.topic)
    lines = [
        f'### <a id="{probe.id}"></a>{heading}',
        "",
        "Cite as:",
        "",
        "```text",
        rep.cite_line(probe, source),
        "```",
        "",
        (
            f"[↑ {view.name} · {probe.topic}]({rep.links.href(REPORT_MD, topic.anchor, source)})"
            f" · [contents]({rep.links.href(REPORT_MD, 'contents', source)})"
        ),
        "",
        f"**{escape(info.title)}**",
        "",
        f"- **Claim:** {escape(info.claim.text)} ([source]({info.claim.source}))",
    ]
    if not probe.claim_checked:
        lines.append("- **Claim check:** not machine-checked (the claim states no expected observation)")
    if info.sources:
        lines.append("- **See also:** " + ", ".join(f"<{s}>" for s in info.sources))
    if probe.mitigation is not None:
        m = probe.mitigation
        text = f"- **Mitigation:** {escape(m.text)} ([source]({m.source}))"
        if m.probe_id and m.observation is not None and m.column is not None:
            text += (
                f"; with it, {_link(rep, m.probe_id, m.probe_id, source)} observes at {m.column.label}:"
                f" {observed(m.observation)}"
            )
        elif m.probe_id:
            text += f"; {_link(rep, m.probe_id, m.probe_id, source)} has no observation yet"
        lines.append(text)
    if probe.variants[1:]:
        alike = ", ".join(code(v.label) for v in probe.alike)
        differing = ", ".join(code(v.label) for v in probe.differing)
        said = []
        if alike:
            said.append(f"{alike} observe what the default does in every version")
        if differing:
            said.append(f"{differing} differ: each has its own table below")
        lines.append(f"- **Variants** (default: {code(probe.default_name)}): " + "; ".join(said))
    for step in probe.python_twins:
        assert step.after_column is not None and step.before_column is not None
        lines.append(
            f"- **On Python {step.after_column.python}** ({code(step.after_column.cell)}): {observed(step.after)}"
            f" — {step.label} against Python {step.before_column.python}"
        )
    lines += _variant_block(rep, probe, probe.default, source)
    for variant in probe.differing:
        lines += _variant_block(rep, probe, variant, source)
    # The values themselves are in matrix.html and in each cell's result set; here they would double the
    # page past what GitHub renders comfortably (the size bound in docs/RESULTS.md).
    values = f'each cell\'s `reference/results/<cell>.json` under `observations."{probe.info.id}"`'
    if rep.links.base_url:  # published beside this page: a link that resolves
        values += f", and [matrix.html]({rep.links.href(MATRIX_HTML, probe.info.id, source)})"
    lines += [f"Observed values: {values}.", ""]
    note = "" if probe.reproducer_current else " — edited since these observations were made"
    note += f" · standalone: {code(f'fanin repro {info.id}')}" if info.file.endswith(".py") else ""
    if probe.reproducer is None:
        lines.append(f"Reproducer: {code(where)} (not in this checkout)")
    elif rep.inline_reproducers or not file_href:
        lines += [f"Reproducer ({code(where)}{note}):", "", "```python", probe.reproducer.rstrip(), "```"]
    else:
        lines.append(f"Reproducer: [{code(where)}]({file_href}){note}")
    lines.append("")
    return "\n".join(lines)


def _key_findings(rep: Report, source: str) -> str:
    lines = []
    for key in rep.key_findings:
        view, column = key.framework, key.column
        line = f"- **{view.name} {column.label}**: {key.shares_text}; {key.coverage.text}"
        if key.examples:
            worst = key.examples[0].default.observations[column.cell].hazard
            shown = ", ".join(_link(rep, rep.anchor(p.id), p.id, source) for p in key.examples)
            line += f"; {worst}, e.g. {shown}"
        if key.biggest is not None:
            page = key.biggest
            line += f". Most changed: [{page.a.label} → {page.b.label}](#changes), observations {page.counts_text}"
        lines.append(line + ".")
    return "\n".join(lines) + "\n" if lines else ""


def _contents(rep: Report) -> str:
    items = [
        "[Key findings](#key-findings)",
        "[Legend](#legend)",
        "[Summary](#summary)",
        "[Changes between versions](#changes)",
    ]
    for view in rep.frameworks:
        topics = " · ".join(f"[{t.name}](#{t.anchor})" for t in view.topics)
        items.append(f"[{view.name} matrix](#{view.anchor})" + (f": {topics}" if topics else ""))
    names = " vs ".join(v.name for v in rep.frameworks)
    items.append(f"[{names}](#comparison)")
    if rep.runtime_pairs:
        items.append("[Python vs JavaScript](#runtimes)")
    if any(v.twins for v in rep.frameworks):
        items.append("[Python twins](#twins)")
    items.append(
        "Probes, one file per framework: "
        + " · ".join(f"[{v.name}]({rep.links.href(probes_md(v.key), '', REPORT_MD)})" for v in rep.frameworks)
    )
    return '<a id="contents"></a>**Contents**\n\n' + "\n".join(f"- {item}" for item in items) + "\n"


def report(rep: Report, source: str = REPORT_MD) -> str:
    parts = [f"# {rep.title}", ""]
    cells = ", ".join(
        f"{len(v.columns)} {v.name} cells ({v.columns[0].label} – {v.columns[-1].label})"
        for v in rep.frameworks
        if v.columns
    )
    commit = f" (suite commit {rep.commit})" if rep.commit else ""
    parts += [
        (
            f"Rendered from `{rep.source}` by `python -m fanin report`; do not edit by hand. "
            f"Observations of {rep.reference_date}{commit}: {cells or 'no cells'}. "
            "The review checklist is in [CHECKLIST.md](CHECKLIST.md); every observed value is in the result sets,"
            " and as one page in `matrix.html`, which `./noxw -s report` renders into `reports/` (or `--out DIR`)."
        ),
        "",
    ]
    if rep.focus_notes:
        parts += [
            "**Versions asked for** (the comparison, the checklist and every cite line speak of these): "
            + "; ".join(rep.focus_notes)
            + ".",
            "",
        ]
    if rep.run_pages:
        parts += [
            "**Each cell's run** (pytest-html: every observation, and the before/after of a change): "
            + ", ".join(f"[{cell}]({href})" for cell, href in rep.run_pages)
            + ".",
            "",
        ]
    parts += [
        '## <a id="key-findings"></a>Key findings',
        "",
        (
            "A *cell* is one framework version on one Python, installed from its lock; an *observation* is what one"
            " probe saw in one cell (under one backend and mode). At each framework's newest version:"
        ),
        "",
        _key_findings(rep, source),
        _contents(rep),
        '## <a id="legend"></a>Legend',
        "",
        _legend(),
        '## <a id="summary"></a>Summary: probes per hazard, per version',
        "",
        (
            "Each probe counted once, by its default variant (backend and mode); variants are in the matrices."
            " A count also moves when a probe's API appears (n/a → observed, *new coverage*), so under each version"
            " is how its probes changed from the version before, by direction."
        ),
        "",
        _summary(rep),
        '## <a id="changes"></a>Changes between versions',
        "",
        "Every observation that differs from the version before, by the direction of the change.",
        "",
        _changes(rep, source),
    ]
    for view in rep.frameworks:
        parts += [f'## <a id="{view.anchor}"></a>{view.name}', "", _matrix(rep, view, source)]
    names = " vs ".join(v.name for v in rep.frameworks)
    which = "the version asked for" if rep.focused else "the newest version"
    parts += [
        f'## <a id="comparison"></a>{names}',
        "",
        f"Each answer is what the cited probe observed at {which} of its framework.",
        "",
        _comparison(rep, source),
    ]
    if rep.runtime_pairs:
        parts += [
            '## <a id="runtimes"></a>Python vs JavaScript',
            "",
            (
                "Every scenario both runtimes probe (`langgraph/<topic>/<case>` and `langgraphjs/<topic>/<case>`),"
                f" at {which} of each framework; the values differ in shape, so outcome, hazard and label are compared."
            ),
            "",
            _runtimes(rep, source),
        ]
    if any(v.twins for v in rep.frameworks):
        parts += [
            '## <a id="twins"></a>Python twins',
            "",
            "Cells that differ from a matrix cell only by Python, and the observations where they differ.",
            "",
            _twins(rep, source),
        ]
    return "\n".join(parts).rstrip() + "\n"


def probe_page(rep: Report, view: FrameworkView) -> str:
    """probes/<key>.md: every probe section of one framework (REPORT.md holds the overview and the matrices)."""
    source = probes_md(view.key)
    parts = [
        f"# {view.name} probes",
        "",
        (
            f"Part of the [{rep.title}]({rep.links.href(REPORT_MD, '', source)}), rendered from `{rep.source}`;"
            " do not edit by hand. One section per probe: its cite line, the claim and whether it holds, where it"
            " changed, the mitigation, the observations per span of versions and per variant, the reproducer."
        ),
        "",
    ]
    for probe in view.probes:
        parts.append(_probe_section(rep, view, probe, source))
    return "\n".join(parts).rstrip() + "\n"


# --- compare pages --------------------------------------------------------------------------


def _value_table(step: Step) -> list[str]:
    lines = []
    for name in ("outcome", "hazard", "label", "detail"):
        if name in step.fields and step.before is not None and step.after is not None:
            lines.append(f"- {name}: {code(str(getattr(step.before, name)))} → {code(str(getattr(step.after, name)))}")
    if step.values:
        lines += ["", "| value path | before | after |", "|---|---|---|"]
        lines += [
            f"| {code(escape(path))} | {code(escape(before))} | {code(escape(after))} |"
            for path, before, after in step.values
        ]
    return lines


def mitigation_text(rep: Report, group: CompareGroup, source: str) -> str:
    """A compare row's mitigation, as the view model's parts say it."""
    return "".join(_part(rep, part, source) for part in mitigation_parts(group.proof))


def _part(rep: Report, part: Part, source: str) -> str:
    if part.kind == "probe":
        return _link(rep, part.text, part.text, source)
    if part.kind != "text":
        return part.text
    # escape makes the words one line and trims them: the space between them and a link beside them stays
    return (" " if part.text[:1].isspace() else "") + escape(part.text) + (" " if part.text[-1:].isspace() else "")


def compare_page(rep: Report, page: ComparePage) -> str:
    source = compare_file(page.name, ".md")
    lines = [
        f"# {page.title}",
        "",
        (
            f"Rendered by `python -m fanin report` from `{rep.source}`; observations of {rep.reference_date}. "
            f"**{page.summary}.** Probe links lead to [REPORT.md]({rep.links.href(REPORT_MD, '', source)})."
        ),
        "",
    ]
    if page.across_frameworks:
        headers = ["question", f"{page.a_name} {page.a.label}", f"{page.b_name} {page.b.label}", "compared"]
        rows = [
            [
                escape(q.question),
                "<br>".join(answer_text(rep, a, source) for a in q.answers.get(page.a.framework, ())) or NO_PROBE_CITED,
                "<br>".join(answer_text(rep, a, source) for a in q.answers.get(page.b.framework, ())) or NO_PROBE_CITED,
                q.verdict,
            ]
            for q in page.questions
        ]
        lines += [
            (
                "Each side is the most harmful of the cited probes' observations, compared with compare's order of harm;"
                " no verdict where a side was not probed (no probe cited, or a cited probe not run at that version)."
            ),
            "",
            table(headers, rows),
        ]
        return "\n".join(lines).rstrip() + "\n"
    if not page.entries:
        lines.append("No observation differs.")
        return "\n".join(lines).rstrip() + "\n"
    rows = [
        [
            g.step.label,
            _group_link(rep, g, source),
            observed(g.step.before),
            observed(g.step.after),
            mitigation_text(rep, g, source),
        ]
        for g in page.grouped
    ]
    lines += [
        (
            "Variants of a probe that changed alike share a row. Beside each regression and changed row, its mitigation"
            f" (reference/mitigations.toml) and whether the probe that tests it observed safe at {page.b.label}."
        ),
        "",
        table(["change", "observation", page.a.label, page.b.label, "mitigation"], rows),
        "",
    ]
    for group in page.grouped:
        step = group.step
        lines += [f"## {code(group.probe_id)}: {step.label}", ""]
        if group.variants:
            lines += [f"Variants: {group.variants}.", ""]
        if step.first_changed:
            lines += [f"First changed in {step.first_changed} (bisected).", ""]
        if step.companion_changed:
            lines += [f"Changed with {step.companion_changed} (bisected over the companion).", ""]
        lines += _value_table(step)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# --- the gate's table -----------------------------------------------------------------------
