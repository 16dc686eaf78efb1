"""A probe's own source: the reproducer the report shows, and the hash a citation carries.

Read with `ast` from the file, never by importing it, so the harness can check
that the reference was made by today's probe code without any framework installed.

The hash covers what the probe runs and nothing else (test262's `includes`, found
rather than declared): the probe function, and every module-level definition it
uses, followed through the suite's own support modules (kits, gates) transitively.
Adding or editing a neighbouring probe, or an unused helper in a kit, changes no
other probe's hash, so published cite lines stay put. Blank lines and trailing
spaces do not count; everything else (comments included: they are part of the
reproducer people read) does.

Each file is parsed once per change (keyed by its mtime and size), so a report
over many probes and cells reads every suite file once.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
import textwrap
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # fanin/, above fanin/model/
_CHECKOUT = _PACKAGE.parent
# A checkout has suites/ and reference/ beside fanin/; an installed wheel carries them inside the
# package (fanin/_catalogue/), so every path below works the same either way.
REPO_ROOT = (
    _CHECKOUT if (_CHECKOUT / "suites").is_dir() and (_CHECKOUT / "reference").is_dir() else _PACKAGE / "_catalogue"
)
INSTALLED = REPO_ROOT != _CHECKOUT


def user_cache() -> Path:
    """The per-user cache directory (XDG on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "fanin"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "fanin" / "Cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fanin"


SUITES = REPO_ROOT / "suites"
SCENARIOS = REPO_ROOT / "scenarios"  # the scenario files (fanin.model.scenarios) a scenario probe's hash covers
# A probe whose id's topic is `scenario` runs scenarios/<case>.toml: the id as the decorator names it.
_SCENARIO_PROBE = re.compile(r"""^@(?:scenario_)?probe\(\s*["']([a-z0-9_-]+/scenario/[a-z0-9-]+)["']""")

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Definition:
    """One module-level statement that binds names: its normalised text and what it refers to."""

    text: str
    uses: frozenset[str]
    imports: tuple[tuple[str, str], ...] = ()  # (module, name) pairs it takes from other modules
    # Not hashed: where it is (first, last line, 1-based) and the `name.attribute` pairs it reads,
    # for the standalone reproducer (`reached`), which inlines `kit.helper` as `helper`.
    span: tuple[int, int] = (0, 0)
    attributes: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class ParsedFile:
    lines: tuple[str, ...]
    spans: dict[str, tuple[int, int]]  # function name -> (first decorator line, last line), 1-based
    bindings: dict[str, Definition] = field(default_factory=dict)  # module-level name -> its definition
    always: tuple[Definition, ...] = ()  # module-level statements that bind nothing (run on import)

    def function(self, name: str) -> str:
        """The function's source from its first decorator to its last line, dedented."""
        if name not in self.spans:
            raise LookupError(f"no function {name!r} in the file")
        first, last = self.spans[name]
        return textwrap.dedent("\n".join(self.lines[first - 1 : last])) + "\n"


def normalise(text: str) -> str:
    """Blank lines and trailing spaces do not change what code does, so they never change a hash."""
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip()) + "\n"


class _Statement:
    """What the tree of one module-level statement holds, gathered in one walk (see `_scan`)."""

    __slots__ = ("attributes", "bound", "imports", "names")

    def __init__(self) -> None:
        self.names: set[str] = set()  # every name read or bound (`kit` of `kit.helper` too)
        self.attributes: set[tuple[str, str]] = set()  # `(name, attribute)` for every `name.attribute` read
        self.imports: list[tuple[str, str]] = []  # (module, name) pairs it takes, `*` for `import module`
        self.bound: list[str] = []  # the names it binds, for a statement that is neither a definition nor an import


def _scan(tree: ast.Module, whole: _Statement | None = None) -> tuple[dict[str, tuple[int, int]], list[_Statement]]:
    """Every function's span and what each module-level statement holds, in one breadth-first walk of the tree.

    The same walk as `ast.walk(tree)` (so a name defined twice keeps the span ast.walk's order gives it last),
    each node tagged with the module-level statement it belongs to (with `whole`, all of them with that one):
    walking each statement once per question asked of it was most of a report's reading of the probe files."""
    spans: dict[str, tuple[int, int]] = {}
    statements = [whole] * len(tree.body) if whole is not None else [_Statement() for _ in tree.body]
    pending: deque[tuple[ast.AST, _Statement]] = deque(zip(tree.body, statements, strict=True))
    while pending:
        node, seen = pending.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                pending.append((value, seen))
            elif isinstance(value, list):
                pending.extend((item, seen) for item in value if isinstance(item, ast.AST))
        if isinstance(node, ast.Name):
            seen.names.add(node.id)
            if isinstance(node.ctx, ast.Store):
                seen.bound.append(node.id)
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name):
                seen.attributes.add((node.value.id, node.attr))
        elif isinstance(node, _DEFINITIONS):
            seen.bound.append(node.name)  # unused for a module-level definition: its own name binds
            if isinstance(node, _FUNCTIONS):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                spans[node.name] = (first, node.end_lineno or node.lineno)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            seen.bound += [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
            if isinstance(node, ast.ImportFrom):
                if node.module and not node.level:
                    seen.imports += [(node.module, alias.name) for alias in node.names]
            else:
                seen.imports += [(alias.name, "*") for alias in node.names]
    return spans, statements


def _reads(tree: ast.Module) -> _Statement:
    """What a whole piece of code (a probe function's text) reads, imports and binds."""
    whole = _Statement()
    _scan(tree, whole)
    return whole


def parse_text(text: str) -> ParsedFile:
    tree = ast.parse(text)
    lines = text.splitlines()
    spans, statements = _scan(tree)
    bindings: dict[str, Definition] = {}
    always: list[Definition] = []
    for node, seen in zip(tree.body, statements, strict=True):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            # One definition per imported name, so adding a name to a shared import line changes
            # only the probes that use the new name.
            for alias in node.names:
                if alias.name == "*":
                    continue
                imports: tuple[tuple[str, str], ...]
                if isinstance(node, ast.ImportFrom):
                    module = node.module or ""
                    text = f"from {'.' * node.level}{module} import {alias.name}"
                    imports = ((module, alias.name),) if module and not node.level else ()
                else:
                    text = f"import {alias.name}"
                    imports = ((alias.name, "*"),)
                text += f" as {alias.asname}" if alias.asname else ""
                span = (node.lineno, node.end_lineno or node.lineno)
                bindings[(alias.asname or alias.name).split(".")[0]] = Definition(
                    normalise(text), frozenset(), imports, span
                )
            continue
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        last = node.end_lineno or node.lineno
        segment = normalise(textwrap.dedent("\n".join(lines[first - 1 : last])))
        definition = Definition(
            segment, frozenset(seen.names), tuple(seen.imports), (first, last), frozenset(seen.attributes)
        )
        bound = [node.name] if isinstance(node, _DEFINITIONS) else seen.bound
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring: documentation, not behaviour
        for name in bound:
            bindings[name] = definition
        if not bound:
            always.append(definition)
    return ParsedFile(tuple(lines), spans, bindings, tuple(always))


@lru_cache(maxsize=512)
def _parse_file(path: Path, stamp: tuple[int, int]) -> ParsedFile:
    return parse_text(path.read_text(encoding="utf-8"))


def _stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_mtime_ns, status.st_size


def parse_file(path: Path) -> ParsedFile:
    return _parse_file(path, _stamp(path))


def probe_source(file_text: str, function: str) -> str:
    """The function's source from its first decorator to its last line, dedented."""
    return parse_text(file_text).function(function)


def support_module(name: str, near: Path) -> Path | None:
    """The suite's own module `name` (a kit beside the probe file, or a shared one in suites/), if any."""
    for directory in (near.parent, SUITES):
        candidate = directory / f"{name}.py"
        if candidate.is_file() and not candidate.name.startswith("test_"):
            return candidate
    return None


def scenario_data(probe_id: str) -> tuple[tuple[str, str], str] | None:
    """(where, text) of the scenario file a scenario probe runs (its id `<framework>/scenario/<case>`), if it is one.

    The scenario is data the probe's code reads, so it is part of what the probe runs: editing its steps,
    orders or grading rules moves the citation as editing the probe's code would (Python and Node probes)."""
    parts = probe_id.split("/")
    if len(parts) != 3 or parts[1] != "scenario":
        return None
    path = SCENARIOS / f"{parts[2]}.toml"
    text = normalise(path.read_text(encoding="utf-8")) if path.is_file() else "(no such scenario)\n"
    return (f"scenarios/{path.name}", "data"), text


def scenario_text(probe_text: str) -> tuple[tuple[str, str], str] | None:
    """`scenario_data` of a Python probe function's text, whose decorator names its id."""
    found = _SCENARIO_PROBE.match(probe_text.lstrip())
    return scenario_data(found.group(1)) if found else None


def dependencies(path: Path, function: str) -> list[tuple[tuple[str, str], str]]:
    """(where, text) of the probe function and every suite definition it reaches, in a stable order."""
    parsed = parse_file(path)
    start = parsed.function(function)
    seen: dict[tuple[str, str], str] = {(path.name, f"def {function}"): normalise(start)}
    scenario = scenario_text(start)
    if scenario is not None:
        seen[scenario[0]] = scenario[1]
    pending: list[tuple[Path, str]] = []

    def follow(where: Path, imports: tuple[tuple[str, str], ...]) -> None:
        for source_module, imported in imports:
            target = support_module(source_module, where)
            if target is None:
                continue  # a framework or the standard library: the import line itself is hashed
            if imported == "*":
                seen[(target.name, "*")] = normalise(target.read_text(encoding="utf-8"))
            else:
                pending.append((target, imported))

    # The function's own body and decorator may use module-level names of its file, and may import a kit's
    # definition inside the body (`from adk_kit import run_workflow`): both are what it runs. Its module-level
    # definition already holds both when that definition is this very text (else the text is parsed again).
    own = parsed.bindings.get(function)
    if own is not None and own.span == parsed.spans[function]:
        uses, imports = own.uses, own.imports
    else:
        read = _reads(ast.parse(start))
        uses, imports = frozenset(read.names), tuple(read.imports)
    pending += [(path, name) for name in uses]
    follow(path, imports)
    visited: set[tuple[Path, str]] = set()
    while pending:
        where, name = pending.pop()
        if (where, name) in visited:
            continue
        visited.add((where, name))
        module = parse_file(where)
        definition = module.bindings.get(name)
        if definition is None:
            continue  # a builtin, a parameter, or a local name
        seen[(where.name, name)] = definition.text
        pending += [(where, used) for used in definition.uses]
        follow(where, definition.imports)
    return sorted(seen.items())


def is_import(definition: Definition) -> bool:
    """An import line (one name of it), as `parse_text` makes them."""
    return not definition.uses and definition.text.startswith(("import ", "from "))


def _kit_module(where: Path, definition: Definition | None) -> Path | None:
    """The kit a name is bound to by `import kit` (`import lg_modes`), if it is one."""
    if definition is None or not is_import(definition) or len(definition.imports) != 1:
        return None
    module, name = definition.imports[0]
    return support_module(module, where) if name == "*" else None


def reached(
    path: Path, start: str
) -> tuple[list[tuple[Path, Definition]], dict[tuple[Path, str], tuple[Path, set[str]]]]:
    """Every module-level definition the code `start` (a probe function of `path`) runs, for a standalone copy.

    The walk of `dependencies`, made for inlining rather than hashing: `import kit` follows only the
    `kit.name` the code reads (the hash takes the whole module as text and stops there), imports inside
    the kits and inside functions (the probe's own included) are followed too, and an import of a kit's
    definition is not returned (the definition is).
    Returns the definitions in the order found (each statement once) and the kit modules used as
    modules: (file, name it is bound to there, `lg_modes`) -> (the kit, the attributes read on it).
    """
    found: dict[tuple[Path, tuple[int, int], str], tuple[Path, Definition]] = {}  # one per statement and name
    aliases: dict[tuple[Path, str], tuple[Path, set[str]]] = {}
    pending: list[tuple[Path, str]] = []

    def read(
        where: Path, uses: frozenset[str], attributes: frozenset[tuple[str, str]], imports: tuple[tuple[str, str], ...]
    ) -> None:
        bindings = parse_file(where).bindings
        pending.extend((where, name) for name in uses)
        for module, name in imports:  # `from gates import ThreadTurns` inside a function
            kit = support_module(module, where)
            if kit is not None and name != "*":
                pending.append((kit, name))
        for base, attribute in attributes:
            kit = _kit_module(where, bindings.get(base))
            if kit is not None:
                aliases.setdefault((where, base), (kit, set()))[1].add(attribute)
                pending.append((kit, attribute))

    tree = ast.parse(start)
    seen = _reads(tree)
    read(path, frozenset(seen.names), frozenset(seen.attributes), tuple(seen.imports))
    visited: set[tuple[Path, str]] = set()
    while pending:
        where, name = pending.pop()
        if (where, name) in visited:
            continue
        visited.add((where, name))
        definition = parse_file(where).bindings.get(name)
        if definition is None:
            continue  # a builtin, a parameter, or a local name
        if is_import(definition):
            if _kit_module(where, definition) is not None:
                continue  # `import kit`: followed through the attributes read on it
            module, imported = definition.imports[0] if definition.imports else ("", "")
            target = support_module(module, where) if module else None
            if target is None:
                found.setdefault((where, definition.span, definition.text), (where, definition))
            else:
                pending.append((target, imported))
            continue
        found.setdefault((where, definition.span, ""), (where, definition))
        read(where, definition.uses, definition.attributes, definition.imports)
    return list(found.values()), aliases


def probe_source_hash(path: Path, function: str) -> str:
    """Six hex digits over the probe function and the suite code it uses (see the module docstring)."""
    digest = hashlib.sha256()
    for (where, name), text in dependencies(path, function):
        digest.update(f"{where}\0{name}\0".encode() + text.encode("utf-8") + b"\0")
    return digest.hexdigest()[:6]


def shown(path: Path) -> str:
    """A path as users type it: relative to the checkout when inside it."""
    path = Path(path)
    return str(path.relative_to(REPO_ROOT)) if path.is_absolute() and path.is_relative_to(REPO_ROOT) else str(path)
