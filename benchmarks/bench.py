"""fanin's speed, measured side by side in one run and reported as ratios.

    ./noxw -s bench            # writes benchmarks/results.json, then RESULTS.md rendered from it
    python benchmarks/render.py  # RESULTS.md again from results.json (benchmarks/render.py)

Absolute times on shared machines drift; ratios between figures taken minutes apart on the same
machine do not (much). Measures:
  1. floor        the framework import in every cell's venv (the least a cell can cost)
  2. warm matrix  `fanin probe` over every cell, venvs built; beside it the floors and the probes' own work
  3. probes       every probe over one second of wall time that is not a declared repetition probe
  4. cold cell    one cell's venv from its lock: uv (fanin's way) vs virtualenv + pip, both byte-compiled
  5. upgrade      `fanin upgrade langgraph==<version outside the matrix>`, end to end
  6. bisect step  one release: lock + install + the bisected probe, against install + floor + that probe
  7. report       rendering today's reference, and synthetic result sets 10x its size
  8. growth       time per observation at 1x, 2x, 4x the catalogue (synthetic probes in the newest
                  LangGraph cell) and the matrix at half and all of its cells
  9. upgrade between two reference cells, `probe --here` in a cell's venv, `audit` of a generated
                  200-node LangGraph graph (benchmarks/gen_graph.py)

Every figure goes into benchmarks/results.json under a stable name (benchmarks/render.py names
and defines each one); a later run can be compared with it.
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

from fanin.model import catalog, exits
from fanin.model import matrix as fanin_matrix
from fanin.model import source as fanin_source
from fanin.model.results import ResultSet, load, save
from fanin.model.source import REPO_ROOT
from fanin.report import outputs
from fanin.run import all_cells, one_cell, pythons, venvs

UPGRADE_TARGET = os.environ.get("FANIN_BENCH_UPGRADE", "langgraph==1.2.20")
COLD_CELL = os.environ.get("FANIN_BENCH_COLD_CELL", "adk-2.13.0")
FANIN = [sys.executable, "-m", "fanin"]


def timed(command: list[str], env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO_ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in ok:
        raise SystemExit(
            f"bench: {' '.join(command)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return seconds


def timed_in(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command)} in {cwd} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds


def suite_imports(framework: str) -> list[tuple[str, tuple[str, ...]]]:
    """What a framework's suite imports at module level (its probe files and kits): (module, names taken from it).

    Some frameworks import lazily (ADK 2.x's `google.adk.agents` is 0.02 s; its agents load when a
    probe file takes them), so the import check alone is not what a cell must pay; these imports are.
    fanin, the standard library and the suite's own modules are left out."""
    import ast

    local = {path.stem for path in (REPO_ROOT / "suites").rglob("*.py")}
    found: dict[str, set[str]] = {}
    for path in sorted((REPO_ROOT / "suites" / framework).glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            pairs: list[tuple[str, list[str]]] = []
            if isinstance(node, ast.Import):
                pairs = [(alias.name, []) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                pairs = [(node.module, [alias.name for alias in node.names if alias.name != "*"])]
            for module, names in pairs:
                root = module.split(".")[0]
                if root not in sys.stdlib_module_names and root not in local and root not in ("fanin", "__future__"):
                    found.setdefault(module, set()).update(names)
    return [(module, tuple(sorted(names))) for module, names in sorted(found.items())]


def floor_import(cell: fanin_matrix.Cell) -> str:
    modules = [(cell.framework.import_check, ()), *suite_imports(cell.framework.key)]
    return (
        "import importlib\n"
        f"for name, attributes in {modules!r}:\n"
        "    try:\n"
        "        module = importlib.import_module(name)\n"
        "        for attribute in attributes:\n"
        "            getattr(module, attribute, None)\n"
        "    except Exception:\n"
        "        pass\n"
    )


def floors(matrix: fanin_matrix.Matrix) -> dict[str, float]:
    """Best of three imports per cell (the first may still be warming the page cache)."""
    from fanin.run import node_cell

    result = {}
    for cell in matrix.cells:
        if cell.framework.runtime == "node":  # the package's import in the cell's node_modules
            directory = node_cell.NODE_DIRS / cell.id
            script = f"await import({cell.framework.package!r})"
            command = ["node", "--input-type=module", "-e", script]
            result[cell.id] = min(timed_in(command, directory) for _ in range(3))
            continue
        python = venvs.VENVS / cell.id / "bin" / "python"
        if not python.exists():
            raise SystemExit(f"bench: no venv for {cell.id}; run ./noxw once first")
        result[cell.id] = min(timed([str(python), "-c", floor_import(cell)]) for _ in range(3))
    return result


def junit_cases(directory: Path) -> list[tuple[str, str, float]]:
    cases = []
    for path in sorted(directory.glob("*.xml")):
        for case in ET.parse(path).iter("testcase"):
            cases.append((path.stem, case.get("name", "?"), float(case.get("time", 0))))
    return cases


def slow_probes(cases: list[tuple[str, str, float]]) -> list[str]:
    repetition = {p.function for p in catalog.declared() if p.repetition}
    return [
        f"{cell} {name} {seconds:.2f} s"
        for cell, name, seconds in cases
        if seconds > 1.0 and name.split("[")[0] not in repetition
    ]


def cold_cell(cell: fanin_matrix.Cell) -> dict[str, float]:
    """Build the cell's venv from its lock with warm package caches, every way, each ending with every file compiled.

    fanin's way (uv, then bytecode linked from the matrix's other venvs where the source is the same file,
    the rest compiled; never from the cell's own venv), the same with no sibling to link from, uv's own
    `--compile-bytecode`, and virtualenv + pip (which compiles every file as it installs).
    """
    interpreter = pythons.find(cell.python) or sys.executable
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        venv = venvs.ensure(cell.id, interpreter, cell.lock_path, root=Path(tmp) / "uv")
        figures["uv"] = time.perf_counter() - started
        pycs = list(venv.path.rglob("*.pyc"))
        figures["pyc"] = len(pycs)
        figures["linked"] = sum(1 for pyc in pycs if pyc.stat().st_nlink > 1)
        started = time.perf_counter()
        venvs.ensure(cell.id, interpreter, cell.lock_path, root=Path(tmp) / "alone", share_bytecode=False)
        figures["uv alone"] = time.perf_counter() - started
        uv, target = venvs.uv_binary(), Path(tmp) / "uv-compile"
        started = time.perf_counter()
        timed([uv, "venv", "--quiet", "--python", interpreter, str(target)])
        timed(
            [
                uv,
                "pip",
                "sync",
                "--quiet",
                "--compile-bytecode",
                "--python",
                str(target / "bin" / "python"),
                str(cell.lock_path),
            ]
        )
        figures["uv --compile-bytecode"] = time.perf_counter() - started
        target = Path(tmp) / "pip"
        started = time.perf_counter()
        timed([sys.executable, "-m", "virtualenv", "--quiet", "--python", interpreter, str(target)])
        timed(
            [str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "-r", str(cell.lock_path)]
        )
        figures["virtualenv+pip"] = time.perf_counter() - started
    return figures


def scaled_reference(factor: int, into: Path) -> None:
    """Synthetic result sets: every observation copied `factor` times under new ids (same cells)."""
    into.mkdir(parents=True, exist_ok=True)
    for path in sorted(fanin_matrix.REFERENCE_RESULTS.glob("*.json")):
        rs = load(path)
        probes, observations = dict(rs.probes), {}
        for copy in range(factor):
            for oid, observation in rs.observations.items():
                base = oid.split("[", 1)[0]
                new_base = base if copy == 0 else f"{base}-x{copy}"
                observations[oid.replace(base, new_base, 1)] = observation
                if copy:
                    info = rs.probes[base]
                    probes[new_base] = type(info)(
                        new_base,
                        info.title,
                        info.claim,
                        info.sources,
                        info.file,
                        info.function,
                        info.source_hash,
                        info.dimensions,
                    )
        save(ResultSet(rs.cell, rs.framework, rs.version, rs.environment, probes, observations), into / path.name)


def render_seconds(matrix: fanin_matrix.Matrix, source: Path) -> float:
    """Median of three renders, each from cold caches (as a fresh `python -m fanin report` would be)."""
    samples = []
    for _ in range(3):
        fanin_source._parse_file.cache_clear()
        started = time.perf_counter()
        outputs.reference(matrix, source=source)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


SYNTHETIC = """
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from fanin.probe import Claim, probe

CLAIM = Claim("synthetic", "https://example.org")
"""

SYNTHETIC_PROBE = """

@probe("langgraph/synthetic/p{n}", title="a two-node graph", claim=CLAIM)
def test_p{n}(obs):
    class State(TypedDict):
        value: str

    builder = StateGraph(State)
    builder.add_node("a", lambda state: {{"value": "A"}})
    builder.add_edge(START, "a")
    builder.add_edge("a", END)
    final = builder.compile().invoke({{"value": ""}})
    obs.record(final, label="ran", detail="ran", hazard="safe")
"""


def growth_catalogue(matrix: fanin_matrix.Matrix, base: int) -> dict[int, float]:
    """Seconds per observation with `base`, 2x and 4x synthetic probes in the newest LangGraph cell."""
    cell = matrix.newest("langgraph")
    python = venvs.VENVS / cell.id / "bin" / "python"
    figures = {}
    for factor in (1, 2, 4):
        with tempfile.TemporaryDirectory() as tmp:
            module = Path(tmp) / "test_synthetic.py"
            module.write_text(SYNTHETIC + "".join(SYNTHETIC_PROBE.format(n=n) for n in range(base * factor)))
            results = Path(tmp) / "out" / f"{cell.id}.json"
            spec = one_cell.CellRun(
                cell_id=cell.id,
                framework="langgraph",
                package="langgraph",
                import_check="langgraph.graph",
                python=python,
                lock=cell.lock_path,
                reference=None,
                results=results,
                targets=(str(module),),
                accept_new=True,
            )
            with (Path(tmp) / "log").open("w") as log:
                started = time.perf_counter()
                outcome = one_cell.run_cell(spec, log)
                seconds = time.perf_counter() - started
            if outcome.code != exits.SAME:
                raise SystemExit(f"bench: synthetic run failed: {outcome.reason}")
            figures[factor] = seconds / (base * factor)
    return figures


def growth_cells_synthetic(matrix: fanin_matrix.Matrix, counts: tuple[int, ...] = (24, 48, 120)) -> dict[int, float]:
    """Seconds per cell for N synthetic cells, `cores` at a time, through the cell runner with one shared server.

    Each synthetic cell is the newest pydantic_graph cell's suite in that cell's venv under an id of its own
    (`synthetic-NNN`), so every cell does the same work and only the harness's share can grow with N: what the
    runner keeps per cell (its PostgreSQL tag, its result set, journal and junit, its threads) and anything
    it reads per cell that grows with the number of cells."""
    import dataclasses
    from concurrent.futures import ThreadPoolExecutor

    from fanin.run import services

    cell = matrix.newest("pydantic_graph")
    python = venvs.VENVS / cell.id / "bin" / "python"
    width = all_cells.jobs()
    figures = {}
    for count in counts:
        with tempfile.TemporaryDirectory() as tmp, services.shared() as postgres:
            base = one_cell.CellRun(
                cell_id="synthetic",
                framework=cell.framework.key,
                package=cell.framework.package,
                import_check=cell.framework.import_check,
                python=python,
                lock=cell.lock_path,
                reference=None,
                results=Path(tmp),
                accept_new=True,
                postgres=postgres,
            )

            def run(n: int, base: one_cell.CellRun = base, where: Path = Path(tmp)) -> int:
                name = f"synthetic-{n:03d}"
                spec = dataclasses.replace(base, cell_id=name, results=where / f"{name}.json")
                with (where / f"{name}.log").open("w") as log:
                    return one_cell.run_cell(spec, log).code

            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=width) as pool:
                codes = list(pool.map(run, range(count)))
            seconds = time.perf_counter() - started
        if any(code != exits.SAME for code in codes):
            raise SystemExit(f"bench: a synthetic cell did not run ({sorted(set(codes))})")
        figures[count] = seconds / count
    return figures


def bisect_step(matrix: fanin_matrix.Matrix) -> dict[str, float]:
    """One bisect step as `fanin bisect` takes it: lock a release as released, install it, run one probe."""
    from fanin.versions import locking, pypi

    framework = matrix.frameworks["langgraph"]
    release = pypi.resolve(framework.package, UPGRADE_TARGET.split("==")[1])
    cell = matrix.make_cell(framework, release.version, matrix.default_python, "as-released", release.as_released)
    declared = next(p for p in catalog.declared() if p.id == "langgraph/join/defer")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        lock = root / f"{cell.id}.txt"
        locking.lock(cell, matrix, lock)
        locked = time.perf_counter()
        # Where `fanin bisect` installs it (run_one then finds it built), from nothing.
        shutil.rmtree(venvs.VENVS / cell.id, ignore_errors=True)
        framework_pin = (cell.framework.package, cell.version)
        venv = venvs.ensure(cell.id, pythons.find(cell.python) or sys.executable, lock, framework=framework_pin)
        installed = time.perf_counter()
        options = all_cells.Options(
            lock=lock,
            results_dir=root / "out",
            reference_dir=root / "none",
            accept_new=True,
            targets=(f"{REPO_ROOT / declared.file}::{declared.function}",),
        )
        result = all_cells.run_one(cell, matrix, options)
        total = time.perf_counter() - started
        probe = sum(seconds for _, _, seconds in junit_cases(root / "out"))
        floor = min(timed([str(venv.python), "-c", floor_import(cell)]) for _ in range(2))
    if result.code not in (exits.SAME, exits.CHANGED):
        raise SystemExit(f"bench: bisect step failed: {result.outcome.reason}")
    return {"total": total, "lock": locked - started, "install": installed - locked, "floor": floor, "probe": probe}


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


def run_seconds_under(directory: Path) -> float:
    """The recorded `run_seconds` of the result sets a command wrote (the cell's own pytest run)."""
    total = 0.0
    for path in directory.rglob("*.json"):
        try:
            total += float(load(path).environment.get("run_seconds", 0.0))
        except Exception:
            continue
    return total


def warm_up(matrix: fanin_matrix.Matrix) -> None:
    """Every cell's venv (or node_modules) built, so the warm matrix measures runs, not installs."""
    from fanin.run import node_cell

    for cell in matrix.cells:
        if cell.framework.runtime == "node":
            node_cell.ensure(cell.id, cell.lock_path)
            continue
        interpreter = pythons.find(cell.python)
        if interpreter is not None:
            venvs.ensure(cell.id, interpreter, cell.lock_path, framework=(cell.framework.package, cell.version))


def upgrade_outside(matrix: fanin_matrix.Matrix) -> dict[str, float]:
    """`fanin upgrade <version outside the matrix>` end to end, beside its lock, install and cell run alone."""
    from fanin.versions import locking, pypi

    framework = matrix.frameworks[UPGRADE_TARGET.split("==")[0]]
    with tempfile.TemporaryDirectory() as tmp:
        shutil.rmtree(venvs.VENVS / UPGRADE_TARGET.replace("==", "-"), ignore_errors=True)  # its install counts
        total = timed([*FANIN, "upgrade", UPGRADE_TARGET], env={"FANIN_REPORTS": tmp}, ok=(0, 1))
        run = run_seconds_under(Path(tmp) / "upgrade")
        release = pypi.resolve(framework.package, UPGRADE_TARGET.split("==")[1])
        stamp = dt.datetime.now(dt.UTC).date().isoformat() + "T23:59:59Z"  # as upgrade resolves it: as of today
        cell = matrix.make_cell(framework, release.version, matrix.default_python, "current", stamp)
        lock = Path(tmp) / "again.txt"
        started = time.perf_counter()
        locking.lock(cell, matrix, lock)
        locked = time.perf_counter() - started
        started = time.perf_counter()
        venvs.ensure("bench-upgrade", pythons.find(matrix.default_python) or sys.executable, lock, root=Path(tmp) / "v")
        install = time.perf_counter() - started
    return {"total": total, "lock": locked, "install": install, "run": run}


def upgrade_between(matrix: fanin_matrix.Matrix) -> tuple[str, float]:
    """`fanin upgrade <newest> --from <the one before>`: both sides reference cells, nothing to run."""
    cells = [c for c in matrix.cells if c.framework.key == "langgraph" and c.python == matrix.default_python]
    older, newer = sorted(cells, key=lambda c: c.sort_key)[-2:]
    args = [f"{newer.framework.package}=={newer.version}", "--from", older.version]
    with tempfile.TemporaryDirectory() as tmp:
        seconds = min(timed([*FANIN, "upgrade", *args], env={"FANIN_REPORTS": tmp}, ok=(0, 1)) for _ in range(3))
    return " ".join(args), seconds


def probe_here(matrix: fanin_matrix.Matrix) -> dict[str, float]:
    """`fanin probe --here` with the newest LangGraph cell's venv as the user's environment, beside its own run."""
    from fanin.project import audit

    cell = matrix.newest("langgraph")
    with tempfile.TemporaryDirectory() as tmp:
        total = timed([*FANIN, "probe", "--here", "--python", audit.python_of(cell), "--out", tmp], ok=(0, 1))
        run = run_seconds_under(Path(tmp))
    return {"total": total, "run": run}


def audit_generated(matrix: fanin_matrix.Matrix, nodes: int = 200) -> dict[str, float]:
    """`fanin audit` of a generated graph of `nodes` nodes in the newest LangGraph cell, beside that cell's floor."""
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    import gen_graph

    cell = matrix.newest("langgraph")
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size, name in ((nodes, "total"), (10, "small")):
            target = Path(tmp) / f"graph{size}.py"
            target.write_text(gen_graph.source(size))
            command = [*FANIN, "audit", f"{target}:graph", "--cell", cell.id]
            figures[name] = min(timed(command, ok=(0, 1, 3)) for _ in range(3))
    python = venvs.VENVS / cell.id / "bin" / "python"
    figures["floor"] = min(timed([str(python), "-c", floor_import(cell)]) for _ in range(3))
    return figures


def main() -> None:
    # Measured as Python runs by default, writing bytecode: with PYTHONDONTWRITEBYTECODE set (some containers
    # set it), every fanin command and every cell compiles fanin's and the suite's modules again on each start.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    import render

    matrix = fanin_matrix.load()
    cores = all_cells.jobs()
    print("bench: warming venvs ...", flush=True)
    warm_up(matrix)
    print("bench: floors ...", flush=True)
    floor = floors(matrix)
    print("bench: warm matrix ...", flush=True)
    warm = timed([*FANIN, "probe"], ok=(0, 1))
    cases = junit_cases(fanin_matrix.REPORTS / "junit")
    in_probes = sum(seconds for _, _, seconds in cases)
    over_budget = slow_probes(cases)
    observations = sum(len(load(p).observations) for p in fanin_matrix.REFERENCE_RESULTS.glob("*.json"))
    print("bench: cold cell ...", flush=True)
    cold = cold_cell(matrix.cell(COLD_CELL))
    print("bench: upgrade ...", flush=True)
    upgrade = upgrade_outside(matrix)
    between_args, between = upgrade_between(matrix)
    print("bench: probe --here, audit ...", flush=True)
    here = probe_here(matrix)
    audited = audit_generated(matrix)
    print("bench: report ...", flush=True)
    today = render_seconds(matrix, fanin_matrix.REFERENCE_RESULTS)
    with tempfile.TemporaryDirectory() as tmp:
        scaled_reference(10, Path(tmp))
        tenfold = render_seconds(matrix, Path(tmp))
    print("bench: bisect step ...", flush=True)
    step = bisect_step(matrix)
    print("bench: growth ...", flush=True)
    per_observation = growth_catalogue(matrix, base=100)
    synthetic = growth_cells_synthetic(matrix)
    cells = sorted(matrix.cells, key=lambda c: c.id)
    half = [c.id for c in cells[::2]]
    with tempfile.TemporaryDirectory() as tmp:
        half_seconds = timed([*FANIN, "probe", *half], env={"FANIN_REPORTS": tmp}, ok=(0, 1))

    floor_sum = sum(floor.values())
    overhead = warm - (floor_sum + in_probes) / cores
    figures = {
        "date": dt.date.today().isoformat(),
        "machine": machine(),
        "cells": len(matrix.cells),
        "observations": observations,
        "cores": cores,
        "floors_s": round(floor_sum, 2),
        "floor_per_cell_s": {cell: round(seconds, 3) for cell, seconds in floor.items()},
        "warm_matrix_s": round(warm, 2),
        "probe_work_s": round(in_probes, 2),
        "overhead_s": round(overhead, 2),
        "overhead_per_cell_s": round(overhead / len(matrix.cells), 3),
        "slow_probes": over_budget,
        "cold_cell": COLD_CELL,
        "cold_cell_uv_s": round(cold["uv"], 2),
        "cold_cell_pip_s": round(cold["virtualenv+pip"], 2),
        "cold_cell_uv_alone_s": round(cold["uv alone"], 2),
        "cold_cell_uv_compile_bytecode_s": round(cold["uv --compile-bytecode"], 2),
        "cold_cell_pyc": int(cold["pyc"]),
        "cold_cell_pyc_linked": int(cold["linked"]),
        "upgrade_target": UPGRADE_TARGET,
        "upgrade_outside_s": round(upgrade["total"], 2),
        "upgrade_outside_lock_s": round(upgrade["lock"], 2),
        "upgrade_outside_install_s": round(upgrade["install"], 2),
        "upgrade_outside_run_s": round(upgrade["run"], 2),
        "upgrade_between": between_args,
        "upgrade_between_cells_s": round(between, 3),
        "probe_here_s": round(here["total"], 2),
        "probe_here_run_s": round(here["run"], 2),
        "audit_200_nodes_s": round(audited["total"], 2),
        "audit_floor_s": round(audited["floor"], 3),
        "audit_10_nodes_s": round(audited["small"], 2),
        "audit_200_nodes_own_s": round(audited["total"] - audited["floor"], 2),
        "report_s": round(today, 3),
        "report_10x_s": round(tenfold, 3),
        "bisect_step_s": round(step["total"], 2),
        "bisect_step_lock_s": round(step["lock"], 2),
        "bisect_step_install_s": round(step["install"], 2),
        "bisect_step_floor_s": round(step["floor"], 3),
        "bisect_step_probe_s": round(step["probe"], 3),
        "bisect_step_harness_s": round(
            step["total"] - step["lock"] - step["install"] - step["floor"] - step["probe"], 2
        ),
        "growth_ms_per_observation": {str(k): round(v * 1000, 2) for k, v in per_observation.items()},
        "growth_cells": {str(len(half)): round(half_seconds, 2), str(len(cells)): round(warm, 2)},
        "growth_s_per_synthetic_cell": {str(k): round(v, 3) for k, v in synthetic.items()},
    }
    render.write(figures)
    print((REPO_ROOT / "benchmarks" / "RESULTS.md").read_text())
    shutil.rmtree(fanin_matrix.REPORTS / "bench", ignore_errors=True)


if __name__ == "__main__":
    main()
