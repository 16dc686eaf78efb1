"""`fanin probe --here`: run the catalogue against the frameworks installed in this environment.

Your exact resolved dependencies, not a lock of ours: this is what a team puts in its own CI
on a Renovate/Dependabot upgrade PR. Each registered framework found installed is probed with
this interpreter (pytest and pytest-timeout must be installed here too), isolated from the
network like any cell, and compared with the reference cell of that version, or the nearest
one, saying which and why.

It judges the framework, not the venv. A reference cell's lock holds the framework's
`companions` (the checkpointer and session-store packages its backends need); an app rarely
installs them all. An observation that differs from the reference because it needed a
companion that is not installed here is *not covered here*, never a regression: the plugin
records, per observation, each registered companion whose import failed while it was not
installed (`--fanin-companions`, the result set's `environment.not_installed`), and such an
observation that did not run to an `ok` outcome is set aside, with one install hint for all.

The comparison is the upgrade gate's, through compare's one classifier and its `standing`: exit 1
only for a behaviour the installed version shows and its reference does not (a regression or a
changed value among the observations covered here). Everything else is named with its reason and
passes: new coverage (a probe or a sub-case n/a in the reference runs now), not covered here (a
companion or a module this environment lacks), could not judge (the probe timed out here), as the
newer reference (a version between two cells, where the newer cell already shows it). 3 when the
run itself could not happen, or ran another version than the one detected. The result set and log
go to the user cache (or `--out DIR`), never into the project directory.

Detection and the run see one environment: the same interpreter, the user's PYTHONPATH (behind
fanin's own code), asked by fanin.project.detect, which also names an editable, modified or
shadowed install as such, never as the release.
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from fanin.model import compare, exits
from fanin.model.errors import EnvironmentFault, FaninError
from fanin.model.matrix import REPORTS, Cell, Framework, Matrix
from fanin.model.names import canonicalize_name
from fanin.model.results import OK, ResultSet, load
from fanin.model.source import INSTALLED, REPO_ROOT, shown, user_cache

# audit imports this module for nearest(); the runner, the table and the gate are imported where they are used.
from fanin.run.identity import load_reference

RUN_LOCK = ".fanin-here.lock"  # held in a run's directory while the run writes there
RUN_NAME = re.compile(r"\d{8}T\d{6}Z-")  # a run directory below the user cache (its start, UTC), the only ones pruned
KEEP_RUNS = 10  # run directories kept below the user cache (each holds a result set and log per framework)
NOT_INSTALLED = "not_installed"  # the result set's environment key the plugin writes under --fanin-companions


@dataclass(frozen=True)
class Found:
    framework: Framework
    version: str
    baseline: Cell
    why: str
    origin: str = "release"  # fanin.project.detect: release, editable[, modified|, changes unknown], modified, shadowed
    where: str = ""  # what the origin rests on (the editable folder, the first file that differs)
    newer: Cell | None = None  # a version between two cells: the newer neighbour (what the reference shows changing)

    @property
    def installed(self) -> str:
        """The version as the closing table names it: `1.2.24`, or `1.2.24 (editable, modified)`."""
        return self.version if self.origin == "release" else f"{self.version} ({self.origin})"


@dataclass(frozen=True)
class Verdict:
    """One framework's line in the closing table."""

    framework: str
    installed: str
    compared_with: str
    verdict: str


def run_environment() -> dict[str, str]:
    """The variables a --here run adds to the user's environment, and detection with it: fanin's own code first on
    PYTHONPATH (the plugin and the suites), then the user's PYTHONPATH, kept (it may name the framework itself)."""
    paths = [str(REPO_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {"PYTHONPATH": os.pathsep.join(paths)}


def _environment(python: str, packages: dict[str, str], env: dict[str, str]) -> tuple[str, dict[str, dict[str, str]]]:
    """The interpreter's Python (3.11) and, of `packages` (distribution: module), those it imports: version and
    origin (fanin.project.detect), asked of the very interpreter and environment the probe run gets."""
    from fanin.project import detect

    script = Path(detect.__file__).read_text(encoding="utf-8")
    arguments = [f"{package}={module}" for package, module in packages.items()]
    done = subprocess.run(
        [python, "-c", script, *arguments], capture_output=True, text=True, env={**os.environ, **env}, timeout=300
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise EnvironmentFault(f"{python} could not say what it has installed (exit {done.returncode}): {tail}")
    answer = json.loads(done.stdout)
    return answer["python"], answer["packages"]


def nearest(matrix: Matrix, framework: Framework, version: str, python: str) -> tuple[Cell, str]:
    """The reference cell to compare with: the same version (and Python), else the newest older one, else the oldest."""
    cells = [c for c in matrix.of(framework.key) if c.reference_path.exists()]
    if not cells:
        raise FaninError(f"the reference has no {framework.key} cell to compare with")
    same = [c for c in cells if Version(c.version) == Version(version)]
    for cell in same:
        if cell.python == python:
            return cell, "the reference cell of this very version and Python"
    if same:
        return same[0], f"the reference cell of this version (on Python {same[0].python}; none on {python})"
    older = [c for c in cells if Version(c.version) < Version(version) and c.python == matrix.default_python]
    if older:
        cell = older[-1]
        return (
            cell,
            f"no reference cell for {version}; the nearest older one, so every difference is what changed since",
        )
    return cells[0], f"no reference cell for {version} or older; the oldest one"


def newer_neighbour(matrix: Matrix, baseline: Cell, version: str) -> Cell | None:
    """The oldest reference cell newer than `version` on the baseline's Python, when the baseline is older than it
    (the version lies between two cells); None at a reference version, or past the newest cell."""
    if Version(baseline.version) >= Version(version):
        return None
    newer = [
        c
        for c in matrix.of(baseline.framework.key)
        if c.python == baseline.python and c.reference_path.exists() and Version(c.version) > Version(version)
    ]
    return newer[0] if newer else None


def find(matrix: Matrix, python: str, env: dict[str, str]) -> list[Found]:
    """The registered Python frameworks `python` imports with `env` (the probe run's), and the cell to compare each with."""
    frameworks = [fw for fw in matrix.frameworks.values() if fw.runs_on.imported_here]
    registered = {name: value for fw in frameworks for name, value in fw.env}  # detection imports them all
    minor, installed = _environment(python, {fw.package: fw.import_check for fw in frameworks}, {**registered, **env})
    found = []
    for framework in frameworks:
        seen = installed.get(framework.package)
        if seen is None:
            continue
        cell, why = nearest(matrix, framework, seen["version"], minor)
        newer = newer_neighbour(matrix, cell, seen["version"])
        if newer is not None:
            why = (
                f"no reference cell for {seen['version']}; the nearest older one, and {newer.id}, the newer neighbour:"
                " a difference the newer cell already shows is as the reference, the rest is what changed"
            )
        origin, where = seen.get("origin", "release"), seen.get("where", "")
        found.append(Found(framework, seen["version"], cell, why, origin, where, newer))
    if not found:
        names = ", ".join(fw.package for fw in frameworks)
        raise FaninError(f"none of the frameworks fanin knows ({names}) is installed in {python}")
    return found


def output_dir(out: Path | None) -> Path:
    """Where --here runs keep their result sets and logs: `--out`, else FANIN_REPORTS or a checkout's reports/,
    else the user cache (each run in a directory of its own below: `run_dir`). Never the current (project)
    directory unless asked."""
    if out is not None:
        return out
    if "FANIN_REPORTS" in os.environ or not INSTALLED:
        return REPORTS / "here"
    return user_cache() / "here"


@contextmanager
def _lock(folder: Path) -> Iterator[bool]:
    """Hold `folder`'s run lock for the block, if no other run holds it (True); where there is no flock, True."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield True
        return
    with (folder / RUN_LOCK).open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def _prune(base: Path, keep: int = KEEP_RUNS) -> None:
    """Remove the oldest run directories below `base` past the newest `keep`; never one a run holds, nothing else."""
    runs = sorted(p for p in base.iterdir() if p.is_dir() and RUN_NAME.match(p.name))
    for old in runs[:-keep] if keep else runs:
        with _lock(old) as free:
            if free:
                shutil.rmtree(old, ignore_errors=True)


@contextmanager
def run_dir(out: Path | None) -> Iterator[Path]:
    """This run's own directory, held with a lock while it runs, so that two runs at once in one environment never
    share a file (the result set, the log, the journal the runner clears at its start): `--out DIR` itself (a second
    run given the same DIR meanwhile is refused, exit 3), else a new directory below `output_dir`, named by the run's
    start; there, the oldest runs past the newest KEEP_RUNS are removed (never one another run holds)."""
    if out is None:
        base = output_dir(None)
        base.mkdir(parents=True, exist_ok=True)
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        where = Path(tempfile.mkdtemp(prefix=f"{stamp}-", dir=base))
    else:
        out.mkdir(parents=True, exist_ok=True)
        where = out
    with _lock(where) as free:
        if not free:
            raise EnvironmentFault(
                f"--out {out}: another probe --here run is writing there; give each run its own --out"
            )
        if out is None:
            _prune(where.parent)
        yield where


def run(matrix: Matrix, python: str | None = None, out: Path | None = None) -> int:
    from tabulate import tabulate

    if python is not None and not (Path(python).is_file() and os.access(python, os.X_OK)) and not shutil.which(python):
        raise FaninError(f"--python {python}: no such interpreter (give the path of the environment's python)")
    python = python or sys.executable
    for needed in ("pytest", "pytest_timeout"):
        if importlib.util.find_spec(needed) is None and python == sys.executable:
            raise EnvironmentFault(
                f"probe --here runs pytest in this environment: pip install pytest pytest-timeout ({needed} is missing)"
            )
    code = exits.SAME
    verdicts: list[Verdict] = []
    env = run_environment()  # detection and the probe run see one environment: one interpreter, one sys.path
    installed = find(matrix, python, env)
    with run_dir(out) as where:
        for found in installed:
            framework_code, verdict = _probe(matrix, found, python, env, where)
            verdicts.append(verdict)
            code = max(code, framework_code)
    print()
    print(
        tabulate(
            [[v.framework, v.installed, v.compared_with, v.verdict] for v in verdicts],
            headers=["framework", "installed here", "compared with", "verdict"],
            tablefmt="github",
        )
    )
    print(f"\nfanin: result set and log of this run in {shown(where)}/ (--out DIR to keep them elsewhere)")
    return code


def _probe(matrix: Matrix, found: Found, python: str, env: dict[str, str], where: Path) -> tuple[int, Verdict]:
    """Run the catalogue against one installed framework and compare; its exit code and its line of the table."""
    from fanin.run import one_cell

    day = _dt.datetime.now(_dt.UTC).date().isoformat() + "T00:00:00Z"
    cell = matrix.make_cell(found.framework, found.version, found.baseline.python, "current", day)
    results = where / f"{cell.id}.json"
    print(
        f"fanin: {found.framework.package} {found.installed} installed here; comparing with {found.baseline.id}: {found.why}"
    )
    if found.origin != "release":
        print(f"fanin: {found.framework.package} is not the release {found.version}: {found.where}")
    spec = one_cell.CellRun(
        cell_id=cell.id,
        framework=found.framework.key,
        package=found.framework.package,
        import_check=found.framework.import_check,
        registry_env=cell.env,
        python=Path(python),
        lock=None,
        reference=None,
        results=results,
        accept_new=True,
        pytest_args=("--fanin-companions", ",".join(found.framework.companions)),
        env=env,
    )
    log = results.with_suffix(".log")
    with one_cell.signals_end_children(), log.open("w", encoding="utf-8") as handle:
        outcome = one_cell.run_cell(spec, handle)
    neighbour = f" and {found.newer.id}" if found.newer else ""
    compared_with = f"{found.baseline.id}{neighbour} ({_short(found.why)})"
    not_run = Verdict(found.framework.package, found.installed, compared_with, "NOT RUN (see above)")
    if outcome.code not in (exits.SAME, exits.CHANGED):
        print(f"fanin: {cell.id}: NOT RUN: {outcome.reason} (log: {shown(log)})")
        return outcome.code, not_run
    observed = load(results)
    if observed.version != found.version:  # never judge one version by another's reference
        print(
            f"fanin: {cell.id}: NOT RUN: the probe run imported {found.framework.package} {observed.version},"
            f" not the {found.version} found installed (log: {shown(log)})"
        )
        return exits.NOT_RUN, not_run
    base = load_reference(found.baseline.reference_path, found.baseline)
    newer = load_reference(found.newer.reference_path, found.newer) if found.newer else None
    code, verdict = _compare(found.framework, base, observed, newer, locks=(found.baseline.lock_path,))
    return code, Verdict(found.framework.package, found.installed, compared_with, verdict)


def _short(why: str) -> str:
    """The closing table's few words for why this cell was chosen."""
    if why.startswith("the reference cell of this very"):
        return "same version and Python"
    if why.startswith("the reference cell of this version"):
        return "same version, another Python"
    if "newer neighbour" in why:
        return "between two versions"
    if "nearest older" in why:
        return "nearest older version"
    return "oldest version"


def _missing_module(change: compare.Change) -> object:
    """The module a not-covered observation stopped on (None: it is not covered for another reason)."""
    value = change.after.value if change.after is not None else None
    return value.get(compare.MISSING_MODULE) if isinstance(value, dict) else None


def not_covered(changes: list[compare.Change], here: ResultSet) -> list[compare.Change]:
    """Changes made by this environment, not by the framework: the observation needed a registered companion
    that is not installed here (the plugin's record) and did not run to an `ok` outcome."""
    needed = here.environment.get(NOT_INSTALLED) or {}
    return [
        change
        for change in changes
        if change.is_breaking and change.after is not None and change.after.outcome != OK and change.probe_id in needed
    ]


def install_hint(framework: Framework, here: ResultSet) -> str:
    """One `pip install` naming every registered companion of the framework this environment lacks."""
    from packaging.requirements import InvalidRequirement, Requirement

    installed = {canonicalize_name(name) for name in here.environment.get("packages", {})}
    missing = []
    for companion in framework.companions:
        try:
            name = canonicalize_name(Requirement(companion).name)
        except InvalidRequirement:
            name = canonicalize_name(companion)
        if name not in installed:
            missing.append(f'"{companion}"' if "[" in companion else companion)
    return "pip install " + " ".join(missing)


def _compare(
    framework: Framework,
    base: ResultSet,
    here: ResultSet,
    newer: ResultSet | None = None,
    locks: tuple[Path, ...] = (),
) -> tuple[int, str]:
    """Print the gate for the covered observations and one line for the rest; the exit code and the verdict.

    Each difference is judged by compare's classifier, then by `compare.standing`: exit 1 only for a behaviour
    the installed version shows and its reference does not. `newer` is the newer neighbour cell's result set,
    where the version lies between two cells: what it already shows is "as the newer reference"."""
    from fanin.versions.upgrade import gate, proofs_at

    changes = compare.diff(base, here)
    aside = not_covered(changes, here)
    set_aside = {change.probe_id for change in aside}
    covered = [
        compare.standing(
            change, newer.observations.get(change.probe_id) if newer else None, newer.cell if newer else ""
        )
        for change in changes
        if change.probe_id not in set_aside
    ]
    lacking = [change for change in covered if change.standing == compare.Standing.NOT_COVERED]
    observed = len(here.observations) - len(aside) - len(lacking)
    against = f"{base.cell} (reference" + (f"; {newer.cell}, the newer neighbour" if newer else "") + ")"
    header = f"{against} -> {here.framework} {here.version} installed here"
    code = exits.SAME
    if covered:
        code = gate(header, covered, observed, details=True, proofs=proofs_at(covered, here))  # proven here or not
        breaking = [change.probe_id for change in covered if change.is_breaking and change.standing is None]
        if breaking:
            from fanin.versions import dependencies
            from fanin.versions.first_release import findings

            for line in dependencies.explained(framework, base, here, locks, breaking, findings()):
                print(line + "\n")
    if aside:
        needed = here.environment.get(NOT_INSTALLED) or {}
        names = sorted({name for change in aside for name in needed[change.probe_id]})
        print(
            f"fanin: {here.framework}: {len(aside)} of {len(here.observations)} observations not covered here: "
            f"they need {', '.join(names)}, not installed in this environment (the reference cell has them); "
            f"to cover them too: {install_hint(framework, here)}"
        )
    modules = sorted({str(_missing_module(change)) for change in lacking if _missing_module(change)})
    if modules:
        stopped = sum(1 for change in lacking if _missing_module(change))
        print(
            f"fanin: {here.framework}: {stopped} of {len(here.observations)} observations not covered here: "
            f"they stopped on a module this environment does not have ({', '.join(modules)}); not a regression"
        )
    earlier = [change for change in lacking if not _missing_module(change)]
    if earlier:
        print(
            f"fanin: {here.framework}: {len(earlier)} of {len(here.observations)} observations not covered here: "
            "they resume a store an earlier release wrote, and this run has one environment; "
            f"`fanin upgrade -- {framework.package}==<the version you move to> --from {here.version}` runs them"
        )
    # The verdict judges what was covered; what is not covered was named above.
    judged = [change for change in covered if change.standing != compare.Standing.NOT_COVERED]
    tally = ", ".join(
        f"{sum(c.label == label for c in judged)} {label}" for label in dict.fromkeys(c.label for c in judged)
    )
    if not any(change.is_breaking for change in judged):
        verdict = f"same behaviour as the reference in all {observed} observations covered here"
        verdict += f" ({tally})" if tally else ""
    elif not any(change.gates for change in judged):
        verdict = f"no regression in {observed} observations covered here ({tally})"
    else:
        verdict = f"{tally} in {observed} observations covered here"
    if aside:
        verdict += f"; {len(aside)} not covered here (packages missing, see above)"
    if lacking:
        verdict += f"; {len(lacking)} not covered here (a module or an earlier release needed, see above)"
    return code, verdict
