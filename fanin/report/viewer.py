"""viewer.html: a user's own `probe --here` result set beside the reference, in the browser, never uploaded.

One static page in the bundle. The user picks the result set `probe --here --out DIR` wrote; the page reads
it with the File API, picks the reference cell as `probe --here` does (static/viewer.mjs ports `nearest`, and
`newer_neighbour` with compare's `standing`: a difference the newer neighbour cell shows too is "as the newer
reference", never a regression, where the user's version lies between two cells),
reads that cell's published result set from data/results/ beside the page (or, opened from disk, a second
file the user picks), and shows every observation, yours against the reference, with compare's verdict
computed in the page. The order of harm and the change words are written into the page from their one
definition (`model/compare`); the port of the classifier itself is held to it by tests/test_viewer.py.
"""

from __future__ import annotations

import json
from html import escape
from importlib import resources
from typing import Any

from packaging.version import Version

from fanin.model import compare
from fanin.model.results import HAZARDS, NEEDS_EARLIER_RELEASE, NOT_APPLICABLE, PROBE_ERROR, TIMEOUT
from fanin.report.documents import INDEX_HTML, MATRIX_HTML, VIEWER_HTML
from fanin.report.legend import CHANGE_MEANINGS, CHANGE_WORDS, HAZARD_STYLES
from fanin.report.view import Report

DATA_RESULTS = "data/results"  # where `report --out` publishes every result set (report/data)


def rules() -> dict[str, Any]:
    """What the port reads instead of copying: the order of harm, the change words in their order, the hazard words."""
    return {
        "harm": {hazard: compare.harm(hazard) for hazard in HAZARDS if compare.ranked(hazard)},
        "words": list(CHANGE_WORDS),
        "hazardWords": {hazard: style.word for hazard, style in HAZARD_STYLES.items()},
        "order": [*CHANGE_WORDS, *compare.STANDING_MEANINGS],  # compare.change_order: a standing after the changes
        "standing": {
            "asNewer": compare.Standing.AS_NEWER.value,
            "notCovered": compare.Standing.NOT_COVERED.value,
            "couldNotJudge": compare.Standing.COULD_NOT_JUDGE.value,
            "probeError": PROBE_ERROR,
            "timeout": TIMEOUT,
            "missingModule": compare.MISSING_MODULE,
            "notApplicable": NOT_APPLICABLE,
            "needsEarlier": NEEDS_EARLIER_RELEASE,
            "needsEarlierReason": compare.NEEDS_EARLIER_REASON,
        },
    }


def cells(rep: Report) -> list[dict[str, str]]:
    """Every published reference cell, in the matrix's order (`Cell.sort_key`: version, then Python), as
    `probe --here`'s `nearest` walks them, and where its result set is."""
    found = []
    for view in rep.frameworks_with_columns:
        columns = [
            c for c in (*view.columns, *(t.column for t in view.twins)) if not c.origin
        ]  # local sets: unpublished
        for column in sorted(columns, key=lambda c: (Version(c.version), c.python)):
            found.append(
                {
                    "id": column.cell,
                    "framework": view.key,
                    "version": column.version,
                    "python": column.python,
                    "results": f"{DATA_RESULTS}/{column.cell}.json",
                }
            )
    return found


def _script() -> str:
    return resources.files("fanin.report").joinpath("static", "viewer.mjs").read_text(encoding="utf-8")


def _embedded(data: Any) -> str:
    """JSON inside a <script> element: `</` cannot end it early."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True).replace("</", "<\\/")


def page(rep: Report) -> str:
    """The viewer; its text links back to the report: the site's index on the site, a bundle's matrix.html."""
    home = rep.links.href(INDEX_HTML, "", VIEWER_HTML) if rep.links.site else MATRIX_HTML
    # the matrix's default Python is every column's without a Python note (`py3.10`)
    default = next((c.python for v in rep.frameworks for c in v.columns if not c.python_note), "")
    data = {"cells": cells(rep), "rules": rules(), "defaultPython": default}
    legend = "".join(
        f"<tr><td>{escape(word)}</td><td>{escape(meaning)}</td></tr>"
        for word, meaning in (*((w, CHANGE_MEANINGS[w]) for w in CHANGE_WORDS), *compare.STANDING_MEANINGS.items())
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>fanin: your result set beside the reference</title>
<style>
body{{font:15px/1.45 system-ui,sans-serif;margin:1.2rem auto;max-width:70rem;padding:0 1rem;color:#1d1d1f}}
table{{border-collapse:collapse;width:100%}}th,td{{border:1px solid #c4c4c4;padding:.25rem .4rem;text-align:left;vertical-align:top}}
th{{background:#f0f0f0}}td.id{{font-family:ui-monospace,monospace;font-size:.85em;overflow-wrap:anywhere}}
tr.gates td:last-child{{font-weight:600;color:#b00020}}
.h-silent{{border-left:6px solid #d55e00}}.h-loud{{border-left:6px double #b57d00}}.h-hangs{{border-left:6px groove #000}}
.h-order-coupled{{border-left:6px dashed #0072b2}}.h-nondeterministic{{border-left:6px dotted #a8527f}}
.h-safe{{border-left:2px solid #009e73}}.h-na{{font-style:italic}}
#status,#verdict{{margin:.5rem 0}}#verdict{{font-weight:600}}
</style></head><body>
<h1>Your result set beside the reference</h1>
<p>Pick the result set <code>fanin probe --here --out DIR</code> wrote (<code>DIR/&lt;cell&gt;.json</code>).
It is read in this page and goes nowhere: nothing is uploaded. The reference cell is chosen as
<code>probe --here</code> chooses it (the same version and Python, else the nearest older version), and every
observation is classified as the upgrade gate classifies it; between two reference cells, a difference the newer
one shows too is &ldquo;as the newer reference&rdquo;, as <code>probe --here</code> judges it. See <a href="{escape(home)}">the report</a>.</p>
<p><label>Your result set: <input type="file" id="yours" accept=".json,application/json"></label>
<label>compared with <select id="cell"></select></label></p>
<p id="theirs-row" hidden><label>The reference cell's result set (this page could not read it beside itself):
<input type="file" id="theirs" accept=".json,application/json"></label></p>
<p id="status" role="status">No result set picked yet.</p>
<p id="verdict"></p>
<p><label><input type="checkbox" id="only" checked> only the observations that differ</label></p>
<table><thead><tr><th>observation</th><th>reference</th><th>yours</th><th>verdict</th></tr></thead>
<tbody id="rows"></tbody></table>
<h2>The verdicts</h2>
<table><tbody>{legend}</tbody></table>
<script type="application/json" id="fanin-viewer-data">{_embedded(data)}</script>
<script type="module">
{_script()}
</script>
</body></html>
"""
