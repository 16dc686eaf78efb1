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


def probe_source_hash(file_text: str, function: str) -> str:
    """Six hex digits: short enough for a citation, long enough to tell edits apart."""
    return hashlib.sha256(probe_source(file_text, function).encode("utf-8")).hexdigest()[:6]


def shown(path: Path) -> str:
    """A path as users type it: relative to the checkout when inside it."""
    path = Path(path)
    return str(path.relative_to(REPO_ROOT)) if path.is_absolute() and path.is_relative_to(REPO_ROOT) else str(path)
