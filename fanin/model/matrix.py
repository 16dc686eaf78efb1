"""reference/matrix.toml: the cells fanin runs, validated before anything is installed.

A cell is one framework at one exact version on one Python, locked as of one
moment (`exclude_newer`). Every mistake in the file is reported as one line
naming the cell and the field.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from fanin.model import runtime as runtimes
from fanin.model.errors import FaninError
from fanin.model.names import canonicalize_name
from fanin.model.source import INSTALLED, REPO_ROOT, shown
from fanin.model.suggest import LIST_CELLS, did_you_mean

# FANIN_MATRIX points at another matrix file (a trial matrix, or the tests' broken ones).
# The layout of reference/, in one place: the data fanin vouches for and what is rendered from it.
REFERENCE = REPO_ROOT / "reference"
MATRIX_FILE = Path(os.environ.get("FANIN_MATRIX", REFERENCE / "matrix.toml"))
LOCKS = REFERENCE / "locks"
REFERENCE_RESULTS = REFERENCE / "results"
BISECT_FINDINGS = REFERENCE / "bisect.json"
MITIGATIONS = REFERENCE / "mitigations.toml"
SENSITIVITY = REFERENCE / "sensitivity.toml"  # patches each probe must notice (fanin sensitivity)
TOPICS = REFERENCE / "topics.toml"  # the topic registry (fanin.model.topics)
_RENDERED = REFERENCE  # an installed fanin never writes into its own package: see REPORTS below
REFERENCE_REPORT = _RENDERED / "REPORT.md"
REFERENCE_CHECKLIST = _RENDERED / "CHECKLIST.md"
# FANIN_REPORTS moves everything local runs write (results, logs, html) elsewhere, e.g. a CI artifacts dir.
# An installed fanin writes beside where it is run, never inside site-packages.
REPORTS = Path(os.environ.get("FANIN_REPORTS", (Path.cwd() / "fanin-reports") if INSTALLED else REPO_ROOT / "reports"))
RUN_RESULTS = REPORTS / "results"
if INSTALLED:
    REFERENCE_REPORT, REFERENCE_CHECKLIST = REPORTS / "REPORT.md", REPORTS / "CHECKLIST.md"

RESOLUTIONS = ("as-released", "current")
_CELL_KEYS = {"framework", "version", "python", "resolution", "exclude_newer", "note", "env"}
_REQUIRED = ("framework", "version", "resolution", "exclude_newer")
_TOP_KEYS = {"defaults", "frameworks", "harness", "cell"}
_FRAMEWORK_KEYS = {
    "package", "display", "import", "companions", "runtime", "repository", "related", "port_of", "env", "live_threads",
    "storage",
}  # fmt: skip
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Where a framework's probes run is its `runtime` (fanin.model.runtime: "python", "node"); a runtime's settings
# (a Node cell's `node` release) may be set on the framework or on one cell.


class MatrixError(FaninError):
    """matrix.toml is malformed; the message names the cell and field."""


@dataclass(frozen=True)
class Framework:
    """One entry of the framework registry ([frameworks.<key>] in matrix.toml).

    `key` is the probe-id prefix and the suite directory (suites/<key>/); `package` the
    distribution on PyPI; `display` the name the report shows; `import_check` a module
    that must import before any probe runs (a cell where it fails says so, with the
    error); `companions` are locked into every cell beside the framework, resolved as of
    the cell's date: the client side of the backends its probes run on. `storage` are packages that are not
    its peers (a checkpoint saver, a storage adapter) picked per cell by their own peer ranges: the newest release
    by the cell's date whose peers accept the cell's tree, else left out with the reason (fanin.versions.npm_storage).
    """

    key: str
    package: str
    display: str
    import_check: str
    companions: tuple[str, ...] = ()
    runtime: str = "python"
    repository: str = ""  # owner/name on GitHub: the repository its probes cite
    related: tuple[str, ...] = ()  # other repositories its probes may cite (a sister SDK, the docs' source)
    port_of: str = ""  # the framework this one ports to another runtime: probes with the same case line up
    settings: tuple[tuple[str, str], ...] = ()  # the runtime's optional fields (`node = "22.13.x"`), sorted
    env: tuple[tuple[str, str], ...] = ()  # variables its probes run with (`env = { NAME = "value" }`), sorted
    live_threads: bool = False  # its probes resume stores an earlier release wrote (Matrix.earlier's interpreter)
    storage: tuple[str, ...] = ()  # storage companions, picked per cell by their peer ranges (runtime.picks_storage)

    @property
    def runs_on(self) -> runtimes.Runtime:
        """The runtime's data (fanin.model.runtime), by the `runtime` field."""
        return runtimes.get(self.runtime)


def _path_safe(package: str) -> str:
    """A pinned package in a cell id, which names a directory: an npm scope's `@` and `/` dropped."""
    return canonicalize_name(package).lstrip("@").replace("/", "-")


@dataclass(frozen=True)
class Pin:
    """A companion held at one version in a cell outside the matrix (a companion bisect's step): the framework
    stays at the cell's version, the companion moves, and only the companion may be newer than the cell's moment."""

    package: str
    version: str
    exclude_newer: str  # the companion release's own as-released moment (uv's --exclude-newer-package)

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class Cell:
    framework: Framework
    version: str
    python: str
    resolution: str
    exclude_newer: str
    note: str
    default_python: str
    settings: tuple[tuple[str, str], ...] = ()  # the cell's own runtime settings, over its framework's
    own_env: tuple[tuple[str, str], ...] = ()  # the cell's own `env`, over its framework's
    pins: tuple[Pin, ...] = ()  # companions held at a version (a companion bisect); never in matrix.toml

    @property
    def env(self) -> dict[str, str]:
        """The variables this cell's probes run with: its framework's `env`, then its own (a cell's value wins)."""
        return {**dict(self.framework.env), **dict(self.own_env)}

    @property
    def id(self) -> str:
        base = f"{self.framework.key}-{self.version}"
        base = base if self.python == self.default_python else f"{base}-py{self.python}"
        return base + "".join(f"+{_path_safe(pin.package)}-{pin.version}" for pin in self.pins)

    @property
    def requirement(self) -> str:
        return f"{self.framework.package}=={self.version}"

    @property
    def lock_path(self) -> Path:
        """The file whose SHA-256 a result set records: uv's lock, or a Node cell's package-lock.json."""
        return self.framework.runs_on.lock_path(LOCKS, self.id)

    def setting(self, name: str) -> str | None:
        """A runtime setting (`node`): the cell's own, else its framework's, else None."""
        return dict(self.settings).get(name) or dict(self.framework.settings).get(name)

    @property
    def reference_path(self) -> Path:
        return REFERENCE_RESULTS / f"{self.id}.json"

    @property
    def results_path(self) -> Path:
        return RUN_RESULTS / f"{self.id}.json"

    @property
    def sort_key(self) -> tuple[str, Version, str]:
        return (self.framework.key, Version(self.version), self.python)


@dataclass(frozen=True)
class Matrix:
    cells: tuple[Cell, ...]
    frameworks: dict[str, Framework]
    default_python: str
    harness_requirements: tuple[str, ...]

    def cell(self, cell_id: str) -> Cell:
        for cell in self.cells:
            if cell.id == cell_id:
                return cell
        raise MatrixError(f"no cell {cell_id!r} in the matrix{did_you_mean(cell_id, self.ids(), LIST_CELLS)}")

    def ids(self) -> list[str]:
        """Every cell id, in the file's order (what a mistyped id is matched against)."""
        return [c.id for c in self.cells]

    def of(self, framework: str) -> list[Cell]:
        return sorted((c for c in self.cells if c.framework.key == framework), key=lambda c: c.sort_key)

    def newest(self, framework: str) -> Cell:
        cells = self.of(framework)
        if not cells:
            raise MatrixError(f"the matrix has no {framework} cell")
        return cells[-1]

    def earlier(self, cell: Cell) -> Cell | None:
        """The release whose stores `cell`'s live-thread probes resume: the matrix's newest cell of the same framework
        and Python older than `cell` (a bisect step or an upgrade's release outside the matrix gets the matrix cell
        below it, so a bisect holds the writer at its good end); None where the framework has no such probes."""
        if not cell.framework.live_threads:
            return None
        older = [
            c for c in self.of(cell.framework.key)
            if c.python == cell.python and not c.pins and Version(c.version) < Version(cell.version)
        ]  # fmt: skip
        return older[-1] if older else None

    def smoke(self) -> set[str]:
        return {self.newest(key).id for key in self.frameworks if self.of(key)}

    def framework(self, name: str) -> Framework:
        """Accept the key (`adk`) or the package, by PyPI's name rules (`google-adk`, `google_adk`, `Google.ADK`)."""
        wanted = canonicalize_name(name)
        for fw in self.frameworks.values():
            if wanted in (canonicalize_name(fw.key), canonicalize_name(fw.package)):
                return fw
        known = ", ".join(f"{fw.key} ({fw.package})" for fw in self.frameworks.values())
        names = [n for fw in self.frameworks.values() for n in (fw.key, fw.package)]
        raise MatrixError(f"unknown framework {name!r}{did_you_mean(name, names, f'expected one of {known}')}")

    def make_cell(self, framework: Framework, version: str, python: str, resolution: str, exclude_newer: str) -> Cell:
        """A cell outside the matrix file (an upgrade check), built by the same rules."""
        return Cell(framework, version, python, resolution, exclude_newer, "", self.default_python)

    def cell_id(self, framework: Framework, version: str, python: str | None = None) -> str:
        """The id a cell of this version on this Python has (`adk-1.15.1-py3.10`), whether or not the matrix holds it."""
        return self.make_cell(framework, version, python or self.default_python, "", "").id

    def named(self, word: str, python: str | None = None) -> tuple[Framework, str, str]:
        """(framework, version, Python) of a cell id (`adk-1.15.1`, `adk-1.15.1-py3.10`), in the matrix or not.

        Specs (`google-adk==1.15.1`, ranges) are read by fanin.model.focus (`report --for`, `--compare`),
        which calls this for a word without one; `python` picks a Python twin.
        """
        for fw in sorted(self.frameworks.values(), key=lambda f: -len(f.key)):  # `langgraphjs` before `langgraph`
            version, sep, twin = word.removeprefix(f"{fw.key}-").partition("-py")
            if word.startswith(f"{fw.key}-") and version[:1].isdigit():
                return fw, version, python or (twin if sep else self.default_python)
        hint = did_you_mean(word, self.ids(), f"e.g. {self.cells[0].id}; {LIST_CELLS}")
        raise MatrixError(f"{word!r} is neither PACKAGE==VERSION nor a cell id{hint}")


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MatrixError(f"{where}: expected a table")
    return value


_REPOSITORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")


def _repository(value: object, where: str) -> str:
    """owner/name as GitHub spells it (or empty: not given)."""
    if not isinstance(value, str) or (value and not _REPOSITORY.match(value)):
        raise MatrixError(f"{where}: repository {value!r} is not owner/name")
    return value


def _list(value: object, name: str, where: str) -> list[object]:
    if not isinstance(value, list):
        raise MatrixError(f"{where}: {name!r} must be a list")
    return value


def _flag(table: dict[str, Any], key: str, where: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise MatrixError(f"{where}: {key!r} must be true or false")
    return value


def _string(table: dict[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise MatrixError(f"{where}: field {key!r} is missing or not a non-empty string")
    return value


def parse(data: dict[str, Any], origin: str = "matrix.toml") -> Matrix:
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise MatrixError(f"{origin}: unknown top-level key(s) {', '.join(sorted(unknown))}")
    defaults = _table(data.get("defaults", {}), f"{origin} [defaults]")
    default_python = _string(defaults, "python", f"{origin} [defaults]")
    harness = _table(data.get("harness", {}), f"{origin} [harness]")
    harness_requirements = harness.get("requirements", [])
    if not isinstance(harness_requirements, list) or not all(isinstance(r, str) for r in harness_requirements):
        raise MatrixError(f"{origin} [harness]: 'requirements' must be a list of strings")
    frameworks: dict[str, Framework] = {}
    for key, table in _table(data.get("frameworks", {}), f"{origin} [frameworks]").items():
        where = f"{origin} [frameworks.{key}]"
        table = _table(table, where)
        allowed = _FRAMEWORK_KEYS | runtimes.settings()
        unknown = set(table) - allowed
        if unknown:
            raise MatrixError(
                f"{where}: unknown field(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(allowed))}"
            )
        companions = table.get("companions", [])
        if not isinstance(companions, list) or not all(isinstance(c, str) and c.strip() for c in companions):
            raise MatrixError(f"{where}: 'companions' must be a list of requirement strings")
        runtime = table.get("runtime", "python")
        if runtime not in runtimes.names():
            raise MatrixError(f"{where}: runtime {runtime!r}; expected one of {', '.join(runtimes.names())}")
        frameworks[key] = Framework(
            key,
            _string(table, "package", where),
            _string(table, "display", where),
            _string(table, "import", where),
            tuple(companions),
            runtime,
            settings=_settings(table, runtimes.get(runtime), where),
            repository=_repository(table.get("repository", ""), where),
            related=tuple(_repository(r, where) for r in _list(table.get("related", []), "related", where)),
            port_of=str(table.get("port_of", "")),
            env=_env(table, runtimes.get(runtime), where),
            live_threads=_flag(table, "live_threads", where),
            storage=_storage(table, runtimes.get(runtime), where),
        )
    for key, fw in frameworks.items():
        if fw.port_of and (fw.port_of == key or fw.port_of not in frameworks):
            raise MatrixError(
                f"{origin} [frameworks.{key}]: port_of {fw.port_of!r} is not another registered framework"
            )
    cells: list[Cell] = []
    seen: dict[str, int] = {}
    raw_cells = data.get("cell", [])
    if not isinstance(raw_cells, list) or not raw_cells:
        raise MatrixError(f"{origin}: no [[cell]] entries")
    for index, raw in enumerate(raw_cells, start=1):
        cell = _parse_cell(_table(raw, f"{origin} cell #{index}"), index, origin, frameworks, default_python)
        if cell.id in seen:
            raise MatrixError(f"{origin}: cell #{index} duplicates cell #{seen[cell.id]} ({cell.id})")
        seen[cell.id] = index
        cells.append(cell)
    _check_current(cells, origin)
    return Matrix(tuple(cells), frameworks, default_python, tuple(harness_requirements))


def _check_current(cells: list[Cell], origin: str) -> None:
    """Only the newest version of a framework is resolved as of today; every older one as it was released."""
    newest: dict[str, Version] = {}
    for cell in cells:
        version = Version(cell.version)
        newest[cell.framework.key] = max(newest.get(cell.framework.key, version), version)
    for cell in cells:
        is_newest = Version(cell.version) == newest[cell.framework.key]
        if cell.resolution == "current" and not is_newest:
            raise MatrixError(
                f"{origin}: {cell.id} is resolution 'current' but {cell.framework.key} "
                f"{newest[cell.framework.key]} is newer; only the newest cell of a framework is current"
            )
        if cell.resolution != "current" and is_newest:
            raise MatrixError(
                f"{origin}: {cell.id} is the newest {cell.framework.key} cell, so its resolution must be 'current'"
            )


def _settings(table: dict[str, Any], runtime: runtimes.Runtime, where: str) -> tuple[tuple[str, str], ...]:
    """The runtime settings a framework or cell sets, each valid for its runtime (one line naming the field)."""
    found = []
    for name in sorted(runtimes.settings() & set(table)):
        problem = runtime.setting_problem(name, table[name])
        if problem:
            raise MatrixError(f"{where}: {problem}")
        found.append((name, str(table[name])))
    return tuple(found)


def _storage(table: dict[str, Any], runtime: runtimes.Runtime, where: str) -> tuple[str, ...]:
    """`storage = ["@scope/name"]`: package names (no version: the rule picks it), on a runtime whose locker picks them."""
    value = table.get("storage", [])
    if value and not runtime.picks_storage:
        raise MatrixError(f"{where}: 'storage' is not picked by the {runtime.name} runtime's locker; use 'companions'")
    names = _list(value, "storage", where)
    for name in names:
        if not isinstance(name, str) or not re.fullmatch(r"(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*", name):
            raise MatrixError(f"{where}: storage {name!r} is not a package name (no version: the rule picks it)")
        if name in table.get("companions", []):
            raise MatrixError(f"{where}: {name} is both a companion and a storage companion")
    return tuple(str(name) for name in names)


def _env(table: dict[str, Any], runtime: runtimes.Runtime, where: str) -> tuple[tuple[str, str], ...]:
    """`env = { NAME = "value" }`: variable names as a shell spells them, string values (one line naming the bad one),
    on a runtime whose runner sets them."""
    value = table.get("env", {})
    if value and not runtime.takes_env:
        raise MatrixError(f"{where}: 'env' is not set by the {runtime.name} runtime's runner")
    if not isinstance(value, dict):
        raise MatrixError(f"{where}: 'env' must be a table of NAME = \"value\"")
    for name, text in value.items():
        if not _ENV_NAME.match(name):
            raise MatrixError(f"{where}: env name {name!r} is not a variable name (letters, digits, _)")
        if not isinstance(text, str):
            raise MatrixError(f"{where}: env {name} must be a string, got {text!r}")
    return tuple(sorted(value.items()))


def _parse_cell(
    raw: dict[str, Any], index: int, origin: str, frameworks: dict[str, Framework], default_python: str
) -> Cell:
    where = f"{origin} cell #{index}"
    if "framework" in raw and "version" in raw:
        where = f"{origin} cell #{index} ({raw['framework']}=={raw['version']})"
    allowed = _CELL_KEYS | runtimes.settings()
    unknown = set(raw) - allowed
    if unknown:
        raise MatrixError(
            f"{where}: unknown field(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(allowed))}"
        )
    for key in _REQUIRED:
        _string(raw, key, where)
    framework_key = raw["framework"]
    if framework_key not in frameworks:
        raise MatrixError(f"{where}: unknown framework {framework_key!r}; declared: {', '.join(sorted(frameworks))}")
    version = raw["version"]
    try:
        if str(Version(version)) != version:
            raise InvalidVersion(version)
    except InvalidVersion:
        raise MatrixError(f"{where}: version {version!r} is not an exact release like 1.2.18") from None
    resolution = raw["resolution"]
    if resolution not in RESOLUTIONS:
        raise MatrixError(f"{where}: resolution {resolution!r}; expected one of {', '.join(RESOLUTIONS)}")
    exclude_newer = raw["exclude_newer"]
    try:
        _dt.datetime.fromisoformat(exclude_newer.replace("Z", "+00:00"))
    except ValueError:
        raise MatrixError(
            f"{where}: exclude_newer {exclude_newer!r} is not an ISO date-time like 2025-06-26T17:52:04Z"
        ) from None
    python = raw.get("python", default_python)
    if not isinstance(python, str) or not python.count(".") == 1:
        raise MatrixError(f"{where}: python {python!r} must be a minor version like 3.11")
    note = raw.get("note", "")
    framework = frameworks[framework_key]
    settings = _settings(raw, framework.runs_on, where)
    return Cell(
        framework,
        version,
        python,
        resolution,
        exclude_newer,
        note,
        default_python,
        settings,
        _env(raw, framework.runs_on, where),
    )


def load(path: Path = MATRIX_FILE) -> Matrix:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MatrixError(f"{path}: no matrix file") from None
    except IsADirectoryError:
        raise MatrixError(f"{path}: is a directory, not a matrix file (check FANIN_MATRIX)") from None
    except UnicodeDecodeError as exc:
        raise MatrixError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except OSError as exc:
        raise MatrixError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise MatrixError(f"{path}: not valid TOML ({exc})") from None
    return parse(data, origin=shown(path))
