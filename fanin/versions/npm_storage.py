"""A Node framework's storage companions, picked for one cell by their peer ranges.

A storage companion (`storage = [...]` in matrix.toml: @langchain/langgraph-checkpoint-postgres, @mastra/libsql) is
not a peer of the framework, so npm resolving "as of the cell's date" takes its newest release, whose peers may
refuse the cell's framework (ERESOLVE) or whose code was never meant for it. The rule: the newest final release
published on or before the cell's moment whose `peerDependencies` accept the version the cell's tree holds of
every peer it names (the framework and its other pins among them; a peer the tree lacks is npm's to add), and whose
plain dependency on a pinned package, if it has one, accepts the pinned version (else it brings a copy of its own). Where
none does, the companion is left out of the cell and the reason is written into its package.json (`fanin.left_out`),
where the probes that need it read it and are n/a with it.

Ranges are decided by the semver module bundled with the npm that locks the cell, called as npm's own peer check
calls it (`satisfies(version, range, loose)`, @npmcli/arborist's dep-valid), so fanin and npm never disagree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from fanin.model.errors import EnvironmentFault

Peers = dict[str, dict[str, str]]  # version -> its peerDependencies
Satisfies = Callable[[list[tuple[str, str]]], list[bool]]

_CHECK = (
    "const semver = require(process.argv[1]);"
    "const pairs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
    "process.stdout.write(JSON.stringify(pairs.map(([v, r]) => semver.satisfies(v, r, true))));"
)


@dataclass(frozen=True)
class Picked:
    """The version a cell pins of one storage companion, or (version None) why it has none."""

    package: str
    version: str | None
    reason: str = ""


def peers_of(package: str, npm: Callable[[list[str], str], str], pinned: frozenset[str] = frozenset()) -> Peers:
    """Every version's peerDependencies, in one registry call: the whole manifests (`npm view PKG@>=0.0.0 --json`).

    A plain dependency on a package the cell pins (the framework, its companions) counts as a peer: a release that
    asks its own @mastra/core ^0.9.4 (@mastra/libsql 0.0.4) installs a second copy beside the cell's, not the one the
    probes run, so it does not accept the cell's.

    Naming the fields (`… version peerDependencies`) prints bare version strings where some versions lack the field
    (@mastra/libsql's), which read as "no peers" would accept every version."""
    data = json.loads(npm(["view", f"{package}@>=0.0.0", "--json"], f"npm view {package}") or "[]")
    rows = data if isinstance(data, list) else [data]  # one matching version is printed as an object
    if not all(isinstance(row, dict) and "version" in row for row in rows):
        raise EnvironmentFault(f"npm view {package}: expected a manifest per version, got {str(data)[:200]}")
    return {
        str(row["version"]): {
            **{name: wanted for name, wanted in (row.get("dependencies") or {}).items() if name in pinned},
            **(row.get("peerDependencies") or {}),
        }
        for row in rows
    }


def _semver_module() -> Path:
    """The semver module npm itself resolves peers with: beside the npm CLI the machine runs."""
    npm = shutil.which("npm")
    if npm is not None:
        for folder in Path(os.path.realpath(npm)).parents:
            found = folder / "node_modules" / "semver"
            if (found / "package.json").is_file():
                return found
    raise EnvironmentFault("cannot find the semver module bundled with npm, which fanin checks peer ranges with")


def satisfies(pairs: list[tuple[str, str]]) -> list[bool]:
    """Whether each (version, range) pair matches, by npm's own semver (loose, as npm's peer check)."""
    if not pairs:
        return []
    node = shutil.which("node")
    if node is None:
        raise EnvironmentFault("node is not installed; Node cells need Node 20+ and npm (see the README)")
    done = subprocess.run(
        [node, "-e", _CHECK, str(_semver_module())],
        input=json.dumps(pairs), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise EnvironmentFault(f"checking peer ranges with npm's semver failed: {done.stderr.strip()[-300:]}")
    answers = json.loads(done.stdout)
    assert isinstance(answers, list)
    return [bool(a) for a in answers]


def pick(
    package: str, candidates: list[str], peers: Peers, tree: Mapping[str, str], day: str, check: Satisfies = satisfies
) -> Picked:
    """The newest of `candidates` (final releases published by `day`, oldest first) whose peers accept `tree`.

    `tree` is what the cell's first resolution holds: package -> version (the framework, its pins, their tree)."""
    newest = list(reversed(candidates))
    asked = [(version, name, wanted) for version in newest for name, wanted in peers.get(version, {}).items()]
    held = [(version, name, wanted) for version, name, wanted in asked if name in tree]
    answers = dict(zip(((v, n) for v, n, _ in held), check([(tree[n], w) for _, n, w in held]), strict=True))
    for version in newest:
        if all(answers.get((version, name), True) for name in peers.get(version, {})):
            return Picked(package, version)
    if not newest:
        return Picked(package, None, f"no {package} release by {day}")
    first = newest[0]
    refused = [f"{name} {tree[name]}" for name in peers.get(first, {}) if not answers.get((first, name), True)]
    asks = ", ".join(f"{name} {peers[first][name]}" for name in peers.get(first, {}) if name in tree)
    said = f"no {package} release by {day} accepts {' and '.join(refused)} (the newest, {first}, asks {asks})"
    return Picked(package, None, said)
