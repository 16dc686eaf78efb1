"""`python -m fanin` (or `fanin`): probe cells, check an upgrade, render the report, diff, bless, lock, bisect.

Exit codes, the same for every command:
  0    same behaviour as the reference (or the command succeeded)
  1    a behaviour changed, or a probe is new or broken: read the table
  2    bad input: a malformed argument or file; nothing ran, nothing was written
  3    could not run: an install, an import, a service, the disk; the cell's marker says why
  130  interrupted (Ctrl-C, SIGTERM): every previous result set is as it was, but those the last line
       names as written before the signal
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fanin.model import exits
from fanin.model import matrix as matrix_paths
from fanin.model.errors import FaninError
from fanin.model.matrix import REPORTS, RUN_RESULTS, Cell, Matrix
from fanin.model.matrix import load as load_matrix
from fanin.model.source import shown

if TYPE_CHECKING:
    pass

# Each command imports what it uses when it runs: the runner, the renderer and the version tools together
# are most of a short command's start (audit, probe --here, upgrade between two reference cells).

PROG = "python -m fanin"


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"fanin: error: {message} (see `{self.prog} --help`)\n")
        sys.exit(exits.BAD_INPUT)


def cmd_report(args: argparse.Namespace, matrix: Matrix) -> int:
    """Render everything first; write only when every result set could be read (all files or none).

    No option: the reference (reference/REPORT.md, CHECKLIST.md), reports/matrix.html and
    reports/compare/, and reports/run/ from a local run. `--out DIR`: the site, HTML pages, data, badges,
    trends, feeds and the viewer (docs/SITE.md). `--for SPEC...`: the Markdown bundle at those versions.
    `--compare A B`: two cells' page (in reports/compare/ with reports/matrix.html and the compare pages it
    links; with `--out DIR`, the bundle its links lead to beside it, so every link resolves in DIR).
    """
    from fanin.model import focus as focus_model
    from fanin.model.staging import write_all
    from fanin.report import build as report
    from fanin.report import documents, outputs

    base = outputs.base_url(args.base_url)
    args.out = outputs.out_dir(args.out)
    tag = outputs.version_tag(args.version_tag)
    if tag and (not args.out or args.for_specs or args.compare):
        raise FaninError("--version-tag goes with --out DIR alone (the site), not with --for or --compare")
    files: dict[Path, str] = {}
    unreadable = 0
    focus = None
    asked: Path | None = None  # where the --compare pages go
    if args.for_specs:
        specs = [focus_model.parse(word, matrix, args.python) for word in args.for_specs]
        focus = focus_model.resolve(specs, matrix)
        for line in focus.said:
            print(f"fanin: {line}")
    if args.compare:
        sides = [focus_model.find(focus_model.parse(word, matrix, args.python), matrix) for word in args.compare]
        a, b = (side.cell for side in sides)
        extra = {**(focus.extra if focus else {}), **{s.cell: s.local for s in sides if s.local is not None}}
        rep = report.build(matrix_paths.REFERENCE_RESULTS, matrix, reference=True, extra=extra)
        unreadable = rep.unreadable
        asked = args.out or matrix_paths.REPORTS / "compare"
        files = outputs.compare(rep, a, b, asked, base, standalone=args.out is not None)
        for side in sides:  # once the page could be made
            print(f"fanin: {side.said}")
    elif focus is not None:
        rep = outputs.for_versions(matrix, focus)
        unreadable = rep.unreadable
        files = outputs.bundle(rep, args.out or matrix_paths.REPORTS / "for", base)
    elif args.out:
        rep = report.build(matrix_paths.REFERENCE_RESULTS, matrix, reference=True)
        unreadable = rep.unreadable
        if not unreadable:  # (an unreadable set is listed once, below) the site carries its data, for other tools
            files = outputs.site(rep, matrix, args.out, base, tag)  # HTML pages and data/, for tools that are not fanin
    else:
        for rendered, broken in (outputs.reference(matrix, base=base), outputs.local_run(matrix, base=base)):
            unreadable += broken
            files.update(rendered)
    if unreadable:
        raise FaninError(f"{unreadable} result set(s) cannot be read (listed above); nothing was written")
    write_all(files)
    # A directory of many files is one line: compare pages, and the site's badges, trends and feeds.
    grouped = {
        documents.COMPARE_DIR: "compare pages",
        documents.BADGES_DIR: "badges",
        documents.TREND_DIR: "trend charts",
        documents.FEEDS_DIR: "feeds",
    }
    copies = {
        p for p in files if tag and args.out is not None and p.is_relative_to(args.out / documents.VERSIONS_DIR / tag)
    }
    own = (  # the pages asked for
        {asked / f"{documents.compare_page(a, b)}{suffix}" for suffix in (".md", ".html")} if asked else set()
    )
    pages = [p for p in files if p.parent.name in grouped and p not in own]
    pages = [p for p in pages if p not in copies]
    for path in files:
        if path not in pages and path not in copies:
            print(f"fanin: wrote {shown(path)}")
    for directory in sorted({p.parent for p in pages}):
        count = sum(1 for p in pages if p.parent == directory)
        print(f"fanin: wrote {count} {grouped[directory.name]} in {shown(directory)}/")
    if copies:
        assert args.out is not None
        print(
            f"fanin: wrote {len(copies)} files of the permanent copy in {shown(args.out / documents.VERSIONS_DIR / tag)}/"
        )
    return 0


def cmd_diff(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.model import compare
    from fanin.report.gate_table import changes_table
    from fanin.run import identity
    from fanin.versions.upgrade import proofs_at

    if args.base is None:
        pairs = [(cell.id, str(cell.results_path)) for cell in matrix.cells if cell.results_path.exists()]
        if not pairs:
            raise FaninError(f"no local results in {shown(RUN_RESULTS)}; run a probe session first")
    else:
        if args.new is None:
            raise FaninError(
                "diff takes two result sets (BASE NEW), or none to compare every local run with the reference"
            )
        if (
            args.base == args.new
            or identity.source_path(args.base, matrix).resolve() == identity.source_path(args.new, matrix).resolve()
        ):
            raise FaninError(f"diff names {args.base!r} twice; give two different result sets")
        cells = {cell.id: cell for cell in matrix.cells}
        if args.base in cells and args.new in cells:
            older, newer = cells[args.base], cells[args.new]
            if older.framework == newer.framework and older.sort_key > newer.sort_key:
                raise FaninError(
                    f"diff arguments in the wrong order: {args.base} is newer than {args.new}; give the older first"
                )
        pairs = [(args.base, args.new)]
    loaded = [(identity.load_source(base, matrix), identity.load_source(new, matrix)) for base, new in pairs]
    breaking = False
    for base, new in loaded:
        if base.framework != new.framework:
            raise FaninError(f"cannot diff a {base.framework} result set with a {new.framework} one")
        changes = compare.diff(base, new)
        header = f"{base.cell} ({base.version}) -> {new.cell} ({new.version})"
        if not changes:
            print(f"{header}: no change in {len(new.observations)} probes")
            continue
        print(f"{header}:\n{changes_table(changes, proofs_at(changes, new))}\n")
        if not args.quiet:
            for change in changes:
                print(compare.describe(change) + "\n")
        breaking |= any(change.is_breaking for change in changes)
    return exits.CHANGED if breaking else exits.SAME


def cmd_bless(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.versions import bless as fanin_bless

    for accepted in fanin_bless.bless(matrix, args.cells, args.force):
        print(f"{accepted.cell.id}: {accepted.note}")
    print("fanin: reference/REPORT.md and reference/CHECKLIST.md re-rendered in the same step")
    return 0


def _select(matrix: Matrix, names: list[str], framework: str | None, smoke: bool) -> list[Cell]:
    cells = [matrix.cell(name) for name in names] if names else list(matrix.cells)
    if framework:
        key = matrix.framework(framework).key
        cells = [c for c in cells if c.framework.key == key]
    if smoke:
        cells = [c for c in cells if c.id in matrix.smoke()]
    if not cells:
        raise FaninError("no cell matches the selection")
    return cells


def cmd_probe(args: argparse.Namespace, matrix: Matrix) -> int:
    """Run cells against their references (or, with --here, the frameworks installed in this environment)."""
    if args.here:
        from fanin.project import here

        if args.cells:
            raise FaninError("probe --here takes no cell ids: it probes what this environment has installed")
        return here.run(matrix, args.python, args.out)
    from fanin.run import all_cells, shards

    if args.out is not None or args.python is not None:
        raise FaninError("--out and --python go with --here (probe --here --out DIR)")
    cells = shards.select(_select(matrix, args.cells, args.framework, args.smoke))
    options = all_cells.Options(accept_new=args.accept_new, pytest_args=tuple(args.pytest_args), jobs=args.jobs or 0)
    all_cells.jobs(options.jobs)  # a malformed FANIN_JOBS is bad input before anything runs
    results = all_cells.run_cells(cells, matrix, options)
    failed = [r.cell.id for r in results if r.code != exits.SAME]
    if failed:
        print(
            f"fanin: {len(failed)} of {len(results)} cells not as the reference: {', '.join(failed)} "
            f"(logs in {shown(REPORTS / 'logs')}/)"
        )
    return all_cells.exit_code(results)


def cmd_audit(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.project import audit

    scripted = audit.refuse_javascript(args.target, matrix) is not None  # read by a script inspector: no venv
    python = audit.python_of(matrix.cell(args.cell)) if args.cell and not scripted else None
    given = None
    if args.input:
        given = Path(args.input).read_text(encoding="utf-8") if args.input.endswith(".json") else args.input
        try:
            json.loads(given)
        except ValueError as exc:
            raise FaninError(f"--input is not JSON ({exc})") from None
    fail_on = [h.strip() for h in args.fail_on.split(",") if h.strip()]
    options = audit.Options(args.args, args.recursion_limit, args.dry_run_seconds, args.audit_seconds, args.cell)
    return audit.run(args.target, matrix, python, given, args.json, fail_on, args.traceback, options)


def cmd_merge(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.run import shards

    merged = shards.merge(args.sources, args.out, matrix)
    print(f"fanin: merged {len(merged)} result set(s) into {shown(args.out)}: {', '.join(merged)}")
    missing = sorted({c.id for c in matrix.cells} - set(merged))
    if missing:
        print(f"fanin: no result set for {len(missing)} cell(s): {', '.join(missing)}")
        return exits.NOT_RUN
    return exits.SAME


def cmd_lock(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.versions import locking

    cells = [matrix.cell(c) for c in args.cells] if args.cells else list(matrix.cells)
    for cell in cells:
        locking.lock(cell, matrix, cell.lock_path)
        print(
            f"fanin: locked {cell.id} ({cell.resolution}, packages as of {cell.exclude_newer}) -> {shown(cell.lock_path)}"
        )
    return 0


def cmd_repeat(args: argparse.Namespace, matrix: Matrix) -> int:
    """Run one cell N times in separate processes with PYTHONHASHSEED 0..N-1; results in reports/repeat/<cell>/."""
    from fanin.run import all_cells, one_cell

    cell = matrix.cell(args.cell)
    if args.runs < 2:
        raise FaninError(f"repeat needs at least 2 runs to compare, got {args.runs}")
    work = REPORTS / "repeat" / cell.id
    shutil.rmtree(work, ignore_errors=True)
    with one_cell.signals_end_children():
        for seed in range(args.runs):
            options = all_cells.Options(
                results_dir=work / f"run-{seed:03d}",
                accept_new=True,
                pytest_args=("-q",),
                env={"PYTHONHASHSEED": str(seed)},
            )
            result = all_cells.run_one(cell, matrix, options)
            print(
                all_cells.describe(result).replace(f"{cell.id}:", f"{cell.id} run {seed + 1}/{args.runs}:"), flush=True
            )
            if result.code not in (exits.SAME, exits.CHANGED):
                return result.code
    return exits.SAME


def cmd_stability(args: argparse.Namespace, matrix: Matrix) -> int:
    if not (args.dirs or args.repeated):
        return _stability_pass(args, matrix)
    if args.framework or args.cells or args.probe or args.runs is not None:
        raise FaninError(
            "--framework, --cells, --probe and --runs choose a stability pass, not repeated runs to compare"
        )
    from fanin.run import stability

    dirs = args.dirs or sorted(p for p in (REPORTS / "repeat").glob("*") if p.is_dir())
    if not dirs:
        raise FaninError(f"no repeated runs in {shown(REPORTS / 'repeat')}/; run ./noxw -s 'repeat(<cell>)' -- N first")
    flaky_total = 0
    for directory in dirs:
        runs = sorted(Path(directory).glob("run-*/*.json")) or sorted(Path(directory).glob("*.json"))
        result = stability.check(runs)
        flaky_total += len(result.flaky)
        print(
            f"{result.cell}: {result.runs} runs; {len(result.exact)} probes exact, "
            f"{len(result.nondeterministic)} nondeterministic by design (same outcome set every run), "
            f"{len(result.flaky)} flaky"
        )
        for probe_id, observations in result.flaky.items():
            labels = " | ".join(sorted({f"{o.outcome} {o.label}" for o in observations}))
            print(f"  flaky {probe_id}: {labels}")
    return exits.CHANGED if flaky_total else exits.SAME


def _stability_pass(args: argparse.Namespace, matrix: Matrix) -> int:
    """The repetition probes (or --probe ones) of the chosen cells, --runs times each: exit 1 if any verdict varies."""
    from fanin.model.catalog import declared
    from fanin.run import one_cell, repetitions

    catalogue = declared()
    wanted = tuple(dict.fromkeys(args.probe or ()))
    repetitions.check_names(wanted, catalogue)
    if args.cells:
        cells = [matrix.cell(c) for c in args.cells]
    elif args.framework:
        cells = [matrix.newest(matrix.framework(args.framework).key)]
    else:
        cells = [matrix.newest(key) for key in matrix.frameworks if matrix.of(key)]
    if args.framework and args.cells:
        key = matrix.framework(args.framework).key
        cells = [c for c in cells if c.framework.key == key]
    work = REPORTS / "stability"
    for cell in cells:  # only this pass's cells: a pass over other cells may be running beside it
        shutil.rmtree(work / cell.id, ignore_errors=True)
    with one_cell.signals_end_children():
        tallies = repetitions.check(
            cells,
            lambda cell: repetitions.chosen_probes(cell.framework.key, wanted, catalogue),
            20 if args.runs is None else args.runs,
            repetitions.cell_observer(matrix, work),
        )
    varying = [t for t in tallies if t.varies]
    print(f"fanin: stability: {len(tallies)} observation(s) in {len(cells)} cell(s), {len(varying)} vary")
    return repetitions.exit_code(tallies)


def cmd_cells(args: argparse.Namespace, matrix: Matrix) -> int:
    smoke = matrix.smoke()
    key = matrix.framework(args.framework).key if args.framework else None
    chosen = [
        cell
        for cell in sorted(matrix.cells, key=lambda c: c.sort_key)
        if (key is None or cell.framework.key == key) and not (args.smoke and cell.id not in smoke)
    ]
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": c.id,
                        "framework": c.framework.key,
                        "package": c.framework.package,
                        "version": c.version,
                        "python": c.python,
                        "resolution": c.resolution,
                        "smoke": c.id in smoke,
                    }
                    for c in chosen
                ],
                indent=1,
            )
        )
        return 0
    for cell in chosen:
        print(f"{cell.id}\tpython {cell.python}\t{cell.resolution} ({cell.exclude_newer})\t{cell.note}")
    return 0


def cmd_record(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.project import record

    pytest_args = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    return record.run(pytest_args, matrix, args.python, args.json, args.fail_on)


def cmd_probes(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.report import catalogue

    found = catalogue.entries(matrix, args.framework, args.topic, " ".join(args.text))
    if args.json:
        print(catalogue.as_json(found))
    elif found:
        print(catalogue.text(found))
    else:
        print("fanin: no probe matches" + (f" {' '.join(args.text)!r}" if args.text else ""))
    return 0


def cmd_upgrade(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.versions import upgrade

    extra = [*(["--from", args.base] if args.base else []), *(["--python", args.python] if args.python else [])]
    return upgrade.run([*args.spec, *extra], matrix)


def cmd_watch(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.versions import watch

    return watch.run(matrix, args.dry_run, args.body, args.framework, args.json)


def cmd_add_cell(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.versions import add_cell

    locked = add_cell.add(args.spec, matrix, python=args.python)
    print(f"fanin: added to reference/matrix.toml and locked: {', '.join(locked)}")
    print(
        f"fanin: next: ./noxw -s 'probe({locked[-1]})' -- --accept-new, review, then ./noxw -s bless -- {' '.join(locked)}"
    )
    return 0


def cmd_repro(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.versions import repro

    cell = matrix.cell(args.cell) if args.cell else None
    text = repro.script(args.probe, matrix, cell, args.variant)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    from fanin.model.staging import write_all

    write_all({args.out: text})
    print(f"fanin: wrote {args.out}; run it with `uv run {args.out}`")
    return 0


def cmd_sensitivity(args: argparse.Namespace, matrix: Matrix) -> int:
    """Each patch of reference/sensitivity.toml must move its probes' hazard or label (see fanin.run.sensitivity)."""
    from fanin.model import sensitivity as data
    from fanin.report import sensitivity as table
    from fanin.run import all_cells, sensitivity

    patches = data.load()
    if args.table:
        print(table.table(patches))
        return 0
    if args.patch:
        unknown = sorted(set(args.patch) - {p.id for p in patches})
        if unknown:
            raise FaninError(f"no such patch in reference/sensitivity.toml: {', '.join(unknown)}")
        patches = [p for p in patches if p.id in args.patch]
    for patch in patches:
        matrix.cell(patch.cell)  # an unknown cell is bad input before anything is copied
    outcome = sensitivity.run(patches, matrix, all_cells.jobs(args.jobs or 0))
    missed = [m for m in outcome.moves if not m.moved]
    print(
        f"fanin: sensitivity: {len(patches)} patches, {len(outcome.moves) - len(missed)} of {len(outcome.moves)}"
        f" probe moves seen in {outcome.seconds:.1f} s"
    )
    for move in missed:
        print(f"fanin: NOT SENSITIVE: {move.probe} under {move.patch}: {move.why}")
    return exits.SAME if outcome.ok else exits.CHANGED


def _bisect(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.versions import first_release as fanin_bisect
    from fanin.versions import pin_changes

    if args.held and not args.companion:
        raise FaninError("bisect --with goes with --companion (another companion held in every step)")
    if (args.companion is None) != (args.at is None):
        raise FaninError("bisect --companion PACKAGE and --at VERSION go together (the framework's version held)")
    if args.all:
        if len(args.words) > 1 or args.companion:
            raise FaninError("bisect --all takes at most a framework name (and no --companion)")
        return pin_changes.run(matrix, matrix.framework(args.words[0]).key if args.words else None)
    if args.companion:
        from fanin.versions import companion_bisect

        return companion_bisect.run(args.words, args.companion, args.at, matrix, tuple(args.held))
    return fanin_bisect.run(args.words, matrix)


def cmd_scenarios(args: argparse.Namespace, matrix: Matrix) -> int:
    from fanin.model import scenarios
    from fanin.run import adapters

    catalogue = scenarios.catalogue()
    unknown = [s for s in args.scenario if s not in catalogue]
    if unknown:
        raise FaninError(f"no scenario {', '.join(unknown)} in scenarios/ (there are {', '.join(catalogue)})")
    chosen = [catalogue[s] for s in args.scenario] if args.scenario else list(catalogue.values())
    command = args.adapter[1:] if args.adapter[:1] == ["--"] else args.adapter
    capabilities, found, _ = adapters.run(command, chosen)
    if args.json:
        body = {"capabilities": capabilities, "observations": {k: o.to_json() for k, o in found.items()}}
        sys.stdout.write(json.dumps(body, indent=1, sort_keys=True) + "\n")
    else:
        sys.stdout.write("\n".join(adapters.lines(capabilities, found)) + "\n")
    return exits.SAME


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    probe = sub.add_parser("probe", help="run cells (default: all) against their references")
    probe.add_argument("cells", nargs="*", help="cell ids (default: every cell of the matrix)")
    probe.add_argument("--framework", help="only this framework's cells")
    probe.add_argument("--smoke", action="store_true", help="only the newest cell of each framework")
    probe.add_argument(
        "--accept-new", "--fanin-accept-new", action="store_true", help="probes without a reference do not fail the run"
    )
    probe.add_argument("--jobs", type=int, help="cells side by side (default: FANIN_JOBS or the number of cores)")
    probe.add_argument(
        "--here",
        action="store_true",
        help="probe the frameworks installed in this environment and compare with the nearest reference cell",
    )
    probe.add_argument("--python", help="with --here: another interpreter's environment (default: this one)")
    probe.add_argument(
        "--out",
        type=Path,
        help="with --here: keep the result set and log in this directory "
        "(default: a new directory for each run in the user cache, e.g. ~/.cache/fanin/here/<UTC start>-<random>/;"
        " never the current directory)",
    )
    probe.set_defaults(func=cmd_probe, pytest_args=[], runs_cells=True)

    rep = sub.add_parser(
        "report",
        help="render reference/REPORT.md, CHECKLIST.md, reports/matrix.html and compare pages (and reports/run/)",
    )
    rep.add_argument(
        "--for",
        dest="for_specs",
        nargs="+",
        metavar="SPEC",
        help="e.g. google-adk==1.15.1 langgraph==1.2.9 (or cell ids, or ranges: 'deepagents~=0.6' means its newest "
        "reference cell): the report, checklist and cite lines at these versions "
        "(a reference cell, else a local result in reports/results or reports/upgrade); written to --out",
    )
    rep.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="write compare-<a>-<b>.md and .html: what differs between two versions, each a cell id, "
        "PACKAGE==VERSION or a range, as --for takes them "
        "(default --out reports/compare; with --out DIR, the report their links lead to beside them)",
    )
    rep.add_argument(
        "--python",
        metavar="X.Y",
        help="with --for and --compare: the versions' Python twin cells (e.g. 3.10), where the matrix has them",
    )
    rep.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write the site here (never the reference): index.html, a page per framework, checklist.html, "
        "comparison.html, compare/ and data/; with --for, a self-contained REPORT.md, CHECKLIST.md, matrix.html and compare/",
    )
    rep.add_argument(
        "--base-url",
        metavar="URL",
        help="where the rendered files are published: every probe link and cite line becomes a permalink "
        "(default: $FANIN_BASE_URL; never applied to the committed reference/REPORT.md; no #fragment or ?query)",
    )
    rep.add_argument(
        "--version-tag",
        metavar="TAG",
        help="with --out: also write the site under v/TAG/, its permanent copy, which every cite line names "
        "(the publishing workflow passes the reference's short commit)",
    )
    rep.set_defaults(func=cmd_report)

    diff = sub.add_parser("diff", help="compare two result sets (cell ids mean their reference)")
    diff.add_argument("base", nargs="?", help="result file or cell id (its reference); omit to diff every local run")
    diff.add_argument("new", nargs="?", help="result file or cell id")
    diff.add_argument("-q", "--quiet", action="store_true", help="the table only, without each change's before/after")
    diff.set_defaults(func=cmd_diff)

    upg = sub.add_parser("upgrade", help="probe FRAMEWORK==VERSION outside the matrix; diff with the newest reference")
    upg.add_argument(
        "spec", nargs="*", help="e.g. langgraph==1.2.20, google-adk==latest or 'deepagents~=0.6' (its newest release)"
    )
    upg.add_argument("--from", dest="base", help="the version you run now (default: the newest reference cell)")
    upg.add_argument(
        "--python", metavar="X.Y", help="both versions on this Python (a twin cell where the matrix has one)"
    )
    upg.set_defaults(func=cmd_upgrade, runs_cells=True)

    bless = sub.add_parser("bless", help="promote reviewed local results into reference/results (all or nothing)")
    bless.add_argument("cells", nargs="*", help="cell ids (default: every cell with a local result)")
    bless.add_argument("--force", action="store_true", help="bless even with probe errors or missing probes")
    bless.set_defaults(func=cmd_bless)

    add = sub.add_parser("add-cell", help="add FRAMEWORK==VERSION to the matrix, dated and locked as released")
    add.add_argument("spec", nargs="*", help="e.g. langgraph==1.2.25")
    add.add_argument("--python", help="a Python other than the matrix's default, e.g. 3.10")
    add.set_defaults(func=cmd_add_cell)

    watch = sub.add_parser(
        "watch",
        help="bring PyPI releases newer than each framework's newest cell into the reference (--dry-run: say so)",
    )
    watch.add_argument("--dry-run", action="store_true", help="say what would be added; write nothing but --json")
    watch.add_argument("--framework", help="only this framework (key or package)")
    watch.add_argument(
        "--body",
        type=Path,
        default=REPORTS / "watch" / "pull-request.md",
        help="where the pull request's body (the upgrade tables) is written (default reports/watch/pull-request.md)",
    )
    watch.add_argument(
        "--json",
        type=Path,
        help="also write what is due, per framework, as JSON here (newest cell, newest release, due releases, index"
        " freshness): the release-watch workflow opens a pull request only when `due` is true",
    )
    watch.set_defaults(func=cmd_watch, runs_cells=True)

    lock = sub.add_parser("lock", help="(re)resolve cell locks with uv")
    lock.add_argument("cells", nargs="*", help="cell ids (default: all)")
    lock.set_defaults(func=cmd_lock)

    bis = sub.add_parser("bisect", help="FRAMEWORK PROBE-ID GOOD BAD: the first release whose observation changed")
    bis.add_argument("words", nargs="*")
    bis.add_argument(
        "--all",
        action="store_true",
        help="every change between adjacent reference cells not yet pinned (optionally: FRAMEWORK)",
    )
    bis.add_argument(
        "--companion",
        metavar="PACKAGE",
        help="bisect over one of the framework's own dependencies: GOOD and BAD are its versions (with --at)",
    )
    bis.add_argument("--at", metavar="VERSION", help="with --companion: the framework's version, held")
    bis.add_argument(
        "--with",
        dest="held",
        metavar="PACKAGE==VERSION",
        action="append",
        default=[],
        help="with --companion: another companion held at a version in every step (what the moved one needs)",
    )
    bis.set_defaults(func=_bisect, runs_cells=True)

    sen = sub.add_parser(
        "sensitivity",
        help="patch copies of cell venvs (reference/sensitivity.toml): each patch must move its probes' hazard or label",
    )
    sen.add_argument("--patch", action="append", metavar="ID", help="only this patch (repeatable)")
    sen.add_argument("--jobs", type=int, help="cells side by side (default: FANIN_JOBS or the number of cores)")
    sen.add_argument(
        "--table", action="store_true", help="print docs/PROBES.md's table of what each probe is sensitive to"
    )
    sen.set_defaults(func=cmd_sensitivity, runs_cells=True)

    rpt = sub.add_parser("repeat", help="run one cell N times with different hash seeds (then `stability`)")
    rpt.add_argument("cell")
    rpt.add_argument("runs", nargs="?", type=int, default=5)
    rpt.set_defaults(func=cmd_repeat, runs_cells=True)

    stable = sub.add_parser(
        "stability",
        help="run the repetition probes N times per cell (exit 1 if a verdict varies); DIRS or --repeated: compare"
        " repeated runs of cells (exit 1 if any probe is flaky)",
    )
    stable.add_argument("dirs", nargs="*", type=Path, help="repeated runs to compare (reports/repeat/<cell>)")
    stable.add_argument("--repeated", action="store_true", help="compare every cell under reports/repeat/")
    stable.add_argument("--framework", help="the pass: this framework's newest cell (with --cells: only its cells)")
    stable.add_argument("--cells", nargs="+", metavar="CELL", help="the pass: these cells (default: each newest)")
    stable.add_argument(
        "--probe", action="append", metavar="ID", help="the pass: this probe instead of the repetition probes"
    )
    stable.add_argument("--runs", type=int, help="the pass: runs per cell (default 20)")
    stable.set_defaults(func=cmd_stability, runs_cells=True)

    aud = sub.add_parser(
        "audit",
        help="FILE.py:ATTR or package.module:ATTR (ATTR() calls a factory): fan-in hazards of your own graph, with evidence",
    )
    aud.add_argument("target")
    aud.add_argument(
        "--args",
        metavar="JSON",
        help="call the target (a factory that builds the graph) with these arguments: a JSON object (keywords) or "
        "array (positional); FILE.py:build() calls it with none",
    )
    aud.add_argument("--cell", help="run in this cell's venv instead of the current environment")
    aud.add_argument(
        "--input", help="JSON (or a .json file) to dry-run a LangGraph graph with, recording who wrote what"
    )
    aud.add_argument(
        "--dry-run-seconds",
        type=float,
        metavar="SECONDS",
        help="with --input: stop a dry run that has not finished after this long, keeping the static findings "
        "(default: FANIN_AUDIT_DRY_RUN_SECONDS, else 60; then exit 3, the audit is incomplete)",
    )
    aud.add_argument(
        "--recursion-limit",
        type=int,
        metavar="N",
        help="with --input: the dry run's recursion limit, in supersteps (default: FANIN_AUDIT_RECURSION_LIMIT, else 25)",
    )
    aud.add_argument(
        "--audit-seconds",
        type=float,
        metavar="SECONDS",
        help="stop the whole audit (load, read, dry run) after this long; the findings read by then are printed "
        "(default: FANIN_AUDIT_SECONDS, else 300 plus the dry run's bound; then exit 3, the audit is incomplete)",
    )
    aud.add_argument("--json", type=Path, help="also write the findings as JSON here")
    aud.add_argument(
        "--fail-on", default="silent,hangs,loud", help="hazards that make the exit code 1 (default: silent,hangs,loud)"
    )
    aud.add_argument(
        "--traceback", action="store_true", help="when the target fails to import, show the whole traceback"
    )
    aud.set_defaults(func=cmd_audit)

    mrg = sub.add_parser("merge", help="gather the result sets CI shards produced (DIR...) into one directory")
    mrg.add_argument("sources", nargs="+", type=Path)
    mrg.add_argument("--out", type=Path, default=RUN_RESULTS)
    mrg.set_defaults(func=cmd_merge)

    rpr = sub.add_parser(
        "repro", help="PROBE_ID: the probe as one standalone script (kit inlined, no fanin) that `uv run` executes"
    )
    rpr.add_argument("probe", metavar="PROBE_ID", help="a probe id, or an observation id (`…/no-reducer[async]`)")
    rpr.add_argument("--cell", help="the cell whose versions it pins (default: the framework's newest)")
    rpr.add_argument("--variant", help="the dimension values, e.g. postgres,async (default: the plain id's)")
    rpr.add_argument("--out", type=Path, help="write the script to FILE (default: standard output)")
    rpr.set_defaults(func=cmd_repro)

    scn = sub.add_parser(
        "scenarios",
        help="-- COMMAND...: the shared scenarios through an adapter program, over the protocol (docs/ADAPTERS.md)",
    )
    scn.add_argument("--scenario", action="append", default=[], metavar="ID", help="only this scenario (repeatable)")
    scn.add_argument("--json", action="store_true", help="the capabilities and observations as one JSON object")
    scn.add_argument("adapter", nargs=argparse.REMAINDER, help="the adapter's command line, after `--`")
    scn.set_defaults(func=cmd_scenarios)

    rec = sub.add_parser("record", help="run your tests, record the writes each graph run made, and what they mean")
    rec.add_argument("--python", help="the interpreter your tests run with (default: this one)")
    rec.add_argument("--json", type=Path, help="also write the record and its findings as JSON here")
    rec.add_argument("--fail-on", nargs="*", default=[], help="exit 1 when a finding has one of these hazards")
    rec.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after `--`: pytest's arguments, as you run them")
    rec.set_defaults(func=cmd_record)

    probes = sub.add_parser("probes", help="list and search the catalogue, by topic (reference/topics.toml)")
    probes.add_argument("text", nargs="*", help="words every listed probe's id, title or claim contains")
    probes.add_argument("--framework", help="one framework (key or package)")
    probes.add_argument("--topic", help="one topic of reference/topics.toml")
    probes.add_argument("--json", action="store_true", help="one JSON list")
    probes.set_defaults(func=cmd_probes)

    cells = sub.add_parser("cells", help="list the matrix")
    cells.add_argument("--framework")
    cells.add_argument("--smoke", action="store_true")
    cells.add_argument("--json", action="store_true", help="one JSON list (for CI job matrices)")
    cells.set_defaults(func=cmd_cells)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # uv (every venv and lock) trusts the system's certificate store, as pip (truststore) and npm (its cafile) do
    # here: with its bundled roots alone it failed behind a TLS-inspecting proxy whose CA only the system holds.
    # A user's own UV_SYSTEM_CERTS wins; ./noxw sets the same default for nox's `uv run`.
    os.environ.setdefault("UV_SYSTEM_CERTS", "1")
    words = list(sys.argv[1:] if argv is None else argv)
    passed: list[str] = []
    if words[:1] == ["probe"] and "--" in words:  # `probe [CELL...] [options] -- <pytest arguments>`
        passed = words[words.index("--") + 1 :]
        words = words[: words.index("--")]
    args = build_parser().parse_args(words)
    if passed:
        args.pytest_args = passed
    try:
        if getattr(args, "runs_cells", False):  # the settings a cell run reads: bad input before any cell runs
            from fanin.run import services

            services.start_seconds()
        from fanin.versions import bless as fanin_bless

        for (
            line
        ) in fanin_bless.recover():  # a bless cut short by a kill is completed before anything reads the reference
            sys.stderr.write(f"fanin: reference: {line}\n")
        return int(args.func(args, load_matrix()))
    except FaninError as exc:
        sys.stderr.write(f"fanin: error: {exc}\n")
        return exc.exit_code
    except OSError as exc:  # a full disk, a read-only or missing directory: the environment, not the input
        where = f" ({exc.filename})" if exc.filename else ""
        sys.stderr.write(f"fanin: error: cannot write or read{where}: {exc.strerror or exc}; nothing was committed\n")
        return exits.NOT_RUN
    except KeyboardInterrupt as exc:
        sys.stderr.write(interrupted(exc) + "\n")
        return exits.INTERRUPTED


def interrupted(exc: KeyboardInterrupt) -> str:
    """The last line after a signal: what is true of the result sets (a run names the new ones written before it)."""
    written: tuple[str, ...] = getattr(exc, "written", ())  # fanin.run.all_cells.Interrupted
    kept = "every cell's previous result set is as it was"
    if written:
        kept = f"new result sets were written before it for {', '.join(written)}; every other cell's previous result set is as it was"
    return f"fanin: interrupted ({exc or 'SIGINT'}); {kept}"


if __name__ == "__main__":
    sys.exit(main())
