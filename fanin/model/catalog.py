"""The probes declared in suites/, read with `ast` (never imported), so the harness
can check the reference against today's probe code with no framework installed."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fanin.model import js_source, scenarios
from fanin.model.results import Claim, ProbeInfo, check_dimensions
from fanin.model.source import REPO_ROOT, SCENARIOS, SUITES, probe_source_hash

_DIMENSION_KEYWORDS = {"backends": "backend", "modes": "mode"}
PROBE_DECORATORS = ("probe", "scenario_probe")  # fanin.probe's two ways to declare a probe


@dataclass(frozen=True)
class DeclaredProbe:
    id: str
    file: str
    function: str
    source_hash: str
    dimensions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    repetition: bool = False

    @property
    def framework(self) -> str:
        return self.id.split("/", 1)[0]

    def observation_ids(self) -> list[str]:
        """The ids of every variant this probe observes (the plain id alone when it has no dimensions)."""
        return ProbeInfo(self.id, "", Claim("", ""), dimensions=self.dimensions).observation_ids()


def _repetition(decorator: ast.Call) -> bool:
    return any(
        k.arg == "repetition" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in decorator.keywords
    )


def _dimensions(decorator: ast.Call, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    declared = {}
    for keyword in decorator.keywords:
        if keyword.arg in _DIMENSION_KEYWORDS:
            try:
                values = ast.literal_eval(keyword.value)
            except ValueError:
                raise ValueError(f"{where}: {keyword.arg}= must be a literal tuple of strings") from None
            declared[_DIMENSION_KEYWORDS[keyword.arg]] = values
    return check_dimensions(declared)


def _probe_id(decorator: ast.expr) -> str | None:
    if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) in PROBE_DECORATORS and decorator.args:
        first = decorator.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def declared(suites: Path = SUITES) -> list[DeclaredProbe]:
    """Every Python probe with its citation hash, then the Node probes. Hashing reads every probe's code and the
    suite definitions it reaches (a second or so for the whole catalogue), so the Python part is kept while no
    file under `suites` changed (each one's modification time and size, as fanin.model.source caches a parse)."""
    files = [*sorted(suites.rglob("*.py")), *sorted(SCENARIOS.glob("*.toml"))]  # a scenario is in its probes' hash
    stamps = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return [*_declared_python(suites, stamps), *declared_node(suites)]


@lru_cache(maxsize=4)
def _declared_python(suites: Path, stamps: tuple[tuple[str, int, int], ...]) -> tuple[DeclaredProbe, ...]:
    found = []
    for path in sorted(suites.rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for decorator in node.decorator_list:
                probe_id = _probe_id(decorator)
                if probe_id:
                    assert isinstance(decorator, ast.Call)
                    shown = str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else path.name
                    dimensions = _dimensions(decorator, f"{shown}:{node.name}")
                    found.append(
                        DeclaredProbe(
                            probe_id,
                            shown,
                            node.name,
                            probe_source_hash(path, node.name),
                            dimensions,
                            _repetition(decorator),
                        )
                    )
    return tuple(found)


def backends(suites: Path = SUITES) -> list[tuple[str, str, tuple[str, ...]]]:
    """(probe id, file, its `backends=`) of every probe that declares backends (a Node probe's `services`): read,
    never hashed.

    What a runner asks before each cell (does it need a PostgreSQL?); `declared()` hashes every
    probe's code as well, which costs seconds."""
    found = []
    for path in sorted(suites.rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if "backends" not in text:
            continue
        shown = str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else path.name
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for decorator in node.decorator_list:
                probe_id = _probe_id(decorator)
                if probe_id and isinstance(decorator, ast.Call):
                    values = dict(_dimensions(decorator, f"{shown}:{node.name}")).get("backend", ())
                    if values:
                        found.append((probe_id, shown, tuple(values)))
    return found + _node_services(suites)


def _node_services(suites: Path) -> list[tuple[str, str, tuple[str, ...]]]:
    """Node probes have no dimensions; one that needs a server the harness runs names it in its metadata
    (`"services": ["postgres"]`), and runs on it alone: read like a Python probe's backends, never hashed."""
    found = []
    for path in sorted(suites.rglob(f"*{js_source.SUFFIX}")):
        if "node_modules" in path.parts or '"services"' not in path.read_text(encoding="utf-8"):
            continue
        shown = str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else path.name
        for js_probe in js_source.parse_file(path).probes.values():
            wanted = js_probe.meta.get("services") or ()
            if wanted:
                found.append((js_probe.id, shown, tuple(str(v) for v in wanted)))  # type: ignore[attr-defined]
    return found


def declared_node(suites: Path = SUITES) -> list[DeclaredProbe]:
    """Node probes (`*.test.mjs`, fanin.model.js_source): no dimensions, hashed like Python probes."""
    found = []
    for path in sorted(suites.rglob(f"*{js_source.SUFFIX}")):
        if "node_modules" in path.parts:
            continue
        shown = str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else path.name
        for function, js_probe in js_source.parse_file(path).probes.items():
            found.append(DeclaredProbe(js_probe.id, shown, function, js_source.probe_source_hash(path, function)))
    return found


def node_probe_info(path: Path, function: str) -> ProbeInfo:
    """The ProbeInfo a Node probe's result set carries: its JSON metadata, file, function and hash."""
    js_probe = js_source.parse_file(path).probes[function]
    meta = js_probe.meta
    claim = meta.get("claim") or {}
    assert isinstance(claim, dict)
    shown = str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else path.name
    if scenarios.scenario_id(js_probe.id) is not None:  # a scenario probe: its title and claim are the scenario's
        scenario = scenarios.for_probe(js_probe.id)
        meta = {**meta, "title": scenario.question}
        claim = scenarios.claim_of(scenario).to_json()
    return ProbeInfo(
        id=js_probe.id,
        title=str(meta.get("title", "")),
        claim=Claim(str(claim.get("text", "")), str(claim.get("source", "")), claim.get("expect")),
        sources=tuple(str(s) for s in meta.get("sources", ()) or ()),  # type: ignore[attr-defined]
        file=shown,
        function=function,
        source_hash=js_source.probe_source_hash(path, function),
    )
