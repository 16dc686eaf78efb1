"""fanin's speed, measured side by side in one run and reported as ratios.

    ./noxw -s bench            # writes benchmarks/RESULTS.md

Absolute times on shared machines drift; ratios between figures taken minutes
apart on the same machine do not (much). Measures:
  1. floor       `python -c "import <framework>"` in every cell's venv (the least a cell can cost)
  2. warm matrix the main job's probe step (`nox -s matrix`) with every venv already built
  3. cold cell   one cell's venv built from its lock: uv (the default) vs virtualenv + pip
  4. upgrade     `nox -s upgrade -- langgraph==<version outside the matrix>`, end to end
  5. report      rendering today's reference, and synthetic result sets 10x its size
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fanin import matrix as fanin_matrix  # noqa: E402
from fanin import source as fanin_source  # noqa: E402
from fanin.model import ResultSet, load, save  # noqa: E402
from fanin.render import outputs  # noqa: E402

NOXW = [str(ROOT / "noxw")]
UPGRADE_TARGET = os.environ.get("FANIN_BENCH_UPGRADE", "langgraph==1.2.20")
# `import langgraph` alone loads an empty namespace package, and google.adk 2.9+ imports lazily:
# the floor is what the probes import before their first line runs.
FLOOR_IMPORTS = {
    "langgraph": "import langgraph.graph",
    "adk": "import google.adk.agents, google.adk.runners, google.adk.sessions",
}
COLD_CELL = os.environ.get("FANIN_BENCH_COLD_CELL", "adk-2.13.0")


def timed(command: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(
            f"bench: {' '.join(command)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return seconds


def venv_python(cell: fanin_matrix.Cell) -> Path:
    return ROOT / ".nox" / ("probe-" + cell.id.replace(".", "-")) / "bin" / "python"


def floors(matrix: fanin_matrix.Matrix) -> dict[str, float]:
    """Best of three imports per cell (the first may still be warming the page cache)."""
    result = {}
    for cell in matrix.cells:
        python = venv_python(cell)
        if not python.exists():
            raise SystemExit(f"bench: no venv for {cell.id}; run ./noxw once first")
        result[cell.id] = min(timed([str(python), "-c", FLOOR_IMPORTS[cell.framework.key]]) for _ in range(3))
    return result


def cold_cell(cell: fanin_matrix.Cell) -> dict[str, float]:
    """Build the cell's venv from its lock twice, with warm package caches: uv, then virtualenv + pip."""
    python = sys.executable
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "uv"
        started = time.perf_counter()
        timed(["uv", "venv", "--quiet", "--python", str(venv_python(cell).resolve()), str(target)])
        timed(
            [
                "uv",
                "pip",
                "sync",
                "--quiet",
                "--compile-bytecode",
                "--python",
                str(target / "bin" / "python"),
                str(cell.lock_path),
            ]
        )
        figures["uv"] = time.perf_counter() - started
        target = Path(tmp) / "uv-no-bytecode"
        started = time.perf_counter()
        timed(["uv", "venv", "--quiet", "--python", str(venv_python(cell).resolve()), str(target)])
        timed(["uv", "pip", "sync", "--quiet", "--python", str(target / "bin" / "python"), str(cell.lock_path)])
        figures["uv without bytecode"] = time.perf_counter() - started
        target = Path(tmp) / "pip"
        started = time.perf_counter()
        timed([python, "-m", "virtualenv", "--quiet", "--python", str(venv_python(cell).resolve()), str(target)])
        timed(
            [str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "-r", str(cell.lock_path)]
        )
        figures["virtualenv+pip"] = time.perf_counter() - started
    return figures


def scaled_reference(factor: int, into: Path) -> None:
    """Synthetic result sets: every probe copied `factor` times under new ids (same cells)."""
    into.mkdir(parents=True, exist_ok=True)
    for path in sorted(fanin_matrix.REFERENCE_RESULTS.glob("*.json")):
        rs = load(path)
        probes, observations = {}, {}
        for copy in range(factor):
            for pid, info in rs.probes.items():
                new_id = pid if copy == 0 else f"{pid}-x{copy}"
                probes[new_id] = type(info)(
                    new_id, info.title, info.claim, info.sources, info.file, info.function, info.source_hash
                )
                observations[new_id] = rs.observations[pid]
        save(ResultSet(rs.cell, rs.framework, rs.version, rs.environment, probes, observations), into / path.name)


def render_seconds(matrix: fanin_matrix.Matrix, source: Path) -> float:
    """Median of three renders, each from cold caches (as a fresh `python -m fanin report` would be)."""
    samples = []
    for _ in range(3):
        fanin_source._parse_file.cache_clear()
        fanin_source._read_bytes.cache_clear()
        started = time.perf_counter()
        outputs.reference(matrix, source=source)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def probe_seconds() -> float:
    """Time pytest spent inside the probes of the last run (junit XML): work no harness can remove."""
    total = 0.0
    for path in (fanin_matrix.REPORTS / "junit").glob("*.xml"):
        total += sum(float(case.get("time", 0)) for case in ET.parse(path).iter("testcase"))
    return total


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}, Python {platform.python_version()}"
    )


def main() -> None:
    matrix = fanin_matrix.load()
    cores = int(os.environ.get("FANIN_JOBS") or os.cpu_count() or 1)
    print("bench: warming venvs (./noxw -s matrix) ...", flush=True)
    subprocess.run([*NOXW, "-s", "matrix"], cwd=ROOT, capture_output=True)  # builds anything missing
    print("bench: floors ...", flush=True)
    floor = floors(matrix)
    print("bench: warm matrix ...", flush=True)
    warm = timed([*NOXW, "-s", "matrix"])
    in_probes = probe_seconds()
    print("bench: cold cell ...", flush=True)
    cold = cold_cell(matrix.cell(COLD_CELL))
    print("bench: upgrade ...", flush=True)
    upgrade = timed([*NOXW, "-s", "upgrade", "--", UPGRADE_TARGET])
    upgrade_lock = fanin_matrix.REPORTS / "locks" / f"{UPGRADE_TARGET.replace('==', '-')}.txt"
    with tempfile.TemporaryDirectory() as tmp:
        newest = matrix.newest("langgraph")
        timed(["uv", "venv", "--quiet", "--python", str(venv_python(newest).resolve()), f"{tmp}/v"])
        install = timed(
            ["uv", "pip", "sync", "--quiet", "--compile-bytecode", "--python", f"{tmp}/v/bin/python", str(upgrade_lock)]
        )
    lg_floor = floor[matrix.newest("langgraph").id]
    print("bench: report ...", flush=True)
    today = render_seconds(matrix, fanin_matrix.REFERENCE_RESULTS)
    with tempfile.TemporaryDirectory() as tmp:
        scaled_reference(10, Path(tmp))
        tenfold = render_seconds(matrix, Path(tmp))
    probes_today = sum(len(load(p).observations) for p in fanin_matrix.REFERENCE_RESULTS.glob("*.json"))

    floor_sum = sum(floor.values())
    warm_bound = 1.5 * floor_sum / cores
    rows = [
        (
            "warm matrix ≤ 1.5 × Σ floors / cores",
            f"{warm:.1f} s vs {warm_bound:.1f} s",
            warm / (floor_sum / cores),
            warm <= warm_bound,
        ),
        (
            "cold cell: virtualenv+pip ≥ 5 × uv",
            f"{cold['virtualenv+pip']:.1f} s vs {cold['uv']:.1f} s",
            cold["virtualenv+pip"] / cold["uv"],
            cold["virtualenv+pip"] >= 5 * cold["uv"],
        ),
        (
            "upgrade ≤ install + 2 × floor",
            f"{upgrade:.1f} s vs {install + 2 * lg_floor:.1f} s",
            upgrade / (install + 2 * lg_floor),
            upgrade <= install + 2 * lg_floor,
        ),
        (
            "report 10× data ≤ 10 × today, < 2 s",
            f"{tenfold:.2f} s vs {today:.2f} s",
            tenfold / today,
            tenfold <= 10 * today * 1.1 and tenfold < 2,
        ),
    ]
    lines = [
        "# fanin benchmarks",
        "",
        f"Measured {dt.date.today().isoformat()} on {machine()} by `./noxw -s bench` (benchmarks/bench.py),",
        f"all figures from one run; {len(matrix.cells)} cells, {probes_today} observations in the reference, {cores} parallel cells.",
        "",
        "## Targets",
        "",
        "| target | measured | ratio | met |",
        "|---|---|---|---|",
        *(f"| {name} | {shown} | {ratio:.2f} | {'yes' if ok else 'no'} |" for name, shown, ratio, ok in rows),
        "",
        "## Figures",
        "",
        f"- Σ import floors over {len(floor)} cells: {floor_sum:.1f} s (per cell: "
        + ", ".join(f"{cell} {seconds:.2f}" for cell, seconds in floor.items())
        + ")",
        (
            f"- warm matrix (`./noxw -s matrix`, venvs built): {warm:.1f} s, of which {in_probes:.1f} s of CPU were the probes"
            f" themselves (pytest's per-test times, summed over cells): the floor plus the probes' own work is"
            f" {(floor_sum + in_probes) / cores:.1f} s on {cores} cores, so fanin's own overhead is about"
            f" {warm - (floor_sum + in_probes) / cores:.1f} s ({(warm - (floor_sum + in_probes) / cores) / len(matrix.cells):.2f} s a cell)"
        ),
        (
            f"- cold cell {COLD_CELL} from its lock, warm package caches: uv {cold['uv']:.1f} s "
            f"(without compiling bytecode: {cold['uv without bytecode']:.1f} s), virtualenv + pip {cold['virtualenv+pip']:.1f} s "
            "(pip compiles bytecode by default)"
        ),
        (
            f"- upgrade `{UPGRADE_TARGET}` end to end: {upgrade:.1f} s (its install alone: {install:.1f} s; "
            f"langgraph import floor {lg_floor:.2f} s)"
        ),
        f"- report from the reference: {today:.3f} s; from synthetic result sets with 10× the probes: {tenfold:.3f} s",
        "",
    ]
    out = ROOT / "benchmarks" / "RESULTS.md"
    out.write_text("\n".join(lines))
    print("\n".join(lines))
    shutil.rmtree(fanin_matrix.REPORTS / "bench", ignore_errors=True)


if __name__ == "__main__":
    main()
