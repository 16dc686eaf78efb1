"""The data fanin records: probes, claims, observations and result sets.

Plain data with one JSON form, so the report and the upgrade gate run with no
agent framework (and no pytest) installed. The schema version is written into
every result set; a file of another version is refused, never half-read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from fanin.model.errors import FaninError
from fanin.model.source import shown

SCHEMA_VERSION = 2  # 2: observations carry a short `label`


class Outcome(str, Enum):
    """What happened, apart from `raises:<Exception>` (which names the framework's exception class)."""

    OK = "ok"
    TIMEOUT = "timeout"
    NOT_APPLICABLE = "n/a"
    PROBE_ERROR = "probe-error"
    VACUOUS = "vacuous"


class Hazard(str, Enum):
    """The legend (README, REPORT.md): what a behaviour means for the data of someone who relies on it."""

    SILENT = "silent"  # data lost or wrong, and no error
    LOUD = "loud"  # an error stops the run
    HANGS = "hangs"  # the run never ends, and no error: nothing after it runs until something outside stops it
    ORDER_COUPLED = "order-coupled"  # the result depends on the order the framework folds writes in
    NONDETERMINISTIC = "nondeterministic"  # different results run to run (the set of outcomes, with its stopping rule)
    SAFE = "safe"  # every write kept, no ordering dependence
    NOT_APPLICABLE = "n/a"  # the probe does not apply (the reason is given)


OK = Outcome.OK.value
TIMEOUT = Outcome.TIMEOUT.value
NOT_APPLICABLE = Outcome.NOT_APPLICABLE.value
# An n/a's value: the run was given no earlier release to write the store the probe resumes (probe --here).
NEEDS_EARLIER_RELEASE = "needs_earlier_release"
PROBE_ERROR = Outcome.PROBE_ERROR.value
VACUOUS = Outcome.VACUOUS.value
RAISES = "raises:"
FIXED_OUTCOMES = tuple(o.value for o in Outcome)

HAZARDS = tuple(h.value for h in Hazard)
# Hazards that mean a reader must act (the report shows the mitigation when a version has one).
HARMFUL = (
    Hazard.SILENT.value,
    Hazard.LOUD.value,
    Hazard.HANGS.value,
    Hazard.ORDER_COUPLED.value,
    Hazard.NONDETERMINISTIC.value,
)
LABEL_LIMIT = 40
# Size limits on read (docs/ARCHITECTURE.md, "Limits"), far above the real data: the largest reference
# result set is 0.42 MB (langgraph-1.2.9, 2026-12-01) and its largest observation 18 KB of JSON
# (adk/parallel-agent/all-permutations-mitigated: a 13.5 KB value, a 4 KB detail).
RESULT_SET_LIMIT = 16_000_000  # bytes of one result file
OBSERVATION_LIMIT = 1_000_000  # bytes of one observation's JSON (outcome, value, label, detail, hazard)

# framework/topic/case; the framework prefix is checked against the registry in reference/matrix.toml.
# The prefix is a registry key, which is also a suite directory and so may hold `_` (pydantic_graph).
PROBE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*/[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$")
# An observation id: the probe id, plus `[value,...]` for a variant other than the default one.
OBSERVATION_ID = re.compile(
    r"^(?P<probe>[a-z0-9][a-z0-9_-]*/[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*)(?:\[(?P<variant>[a-z0-9,-]+)\])?$"
)
# The dimensions a probe may run under, in the order their values appear in an observation id.
# The first value of each is the default: the variant whose observation id is the plain probe id.
DIMENSIONS = ("backend", "mode")
_DIMENSION_VALUE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_EXCEPTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def is_valid_outcome(outcome: str) -> bool:
    if outcome in FIXED_OUTCOMES:
        return True
    return outcome.startswith(RAISES) and bool(_EXCEPTION_NAME.match(outcome[len(RAISES) :]))


class ResultFileError(FaninError):
    """A result set on disk that cannot be trusted (truncated, foreign, mislabelled)."""


# --- canonical values -------------------------------------------------------

_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|seconds)\b")


def normalize_text(text: str) -> str:
    """Strip what differs run to run (addresses, uuids) so equal behaviour compares equal."""
    return _UUID.sub("<uuid>", _ADDRESS.sub("0x…", text))


def normalize_message(text: str) -> str:
    """A human message (detail, exception text): also strip timings, keep one line."""
    first = " ".join(text.strip().split())
    return _DURATION.sub("<duration>", normalize_text(first))


def canonical(value: Any) -> Any:
    """The JSON form of an observed value: sorted sets, str keys, no addresses.

    Refuses anything it cannot represent faithfully (a probe must say what it
    saw in plain data), so a lossy value never reaches the reference.
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise TypeError(f"{value!r} is not strict JSON: record it as a string (e.g. 'nan') if it is what was seen")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return normalize_text(value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"observed value has a non-str key {key!r}; convert it in the probe")
            out[normalize_text(key)] = canonical(item)
        return out
    if isinstance(value, (list, tuple)):
        return [canonical(item) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [canonical(item) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    raise TypeError(f"observed value of type {type(value).__name__} is not plain data; convert it in the probe")


# --- probes and observations ------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """What documentation or a known write-up says should happen, and where it says so.

    `expect` makes the claim checkable per version: observation fields
    (`outcome`, `hazard`, `label`) or value paths (`value.final.value`,
    `value.runs[0]`) and the values the claim predicts ("(absent)" = the path
    must not exist). Without it the report says "not machine-checked".
    """

    text: str
    source: str
    expect: tuple[tuple[str, Any], ...] = ()

    def __init__(self, text: str, source: str, expect: dict[str, Any] | None = None) -> None:
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "expect", tuple(sorted((expect or {}).items())))

    def unchecked_paths(self) -> list[str]:
        """Expected paths that are not behaviour: a reworded label must never flip a claim's verdict."""
        return [
            path
            for path, _ in self.expect
            if path not in ("outcome", "hazard", "value") and not path.startswith("value.")
        ]

    def holds(self, observation: Observation) -> bool | None:
        """True/False when checkable and the probe applied; None otherwise."""
        if not self.expect or observation.outcome in (NOT_APPLICABLE, PROBE_ERROR, VACUOUS, TIMEOUT):
            return None
        return all(_matches(_lookup(observation, path), wanted) for path, wanted in self.expect)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"text": self.text, "source": self.source}
        if self.expect:
            data["expect"] = dict(self.expect)
        return data


_MISSING = object()
ABSENT = "(absent)"  # an expected value meaning "this path must not exist"


def _matches(found: Any, wanted: Any) -> bool:
    return found is _MISSING if wanted == ABSENT else found == wanted


def _lookup(observation: Observation, path: str) -> Any:
    """`outcome`, `hazard`, `label`, or `value.a.b[0]`-style paths into the value."""
    head, _, rest = path.partition(".")
    current: Any = getattr(observation, head, _MISSING)
    for part in filter(None, re.split(r"\.|\[(\d+)\]", rest) if rest else []):
        if isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            return _MISSING
    return current


@dataclass(frozen=True)
class Variant:
    """One combination of dimension values a probe runs under (`{"backend": "postgres", "mode": "sync"}`)."""

    probe_id: str
    values: tuple[tuple[str, str], ...]
    default: tuple[tuple[str, str], ...]

    @property
    def suffix(self) -> str:
        """The non-default values, comma-joined: `postgres`, `async`, `postgres,async`; "" for the default."""
        return ",".join(
            value for (name, value), (_, first) in zip(self.values, self.default, strict=False) if value != first
        )

    @property
    def observation_id(self) -> str:
        return f"{self.probe_id}[{self.suffix}]" if self.suffix else self.probe_id

    def get(self, dimension: str, fallback: str) -> str:
        return dict(self.values).get(dimension, fallback)


def check_dimensions(dimensions: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Validate a probe's declared dimensions, in the canonical dimension order."""
    unknown = set(dimensions) - set(DIMENSIONS)
    if unknown:
        raise ValueError(f"unknown dimension(s) {', '.join(sorted(unknown))}; known: {', '.join(DIMENSIONS)}")
    checked = []
    for name in DIMENSIONS:
        if name not in dimensions:
            continue
        values = tuple(dimensions[name])
        if (
            not values
            or len(set(values)) != len(values)
            or not all(isinstance(v, str) and _DIMENSION_VALUE.match(v) for v in values)
        ):
            raise ValueError(f"dimension {name!r} needs distinct lower-case values, got {dimensions[name]!r}")
        checked.append((name, values))
    return tuple(checked)


def probe_of(observation_id: str) -> str:
    """The probe id an observation id belongs to (`a/b/c[postgres]` -> `a/b/c`)."""
    return observation_id.split("[", 1)[0]


@dataclass(frozen=True)
class ProbeInfo:
    """A probe's metadata: what the report shows beside its observations (test262-style)."""

    id: str
    title: str
    claim: Claim
    sources: tuple[str, ...] = ()
    file: str = ""
    function: str = ""
    source_hash: str = ""
    dimensions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Repeats its scenario to establish a set of outcomes (with a stopping rule in its value): exempt
    # from the one-second budget a probe otherwise has (benchmarks/RESULTS.md lists any over it).
    repetition: bool = False

    @property
    def framework(self) -> str:
        return self.id.split("/", 1)[0]

    def variants(self) -> list[Variant]:
        """Every combination of the declared dimensions; the first is the default (plain probe id)."""
        default = tuple((name, values[0]) for name, values in self.dimensions)
        combos: list[tuple[tuple[str, str], ...]] = [()]
        for name, values in self.dimensions:
            combos = [(*combo, (name, value)) for combo in combos for value in values]
        return [Variant(self.id, combo, default) for combo in combos]

    def observation_ids(self) -> list[str]:
        return [variant.observation_id for variant in self.variants()]

    @property
    def topic(self) -> str:
        return self.id.split("/")[1]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "title": self.title,
            "claim": self.claim.to_json(),
            "sources": list(self.sources),
            "file": self.file,
            "function": self.function,
            "source_hash": self.source_hash,
        }
        if self.dimensions:
            data["dimensions"] = {name: list(values) for name, values in self.dimensions}
        if self.repetition:
            data["repetition"] = True
        return data

    @classmethod
    def from_json(cls, probe_id: str, data: dict[str, Any]) -> ProbeInfo:
        return cls(
            id=probe_id,
            title=data["title"],
            claim=Claim(data["claim"]["text"], data["claim"]["source"], data["claim"].get("expect")),
            sources=tuple(data.get("sources", ())),
            file=data.get("file", ""),
            function=data.get("function", ""),
            source_hash=data.get("source_hash", ""),
            dimensions=check_dimensions(data.get("dimensions", {})),
            repetition=bool(data.get("repetition", False)),
        )


@dataclass(frozen=True)
class Observation:
    """What one probe saw in one environment.

    `label` is the short text of a matrix cell (`InvalidUpdateError`, `last write
    wins: C`, `join ×2`); `detail` is the one-line explanation beside it.
    """

    outcome: str
    value: Any
    label: str
    detail: str
    hazard: str

    def __post_init__(self) -> None:
        if not is_valid_outcome(self.outcome):
            raise ValueError(f"unknown outcome {self.outcome!r}")
        if self.hazard not in HAZARDS:
            raise ValueError(f"unknown hazard {self.hazard!r}; expected one of {', '.join(HAZARDS)}")
        if not self.detail.strip():
            raise ValueError("an observation needs a one-line detail")
        if not self.label.strip() or len(self.label) > LABEL_LIMIT:
            raise ValueError(f"an observation needs a short label (1 to {LABEL_LIMIT} characters), got {self.label!r}")

    @property
    def behaviour(self) -> str:
        """What is compared, everywhere (the upgrade gate, the report's spans, stability): outcome, hazard, value.

        Label and detail are human text; a reworded error message is the same behaviour. So is the
        reason of an n/a: "the API is missing" in both versions, however the reason is put.
        """
        if self.outcome == NOT_APPLICABLE:
            return json.dumps([self.outcome, self.hazard], ensure_ascii=False)
        return json.dumps([self.outcome, self.hazard, self.value], sort_keys=True, ensure_ascii=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "value": self.value,
            "label": self.label,
            "detail": self.detail,
            "hazard": self.hazard,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Observation:
        return cls(
            outcome=data["outcome"],
            value=data["value"],
            label=data["label"],
            detail=data["detail"],
            hazard=data["hazard"],
        )


@dataclass
class ResultSet:
    """All observations of one cell, with the environment they were made in."""

    cell: str
    framework: str
    version: str
    environment: dict[str, Any] = field(default_factory=dict)
    probes: dict[str, ProbeInfo] = field(default_factory=dict)
    observations: dict[str, Observation] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "cell": self.cell,
            "framework": self.framework,
            "version": self.version,
            "environment": self.environment,
            "probes": {pid: self.probes[pid].to_json() for pid in sorted(self.probes)},
            "observations": {pid: self.observations[pid].to_json() for pid in sorted(self.observations)},
        }

    @classmethod
    def from_json(cls, data: Any, origin: str = "result set") -> ResultSet:
        if not isinstance(data, dict):
            raise ResultFileError(f"{origin}: not a fanin result set (top level is not an object)")
        schema = data.get("schema")
        if schema != SCHEMA_VERSION:
            raise ResultFileError(
                f"{origin}: schema version {schema!r}, this fanin reads {SCHEMA_VERSION}; re-run the cell to regenerate it"
            )
        try:
            return cls(
                cell=data["cell"],
                framework=data["framework"],
                version=data["version"],
                environment=dict(data.get("environment", {})),
                probes={pid: ProbeInfo.from_json(pid, p) for pid, p in data.get("probes", {}).items()},
                observations={pid: Observation.from_json(o) for pid, o in data["observations"].items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ResultFileError(f"{origin}: malformed result set ({type(exc).__name__}: {exc})") from None


def dumps(result_set: ResultSet) -> str:
    """Stable text: sorted keys and fixed indentation, so the reference diffs cleanly in git.

    Strict JSON only: a NaN or an infinity (which strict parsers reject) is refused, never written.
    """
    try:
        return json.dumps(result_set.to_json(), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError as exc:
        raise ResultFileError(
            f"{result_set.cell}: a value is not strict JSON ({exc}); record a string instead"
        ) from None


class _NotStrict(ValueError):
    """A result file that parses only by JSON's lax rules: a repeated key, NaN or an infinity."""


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _NotStrict(f"the key {key!r} appears twice in one object (a second copy would silently win)")
        seen[key] = value
    return seen


def _no_constant(name: str) -> Any:
    raise _NotStrict(f"{name} is not strict JSON")


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file (normal permissions)."""
    from fanin.model.staging import write_atomic as staged_write

    staged_write(path, text)


def save(result_set: ResultSet, path: Path) -> None:
    write_atomic(path, dumps(result_set))


def _size(count: int) -> str:
    return f"{count:,} bytes"  # exact: a size just over a limit must not read as equal to it


def read_json(path: Path) -> Any:
    """A result file's JSON, strictly parsed and within the size limits; refused in one line naming the file.

    The set's size is checked before the file is read (a 200 MB set would cost the report gigabytes
    and a page as large); an observation's only when the file is larger than OBSERVATION_LIMIT, since
    no smaller file can hold a larger observation (so every real set today costs nothing more).
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ResultFileError(f"{shown(path)}: no such result file") from None
    except OSError as exc:
        raise ResultFileError(f"{shown(path)}: cannot be read ({exc})") from None
    if size > RESULT_SET_LIMIT:
        raise ResultFileError(
            f"{shown(path)}: {_size(size)}, over the limit of {_size(RESULT_SET_LIMIT)} for one result set; refused unread"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultFileError(f"{shown(path)}: no such result file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultFileError(f"{shown(path)}: cannot be read ({exc})") from None
    if not text.strip():
        raise ResultFileError(f"{shown(path)}: empty file; re-run the cell to regenerate it")
    try:
        data = json.loads(text, object_pairs_hook=_no_repeated_keys, parse_constant=_no_constant)
    except _NotStrict as exc:
        raise ResultFileError(f"{shown(path)}: {exc}; refused") from None
    except RecursionError:
        raise ResultFileError(f"{shown(path)}: nested too deeply to be a fanin result set") from None
    except json.JSONDecodeError as exc:
        raise ResultFileError(
            f"{shown(path)}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); truncated or corrupt, re-run the cell"
        ) from None
    observations = data.get("observations") if isinstance(data, dict) else None
    if size > OBSERVATION_LIMIT and isinstance(observations, dict):
        for oid, observation in observations.items():
            length = len(json.dumps(observation, ensure_ascii=False).encode("utf-8"))
            if length > OBSERVATION_LIMIT:
                raise ResultFileError(
                    f"{shown(path)}: observation {oid} is {_size(length)} of JSON, over the limit of"
                    f" {_size(OBSERVATION_LIMIT)} for one observation; record less in the probe"
                )
    return data


def load(path: Path, expect_cell: str | None = None, check: Callable[[Any, str], None] | None = None) -> ResultSet:
    """Read a result set, refusing truncated, foreign, oversized or mislabelled files with one clear line.

    `check` sees the parsed JSON first (fanin.model.schema.load passes the schema's check).
    """
    data = read_json(path)
    if check is not None:
        check(data, shown(path))
    result_set = ResultSet.from_json(data, origin=shown(path))
    if expect_cell is not None and result_set.cell != expect_cell:
        raise ResultFileError(f"{shown(path)}: holds cell {result_set.cell!r}, but its name says {expect_cell!r}")
    return result_set
