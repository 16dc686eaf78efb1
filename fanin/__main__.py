"""`python -m fanin report|diff|bless|lock|cells`: what the nox sessions call.

Every user mistake ends as one line on stderr (`fanin: error: ...`) and exit 2;
`diff` exits 1 when a change is breaking, so it can gate a merge.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from fanin import catalog, compare, locking, stability
from fanin.errors import FaninError
from fanin.matrix import RUN_RESULTS, Matrix, load as load_matrix
from fanin.model import ResultFileError, load, save, write_atomic
from fanin.render import markdown, outputs
from fanin.source import shown


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"fanin: error: {message} (see `python -m fanin {self.prog.split()[-1]} --help`)\n")
        sys.exit(2)


def _result_source(arg: str, matrix: Matrix) -> Path:
    """A path to a result file, or a cell id meaning that cell's reference."""
    if arg.endswith(".json") or "/" in arg:
        return Path(arg)
    return matrix.cell(arg).reference_path


def cmd_report(args: argparse.Namespace, matrix: Matrix) -> int:
    unreadable = 0
    for render in (outputs.reference, outputs.local_run):
        files, broken = render(matrix)
        unreadable += broken
        for path, text in files.items():
            write_atomic(path, text)
            print(f"fanin: wrote {shown(path)}")
    return 1 if unreadable else 0


def cmd_diff(args: argparse.Namespace, matrix: Matrix) -> int:
    if args.base is None:
        pairs = [(cell.reference_path, cell.results_path) for cell in matrix.cells if cell.results_path.exists()]
        if not pairs:
            raise FaninError(f"no local results in {shown(RUN_RESULTS)}; run a probe session first")
    else:
        if args.new is None:
            raise FaninError("diff takes two result sets (BASE NEW), or none to compare every local run with the reference")
        base, new = _result_source(args.base, matrix), _result_source(args.new, matrix)
        if args.base == args.new or base.resolve() == new.resolve():
            raise FaninError(f"diff names {args.base!r} twice; give two different result sets")
        cells = {cell.id: cell for cell in matrix.cells}
        if args.base in cells and args.new in cells:
            older, newer = cells[args.base], cells[args.new]
            if older.framework == newer.framework and older.sort_key > newer.sort_key:
                raise FaninError(f"diff arguments in the wrong order: {args.base} is newer than {args.new}; give the older first")
        pairs = [(base, new)]
    breaking = False
    for base_path, new_path in pairs:
        base, new = load(base_path), load(new_path)
        if base.framework != new.framework:
            raise FaninError(f"cannot diff a {base.framework} result set with a {new.framework} one")
        changes = compare.diff(base, new)
        header = f"{base.cell} ({base.version}) -> {new.cell} ({new.version})"
        if not changes:
            print(f"{header}: no change in {len(new.observations)} probes")
            continue
        print(f"{header}:\n{markdown.changes(changes)}\n")
        if not args.quiet:
            for change in changes:
                print(compare.describe(change) + "\n")
        breaking |= any(change.is_breaking for change in changes)
    return 1 if breaking else 0


def cmd_bless(args: argparse.Namespace, matrix: Matrix) -> int:
    """Check every named cell first, then write them all: a bad cell never leaves the reference half-updated."""
    cells = [matrix.cell(c) for c in args.cells] if args.cells else [c for c in matrix.cells if c.results_path.exists()]
    if not cells:
        raise FaninError(f"nothing to bless: no local results in {shown(RUN_RESULTS)}")
    declared = catalog.declared()
    accepted = []
    for cell in cells:
        run = load(cell.results_path, expect_cell=cell.id)
        errors = [pid for pid, o in run.observations.items() if o.outcome == "probe-error"]
        if errors and not args.force:
            raise FaninError(f"{cell.id} has probe errors ({', '.join(errors)}); fix the probes, or bless with --force")
        wanted = {oid for p in declared if p.framework == cell.framework.key for oid in p.observation_ids()}
        absent = sorted(wanted - set(run.observations))
        if absent and not args.force:
            raise FaninError(
                f"{cell.id}: the run lacks {len(absent)} declared probe(s) ({', '.join(absent[:3])}"
                f"{', …' if len(absent) > 3 else ''}); a partial run (-k, or another session's output) is not a reference"
            )
        try:
            changes = compare.diff(load(cell.reference_path, expect_cell=cell.id), run)
            note = f"blessing {len(changes)} change(s)" + (f"\n{markdown.changes(changes)}" if changes else "")
        except ResultFileError as exc:
            note = f"new reference with {len(run.observations)} probes (replacing: {exc})"
        accepted.append((cell, run, note))
    for cell, run, note in accepted:
        save(run, cell.reference_path)
        print(f"{cell.id}: {note}")
    return 0


def cmd_lock(args: argparse.Namespace, matrix: Matrix) -> int:
    cells = [matrix.cell(c) for c in args.cells] if args.cells else list(matrix.cells)
    for cell in cells:
        locking.lock(cell, matrix, cell.lock_path)
        print(f"fanin: locked {cell.id} ({cell.resolution}, packages as of {cell.exclude_newer}) -> {shown(cell.lock_path)}")
    return 0


def cmd_stability(args: argparse.Namespace, matrix: Matrix) -> int:
    flaky_total = 0
    for directory in args.dirs:
        result = stability.check(sorted(Path(directory).glob("*.json")))
        flaky_total += len(result.flaky)
        print(
            f"{result.cell}: {result.runs} runs; {len(result.exact)} probes exact, "
            f"{len(result.nondeterministic)} nondeterministic by design (same outcome set every run), "
            f"{len(result.flaky)} flaky"
        )
        for probe_id, observations in result.flaky.items():
            labels = " | ".join(sorted({f"{o.outcome} {o.label}" for o in observations}))
            print(f"  flaky {probe_id}: {labels}")
    return 1 if flaky_total else 0


def cmd_cells(args: argparse.Namespace, matrix: Matrix) -> int:
    smoke = matrix.smoke()
    for cell in sorted(matrix.cells, key=lambda c: c.sort_key):
        if (args.framework and cell.framework.key != args.framework) or (args.smoke and cell.id not in smoke):
            continue
        print(f"{cell.id}\tpython {cell.python}\t{cell.resolution} ({cell.exclude_newer})\t{cell.note}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m fanin", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    rep = sub.add_parser(
        "report",
        help="render reference/REPORT.md, reference/CHECKLIST.md, reports/matrix.html (and reports/run/ from a local run)",
    )
    rep.set_defaults(func=cmd_report)
    diff = sub.add_parser("diff", help="compare two result sets (cell ids mean their reference)")
    diff.add_argument("base", nargs="?", help="result file or cell id (its reference); omit to diff every local run")
    diff.add_argument("new", nargs="?", help="result file or cell id")
    diff.add_argument("-q", "--quiet", action="store_true", help="the table only, without each change's before/after")
    diff.set_defaults(func=cmd_diff)
    bless = sub.add_parser("bless", help="promote reviewed local results into reference/results")
    bless.add_argument("cells", nargs="*", help="cell ids (default: every cell with a local result)")
    bless.add_argument("--force", action="store_true", help="bless even with probe errors or missing probes")
    bless.set_defaults(func=cmd_bless)
    lock = sub.add_parser("lock", help="(re)resolve cell locks with uv")
    lock.add_argument("cells", nargs="*", help="cell ids (default: all)")
    lock.set_defaults(func=cmd_lock)
    stable = sub.add_parser("stability", help="compare N runs of a cell (directories of result sets); exit 1 if any probe is flaky")
    stable.add_argument("dirs", nargs="+", type=Path)
    stable.set_defaults(func=cmd_stability)
    cells = sub.add_parser("cells", help="list the matrix")
    cells.add_argument("--framework")
    cells.add_argument("--smoke", action="store_true")
    cells.set_defaults(func=cmd_cells)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args, load_matrix())
    except FaninError as exc:
        sys.stderr.write(f"fanin: error: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
