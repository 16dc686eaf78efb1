"""A fresh machine, proven: the README's set-up in a new clone, with nothing an earlier run left.

A fresh clone is not a fresh machine: caches (uv's, npm's), fanin's runtime directory (pgserver's copy and
template), /tmp and the home directory keep what earlier runs made, and a CI run on such a machine passed
while a new machine lost every PostgreSQL cell. So this check makes everything a run may read new and empty:
a clone of the commit under test, a home directory, TMPDIR, every XDG_* directory, and runs in it

  - a PostgreSQL cell (`./noxw -s "probe(<cell>)"`: the harness's own environment, the cell's venv, the server),
  - a Node cell (`npm ci` from an empty npm cache),
  - `fanin probe --here` in an app's venv (pip-installed fanin from the clone, a framework at a reference version),

once as root and once as an unprivileged user (created with useradd when missing; run as another user, the
check makes that user's pass alone and says root's was not run) who owns its clone and sees
nothing of root's: its PATH has only the system's directories, its Python is the system's, and of the
environment it keeps only how the machine reaches its registries (CA bundles, proxies). Each command must
exit 0; afterwards no process of the pass may be running and no server directory left. It prints one line per
command with its time and what the pass downloaded (the size of its caches), then removes everything.

Run by `./noxw -s fresh` (and by `./noxw -s tests` in CI); standard library only, so any Python 3.11 runs it.
Exit 0 when every pass held, 1 when one did not, 2 on bad arguments, 3 when it could not set a pass up.
"""

from __future__ import annotations

import argparse
import os
import pwd
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_ALIVE = runpy.run_path(str(ROOT / "fanin" / "run" / "memory.py"))["_alive"]  # fanin.run.memory: standard library only
USER = "fanin-fresh"  # the unprivileged account the second pass runs as
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEFAULT_CELLS = ("langgraph-1.2.24", "langgraphjs-1.7.3")  # a PostgreSQL cell on the default Python, a Node cell
DEFAULT_HERE = "pydantic_graph-2.68.0"  # probe --here in an app venv at this reference cell's version
KEPT_VARIABLES = ("LANG", "LC_ALL", "CI", "TERM")  # the rest of the unprivileged user's environment is new


def _network_setting(name: str) -> bool:
    """How this machine reaches its registries (CA bundles, proxies): the machine's, given to every process."""
    upper = name.upper()
    return upper.endswith("_PROXY") or any(part in upper for part in ("CERT", "CA_BUNDLE", "SSL_", "CA_CERTS"))


@dataclass
class Pass:
    """One run of the checks as one account, in directories of its own."""

    who: str  # "root" or the unprivileged user's name
    base: Path
    uid: int
    gid: int
    lines: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    began: float = field(default_factory=time.time)  # the wall clock: what the pass left is newer than this

    @property
    def _switch(self) -> bool:
        """Whether commands run as another account than this process's (root running the unprivileged pass)."""
        return self.uid != os.geteuid()

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def tmp(self) -> Path:
        return self.base / "tmp"

    @property
    def clone(self) -> Path:
        return self.base / "clone"

    @property
    def logs(self) -> Path:
        return self.base / "logs"

    def env(self) -> dict[str, str]:
        xdg = {
            name: str(self.base / "xdg" / name.lower())
            for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR")
        }
        if self.uid == 0:  # root keeps the machine's environment (PATH, pyenv, pip's settings), less any run's own
            kept = {
                name: value
                for name, value in os.environ.items()
                if not name.startswith(("FANIN_", "NOX_", "UV_", "VIRTUAL_ENV", "PYTEST_", "XDG_", "NPM_CONFIG_"))
                and name not in ("PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX")
            }
            kept["PATH"] = os.pathsep.join(  # not the outer run's tools and harness (./noxw and uv put them first)
                entry for entry in kept.get("PATH", SYSTEM_PATH).split(os.pathsep) if not entry.startswith(str(ROOT))
            )
        else:  # a new user on a fresh machine: the system's PATH, the machine's network settings, nothing of root's
            kept = {
                name: value
                for name, value in os.environ.items()
                if name in KEPT_VARIABLES or (_network_setting(name) and not value.startswith(str(Path.home())))
            }
            kept["PATH"] = SYSTEM_PATH
            kept["USER"] = kept["LOGNAME"] = self.who
        return {**kept, **xdg, "HOME": str(self.home), "TMPDIR": str(self.tmp)}

    def make(self) -> None:
        for path in (
            self.base,
            self.home,
            self.tmp,
            self.logs,
            *(Path(v) for k, v in self.env().items() if k.startswith("XDG_")),
        ):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chown(path, self.uid, self.gid)

    def run(self, name: str, command: list[str], cwd: Path | None = None) -> bool:
        """One command as this pass's account, its output in logs/<name>.log; a line with its exit and time."""
        log = self.logs / f"{name}.log"
        started = time.monotonic()
        with log.open("wb") as out:
            os.chown(log, self.uid, self.gid)
            process = subprocess.Popen(
                command,
                cwd=cwd or self.clone,
                env=self.env(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                user=self.uid if self._switch else None,
                group=self.gid if self._switch else None,
                extra_groups=[] if self._switch else None,
            )
            try:
                code = process.wait()
            except BaseException:  # Ctrl-C or SIGTERM to the check: ./noxw ends its session as on Ctrl-C; wait for it
                process.send_signal(signal.SIGTERM)
                process.wait()
                raise
        seconds = time.monotonic() - started
        self.lines.append(f"{self.who}: {name}: exit {code} in {seconds:.0f} s")
        if code != 0:
            tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-25:]
            self.failed.append(f"{self.who}: {name} exited {code}:\n    " + "\n    ".join(tail))
        return code == 0


def _git(*args: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:  # git's own reason, in the one line the check's caller reads
        raise OSError(f"git {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    return done.stdout.strip()


def _commit_under_test() -> tuple[str, str]:
    """The commit to clone: HEAD, or the work tree's tracked changes on top of it (`git stash create`)."""
    clean = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=ROOT, capture_output=True).returncode == 0
    if clean:
        return _git("rev-parse", "HEAD"), "HEAD"
    stashed = _git("-c", "user.name=fanin", "-c", "user.email=fanin@localhost", "stash", "create")
    return stashed, "the work tree's tracked changes on HEAD (untracked files are not part of it)"


def _unprivileged() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam(USER)
    except KeyError:
        # root's PATH may lack the sbin directories (`su` without `-`, a CI runner's own PATH): look there too
        useradd = shutil.which("useradd", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))
        if useradd is None:
            raise OSError(
                f"useradd is not installed (looked on PATH, in /usr/sbin and /sbin) to create {USER}"
            ) from None
        subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(USER)
    return entry.pw_uid, entry.pw_gid


def _du(path: Path) -> int:
    total = 0
    for item in path.rglob("*") if path.exists() else ():
        try:
            if item.is_file() and not item.is_symlink():
                total += item.stat().st_size
        except OSError:
            continue
    return total


def _exclude_newer(cell: str, clone: Path) -> tuple[str, str]:
    """The framework's PyPI name, version and its lock's moment for a reference cell, from the clone's matrix."""
    matrix = tomllib.loads((clone / "reference" / "matrix.toml").read_text(encoding="utf-8"))
    for entry in matrix["cell"]:
        if f"{entry['framework']}-{entry['version']}" == cell and "python" not in entry:
            package = matrix["frameworks"][entry["framework"]]["package"]
            return f"{package}=={entry['version']}", entry["exclude_newer"]
    raise SystemExit(f"fanin: error: {cell} is not a cell of reference/matrix.toml on the default Python")


# What a pass's TMPDIR may keep: fanin's pgserver runtime directory (the server's copy and the template database,
# kept for the next run, per user: fanin.run.services.runtime_dir) and uv's own lock files (uv never removes them).
KEPT_IN_TMPDIR = ("fanin-pgserver-*", "uv-*.lock")


def _leftovers(one: Pass) -> list[str]:
    """Processes of the pass still running, server directories it left in memory or its TMPDIR, and anything
    else in its TMPDIR but KEPT_IN_TMPDIR (a framework's lock files, Node's compile cache: a cell's run has a
    TMPDIR of its own, removed with it)."""
    found = []
    if one.tmp.exists():
        for entry in sorted(one.tmp.iterdir()):
            judged = entry.match("fanin-scratch-*") or entry.match("fanin-pg-*")  # by their owner, below
            if not judged and not any(entry.match(kept) for kept in KEPT_IN_TMPDIR):
                found.append(f"left in its TMPDIR: {entry}")
    if one._switch:
        alive = subprocess.run(["pgrep", "-u", str(one.uid), "-a"], capture_output=True, text=True).stdout.strip()
        if alive:
            found.append(f"processes still running: {alive}")
    for root in (Path("/dev/shm"), one.tmp):
        for pattern, what in (("fanin-pg-*", "a server directory"), ("fanin-scratch-*", "a cell's scratch")):
            for entry in root.glob(pattern) if root.exists() else ():
                made = entry.stat()
                if made.st_uid != one.uid or made.st_mtime < one.began or _owner_alive(entry):
                    continue  # another run's beside the pass (made before it, by another user, or still running)
                found.append(f"{what} left behind: {entry}")
    return found


def _owner_alive(entry: Path) -> bool:
    """The directory's harness process still runs (its pid is in the name: fanin-scratch-<pid>-…, fanin-pg-<pid>-…).
    Every command of a pass has ended when this is asked (./noxw waits for every process below it), so a live
    owner is another run's on the same machine (a CI run beside the tests of another checkout), not a leftover."""
    pid = entry.name.split("-")[2]
    return pid.isdigit() and _ALIVE(int(pid))


def run_pass(
    one: Pass, commit: str, bundle: Path, ref: str, cells: tuple[str, ...], here: str, main_job: bool = False
) -> None:
    one.make()
    one.clone.mkdir(mode=0o755)
    os.chown(one.clone, one.uid, one.gid)
    if not one.run("clone", ["git", "init", "--quiet"]) or not one.run(
        "fetch", ["git", "fetch", "--quiet", str(bundle), ref]
    ):
        return
    if not one.run("checkout", ["git", "checkout", "--quiet", "--detach", commit]):
        return
    if main_job:  # the README's main job as a newcomer runs it: every cell, then the report
        one.run("./noxw", ["./noxw"])
    for cell in () if main_job else cells:
        one.run(f"probe({cell})", ["./noxw", "-s", f"probe({cell})"])
    requirement, moment = _exclude_newer(here, one.clone)
    uv = one.clone / ".fanin" / "tools" / "bin" / "uv"
    app = one.base / "app"
    if not uv.exists() and not one.run("tools", ["./noxw", "--list"]):
        return
    if one.run("app venv", [str(uv), "venv", "--quiet", "--python", "3.11", str(app)], cwd=one.base) and one.run(
        "app install",
        # --system-certs: a user's own uv trusts what pip and npm trust, as fanin's uv does (UV_SYSTEM_CERTS)
        [str(uv), "pip", "install", "--quiet", "--system-certs", "--python", str(app / "bin" / "python"),
         "--exclude-newer", moment, requirement, "pytest", "pytest-timeout", str(one.clone)],
        cwd=one.base,
    ):  # fmt: skip
        one.run("probe --here", [str(app / "bin" / "fanin"), "probe", "--here"], cwd=one.base)
    downloaded = _du(one.home) + _du(one.base / "xdg")
    one.lines.append(f"{one.who}: caches after the pass (uv, npm, pip): {downloaded / 1e6:.0f} MB")
    one.failed.extend(f"{one.who}: {what}" for what in _leftovers(one))


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--as", dest="who", choices=("root", "user", "both"), default="both")
    parser.add_argument("--cell", action="append", help=f"a cell to probe (default: {', '.join(DEFAULT_CELLS)})")
    parser.add_argument("--here", default=DEFAULT_HERE, help="the reference cell whose version probe --here installs")
    parser.add_argument(
        "--main-job", action="store_true", help="run the README's main job (./noxw: every cell) instead of --cell"
    )
    parser.add_argument("--keep", action="store_true", help="keep the directories (their path is printed)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupted)  # SIGTERM ends what runs as Ctrl-C does, then cleans up
    try:
        commit, what = _commit_under_test()
    except OSError as exc:
        print(f"fanin: error: could not name the commit under test: {exc}", file=sys.stderr)
        return 3
    top = Path(tempfile.mkdtemp(prefix="fanin-fresh-"))
    top.chmod(0o755)  # the unprivileged pass must reach its own directory inside
    print(f"fanin: fresh machine: {what} ({commit[:12]}) in {top}", flush=True)
    bundle = top / "source.bundle"
    passes: list[Pass] = []
    started = time.monotonic()
    try:
        ref = f"refs/fanin-fresh/{os.getpid()}"  # a bundle carries refs: the commit under test gets one briefly
        _git("update-ref", ref, commit)
        try:
            _git("bundle", "create", "--quiet", str(bundle), ref)
        finally:
            _git("update-ref", "-d", ref)
        bundle.chmod(0o644)
        if os.geteuid() != 0:  # an unprivileged run proves its own account's pass; the root pass needs root
            print("fanin: fresh machine: root's pass NOT RUN: this check runs as an unprivileged user", flush=True)
            me = pwd.getpwuid(os.geteuid())
            passes.append(Pass(me.pw_name, top / "user", me.pw_uid, me.pw_gid))
        else:
            if args.who in ("root", "both"):
                passes.append(Pass("root", top / "root", 0, 0))
            if args.who in ("user", "both"):
                uid, gid = _unprivileged()
                passes.append(Pass(USER, top / "user", uid, gid))
        for one in passes:
            run_pass(one, commit, bundle, ref, tuple(args.cell or DEFAULT_CELLS), args.here, args.main_job)
            for line in one.lines:
                print(f"fanin: fresh machine: {line}", flush=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"fanin: error: could not set up the fresh-machine check: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt as exc:
        print(f"fanin: fresh machine: interrupted by {exc or 'SIGINT'}; its directories removed", file=sys.stderr)
        return 130
    finally:
        for one in passes:
            if one._switch:  # the unprivileged account's leftovers, reported above, end with the check
                subprocess.run(["pkill", "-KILL", "-u", str(one.uid)], capture_output=True)
        if not args.keep:
            shutil.rmtree(top, ignore_errors=True)
    failures = [failure for one in passes for failure in one.failed]
    for failure in failures:
        print(f"fanin: fresh machine: FAILED {failure}", flush=True)
    verdict = "every pass held" if not failures else f"{len(failures)} failures"
    print(f"fanin: fresh machine: {verdict} in {time.monotonic() - started:.0f} s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
