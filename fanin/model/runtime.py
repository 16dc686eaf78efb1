"""What the harness knows of a runtime from data alone: its registry's name, its lock's files, its settings.

A framework's `runtime` field in matrix.toml ("python", "node") names one `Runtime` here; every
question the harness asks of a runtime goes through it, never through a comparison of the name.
The parts that install and run a cell (`fanin.run.runtimes`) and that ask its registry and lock a
cell (`fanin.versions.registry`) are looked up by the same name, one implementation per floor.
Adding a runtime is one `Runtime` registered here, its runner and its releases registered there, and
`runtime = "<name>"` in matrix.toml: nothing else names it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


class UnknownRuntime(KeyError):
    """No runtime is registered under this name (matrix.toml's validation says so in one line first)."""


@dataclass(frozen=True)
class Runtime:
    """One runtime's data.

    `index` is the registry its frameworks release on, as messages name it ("PyPI", "npm"); `lock` the
    file under the locks directory whose SHA-256 a result set records (`{cell}` is the cell id; a Node
    cell's package.json and .npmrc sit beside its package-lock.json); `target` what its runner is given to run
    one probe (`{file}::{function}` for pytest; node --test runs whole files); `settings` the optional
    matrix.toml fields a framework or cell of this runtime may set (each checked by `setting_pattern`,
    said as `setting_example`); `imported_here` whether `probe --here` finds its frameworks by importing
    them in the user's own interpreter (fanin.project.detect); `takes_env` whether its runner sets a framework's
    or cell's `env` table (matrix.toml) in the probes' environment: one that does not refuses the table, so a
    variable is never silently dropped. `sources` are the endings of a file in its language that `fanin audit`
    hands to `inspector`, a script under suites/<framework>/ its runner's interpreter runs (fanin.project.audit);
    none for Python, whose targets audit_inspect imports in-process; `packages` the folder of a project that holds
    its installed packages (the target's own install of its framework is looked for in it). `picks_storage` whether
    its locker picks a framework's `storage` companions by their peer ranges (fanin.versions.npm_storage): one that
    does not refuses the field.
    """

    name: str
    index: str
    lock: str
    target: str = "{file}::{function}"
    settings: tuple[str, ...] = ()
    setting_pattern: str = ""
    setting_example: str = ""
    imported_here: bool = False
    takes_env: bool = False
    sources: tuple[str, ...] = ()
    inspector: str = ""
    packages: str = ""
    picks_storage: bool = False

    def lock_path(self, locks: Path, cell_id: str) -> Path:
        """The cell's lock file under `locks` (reference/locks, or an upgrade's or bisect's own)."""
        return locks / self.lock.format(cell=cell_id)

    def setting_problem(self, name: str, value: object) -> str | None:
        """Why `value` is not a valid `name` setting (one clause), or None when it is."""
        if name not in self.settings:
            return f"{name!r} is no setting of the {self.name} runtime" + (
                f" (its settings: {', '.join(self.settings)})" if self.settings else ""
            )
        if not isinstance(value, str) or not re.fullmatch(self.setting_pattern, value):
            return f"{name} {value!r} must be a version like {self.setting_example}"
        return None


PYTHON = Runtime("python", index="PyPI", lock="{cell}.txt", imported_here=True, takes_env=True)
# A Node cell's lock is a directory: package.json + package-lock.json (fanin.versions.npm). `node` names the Node
# release its npm ci and node --test use (fanin.run.node_release), the machine's own `node` when it is not set.
NODE = Runtime(
    "node",
    index="npm",
    lock="{cell}/package-lock.json",
    target="{file}",
    settings=("node",),
    setting_pattern=r"\d+(\.(\d+|x)){0,2}",
    setting_example="22.13.x or 22.13.1",
    sources=(".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"),
    inspector="audit.mjs",
    packages="node_modules",
    picks_storage=True,
)

_REGISTERED: dict[str, Runtime] = {r.name: r for r in (PYTHON, NODE)}


def register(runtime: Runtime) -> None:
    """Add (or replace) a runtime: `runtime = "<name>"` in matrix.toml then means it."""
    _REGISTERED[runtime.name] = runtime


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def names() -> tuple[str, ...]:
    return tuple(_REGISTERED)


def settings() -> frozenset[str]:
    """Every optional field some registered runtime accepts (a framework or cell may carry it)."""
    return frozenset(s for r in _REGISTERED.values() for s in r.settings)


def get(name: str) -> Runtime:
    try:
        return _REGISTERED[name]
    except KeyError:
        raise UnknownRuntime(name) from None
