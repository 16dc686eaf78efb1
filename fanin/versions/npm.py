"""Node cells' releases and locks, from the npm registry through `npm` itself.

Releases: `npm view <package> time --json` (the publish moment of every version), the same
`Release` records PyPI gives (fanin.versions.pypi), so add-cell and upgrade treat both alike.

Locks: a Node cell is pinned by `reference/locks/<cell>/package.json` (exact versions: the
framework and its companions, peer dependencies such as @langchain/core included) and its
`package-lock.json`. npm has no `--exclude-newer`, but it has `--before=<date>`: the whole tree
is resolved with only versions published before the cell's `exclude_newer`, so an as-released
cell gets the peer and transitive versions its users got that week. Resolution is two passes:
the framework alone (npm picks the peers its ranges allow as of the date), then every companion
pinned to the exact version the first pass chose, so package.json states them. The project's
`.npmrc` (repo root) is copied beside them; it keeps registry URLs in the lock so a later
`npm ci --offline` from the cache works.

A companion bisect's step (a cell with `matrix.Pin`s) names each pinned package by its registry tarball,
which `--before` does not filter, and forces it everywhere in the tree with `overrides`: only the pinned
package is let in past the cell's moment (as uv's `--exclude-newer-package` does for a Python cell), and a
companion the framework depends on itself (@langchain/langgraph-checkpoint) is the one the framework loads,
not a second copy beside it.

A framework's storage companions (`storage` in matrix.toml) are picked between the two passes by their peer ranges
(fanin.versions.npm_storage): the newest release by the cell's moment whose peers accept the first pass's tree; one
none of whose releases does is left out, its reason in the package.json's `fanin.left_out`.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from packaging.version import InvalidVersion, Version

from fanin.model.errors import EnvironmentFault
from fanin.model.matrix import LOCKS, Cell, Matrix
from fanin.model.source import REPO_ROOT
from fanin.run import node_release
from fanin.versions import npm_storage
from fanin.versions.pypi import RegistryError, RegistryUnreachable, Release

NPMRC = REPO_ROOT / ".npmrc"


class NpmLockError(EnvironmentFault):
    """npm could not resolve a Node cell; the message carries npm's last lines."""


def npm_binary() -> str:
    found = shutil.which("npm")
    if found is None:
        raise EnvironmentFault("npm is not installed; Node cells need Node 20+ and npm (see the README)")
    return found


def _npm(args: list[str], cwd: Path | None = None, step: str = "npm") -> str:
    done = subprocess.run(
        [npm_binary(), *args], cwd=cwd, capture_output=True, text=True, timeout=600, env=node_release.tool_environ()
    )
    if done.returncode != 0:
        tail = " | ".join(line.strip() for line in (done.stderr or done.stdout).strip().splitlines()[-3:])
        raise NpmLockError(f"{step} failed (exit {done.returncode}): {tail}")
    return done.stdout


def releases(package: str, prereleases: bool = False) -> list[Release]:
    """Every published version, oldest first (by version), with its publish time; final releases unless asked."""
    try:
        text = _npm(["view", package, "time", "--json"], step=f"npm view {package}")
    except NpmLockError as exc:
        if "E404" in str(exc):
            raise RegistryError(f"the npm registry has no package {package!r}") from None
        raise RegistryUnreachable(f"cannot ask the npm registry about {package} ({exc})") from None
    times = json.loads(text or "{}")
    found: list[tuple[Version, Release]] = []
    for version, moment in times.items():
        if version in ("created", "modified"):
            continue
        try:
            parsed = Version(version)
        except InvalidVersion:
            continue
        early = "-" in version or parsed.is_prerelease
        if early and not prereleases:
            continue
        uploaded = str(moment).replace("+00:00", "Z")
        found.append((parsed, Release(version, uploaded, False, early)))
    return [release for _, release in sorted(found, key=lambda pair: pair[0])]


def resolve(package: str, wanted: str) -> Release:
    """An exact version, or `latest` (the newest final release), as fanin.versions.pypi.resolve."""
    known = releases(package, prereleases=True)
    final = [r for r in known if not r.prerelease]
    if wanted.lower() == "latest":
        if not final:
            raise RegistryError(f"{package} has no release on the npm registry")
        return final[-1]
    for release in known:
        if release.version == wanted:
            return release
    raise RegistryError(
        f"{package} has no release {wanted} on npm (newest is {final[-1].version if final else 'none'})"
    )


def lock_dir(cell: Cell) -> Path:
    return LOCKS / cell.id


def tarball(package: str, version: str) -> str:
    """The registry's tarball address of one release (`npm view <package>@<version> dist.tarball`)."""
    url = _npm(["view", f"{package}@{version}", "dist.tarball"], step=f"npm view {package}@{version}").strip()
    if not url:
        raise RegistryError(f"{package} has no release {version} on npm")
    return url


def _manifest(
    cell: Cell,
    dependencies: dict[str, str],
    overrides: dict[str, str] | None = None,
    left_out: dict[str, str] | None = None,
) -> str:
    data: dict[str, object] = {
        "name": f"fanin-{cell.id}",
        "private": True,
        "description": f"fanin Node cell {cell.id} ({cell.resolution}, as of {cell.exclude_newer}); made by `./noxw -s lock -- {cell.id}`",
        "type": "module",
        "dependencies": dict(sorted(dependencies.items())),
    }
    if overrides:
        data["overrides"] = dict(sorted(overrides.items()))
    if left_out:  # npm ignores the field; the probes that need a left-out companion read why (n/a with it)
        data["fanin"] = {"left_out": dict(sorted(left_out.items()))}
    return json.dumps(data, indent=2) + "\n"


def _install(directory: Path, cell: Cell, manifest: str) -> dict[str, object]:
    (directory / "package.json").write_text(manifest, encoding="utf-8")
    (directory / "package-lock.json").unlink(missing_ok=True)
    _npm(
        [
            "install",
            "--package-lock-only",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            f"--before={cell.exclude_newer}",
        ],
        cwd=directory,
        step=f"locking {cell.id}",
    )
    lock: dict[str, object] = json.loads((directory / "package-lock.json").read_text(encoding="utf-8"))
    return lock


def resolve_files(cell: Cell, matrix: Matrix, out_dir: Path | None = None) -> dict[Path, str]:
    """package.json, package-lock.json (and the .npmrc beside them) of a Node cell, resolved as of its date.

    Written to `out_dir` (default: the cell's reference/locks/<cell>/; an upgrade or bisect keeps its own).
    """
    with tempfile.TemporaryDirectory(prefix="fanin-npm-") as tmp:
        directory = Path(tmp)
        if NPMRC.is_file():
            shutil.copy(NPMRC, directory / ".npmrc")
        held = {pin.package: tarball(pin.package, pin.version) for pin in cell.pins}
        overrides = {package: f"${package}" for package in held}  # the top-level spec, everywhere in the tree
        first = _install(directory, cell, _manifest(cell, {cell.framework.package: cell.version, **held}, overrides))
        packages = first.get("packages", {})
        assert isinstance(packages, dict)
        pinned = {cell.framework.package: cell.version, **held}
        for companion in cell.framework.companions:
            if companion in held:
                continue
            entry = packages.get(f"node_modules/{companion}")
            if not isinstance(entry, dict) or "version" not in entry:
                raise NpmLockError(f"locking {cell.id}: npm did not resolve the companion {companion}")
            pinned[companion] = str(entry["version"])
        left_out: dict[str, str] = {}
        for picked in _storage(cell, packages, held):
            if picked.version is None:
                left_out[picked.package] = picked.reason
            else:
                pinned[picked.package] = picked.version
        manifest = _manifest(cell, pinned, overrides, left_out)
        _install(directory, cell, manifest)
        out = out_dir or lock_dir(cell)
        files = {
            out / "package.json": manifest,
            out / "package-lock.json": (directory / "package-lock.json").read_text(encoding="utf-8"),
        }
        if NPMRC.is_file():
            files[out / ".npmrc"] = NPMRC.read_text(encoding="utf-8")
        return files


def _moment(text: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _storage(cell: Cell, packages: dict[str, object], held: dict[str, str]) -> list[npm_storage.Picked]:
    """The framework's storage companions as the rule picks them against the first pass's tree (a held pin wins)."""
    tree = {
        key.removeprefix("node_modules/"): str(entry["version"])
        for key, entry in packages.items()
        if key.startswith("node_modules/") and "/node_modules/" not in key and isinstance(entry, dict) and "version" in entry
    }  # fmt: skip
    moment = _moment(cell.exclude_newer)
    picked = []
    for package in cell.framework.storage:
        if package in held:
            continue
        candidates = [r.version for r in releases(package) if _moment(r.uploaded) <= moment]
        pinned = frozenset({cell.framework.package, *cell.framework.companions})
        peers = npm_storage.peers_of(package, lambda args, step: _npm(args, step=step), pinned)
        picked.append(npm_storage.pick(package, candidates, peers, tree, cell.exclude_newer[:10]))
    return picked
