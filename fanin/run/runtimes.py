"""How a cell of each runtime is installed and run, and what its lock pins: one runner per runtime.

`fanin.run.all_cells` hands every cell to the runner its framework's `runtime` names
(fanin.model.runtime holds the data side; `fanin.versions.registry` the registry side), so no
module asks which runtime a cell is. A Python cell is its uv venv and pytest (fanin.run.venvs,
fanin.run.one_cell); a Node cell its npm ci directory and node --test (fanin.run.node_cell), with
the Node release the cell names (fanin.run.node_release). The Node runner is imported only when a
Node cell runs or its lock is read (audit and diff load references too, and pay nothing for it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

from fanin.model import exits
from fanin.model.errors import FaninError
from fanin.model.matrix import Cell
from fanin.model.names import canonicalize_name
from fanin.run import venvs

if TYPE_CHECKING:  # the runners import what they run lazily: reading a lock's pins costs no pytest runner
    from fanin.run import one_cell, services


def venv_name(job: CellJob) -> str:
    """The cell's own venv for its own lock; one venv beside it for any other (a bisect step, a companion pinned,
    an upgrade's release), so those never rebuild the cell's venv, least of all under a run that is using it."""
    return _venv_name(job.cell, job.lock)


def _venv_name(cell: Cell, lock: Path) -> str:
    return cell.id if lock.resolve() == cell.lock_path.resolve() else f"{cell.id}+other-lock"


@dataclass(frozen=True)
class CellJob:
    """Everything a runner needs to run one cell, whatever its runtime."""

    cell: Cell
    lock: Path
    reference: Path | None
    refused: str | None  # the reference was refused: every probe runs, and the run fails
    results: Path
    junit: Path
    targets: tuple[str, ...] = ()
    accept_new: bool = False
    pytest_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    postgres: services.Shared | None = None
    html: bool = False  # a pytest-html page, where the cell's venv has the plugin
    earlier: Cell | None = None  # the release whose interpreter writes the stores its live-thread probes resume
    earlier_lock: Path | None = None  # that release's lock when it is no matrix cell (upgrade --from: reports/locks)


class Runner(Protocol):
    """One runtime's way of installing and running a cell."""

    def run(self, job: CellJob, log: IO[str]) -> one_cell.CellOutcome:
        """Install the cell from its lock, run its probes, write its result set (or the marker saying why not)."""
        ...

    def pins(self, lock: Path, environment: Mapping[str, object]) -> dict[str, str]:
        """What the lock pins, canonical name -> version, for the run `environment` recorded (identity's check)."""
        ...

    def installed(self, cell: Cell) -> Path:
        """The cell's installed directory (its venv, its npm ci directory), installed first where it is not."""
        ...

    def interpreter(self, cell: Cell) -> list[str]:
        """The command that runs a script of this runtime with the cell's interpreter (an audit inspector)."""
        ...

    def run_copy(
        self, cell: Cell, copy: Path, nodes: tuple[str, ...], results: Path, log: IO[str]
    ) -> one_cell.CellOutcome:
        """Run the probes `nodes` (file::function) from `copy`, a copy of the installed directory (the sensitivity
        check patches the copy, never the cell's own files); every new observation is accepted."""
        ...


class PythonRunner:
    """A uv venv exactly the cell's lock, pytest with fanin's plugin in it."""

    def run(self, job: CellJob, log: IO[str]) -> one_cell.CellOutcome:
        from fanin.run import one_cell, pythons

        cell = job.cell
        python = pythons.find(cell.python)
        if python is None:
            reason = f"Python {cell.python} is not installed (looked in pyenv and on PATH)"
            return one_cell.not_run(cell.id, job.results, exits.NOT_RUN, reason)
        try:
            venv = venvs.ensure(venv_name(job), python, job.lock, framework=(cell.framework.package, cell.version))
        except FaninError as exc:
            log.write(f"fanin: {exc}\n")
            return one_cell.not_run(cell.id, job.results, exits.NOT_RUN, venvs.install_reason(exc))
        env = dict(job.env)
        if job.earlier is not None:
            env.update(self._earlier(job.earlier, job.earlier_lock, log))
        job.junit.parent.mkdir(parents=True, exist_ok=True)
        extra = job.pytest_args + ((f"--fanin-reference-error={job.refused}",) if job.refused else ())
        html = job.junit.with_suffix(".html") if job.html and venvs.has_package(venv, "pytest-html") else None
        run = one_cell.CellRun(
            cell_id=cell.id,
            framework=cell.framework.key,
            package=cell.framework.package,
            import_check=cell.framework.import_check,
            registry_env=cell.env,
            python=venv.python,
            lock=job.lock,
            reference=job.reference,
            results=job.results,
            junit=job.junit,
            html=html,
            targets=job.targets,
            pytest_args=extra,
            accept_new=job.accept_new,
            env=env,
            postgres=job.postgres,
        )
        return one_cell.run_cell(run, log)

    def _earlier(self, earlier: Cell, lock: Path | None, log: IO[str]) -> dict[str, str]:
        """The contract's EARLIER_* variables for a run whose live-thread probes resume what `earlier` wrote (its
        venv from `lock`, else its committed one). A venv that cannot be built leaves EARLIER_PYTHON unset, and those
        probes end as probe-error with the reason."""
        from fanin.model import contract

        found = {contract.EARLIER_VERSION: earlier.version}
        try:
            found[contract.EARLIER_PYTHON] = str(self._venv(earlier, lock or earlier.lock_path) / "bin" / "python")
        except FaninError as exc:
            log.write(f"fanin: the earlier release's venv ({earlier.id}) could not be built: {exc}\n")
        return found

    def pins(self, lock: Path, environment: Mapping[str, object]) -> dict[str, str]:
        return dict(venvs.pins(lock, marker_environment(environment)))

    def installed(self, cell: Cell) -> Path:
        return self._venv(cell, cell.lock_path)

    def _venv(self, cell: Cell, lock: Path) -> Path:
        from fanin.run import pythons

        python = pythons.find(cell.python)
        if python is None:
            raise FaninError(f"Python {cell.python} is not installed (looked in pyenv and on PATH)")
        return venvs.ensure(_venv_name(cell, lock), python, lock, framework=(cell.framework.package, cell.version)).path

    def interpreter(self, cell: Cell) -> list[str]:
        return [str(self.installed(cell) / "bin" / "python")]

    def run_copy(
        self, cell: Cell, copy: Path, nodes: tuple[str, ...], results: Path, log: IO[str]
    ) -> one_cell.CellOutcome:
        from fanin.run import one_cell

        run = one_cell.CellRun(
            cell_id=cell.id,
            framework=cell.framework.key,
            package=cell.framework.package,
            import_check=cell.framework.import_check,
            registry_env=cell.env,
            python=copy / "bin" / "python",
            lock=cell.lock_path,
            reference=None,
            results=results,
            targets=nodes,
            pytest_args=("-q",),
            accept_new=True,
            env={"PYTHONDONTWRITEBYTECODE": "1"},
        )
        return one_cell.run_cell(run, log)


class NodeRunner:
    """An npm ci directory exactly the cell's package-lock.json, node --test over the suite, with the cell's Node."""

    def run(self, job: CellJob, log: IO[str]) -> one_cell.CellOutcome:
        from fanin.run import node_cell, one_cell, services

        cell = job.cell
        env: dict[str, str] = {}
        if job.earlier is not None:
            try:  # a refused lock builds nothing, not even the release before it
                node_cell.check_lock(cell.id, job.lock, (cell.framework.package, cell.version))
            except FaninError:
                pass  # run_cell refuses it, with the reason
            else:
                env = self._earlier(job.earlier, job.earlier_lock, log)
        cancelled = lambda: one_cell.CHILDREN.stopping is not None  # noqa: E731
        # The PostgreSQL a probe's `"services"` names: up before node starts (a Node probe reads no ready file).
        with services.for_cell(cell.framework.key, job.targets, cancelled, job.postgres) as service:
            try:
                if service.server is not None:
                    service.server.wait()
            except FaninError as exc:
                return one_cell.not_run(cell.id, job.results, exits.NOT_RUN, str(exc))
            run = node_cell.NodeRun(
                cell.id, cell.framework.key, cell.framework.package, cell.version, job.lock, job.reference,
                job.results, job.junit, job.targets, job.accept_new, job.refused, node=cell.setting("node"),
                env={**service.env, **env},
            )  # fmt: skip
            return node_cell.run_cell(run, log)

    def _earlier(self, earlier: Cell, lock: Path | None, log: IO[str]) -> dict[str, str]:
        """The contract's EARLIER_* variables for a Node run whose live-thread probes resume what `earlier` wrote: its
        npm ci directory (from `lock`, else its committed one; beside the cell's own for another lock, as a venv is)
        and its Node. A directory that cannot be built leaves both unset: those probes end as probe-error."""
        from fanin.model import contract
        from fanin.run import node_cell

        found = {contract.EARLIER_VERSION: earlier.version}
        lock = lock or earlier.lock_path
        try:
            release = earlier.setting("node")
            node = node_cell.node_binary(release) if release is not None else None
            framework = (earlier.framework.package, earlier.version)
            directory = node_cell.ensure(_venv_name(earlier, lock), lock, framework=framework, node=node)
        except FaninError as exc:
            log.write(f"fanin: the earlier release's directory ({earlier.id}) could not be built: {exc}\n")
            return found
        found[contract.EARLIER_NODE_DIR] = str(directory)
        found[contract.EARLIER_NODE] = str(node) if node is not None else node_cell.tool("node")
        return found

    def pins(self, lock: Path, environment: Mapping[str, object]) -> dict[str, str]:
        from fanin.run import node_cell

        return {canonicalize_name(k): v for k, v in node_cell.pins(lock).items()}

    def installed(self, cell: Cell) -> Path:
        from fanin.run import node_cell

        release = cell.setting("node")
        node = node_cell.node_binary(release) if release is not None else None
        return node_cell.ensure(cell.id, cell.lock_path, framework=(cell.framework.package, cell.version), node=node)

    def interpreter(self, cell: Cell) -> list[str]:
        from fanin.run import node_cell

        release = cell.setting("node")
        return [str(node_cell.node_binary(release)) if release is not None else node_cell.tool("node")]

    def run_copy(
        self, cell: Cell, copy: Path, nodes: tuple[str, ...], results: Path, log: IO[str]
    ) -> one_cell.CellOutcome:
        from fanin.run import node_cell

        files = tuple(dict.fromkeys(node.split("::", 1)[0] for node in nodes))  # node --test runs whole files
        run = node_cell.NodeRun(
            cell.id, cell.framework.key, cell.framework.package, cell.version, cell.lock_path, None, results,
            targets=files, accept_new=True, node=cell.setting("node"), root=copy.parent,
        )  # fmt: skip
        return node_cell.run_cell(run, log)


_RUNNERS: dict[str, Runner] = {"python": PythonRunner(), "node": NodeRunner()}


def register(name: str, runner: Runner) -> None:
    """The runner of the runtime `name` (fanin.model.runtime registers its data)."""
    _RUNNERS[name] = runner


def unregister(name: str) -> None:
    _RUNNERS.pop(name, None)


def of(cell: Cell) -> Runner:
    """The runner of the cell's runtime (matrix.toml accepted the name, so it has one)."""
    return _RUNNERS[cell.framework.runtime]


def marker_environment(environment: Mapping[str, object]) -> dict[str, str]:
    """The marker environment a Python run's packages were resolved for, from what its result set recorded."""
    python = str(environment.get("python", "3.11.0"))
    system, _, machine = str(environment.get("platform", "linux-x86_64")).partition("-")
    return {
        "python_full_version": python,
        "python_version": ".".join(python.split(".")[:2]),
        "sys_platform": system,
        "platform_system": system.capitalize(),
        "platform_machine": machine,
        "os_name": "nt" if system == "windows" else "posix",
        "implementation_name": str(environment.get("implementation", "CPython")).lower(),
        "platform_python_implementation": str(environment.get("implementation", "CPython")),
    }
