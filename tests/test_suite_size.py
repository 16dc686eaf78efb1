"""Probes as short as their story (issue 36): no probe (Python or Node) over 120 lines, decorators through the end of the
function, and no suite file (.py, .mjs) over 600 lines; a probe's scenario or its kit carries the set-up."""

from __future__ import annotations

import ast
from pathlib import Path

from fanin.model.source import REPO_ROOT

SUITES = REPO_ROOT / "suites"
MAX_PROBE_LINES = 120
MAX_FILE_LINES = 600
PROBES = ("probe", "scenario_probe")  # the decorators that declare a Python probe (fanin.probe, the scenario kit)
# Suite files still over the bound, each with why it is not split yet; an entry that no longer needs to be here
# fails (the list only shrinks).
OVER_FILE_BOUND: dict[str, str] = {}


def probe_lengths(path: Path) -> dict[str, int]:
    """Each probe function of a file (decorated with `probe(...)` or `scenario_probe(...)`) and its lines,
    decorators included."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        calls = [d for d in node.decorator_list if isinstance(d, ast.Call) and getattr(d.func, "id", "") in PROBES]
        if calls:
            first = min(d.lineno for d in node.decorator_list)
            found[node.name] = (node.end_lineno or node.lineno) - first + 1
    return found


def _suite_files() -> list[Path]:
    return sorted(p for p in SUITES.rglob("*.py") if "node_modules" not in p.parts)


def test_the_measure_counts_decorators_through_the_end_of_the_function(tmp_path: Path) -> None:
    path = tmp_path / "test_x.py"
    path.write_text(
        '@probe(\n    "x/y/z",\n)\n@other\ndef test_z(obs):\n    a = 1\n    return a\n\n\ndef helper():\n    pass\n'
    )
    assert probe_lengths(path) == {"test_z": 7}


def test_no_probe_is_over_120_lines() -> None:
    long = {
        f"{path.relative_to(SUITES)}::{name}": lines
        for path in _suite_files()
        for name, lines in probe_lengths(path).items()
        if lines > MAX_PROBE_LINES
    }
    assert sum(len(probe_lengths(p)) for p in _suite_files()) >= 250  # the measure found the catalogue's probes
    assert not long, f"probes over {MAX_PROBE_LINES} lines (move the set-up into the scenario or a kit): {long}"


def test_no_suite_file_is_over_600_lines() -> None:
    node = sorted(p for p in SUITES.rglob("*.mjs") if "node_modules" not in p.parts)
    sizes = {
        p.relative_to(SUITES).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in _suite_files() + node
    }
    over = {name: lines for name, lines in sizes.items() if lines > MAX_FILE_LINES and name not in OVER_FILE_BOUND}
    assert not over, f"suite files over {MAX_FILE_LINES} lines (split by hazard family): {over}"
    stale = sorted(name for name in OVER_FILE_BOUND if sizes.get(name, 0) <= MAX_FILE_LINES)
    assert not stale, f"no longer over {MAX_FILE_LINES} lines: remove from OVER_FILE_BOUND: {stale}"


def test_no_node_probe_is_over_120_lines() -> None:
    """The same bound for the Node probes (`probe({...}, async function ...)` in *.test.mjs), measured on the
    span fanin.model.js_source reads as the probe's statement, its leading comments included."""
    from fanin.model import js_source

    files = sorted(p for p in SUITES.rglob("*.test.mjs") if "node_modules" not in p.parts)
    spans = {
        f"{path.relative_to(SUITES)}::{probe.id}": probe.span[1] - probe.span[0] + 1
        for path in files
        for probe in js_source.parse_file(path).probes.values()
    }
    assert len(spans) >= 50  # the measure found the Node catalogue
    long = {name: lines for name, lines in spans.items() if lines > MAX_PROBE_LINES}
    assert not long, f"Node probes over {MAX_PROBE_LINES} lines (move the set-up into the kit): {long}"


def test_no_suite_file_keeps_the_blank_lines_left_where_code_was_cut() -> None:
    """Probe files are outside the formatter (their text is hashed), so nothing else collapses the blank lines an
    edit leaves behind: at most two in a row, as the formatter keeps everywhere else."""
    left = []
    for path in _suite_files():
        blank = 0
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            blank = blank + 1 if not line.strip() else 0
            if blank == 3:
                left.append(f"{path.relative_to(REPO_ROOT)}:{number}")
    assert not left, f"three or more blank lines in a row: {left}"
