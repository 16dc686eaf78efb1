"""The stand-in for `fanin.probe` that `fanin repro` writes into a standalone reproducer.

Never imported by fanin, never importing it: `fanin.versions.repro` copies what a probe uses of
this file (the `Observer` methods it calls, and the helpers those use) into the script, so that the
probe's own text runs unchanged without fanin installed. It behaves as `fanin.probe.Observer` does
for one observation (the same outcomes, the same canonical value, `tests/test_repro.py` checks
both) and `observe` prints the observation as JSON. It runs on every Python a cell uses (3.10).

`check_framework_version` runs first, before the script imports the framework: a reproducer
observes one version, so it says on stderr which one is installed and refuses another.
"""

import asyncio
import hashlib
import importlib
import inspect
import json
import os
import re
import shutil
import sys
import tempfile
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

ANY_VERSION_ENV = "FANIN_REPRO_ANY_VERSION"  # =1: run under another version anyway, flagged in the JSON
WRONG_VERSION_EXIT = 3  # fanin's "could not run" (fanin.model.exits.NOT_RUN): not the version it reproduces


def check_framework_version(distribution, version, cell):
    """Say on stderr which version of the framework is installed; exit WRONG_VERSION_EXIT in one line if it is
    not the one this script reproduces, unless ANY_VERSION_ENV=1: then return the mismatch, for the JSON."""
    try:
        running = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        running = None
    said = f"{distribution} {running}" if running else f"no {distribution} (not installed)"
    print(f"# running {said} (this reproduces {version}, cell {cell})", file=sys.stderr, flush=True)
    if running == version:
        return None
    mismatch = f"{said} is running, but this reproduces {distribution} {version} (cell {cell})"
    if os.environ.get(ANY_VERSION_ENV) != "1":
        print(
            f"error: {mismatch}; install {distribution}=={version} (`uv run` this file does)"
            f" or set {ANY_VERSION_ENV}=1 to run it anyway",
            file=sys.stderr,
        )
        sys.exit(WRONG_VERSION_EXIT)
    print(f"# WARNING: {mismatch}; {ANY_VERSION_ENV}=1 runs it anyway", file=sys.stderr, flush=True)
    return mismatch


_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|seconds)\b")


def _text(text):
    """What differs run to run (addresses, uuids) is blanked, as in fanin's result sets."""
    return _UUID.sub("<uuid>", _ADDRESS.sub("0x…", text))


def _message(text):
    """A label or detail: one line, timings blanked."""
    return _DURATION.sub("<duration>", _text(" ".join(text.strip().split())))


def _plain(value):
    """The JSON form fanin compares: sorted sets, lists for tuples, str keys."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {_text(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
    raise TypeError(f"observed value of type {type(value).__name__} is not plain data")


class Claim:
    """What the documentation says should happen (fanin checks `expect` against the observation)."""

    def __init__(self, text, source, expect=None):
        self.text, self.source, self.expect = text, source, expect or {}


def probe(id, **declared):
    """fanin's `@probe(...)`: here it only names the function's probe."""

    def mark(fn):
        fn.probe_id = id
        return fn

    return mark


_HARM = {"safe": 0, "order-coupled": 1, "loud": 2, "nondeterministic": 2, "hangs": 3, "silent": 4}


def harm(hazard):
    """fanin's order of harm (`fanin.model.compare.harm`; tests/test_repro.py checks they agree); n/a ranks with safe."""
    return _HARM.get(hazard, 0)


class NotApplicable(BaseException):
    """What the probe is about does not exist in the installed version."""


class Vacuous(BaseException):
    """The situation under test (e.g. concurrency) did not happen: nothing was shown."""


class FrameworkRaised(BaseException):
    """The framework raised inside `obs.framework()`; the observation is recorded."""


class Observer:
    """fanin's `obs` for one observation: the dimensions it runs under, and what the probe records."""

    def __init__(self, observation_id, backend="memory", mode="sync"):
        self.observation_id = observation_id
        self.backend = backend
        self.mode = mode
        self.observation = None

    def record(self, value, *, label, detail, hazard, outcome="ok"):
        self.observation = {
            "outcome": outcome,
            "value": _plain(value),
            "label": _message(label),
            "detail": _message(detail),
            "hazard": hazard,
        }

    def raised(self, exc, *, value=None, hazard="loud", detail=None):
        name = type(exc).__name__
        payload = {"exception": name}
        if value is not None:
            payload["observed"] = value
        message = _message(str(exc)) or "(no message)"
        self.record(
            payload, label=name, detail=detail or f"raises {name}: {message}", hazard=hazard, outcome="raises:" + name
        )

    @contextmanager
    def framework(self, *, hazard="loud", value=None):
        """Exceptions of the framework code inside are the observation (`raises:<Name>`)."""
        try:
            yield
        except Exception as exc:
            self.raised(exc, hazard=hazard, value=value() if value else None)
            raise FrameworkRaised() from exc

    @staticmethod
    def attempt(fn):
        try:
            return {"returned": fn()}
        except Exception as exc:
            return {"raises": type(exc).__name__}

    @staticmethod
    async def attempt_async(fn):
        try:
            return {"returned": await fn()}
        except Exception as exc:
            return {"raises": type(exc).__name__}

    def need(self, module, *names):
        """Import what the probe needs; its absence makes the observation n/a."""
        try:
            found = importlib.import_module(module)
        except ImportError as exc:
            self.not_applicable(f"no module {module} in this version ({type(exc).__name__})")
        got = []
        for name in names:
            if not hasattr(found, name):
                self.not_applicable(f"{module}.{name} does not exist in this version")
            got.append(getattr(found, name))
        if not names:
            return found
        return got[0] if len(got) == 1 else tuple(got)

    def need_parameter(self, func, parameter, where):
        if parameter not in inspect.signature(func).parameters:
            self.not_applicable(f"{where} has no parameter {parameter!r} in this version")

    def require_in_flight(self, gate):
        """Vacuous when the gated branches were never all in flight together."""
        if getattr(gate, "vacuous", None):
            self.vacuous(gate.vacuous)

    def require_same_step(self, steps, *, expected=None, what="writers"):
        """Vacuous unless every node in `steps` (name -> superstep) ran in one superstep."""
        if len(set(steps.values())) != 1 or (expected is not None and len(steps) != expected):
            self.vacuous(f"the {what} did not share one superstep: {steps}")

    def not_applicable(self, reason):
        raise NotApplicable(reason)

    def vacuous(self, reason):
        raise Vacuous(reason)

    @property
    def scratch(self):
        """An empty directory for this observation's files (SQLite)."""
        if not hasattr(self, "_scratch"):
            self._scratch = Path(tempfile.mkdtemp(prefix="fanin-repro-"))
        return self._scratch

    @property
    def database_name(self):
        """A database name unique to this observation."""
        slug = re.sub(r"[^a-z0-9]+", "_", self.observation_id.lower()).strip("_")
        return f"fanin_{slug[:40]}_{hashlib.sha256(self.observation_id.encode('utf-8')).hexdigest()[:8]}"

    def postgres_dsn(self, database="postgres"):
        """A libpq connection string to your PostgreSQL server: FANIN_POSTGRES_DSN, without dbname."""
        base = os.environ.get("FANIN_POSTGRES_DSN")
        if not base:
            sys.exit("this probe needs PostgreSQL: set FANIN_POSTGRES_DSN='host=... port=... user=...' (no dbname)")
        return f"{base} dbname={database}"


def observe(test, obs, version_mismatch=None):
    """Run the probe once, as fanin's pytest plugin does, and print its observation as JSON (first in it, the
    version mismatch that ANY_VERSION_ENV=1 let run: not the reference's version, so not its observation)."""
    try:
        if inspect.iscoroutinefunction(test):
            asyncio.run(test(obs))
        else:
            test(obs)
    except FrameworkRaised:
        pass
    except (NotApplicable, Vacuous) as exc:
        said = "n/a" if isinstance(exc, NotApplicable) else "vacuous"
        value = {"reason": str(exc)}
        obs.observation = {"outcome": said, "value": value, "label": said, "detail": f"{said}: {exc}", "hazard": "n/a"}
    finally:
        if hasattr(obs, "_scratch"):  # the observation's SQLite files: nothing is left behind in the temp dir
            shutil.rmtree(obs._scratch, ignore_errors=True)
    if obs.observation is None:
        sys.exit("the probe returned without recording an observation")
    flagged = {"version_mismatch": version_mismatch} if version_mismatch else {}
    print(json.dumps({**flagged, "id": obs.observation_id, **obs.observation}, indent=2, ensure_ascii=False))
