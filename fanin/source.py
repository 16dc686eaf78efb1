"""A probe's own source: the reproducer the report shows, and the hash a citation carries.

Read with `ast` from the file, never by importing it, so the harness can check
that the reference was made by today's probe code without any framework installed.
Each file is parsed once per change (keyed by its mtime and size), so a report
over many probes and cells reads every suite file once.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SUITES = REPO_ROOT / "suites"

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class ParsedFile:
    lines: tuple[str, ...]
    spans: dict[str, tuple[int, int]]  # function name -> (first decorator line, last line), 1-based
    context: str  # the module without its probe functions

    def function(self, name: str) -> str:
        """The function's source from its first decorator to its last line, dedented."""
        if name not in self.spans:
            raise LookupError(f"no function {name!r} in the file")
        first, last = self.spans[name]
        return textwrap.dedent("\n".join(self.lines[first - 1 : last])) + "\n"


def _is_probe(node: ast.AST) -> bool:
    return isinstance(node, _FUNCTIONS) and any(
        isinstance(d, ast.Call) and getattr(d.func, "id", None) == "probe" for d in node.decorator_list
    )


def parse_text(text: str) -> ParsedFile:
    tree = ast.parse(text)
    spans = {
        node.name: (min([node.lineno, *(d.lineno for d in node.decorator_list)]), node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, _FUNCTIONS)
    }
    lines = text.splitlines()
    kept = list(lines)
    for node in sorted((n for n in tree.body if _is_probe(n)), key=lambda n: -n.lineno):
        first, last = spans[node.name]
        del kept[first - 1 : last]
    return ParsedFile(tuple(lines), spans, "\n".join(kept))


@lru_cache(maxsize=512)
def _parse_file(path: Path, stamp: tuple[int, int]) -> ParsedFile:
    return parse_text(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=512)
def _read_bytes(path: Path, stamp: tuple[int, int]) -> bytes:
    return path.read_bytes()


def _stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_mtime_ns, status.st_size


def parse_file(path: Path) -> ParsedFile:
    return _parse_file(path, _stamp(path))


def probe_source(file_text: str, function: str) -> str:
    """The function's source from its first decorator to its last line, dedented."""
    return parse_text(file_text).function(function)


def module_context(file_text: str) -> str:
    """The module without its probe functions: imports, constants and helpers every probe in it shares."""
    return parse_text(file_text).context


def support_files(path: Path) -> list[Path]:
    """What a probe file leans on: its suite's non-test modules (kits), the shared gates, conftest."""
    local = sorted(p for p in path.parent.glob("*.py") if not p.name.startswith("test_"))
    shared = [p for p in (SUITES / "gates.py", SUITES / "conftest.py") if p.exists() and p not in local]
    return [*local, *shared]


def probe_source_hash(path: Path, function: str) -> str:
    """Six hex digits over everything the probe runs: its function, its module's shared code, and the
    suite's support modules. Editing a kit therefore marks every probe using it as re-observed."""
    parsed = parse_file(path)
    digest = hashlib.sha256(parsed.function(function).encode("utf-8"))
    digest.update(parsed.context.encode("utf-8"))
    for support in support_files(path):
        digest.update(support.name.encode("utf-8") + b"\0" + _read_bytes(support, _stamp(support)))
    return digest.hexdigest()[:6]


def shown(path: Path) -> str:
    """A path as users type it: relative to the checkout when inside it."""
    path = Path(path)
    return str(path.relative_to(REPO_ROOT)) if path.is_absolute() and path.is_relative_to(REPO_ROOT) else str(path)
