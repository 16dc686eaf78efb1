"""Badges and trend charts as SVG: the digest's counts, formatted (badges/<name>.svg, trend/<key>.svg).

Written from a template, not with a badge library: no network, no font files, the same bytes on every
machine. Text widths are estimated from a per-character table of Verdana at 11px (the font shields.io
badges are set in; DejaVu Sans, its fallback, is within a pixel a word), so a badge is as wide as its words.
Colours are the HTML matrix's hazard hues (Okabe-Ito), one per hazard; the badge takes its
colour from the hazard the digest says is worst. Renders, never decides.
"""

from __future__ import annotations

from html import escape

from fanin.report.legend import HAZARD_STYLES
from fanin.report.view import Badge, Trend


def _attr(value: str) -> str:
    """An XML attribute value, quoted (xml.sax.saxutils would import urllib.request: no network client here)."""
    return '"' + escape(value) + '"'


# (fill, text) per hazard: the hues of the HTML matrix's borders (html.PALETTE, Okabe-Ito), so a badge reads
# in the colours of the page it links to; n/a a mid grey (the page's is near white); dark text on the light fills.
COLOURS: dict[str, tuple[str, str]] = {
    "silent": ("#d55e00", "#fff"),
    "hangs": ("#000000", "#fff"),
    "loud": ("#b57d00", "#fff"),
    "nondeterministic": ("#a8527f", "#fff"),
    "order-coupled": ("#0072b2", "#fff"),
    "safe": ("#009e73", "#fff"),
    "n/a": ("#9e9e9e", "#1d1d1f"),
}
SUBJECT_FILL = "#555"
FONT = 'font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11"'

# Advance widths of Verdana at 11px, in pixels (rounded to a tenth); any other character counts as WIDE.
_WIDTHS: dict[str, float] = {
    **dict.fromkeys(" .,:;!|'·", 3.9),
    **dict.fromkeys("il", 3.0),
    **dict.fromkeys("fjt", 4.1),
    **dict.fromkeys("r-()[]/", 4.8),
    **dict.fromkeys("csz", 5.8),
    **dict.fromkeys("akvxy", 6.5),
    **dict.fromkeys("bdeghnopqu0123456789", 7.0),
    **dict.fromkeys("w", 9.0),
    **dict.fromkeys("m", 10.7),
    **dict.fromkeys("IJ", 4.8),
    **dict.fromkeys("FLPTY", 6.6),
    **dict.fromkeys("ABEKRSVXZ", 7.5),
    **dict.fromkeys("CDGHNOQU", 8.4),
    **dict.fromkeys("MW", 10.0),
}
WIDE = 7.5


def text_width(text: str) -> float:
    """The estimated width of a line of badge text, in pixels."""
    return round(sum(_WIDTHS.get(c, WIDE) for c in text), 1)


def _n(value: float) -> str:
    """A coordinate with at most one decimal, the same text on every machine."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def badge_text(badge: Badge) -> str:
    """`22 silent · 9 loud · 150 safe` in the legend's words."""
    return " · ".join(f"{n} {HAZARD_STYLES[h].word}" for h, n in badge.counts) or "no probes"


def badge(b: Badge) -> str:
    """A shields-like flat badge: the subject on grey, the counts on the worst hazard's colour."""
    value = badge_text(b)
    left, right = text_width(b.subject) + 10, text_width(value) + 10
    width = left + right
    fill, ink = COLOURS.get(b.worst, COLOURS["n/a"])
    label = f"{b.subject}: {value}"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="20" role="img" aria-label={_attr(label)}>'
        f"<title>{escape(label)}</title>"
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{_n(width)}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{_n(left)}" height="20" fill="{SUBJECT_FILL}"/>'
        f'<rect x="{_n(left)}" width="{_n(right)}" height="20" fill="{fill}"/>'
        f'<rect width="{_n(width)}" height="20" fill="url(#s)"/></g>'
        f'<g text-anchor="middle" {FONT}>'
        f'<text x="{_n(left / 2)}" y="14" fill="#fff">{escape(b.subject)}</text>'
        f'<text x="{_n(left + right / 2)}" y="14" fill="{ink}">{escape(value)}</text></g></svg>\n'
    )


BAR, GAP, PLOT, TOP, LEFT = 26, 12, 160, 48, 44


def trend(t: Trend) -> str:
    """Stacked bars, one per version (oldest left), worst hazard at the foot; a legend of the hazards shown."""
    shown = [i for i, _ in enumerate(t.hazards) if any(counts[i] for _, counts in t.points)]
    most = max((sum(counts) for _, counts in t.points), default=0) or 1
    labels = [column.label for column, _ in t.points]
    foot = max((text_width(label) for label in labels), default=0) * 0.71 + 16  # the labels at 45 degrees
    width: float = LEFT + len(t.points) * (BAR + GAP) + GAP
    legend_width = sum(text_width(HAZARD_STYLES[t.hazards[i]].word) + 26 for i in shown) + LEFT
    width = max(width, legend_width, text_width(t.name) + 260)
    height = TOP + PLOT + foot
    title = f"{t.name}: probes per hazard, per version"
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}" '
            f'viewBox="0 0 {_n(width)} {_n(height)}" role="img" aria-label={_attr(title)}>'
        ),
        f"<title>{escape(title)}</title>",
        f'<rect width="{_n(width)}" height="{_n(height)}" fill="#fff"/>',
        f'<g {FONT} fill="#1d1d1f">',
        f'<text x="{LEFT}" y="16" font-weight="bold">{escape(title)}</text>',
    ]
    x = float(LEFT)
    for i in shown:
        word = HAZARD_STYLES[t.hazards[i]].word
        fill, _ = COLOURS[t.hazards[i]]
        out.append(f'<rect x="{_n(x)}" y="25" width="10" height="10" fill="{fill}"/>')
        out.append(f'<text x="{_n(x + 14)}" y="34">{escape(word)}</text>')
        x += text_width(word) + 26
    base = TOP + PLOT
    out.append(f'<line x1="{LEFT - 4}" y1="{base}" x2="{_n(width - GAP)}" y2="{base}" stroke="#888"/>')
    out.append(f'<text x="{LEFT - 8}" y="{base + 4}" text-anchor="end">0</text>')
    out.append(f'<text x="{LEFT - 8}" y="{TOP + 4}" text-anchor="end">{most}</text>')
    out.append(f'<line x1="{LEFT - 4}" y1="{TOP}" x2="{LEFT}" y2="{TOP}" stroke="#888"/>')
    for index, (column, counts) in enumerate(t.points):
        left = LEFT + GAP + index * (BAR + GAP)
        y = float(base)
        parts = []
        for i, hazard in enumerate(t.hazards):
            if not counts[i]:
                continue
            tall = counts[i] / most * PLOT
            y -= tall
            said = f"{column.label}: {counts[i]} {HAZARD_STYLES[hazard].word}"
            parts.append(
                f'<rect x="{left}" y="{_n(y)}" width="{BAR}" height="{_n(tall)}" fill="{COLOURS[hazard][0]}">'
                f"<title>{escape(said)}</title></rect>"
            )
        out.append(f'<g stroke="#fff" stroke-width=".5">{"".join(parts)}</g>')
        cx = left + BAR / 2
        out.append(
            f'<text x="{_n(cx)}" y="{base + 12}" text-anchor="end" '
            f'transform="rotate(-45 {_n(cx)} {base + 12})">{escape(column.label)}</text>'
        )
    out.append("</g></svg>\n")
    return "\n".join(out)
