"""The probe API: how a probe declares itself and records what it saw.

A probe is a test function decorated with `@probe(...)` that takes the `obs`
fixture. It runs the real framework and calls `obs.record(...)` once. Errors the
framework raises are observations only inside `with obs.framework():`; anywhere
else an exception is a defect of the probe (`probe-error`), never a finding.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import re
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from fanin.model import contract
from fanin.model.compare import harm
from fanin.model.results import (
    NEEDS_EARLIER_RELEASE,
    NOT_APPLICABLE,
    OK,
    PROBE_ID,
    RAISES,
    VACUOUS,
    Claim,
    Observation,
    ProbeInfo,
    Variant,
    canonical,
    check_dimensions,
    normalize_message,
)
from fanin.model.source import INSTALLED, REPO_ROOT, probe_source_hash

__all__ = [
    "Claim",
    "Observer",
    "harm",
    "probe",
    "scenario_probe",
]  # harm: the legend's order of harm, for kits that rank

# The harness sets this to a libpq DSN (without dbname) of the PostgreSQL server it runs for the cell.
# The harness starts the server while pytest starts: the ready file says when it is up (fanin.model.contract).
POSTGRES_ENV, POSTGRES_READY, POSTGRES_TAG = contract.POSTGRES_DSN, contract.POSTGRES_READY, contract.POSTGRES_TAG

F = TypeVar("F", bound=Callable[..., Any])


def probe(
    id: str,
    *,
    title: str,
    claim: Claim,
    sources: tuple[str, ...] | list[str] = (),
    backends: tuple[str, ...] | None = None,
    modes: tuple[str, ...] | None = None,
    repetition: bool = False,
) -> Callable[[F], F]:
    """Declare a probe. The id is permanent: people cite it, so it is never reused or renamed.

    `backends` / `modes` declare the dimensions it runs under (e.g. `("memory", "sqlite", "postgres")`,
    `("sync", "async")`); the first value of each is the default, observed under the plain id, every
    other combination under `id[value,...]` (`langgraph/x/y[postgres]`, `langgraph/x/y[sqlite,async]`).
    Write them as literal tuples: the harness reads them from the source without importing it.
    """
    if not PROBE_ID.match(id):
        raise ValueError(f"probe id {id!r} is not of the form framework/topic/case (lower-case, dashes)")
    wrong = claim.unchecked_paths()
    if wrong:
        raise ValueError(f"{id}: a claim checks outcome, hazard or value paths, never {', '.join(wrong)}")
    declared = {name: values for name, values in (("backend", backends), ("mode", modes)) if values is not None}
    dimensions = check_dimensions(declared)

    def mark(fn: F) -> F:
        path = Path(inspect.getsourcefile(fn) or fn.__code__.co_filename).resolve()
        try:
            shown = str(path.relative_to(REPO_ROOT))
        except ValueError:
            shown = path.name
        fn.fanin_probe = ProbeInfo(  # type: ignore[attr-defined]
            id=id,
            title=title,
            claim=claim,
            sources=tuple(sources),
            file=shown,
            function=fn.__name__,
            source_hash=probe_source_hash(path, fn.__name__),
            dimensions=dimensions,
            repetition=repetition,
        )
        return fn

    return mark


def scenario_probe(id: str) -> Callable[[F], F]:
    """Declare the probe of one scenario (scenarios/<case>.toml) in one framework: `<framework>/scenario/<case>`.

    Its title and claim are the scenario's (its question, its grading rules and source); its citation hash
    covers the scenario file as well as the adapter code the probe runs (fanin.model.source).
    """
    from fanin.model import scenarios

    scenario = scenarios.for_probe(id)
    return probe(id, title=scenario.question, claim=scenarios.claim_of(scenario))


class ProbeSignal(BaseException):
    """Control flow from a probe to the plugin. BaseException so framework `except Exception` cannot eat it."""


class NotApplicable(ProbeSignal):
    def __init__(self, reason: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.extra = extra or {}  # more of the n/a's value (NEEDS_EARLIER_RELEASE)


class Vacuous(ProbeSignal):
    """The probe could not show the situation it tests really happened (e.g. no concurrency)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Observer:
    """Collects the single observation a probe makes, in one variant of its dimensions."""

    def __init__(
        self, info: ProbeInfo, variant: Variant | None = None, scratch: Callable[[], Path] | None = None
    ) -> None:
        self.info = info
        self.variant = variant or info.variants()[0]
        self.observation: Observation | None = None
        self._scratch_factory = scratch
        self._scratch: Path | None = None

    @property
    def observation_id(self) -> str:
        """`probe-id` for the default variant, `probe-id[postgres]` etc. for the others."""
        return self.variant.observation_id

    @property
    def backend(self) -> str:
        """The storage this observation runs on: `memory` unless the probe declares `backends`."""
        return self.variant.get("backend", "memory")

    @property
    def mode(self) -> str:
        """`sync` or `async`: `sync` unless the probe declares `modes`."""
        return self.variant.get("mode", "sync")

    @property
    def scratch(self) -> Path:
        """An empty directory private to this observation (SQLite files live here), removed by pytest later."""
        if self._scratch is None:
            if self._scratch_factory is None:
                import tempfile

                self._scratch = Path(tempfile.mkdtemp(prefix="fanin-"))
            else:
                self._scratch = self._scratch_factory()
        return self._scratch

    @property
    def database_name(self) -> str:
        """A database name unique to this observation, for the PostgreSQL server the harness runs."""
        slug = re.sub(r"[^a-z0-9]+", "_", self.observation_id.lower()).strip("_")
        # The cell run's tag keeps two cells that share the matrix's server out of each other's databases.
        tag = os.environ.get(POSTGRES_TAG, "")
        digest = hashlib.sha256(f"{tag}{self.observation_id}".encode()).hexdigest()[:8]
        return f"fanin_{slug[:40]}_{digest}"

    def postgres_dsn(self, database: str = "postgres") -> str:
        """A libpq connection string to the PostgreSQL server the harness started for this cell.

        The harness (not the framework's venv) owns the server; a probe run without it is a
        defect of the run, never an `n/a`: the probe becomes `probe-error`.
        """
        base = os.environ.get(POSTGRES_ENV)
        if not base:
            how = "run it with `fanin probe --here`" if INSTALLED else "run the cell through ./noxw"
            raise MissingService(f"no PostgreSQL server in this run ({POSTGRES_ENV} is unset); {how}")
        _wait_for_postgres()
        return f"{base} dbname={database}"

    def record(self, value: Any, *, label: str, detail: str, hazard: str, outcome: str = OK) -> None:
        """Record what the framework did: plain-data `value`, a short matrix `label`, a one-line `detail`."""
        if self.observation is not None:
            raise RuntimeError(f"{self.info.id} recorded twice; a probe records exactly one observation")
        self.observation = Observation(
            outcome=outcome,
            value=canonical(value),
            label=normalize_message(label),
            detail=normalize_message(detail),
            hazard=hazard,
        )

    @property
    def scenario(self) -> Any:
        """The scenario a scenario probe runs (`fanin.model.scenarios.Scenario`), named by its id."""
        from fanin.model import scenarios

        return scenarios.for_probe(self.info.id)

    def record_scenario(self, capabilities: Any, answers: dict[str, Any]) -> None:
        """Record a scenario probe's observation: the adapter's answers, graded by the one grader."""
        from fanin.model import scenarios

        if self.observation is not None:
            raise RuntimeError(f"{self.info.id} recorded twice; a probe records exactly one observation")
        self.observation = scenarios.observation(self.scenario, capabilities, answers)

    def raised(self, exc: BaseException, *, value: Any = None, hazard: str = "loud", detail: str | None = None) -> None:
        """Record that the framework raised: the exception class is the outcome, its text the detail."""
        name = type(exc).__name__
        message = normalize_message(str(exc)) or "(no message)"
        payload = {"exception": name}
        if value is not None:
            payload["observed"] = value
        self.record(
            payload, label=name, detail=detail or f"raises {name}: {message}", hazard=hazard, outcome=RAISES + name
        )

    @contextmanager
    def framework(self, *, hazard: str = "loud", value: Callable[[], Any] | None = None) -> Iterator[None]:
        """Run framework code whose exceptions are the answer (e.g. InvalidUpdateError)."""
        try:
            yield
        except Exception as exc:
            self.raised(exc, hazard=hazard, value=value() if value else None)
            raise FrameworkRaised(exc) from exc

    @staticmethod
    def attempt(fn: Callable[[], Any]) -> dict[str, Any]:
        """One sub-case of framework code: `{"returned": ...}` or `{"raises": "ExceptionName"}`.

        For probes that compare several variants, where one variant raising is part
        of the answer. The message is left out so rewording stays a non-change.
        """
        try:
            return {"returned": fn()}
        except Exception as exc:
            return {"raises": type(exc).__name__}

    @staticmethod
    async def attempt_async(fn: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
        """`attempt` for coroutines (ADK)."""
        try:
            return {"returned": await fn()}
        except Exception as exc:
            return {"raises": type(exc).__name__}

    def need(self, module: str, *names: str) -> Any:
        """Import what this probe needs; a version without it makes the probe `n/a`, with the reason."""
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            self.not_applicable(f"no module {module} in this version ({type(exc).__name__})")
        found = []
        for name in names:
            if not hasattr(mod, name):
                self.not_applicable(f"{module}.{name} does not exist in this version")
            found.append(getattr(mod, name))
        if not names:
            return mod
        return found[0] if len(found) == 1 else tuple(found)

    def need_parameter(self, func: Callable[..., Any], parameter: str, where: str) -> None:
        """`n/a` when an API exists but lacks the parameter the probe is about (e.g. `defer`)."""
        if parameter not in inspect.signature(func).parameters:
            self.not_applicable(f"{where} has no parameter {parameter!r} in this version")

    def require_in_flight(self, gate: Any) -> None:
        """`vacuous` with the gate's own reason when its branches were never all in flight together."""
        reason = getattr(gate, "vacuous", None)
        if reason:
            raise Vacuous(reason)

    def require_same_step(self, steps: dict[str, Any], *, expected: int | None = None, what: str = "writers") -> None:
        """`vacuous` unless every node in `steps` (name -> superstep) ran in one superstep (and `expected` of them ran).

        The proof a concurrency probe owes: writers that ran one after another never collided.
        """
        if len(set(steps.values())) != 1 or (expected is not None and len(steps) != expected):
            raise Vacuous(f"the {what} did not share one superstep: {steps}")

    def not_applicable(self, reason: str) -> NoReturn:
        raise NotApplicable(reason)

    def earlier_release(self) -> tuple[str, str]:
        """(version, interpreter) of the release whose stores a live-thread probe resumes (the contract's EARLIER_*).

        n/a where the run has none (the framework's first cell on its Python, `probe --here`); a version without
        its interpreter is the harness's defect, so the probe ends as probe-error, never as n/a."""
        version = os.environ.get(contract.EARLIER_VERSION)
        if not version:
            raise NotApplicable(
                "no earlier release to write the store: the first cell of its framework on this Python, or"
                " `probe --here` (one environment); `fanin upgrade --from <yours>` runs it",
                {NEEDS_EARLIER_RELEASE: True},
            )
        python = os.environ.get(contract.EARLIER_PYTHON)
        if not python:
            raise RuntimeError(f"the earlier release {version} was named but its venv was not built (see the log)")
        return version, python

    def vacuous(self, reason: str) -> NoReturn:
        raise Vacuous(reason)

    def finish_not_applicable(self, reason: str, extra: dict[str, Any] | None = None) -> None:
        self.observation = Observation(
            outcome=NOT_APPLICABLE,
            value={"reason": reason, **(extra or {})},
            label="n/a",
            detail=f"n/a: {reason}",
            hazard="n/a",
        )

    def finish_vacuous(self, reason: str) -> None:
        self.observation = Observation(
            outcome=VACUOUS, value={"reason": reason}, label="vacuous", detail=f"vacuous: {reason}", hazard="n/a"
        )


class ProbeTimeout(ProbeSignal):
    """The probe ran past its timeout (pytest-timeout's settings, fanin's own timer; see fanin.plugin)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no result within {seconds} s")
        self.seconds = seconds


def _wait_for_postgres() -> None:
    """Until the harness's server answers (its ready file says "ok"); the harness ends the run if it never does."""
    ready = os.environ.get(POSTGRES_READY)
    if not ready:
        return
    import time

    deadline = time.monotonic() + float(os.environ.get("FANIN_PG_START_SECONDS", "60") or 60) + 30
    path = Path(ready)
    while True:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        if text == "ok":
            return
        if text:
            raise MissingService(text)
        if time.monotonic() > deadline:
            raise MissingService(f"the harness's PostgreSQL did not say it was up ({path})")
        time.sleep(0.01)


class MissingService(RuntimeError):
    """Infrastructure the harness should have provided is absent: a defect of the run (probe-error)."""


class FrameworkRaised(ProbeSignal):
    """The framework raised inside `obs.framework()`; the observation is already recorded."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc
