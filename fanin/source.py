"""A probe's own source: the reproducer the report shows, and the hash a citation carries.

Read with `ast` from the file, never by importing it, so the harness can check
that the reference was made by today's probe code without any framework installed.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SUITES = REPO_ROOT / "suites"


def probe_source(file_text: str, function: str) -> str:
    """The function's source from its first decorator to its last line, dedented."""
    tree = ast.parse(file_text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = file_text.splitlines()[first - 1 : node.end_lineno]
            return textwrap.dedent("\n".join(lines)) + "\n"
    raise LookupError(f"no function {function!r} in the file")


def _is_probe(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(d, ast.Call) and getattr(d.func, "id", None) == "probe" for d in node.decorator_list
    )


def module_context(file_text: str) -> str:
    """The module without its probe functions: imports, constants and helpers every probe in it shares."""
    lines = file_text.splitlines()
    for node in sorted((n for n in ast.parse(file_text).body if _is_probe(n)), key=lambda n: -n.lineno):
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        del lines[first - 1 : node.end_lineno]
    return "\n".join(lines)


def support_files(path: Path) -> list[Path]:
    """What a probe file leans on: its suite's non-test modules (kits), the shared gates, conftest."""
    local = sorted(p for p in path.parent.glob("*.py") if not p.name.startswith("test_"))
    shared = [p for p in (SUITES / "gates.py", SUITES / "conftest.py") if p.exists() and p not in local]
    return [*local, *shared]


def probe_source_hash(path: Path, function: str) -> str:
    """Six hex digits over everything the probe runs: its function, its module's shared code, and the
    suite's support modules. Editing a kit therefore marks every probe using it as re-observed."""
    text = path.read_text(encoding="utf-8")
    digest = hashlib.sha256(probe_source(text, function).encode("utf-8"))
    digest.update(module_context(text).encode("utf-8"))
    for support in support_files(path):
        digest.update(support.name.encode("utf-8") + b"\0" + support.read_bytes())
    return digest.hexdigest()[:6]


def shown(path: Path) -> str:
    """A path as users type it: relative to the checkout when inside it."""
    path = Path(path)
    return str(path.relative_to(REPO_ROOT)) if path.is_absolute() and path.is_relative_to(REPO_ROOT) else str(path)
