"""benchmarks/RESULTS.md from benchmarks/results.json: one definition of each figure and each target.

    python benchmarks/render.py      # after editing this file; `./noxw -s bench` calls write() itself

A figure is named once, in FIGURES (its stable name in results.json and what it measures); a target
is a rule over figures, in TARGETS. What bounds a missed target is written by hand in results.json's
"notes" (by target name, kept across runs) and printed only while that target is missed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS_JSON = HERE / "results.json"
RESULTS_MD = HERE / "RESULTS.md"

# name in results.json -> what it is (seconds unless the name says otherwise)
FIGURES: dict[str, str] = {
    "warm_matrix_s": "`fanin probe` over every cell, venvs built",
    "floors_s": "Σ over cells of the imports each suite makes at module level, in the cell's venv (best of 3)",
    "floors_import_check_s": "Σ over cells of the registry's import check alone (the floor's older definition)",
    "overhead_per_cell_import_check_s": "overhead_per_cell_s with floors_import_check_s as the floors",
    "probe_work_s": "Σ of pytest's per-test times over the warm matrix (the probes' own work)",
    "cores": "cells run side by side (FANIN_JOBS, default the cores)",
    "overhead_s": "warm matrix − (floors + probe work) / cores: what fanin itself adds",
    "overhead_per_cell_s": "overhead_s / cells",
    "cold_cell_uv_s": "one cell's venv from its lock with uv (fanin's way), warm caches, bytecode compiled",
    "cold_cell_pip_s": "the same with virtualenv + pip",
    "cold_cell_uv_alone_s": "fanin's way with no sibling venv to link bytecode from (every file compiled)",
    "cold_cell_uv_compile_bytecode_s": "uv's own `--compile-bytecode`, as fanin built venvs before bytecode was linked",
    "cold_cell_pyc": "compiled files in that venv",
    "cold_cell_pyc_linked": "of them linked from a sibling venv (the same source file), not compiled",
    "upgrade_outside_s": "`fanin upgrade <version outside the matrix>` end to end",
    "upgrade_outside_lock_s": "its lock alone",
    "upgrade_outside_install_s": "its install alone",
    "upgrade_outside_run_s": "its cell's own pytest run (the result set's run_seconds)",
    "upgrade_between_cells_s": "`fanin upgrade <newest> --from <previous>` between two reference cells (best of 3)",
    "bisect_step_s": "one bisect step: lock + install + one probe in a fresh cell",
    "bisect_step_harness_s": "bisect_step_s − lock − install − import floor − the probe's own time",
    "probe_here_s": "`fanin probe --here` with the newest LangGraph cell's venv as the environment",
    "probe_here_run_s": "its own pytest run (the result set's run_seconds)",
    "audit_200_nodes_s": "`fanin audit` of a generated 200-node LangGraph graph, `--cell` (best of 2)",
    "audit_floor_s": "the LangGraph import alone in that cell (part of audit_200_nodes_s)",
    "audit_200_nodes_own_s": "audit_200_nodes_s − audit_floor_s: the audit's own time, what the target bounds",
    "audit_10_nodes_s": "the same audit of a 10-node graph (what does not grow with the graph)",
    "report_s": "rendering the report from the reference",
    "report_10x_s": "rendering it from synthetic result sets with 10× the observations",
}

Target = tuple[str, Callable[[dict[str, Any]], str], Callable[[dict[str, Any]], bool]]

TARGETS: list[Target] = [
    (
        "harness overhead ≤ 0.3 s a cell",
        lambda f: (
            f"{f['overhead_per_cell_s']:.2f} s a cell ({f['overhead_s']:.1f} s over {f['cells']} cells)"
            + (
                f"; {f['overhead_per_cell_import_check_s']:.2f} s with the import check alone as the floor"
                if "overhead_per_cell_import_check_s" in f
                else ""
            )
        ),
        lambda f: f["overhead_per_cell_s"] <= 0.3,
    ),
    (
        "warm matrix ≤ 1.15 × (Σ floors + probe work) / cores",
        lambda f: f"{f['warm_matrix_s']:.1f} s vs {1.15 * (f['floors_s'] + f['probe_work_s']) / f['cores']:.1f} s",
        lambda f: f["warm_matrix_s"] <= 1.15 * (f["floors_s"] + f["probe_work_s"]) / f["cores"],
    ),
    (
        "no probe over 1 s unless declared a repetition probe",
        lambda f: f"{len(f['slow_probes'])} over",
        lambda f: not f["slow_probes"],
    ),
    (
        "upgrade outside the matrix ≤ lock + install + its run + 0.5 s",
        lambda f: (
            f"{f['upgrade_outside_s']:.1f} s vs {f['upgrade_outside_lock_s']:.1f} + {f['upgrade_outside_install_s']:.1f}"
            f" + {f['upgrade_outside_run_s']:.1f} + 0.5 s"
        ),
        lambda f: (
            f["upgrade_outside_s"]
            <= f["upgrade_outside_lock_s"] + f["upgrade_outside_install_s"] + f["upgrade_outside_run_s"] + 0.5
        ),
    ),
    (
        "upgrade between two reference cells ≤ 0.5 s",
        lambda f: f"{f['upgrade_between_cells_s']:.2f} s",
        lambda f: f["upgrade_between_cells_s"] <= 0.5,
    ),
    (
        "bisect step's harness share ≤ 0.5 s",
        lambda f: f"{f['bisect_step_harness_s']:.1f} s of {f['bisect_step_s']:.1f} s",
        lambda f: f["bisect_step_harness_s"] <= 0.5,
    ),
    (
        "`probe --here` ≤ the cell's own run + 1 s",
        lambda f: f"{f['probe_here_s']:.1f} s vs {f['probe_here_run_s']:.1f} + 1 s",
        lambda f: f["probe_here_s"] <= f["probe_here_run_s"] + 1,
    ),
    (
        # The import of the user's module (which imports the framework) is left out: every program that builds
        # the graph pays it, fanin cannot load the graph without it, and it does not grow with the graph.
        "`audit` of a generated 200-node graph ≤ 1 s beyond the framework's import",
        lambda f: (
            f"{f['audit_200_nodes_s'] - f['audit_floor_s']:.2f} s "
            f"({f['audit_200_nodes_s']:.2f} s, of which the import {f['audit_floor_s']:.2f} s)"
        ),
        lambda f: f["audit_200_nodes_s"] - f["audit_floor_s"] <= 1,
    ),
    (
        "cold cell: virtualenv + pip ≥ 5 × uv",
        lambda f: (
            f"{f['cold_cell_pip_s']:.1f} s vs {f['cold_cell_uv_s']:.1f} s ({f['cold_cell_pip_s'] / f['cold_cell_uv_s']:.1f}×)"
        ),
        lambda f: f["cold_cell_pip_s"] >= 5 * f["cold_cell_uv_s"],
    ),
    (
        "time per observation flat (< 1.5×) from 1× to 4× the catalogue",
        lambda f: " → ".join(f"{v:.1f}" for v in f["growth_ms_per_observation"].values()) + " ms",
        lambda f: f["growth_ms_per_observation"]["4"] <= 1.5 * f["growth_ms_per_observation"]["1"],
    ),
    (
        "time per cell flat (< 1.5×) from half to all of the cells",
        lambda f: ", ".join(f"{n} cells {s / int(n):.2f} s a cell" for n, s in f["growth_cells"].items()),
        lambda f: _per_cell(f)[-1] <= 1.5 * _per_cell(f)[0],
    ),
    (
        "time per cell flat (< 1.5×) from 48 to 120 cells (synthetic, the same suite in each)",
        lambda f: (
            " → ".join(f"{n} cells {v:.2f} s" for n, v in f["growth_s_per_synthetic_cell"].items()) + " a cell"
            if "growth_s_per_synthetic_cell" in f
            else "not measured in this run"
        ),
        lambda f: (
            "growth_s_per_synthetic_cell" in f
            and f["growth_s_per_synthetic_cell"]["120"] <= 1.5 * f["growth_s_per_synthetic_cell"]["48"]
        ),
    ),
    (
        "report from 10× the data ≤ 10 × today, < 2 s",
        lambda f: f"{f['report_10x_s']:.2f} s vs {f['report_s']:.2f} s",
        lambda f: f["report_10x_s"] <= 11 * f["report_s"] and f["report_10x_s"] < 2,
    ),
]


def _per_cell(f: dict[str, Any]) -> list[float]:
    return [s / int(n) for n, s in sorted(f["growth_cells"].items(), key=lambda item: int(item[0]))]


def render(f: dict[str, Any], notes: dict[str, str] | None = None) -> str:
    """RESULTS.md from the figures; `notes` (results.json's "notes", by target name) explain each miss."""
    notes = notes if notes is not None else f.get("notes", {})
    rows = [(name, shown(f), ok(f)) for name, shown, ok in TARGETS]
    lines = [
        "# fanin benchmarks",
        "",
        "<!-- rendered by benchmarks/render.py from benchmarks/results.json; do not edit by hand -->",
        "",
        f"Measured {f['date']} on {f['machine']} by `./noxw -s bench` (benchmarks/bench.py), all figures from one run;",
        f"{f['cells']} cells, {f['observations']} observations in the reference, {f['cores']} cells in parallel.",
        "",
        "## Targets (issue 24)",
        "",
        "| target | measured | met |",
        "|---|---|---|",
        *(f"| {name} | {shown} | {'yes' if ok else 'no'} |" for name, shown, ok in rows),
        "",
        "## Figures (stable names, as in results.json)",
        "",
        "| figure | value | what |",
        "|---|---|---|",
    ]
    for name, what in FIGURES.items():
        value = f.get(name)
        shown = "—" if value is None else (f"{value}" if isinstance(value, int) else f"{value:.3g}")
        lines.append(f"| `{name}` | {shown} | {what} |")
    lines += [
        "",
        "- import floors per cell: " + ", ".join(f"{c} {s:.2f}" for c, s in f["floor_per_cell_s"].items()),
        "- probes over 1 s that are not repetition probes: " + ("; ".join(f["slow_probes"]) or "none"),
        f"- upgrade outside the matrix: `{f['upgrade_target']}`; between cells: `upgrade {f['upgrade_between']}`",
        "- growth, catalogue (synthetic two-node probes, newest LangGraph cell): "
        + ", ".join(f"{k}× = {v:.1f} ms per observation" for k, v in f["growth_ms_per_observation"].items()),
        "- growth, cells: "
        + ", ".join(f"{n} cells {s:.1f} s ({s / int(n):.2f} s a cell)" for n, s in f["growth_cells"].items()),
    ]
    if "growth_s_per_synthetic_cell" in f:
        lines.append(
            "- growth, synthetic cells (the newest pydantic_graph cell's suite under ids of their own, cores at a time): "
            + ", ".join(f"{n} cells {v:.2f} s a cell" for n, v in f["growth_s_per_synthetic_cell"].items())
        )
    missed = [(name, notes.get(name, "")) for name, _, ok in rows if not ok]
    if missed:
        lines += ["", "## What bounds the targets that are missed", ""]
        lines += [f"- **{name}.** {text or 'not yet explained.'}" for name, text in missed]
    extra = f.get("profile")
    if extra:
        lines += ["", "## Profile", "", *extra]
    return "\n".join(lines) + "\n"


def write(figures: dict[str, Any]) -> None:
    """results.json (keeping its hand-written "notes" and "profile"), then RESULTS.md from it."""
    try:
        previous = json.loads(RESULTS_JSON.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        previous = {}
    merged = {**figures, **{k: previous[k] for k in ("notes", "profile") if k in previous and k not in figures}}
    RESULTS_JSON.write_text(json.dumps(merged, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    RESULTS_MD.write_text(render(merged), encoding="utf-8")


if __name__ == "__main__":
    RESULTS_MD.write_text(render(json.loads(RESULTS_JSON.read_text(encoding="utf-8"))), encoding="utf-8")
