"""Node probes (`suites/<framework>/*.test.mjs`) read as text, never run: their metadata, reproducer and hash.

The harness has no JavaScript parser, so a Node probe file keeps one layout, which the kit
(`suites/fanin_node.mjs`) and this module share:

- every top-level statement starts at column 0 and its continuation lines are indented or start
  with a closing bracket (`}`, `)`, `]`); `//` comment lines at column 0 belong to the statement
  below them (they are part of the reproducer people read);
- a probe is a top-level call `probe({...JSON...}, async function name(obs) {...});` whose first
  argument is strict JSON (double-quoted keys): `id`, `title`, `claim` (`text`, `source`, optional
  `expect`), optional `sources` and `services` (`["postgres"]`: the harness's server, read by
  fanin.model.catalog.backends). JavaScript reads JSON as an object literal, Python with `json`.

The hash follows `fanin.model.source`'s rule for Python probes: the probe statement and every
top-level definition it uses (by name), followed through the suite's own modules it imports
(`./kit.mjs`, `../fanin_node.mjs`) transitively, blank lines and trailing spaces ignored. A name
is "used" when it occurs as an identifier in the statement's text (strings and comments included:
an over-approximation, so a hash may move when an unrelated same-named helper changes, never the
other way round). Packages (`@langchain/langgraph`) and Node's built-ins are hashed as the import
line that names them.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from fanin.model.source import normalise, scenario_data

SUFFIX = ".test.mjs"
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_DEFINES = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)"
)
_DESTRUCTURE = re.compile(r"^(?:export\s+)?(?:const|let|var)\s+[{\[]([^=]*)[}\]]\s*=")
_IMPORT = re.compile(r"^import\s+(?P<what>[\s\S]*?)\s+from\s+[\"'](?P<module>[^\"']+)[\"']", re.MULTILINE)
_PROBE = re.compile(r"^probe\(")
_FUNCTION = re.compile(r"(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(")


@dataclass(frozen=True)
class Statement:
    first: int  # 1-based line of its first line (its leading comments included)
    last: int
    text: str


@dataclass(frozen=True)
class JsProbe:
    """A probe declared in a .test.mjs file: its metadata (the JSON argument) and where it is."""

    meta: dict[str, object]
    function: str
    span: tuple[int, int]
    text: str

    @property
    def id(self) -> str:
        return str(self.meta["id"])


@dataclass(frozen=True)
class JsFile:
    lines: tuple[str, ...]
    statements: tuple[Statement, ...]
    probes: dict[str, JsProbe] = field(default_factory=dict)  # function name -> probe
    bindings: dict[str, tuple[str, tuple[str, str] | None]] = field(default_factory=dict)
    # name -> (normalised text of its statement, (module, imported name) when imported from a file)

    @property
    def spans(self) -> dict[str, tuple[int, int]]:
        return {name: p.span for name, p in self.probes.items()}

    def function(self, name: str) -> str:
        if name not in self.probes:
            raise LookupError(f"no probe function {name!r} in the file")
        return self.probes[name].text


class JsProbeError(ValueError):
    """A probe file that does not keep the layout above; the message names the line."""


def _statements(text: str) -> list[Statement]:
    lines = text.splitlines()
    found: list[Statement] = []
    start: int | None = None
    comment: int | None = None

    def close(upto: int) -> None:
        nonlocal start
        if start is not None:
            last = upto
            while last > start and not lines[last - 1].strip():
                last -= 1
            found.append(Statement(start, last, "\n".join(lines[start - 1 : last]) + "\n"))
            start = None

    for number, line in enumerate(lines, start=1):
        if not line.strip() or line[0] in " \t}])":
            if not line.strip() and start is None:
                comment = None
            continue
        if line.startswith("//"):
            if start is not None:
                close(number - 1)
            comment = comment or number
            continue
        close(number - 1)
        start, comment = (comment or number), None
    close(len(lines))
    return found


def parse_text(text: str, where: str = "file") -> JsFile:
    statements = _statements(text)
    probes: dict[str, JsProbe] = {}
    bindings: dict[str, tuple[str, tuple[str, str] | None]] = {}
    for statement in statements:
        body = "\n".join(line for line in statement.text.splitlines() if not line.startswith("//"))
        normalised = normalise(statement.text)
        if _PROBE.match(body):
            opening = body.index("(") + 1
            try:
                meta, end = json.JSONDecoder().raw_decode(body, opening)
            except json.JSONDecodeError as exc:
                raise JsProbeError(
                    f"{where}:{statement.first}: probe metadata is not strict JSON ({exc.msg})"
                ) from None
            named = _FUNCTION.search(body, end)
            if not isinstance(meta, dict) or "id" not in meta or named is None:
                raise JsProbeError(f'{where}:{statement.first}: probe({{"id": …}}, async function name(obs) {{…}})')
            probes[named.group(1)] = JsProbe(meta, named.group(1), (statement.first, statement.last), statement.text)
            continue
        imported = _IMPORT.match(body)
        if imported:
            module, what = imported.group("module"), imported.group("what").strip()
            for name, original in _import_names(what):
                line = f'import {{ {original}{"" if name == original else " as " + name} }} from "{module}"\n'
                bindings[name] = (line, (module, original))
            continue
        for name in _defined(body):
            bindings[name] = (normalised, None)
    return JsFile(tuple(text.splitlines()), tuple(statements), probes, bindings)


def _import_names(what: str) -> list[tuple[str, str]]:
    """(local name, exported name) pairs of an import clause; `*` and default imports map to '*' / 'default'."""
    names: list[tuple[str, str]] = []
    braces = re.search(r"\{([^}]*)\}", what)
    if braces:
        for part in braces.group(1).split(","):
            part = part.strip()
            if part:
                original, _, local = part.partition(" as ")
                names.append((local.strip() or original.strip(), original.strip()))
        what = what[: braces.start()] + what[braces.end() :]
    star = re.search(r"\*\s+as\s+([A-Za-z_$][\w$]*)", what)
    if star:
        names.append((star.group(1), "*"))
        what = what[: star.start()] + what[star.end() :]
    default = what.strip().strip(",").strip()
    if default:
        names.append((default, "default"))
    return names


def _defined(body: str) -> list[str]:
    match = _DEFINES.match(body)
    if match:
        return [match.group(1)]
    match = _DESTRUCTURE.match(body)
    if match:
        return [n.split(":")[-1].strip() for n in match.group(1).split(",") if n.strip()]
    return []


@lru_cache(maxsize=256)
def _parse_file(path: Path, stamp: tuple[int, int]) -> JsFile:
    return parse_text(path.read_text(encoding="utf-8"), where=path.name)


def parse_file(path: Path) -> JsFile:
    status = path.stat()
    return _parse_file(path, (status.st_mtime_ns, status.st_size))


def _local_module(module: str, near: Path) -> Path | None:
    if not module.startswith("."):
        return None  # a package or a Node built-in: its import line is what is hashed
    target = (near.parent / module).resolve()
    return target if target.is_file() else None


def dependencies(path: Path, function: str) -> list[tuple[tuple[str, str], str]]:
    """(where, text) of the probe statement and every suite definition it reaches, in a stable order."""
    parsed = parse_file(path)
    start = parsed.function(function)
    seen: dict[tuple[str, str], str] = {(path.name, f"probe {function}"): normalise(start)}
    scenario = scenario_data(parsed.probes[function].id)  # a scenario probe runs its scenario file too
    if scenario is not None:
        seen[scenario[0]] = scenario[1]
    pending = [(path, name) for name in set(_IDENT.findall(start))]
    visited: set[tuple[Path, str]] = set()
    while pending:
        where, name = pending.pop()
        if (where, name) in visited:
            continue
        visited.add((where, name))
        binding = parse_file(where).bindings.get(name)
        if binding is None:
            continue
        text, imported = binding
        seen[(where.name, name)] = text
        if imported is None:
            pending += [(where, used) for used in set(_IDENT.findall(text))]
            continue
        module, original = imported
        target = _local_module(module, where)
        if target is None:
            continue
        if original in ("*", "default"):
            seen[(target.name, "*")] = normalise(target.read_text(encoding="utf-8"))
        else:
            pending.append((target, original))
    return sorted(seen.items())


def probe_source_hash(path: Path, function: str) -> str:
    """Six hex digits, as for Python probes (fanin.model.source.probe_source_hash)."""
    digest = hashlib.sha256()
    for (where, name), text in dependencies(path, function):
        digest.update(f"{where}\0{name}\0".encode() + text.encode("utf-8") + b"\0")
    return digest.hexdigest()[:6]
