"""viewer.html (`report --out DIR`): your `probe --here` result set beside the reference, in the browser.

Its verdicts are computed in JavaScript (fanin/report/static/viewer.mjs), a port of the classifier: run
with node, it must say what fanin/model/compare.py says for every observation of every pair of adjacent
reference cells, pick the reference cell `probe --here` picks, and set aside what `probe --here` sets aside.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from report_helpers import obs

from fanin.model import compare, matrix
from fanin.model.results import Observation, ResultSet, load
from fanin.project import here
from fanin.report import build as report
from fanin.report import documents, outputs, viewer

MATRIX = matrix.load()
PORT = Path(viewer.__file__).parent / "static" / "viewer.mjs"


def _node(body: str, data: Any, tmp_path: Path) -> Any:
    """Run `body` (JavaScript with `data` and the port's exports in scope); what it prints, as JSON."""
    given = tmp_path / "given.json"
    given.write_text(json.dumps(data))
    script = (
        f"import * as port from {json.dumps(PORT.as_uri())};\n"
        "import { readFileSync } from 'node:fs';\n"
        f"const data = JSON.parse(readFileSync({json.dumps(str(given))}, 'utf8'));\n"
        f"{body}\n"
    )
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _said(change: compare.Change) -> list[Any]:
    return [change.label, change.gates, change.is_breaking, list(change.fields)]


JS_SAID = "const said = (c) => [c.label, c.gates, c.breaking, c.fields];"


def _pairs() -> list[tuple[str, str]]:
    """Every pair of adjacent reference cells of a framework on the default Python, and each twin with its cell."""
    pairs = []
    for key in MATRIX.frameworks:
        cells = [c for c in MATRIX.of(key) if c.reference_path.exists()]
        main = [c for c in cells if c.python == MATRIX.default_python]
        pairs += [(a.id, b.id) for a, b in itertools.pairwise(main)]
        pairs += [(next(m.id for m in main if m.version == c.version), c.id) for c in cells if c not in main]
    return pairs


def test_the_port_classifies_every_adjacent_reference_pair_as_compare_does(tmp_path: Path) -> None:
    sets: dict[str, ResultSet] = {}
    pairs = _pairs()
    expected: list[list[Any]] = []
    for a, b in pairs:
        for cell in (a, b):
            sets.setdefault(cell, load(MATRIX.cell(cell).reference_path))
        before, after = sets[a].observations, sets[b].observations
        expected += [_said(compare.classify(i, before.get(i), after.get(i))) for i in sorted({*before, *after})]
    assert len(pairs) >= 50 and len(expected) > 3000
    assert {row[0] for row in expected} >= {"same", "regression", "fix", "changed", "wording", "new coverage"}
    paths = {cell: str(MATRIX.cell(cell).reference_path) for cell in sets}
    got = _node(
        f"{JS_SAID}\nconst sets = {{}};\n"
        "for (const [cell, path] of Object.entries(data.paths)) sets[cell] = JSON.parse(readFileSync(path, 'utf8'));\n"
        "const out = [];\n"
        "for (const [a, b] of data.pairs) {\n"
        "  const before = sets[a].observations, after = sets[b].observations;\n"
        "  const ids = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();\n"
        "  for (const id of ids) out.push(said(port.classify(id, before[id] ?? null, after[id] ?? null, data.rules)));\n"
        "}\nconsole.log(JSON.stringify(out));",
        {"paths": paths, "pairs": pairs, "rules": viewer.rules()},
        tmp_path,
    )
    assert got == expected


EDGES: list[tuple[Observation | None, Observation | None]] = [
    (obs("loud", "raised"), obs("silent", "lost")),
    (obs("silent", "lost"), obs("safe", "kept")),
    (obs("n/a", "no api"), obs("safe", "kept")),
    (obs("safe", "kept"), obs("n/a", "no api")),
    (obs("n/a", "no api", value={"reason": "one"}), obs("n/a", "gone", value={"reason": "two"})),
    (obs("nondeterministic", "varies", detail="3 of 5"), obs("nondeterministic", "varies", detail="4 of 5")),
    (obs("safe", "kept", value={"a": [1, 2]}), obs("safe", "kept", value={"a": [2, 1]})),
    (obs("safe", "kept", value={"b": 1, "a": 2}), obs("safe", "kept", value={"a": 2, "b": 1})),
    (obs("loud", "raised", detail="old words"), obs("loud", "raised", detail="new words")),
    (obs("loud", "raised"), obs("nondeterministic", "raised")),
    (None, obs("safe", "kept")),
    (obs("safe", "kept"), None),
]


def test_the_port_agrees_on_the_classifiers_edges(tmp_path: Path) -> None:
    data = [[o.to_json() if o else None for o in pair] for pair in EDGES]
    expected = [_said(compare.classify("x/y/z", before, after)) for before, after in EDGES]
    got = _node(
        f"{JS_SAID}\nconsole.log(JSON.stringify(data.pairs.map(([b, a]) => said(port.classify('x/y/z', b, a, data.rules)))));",
        {"pairs": data, "rules": viewer.rules()},
        tmp_path,
    )
    assert got == expected


def test_the_port_picks_the_reference_cell_probe_here_picks(tmp_path: Path) -> None:
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    cells = viewer.cells(rep)
    asked = []
    for key, framework in MATRIX.frameworks.items():
        versions = [c.version for c in MATRIX.of(key)]
        for version in [*versions, "0.0.1", "99.0.0", *(f"{v}.1" for v in versions[:3])]:
            for python in ("3.11", "3.10", "3.12"):
                asked.append((key, version, python, here.nearest(MATRIX, framework, version, python)[0].id))
    got = _node(
        "console.log(JSON.stringify(data.asked.map(([k, v, p]) => "
        "port.nearest(data.cells, k, v, p, data.python).cell.id)));",
        {"asked": asked, "cells": cells, "python": MATRIX.default_python},
        tmp_path,
    )
    assert got == [row[3] for row in asked]


def test_the_port_sets_aside_what_probe_here_sets_aside(tmp_path: Path) -> None:
    base = load(MATRIX.newest("langgraph").reference_path)
    ids = sorted(base.observations)[:3]
    observed = dict(base.observations)
    observed[ids[0]] = obs("n/a", "no sqlite")  # needed a companion that is not installed: not covered here
    observed[ids[1]] = obs("n/a", "api gone")  # the framework's own n/a: a regression
    observed[ids[2]] = obs("silent", "lost")  # observed (`ok`) although a companion was missing: still counts
    environment = {**base.environment, here.NOT_INSTALLED: {ids[0]: ["aiosqlite"], ids[2]: ["aiosqlite"]}}
    mine = ResultSet(base.cell, base.framework, base.version, environment, base.probes, observed)
    changes = compare.diff(base, mine)
    aside = {c.probe_id for c in here.not_covered(changes, mine)}
    assert aside == {ids[0]}
    got = _node(
        "const rows = port.compareSets(data.reference, data.mine, data.rules);\n"
        "console.log(JSON.stringify(rows.filter((r) => r.kind !== 'same').map((r) => [r.id, r.label, r.aside])));",
        {"reference": base.to_json(), "mine": mine.to_json(), "rules": viewer.rules()},
        tmp_path,
    )
    order = sorted(changes, key=lambda c: (compare.change_order(c.label), c.probe_id))
    assert got == [[c.probe_id, c.label, c.probe_id in aside] for c in order]


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[Path, str]]:
    from fanin.report import data

    out = tmp_path_factory.mktemp("site")
    files = outputs.bundle(report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True), out)
    files.update(data.files(MATRIX, out))
    return out, files


def test_the_page_reads_the_users_file_in_the_browser_and_the_reference_beside_it(
    published: tuple[Path, dict[Path, str]],
) -> None:
    out, files = published
    page = files[out / documents.VIEWER_HTML]
    assert '<input type="file" id="yours"' in page and "nothing is uploaded" in page
    embedded = re.search(r'<script type="application/json" id="fanin-viewer-data">(.*?)</script>', page, re.S)
    assert embedded
    data = json.loads(embedded.group(1))
    assert data["rules"] == viewer.rules() and data["defaultPython"] == MATRIX.default_python
    assert {c["id"] for c in data["cells"]} == {c.id for c in MATRIX.cells if c.reference_path.exists()}
    for cell in data["cells"]:
        assert out / cell["results"] in files  # published beside the page, where it fetches it
    script = page[page.index('<script type="module">') :]
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", script)  # text is never markup
    assert "http" not in script  # no other host
    assert re.findall(r"fetch\(([^)]*)\)", script) == ["cell.results"]  # the only request: a reference cell
    assert "<script src" not in page and "<link" not in page


def test_the_port_judges_a_version_between_two_cells_against_the_newer_neighbour_as_probe_here_does(
    tmp_path: Path,
) -> None:
    """Between two reference cells, `probe --here` calls a difference the newer cell already shows "as the newer
    reference" (exit 0), never a regression; the viewer called every difference from the older cell a regression.
    The port picks the same newer neighbour and gives every row the label and gate the CLI gives it."""
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    main = [c for c in MATRIX.of("adk") if c.python == MATRIX.default_python and c.reference_path.exists()]
    older, newer = next(
        (a, b)
        for a, b in itertools.pairwise(main)
        if compare.diff(load(a.reference_path), load(b.reference_path))
        and any(c.gates for c in compare.diff(load(a.reference_path), load(b.reference_path)))
    )
    base, ahead = load(older.reference_path), load(newer.reference_path)
    between = f"{older.version}.1"  # after the older cell's release, before the newer one's
    assert here.newer_neighbour(MATRIX, older, between) == newer
    observed = dict(ahead.observations)  # what the newer cell shows, and one behaviour neither cell shows
    own = sorted(observed)[0]
    observed[own] = obs("silent", "lost here")
    mine = ResultSet(older.id, "adk", between, base.environment, ahead.probes, observed)
    judged = [compare.standing(c, ahead.observations.get(c.probe_id), ahead.cell) for c in compare.diff(base, mine)]
    assert any(c.standing == compare.Standing.AS_NEWER for c in judged) and any(c.gates for c in judged)
    got = _node(
        "const older = data.cells.find((c) => c.id === data.older);\n"
        "const picked = port.newerNeighbour(data.cells, older, data.between);\n"
        "const rows = port.compareSets(data.reference, data.mine, data.rules, data.newer);\n"
        "console.log(JSON.stringify({picked: picked && picked.id,"
        " rows: rows.filter((r) => r.kind !== 'same').map((r) => [r.id, r.label, r.gates])}));",
        {
            "cells": viewer.cells(rep),
            "older": older.id,
            "between": between,
            "reference": base.to_json(),
            "mine": mine.to_json(),
            "newer": ahead.to_json(),
            "rules": viewer.rules(),
        },
        tmp_path,
    )
    assert got["picked"] == newer.id
    order = sorted(judged, key=lambda c: (compare.change_order(c.label), c.probe_id))
    assert got["rows"] == [[c.probe_id, c.label, c.gates] for c in order]


def test_the_port_calls_a_live_thread_probe_with_no_earlier_release_not_covered_as_probe_here_does(
    tmp_path: Path,
) -> None:
    from fanin.model.results import NEEDS_EARLIER_RELEASE, Observation

    base = load(MATRIX.newest("langgraph").reference_path)
    live = "langgraph/upgrade/live-thread"
    assert base.observations[live].outcome == "ok"
    alone = {"reason": "no earlier release", NEEDS_EARLIER_RELEASE: True}
    observed = {**base.observations, live: Observation("n/a", alone, "n/a", "n/a: no earlier release", "n/a")}
    mine = ResultSet(base.cell, base.framework, base.version, base.environment, base.probes, observed)
    judged = [compare.standing(c) for c in compare.diff(base, mine)]
    assert [(c.probe_id, c.label, c.gates) for c in judged] == [(live, "not covered here", False)]
    got = _node(
        "const rows = port.compareSets(data.reference, data.mine, data.rules);\n"
        "console.log(JSON.stringify(rows.filter((r) => r.kind !== 'same').map((r) => [r.id, r.label])));",
        {"reference": base.to_json(), "mine": mine.to_json(), "rules": viewer.rules()},
        tmp_path,
    )
    assert got == [[live, "not covered here"]]
