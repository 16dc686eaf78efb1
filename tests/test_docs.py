"""docs/ARCHITECTURE.md stays true: its module table names every harness module, and every import points down."""

from __future__ import annotations

import ast
import re

from fanin.model.source import REPO_ROOT

PACKAGE = REPO_ROOT / "fanin"
# The floors of docs/ARCHITECTURE.md: a folder may import its own floor's modules only from its own folder.
FLOORS = {"model": 1, "run": 2, "report": 2, "versions": 3, "project": 4}
# Small helpers a reader needs no table row for.
UNLISTED = {
    "model/errors",
    "run/journal",
    "run/netblock",
    "run/environment",
    "run/pythons",
    "versions/pypi",
    "versions/add_cell",
    "project/audit_inspect",
    "report/common",
}


def _modules() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("").as_posix()
        if path.name not in ("__init__.py", "__main__.py") and not rel.startswith("_catalogue"):
            found.add(rel)
    return found


def test_the_architecture_table_names_every_harness_module() -> None:
    text = (REPO_ROOT / "docs" / "ARCHITECTURE.md").read_text()
    named = set()
    for cell in re.findall(r"^\| ([^|]+) \|", text, flags=re.MULTILINE):
        named |= set(re.findall(r"`([a-z_/]+)`", cell))
    named = {n for n in named if not n.endswith("/")}
    modules = _modules()
    assert modules - UNLISTED <= named, (
        f"modules missing from docs/ARCHITECTURE.md: {sorted(modules - UNLISTED - named)}"
    )
    assert named <= modules, f"the table names a module that is gone: {sorted(named - modules)}"
    stale = sorted((UNLISTED - modules) | (UNLISTED & named))
    assert not stale, f"UNLISTED names a module that is gone or is in the table: {stale}"


def test_every_import_points_down() -> None:
    upward = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "_catalogue" or len(rel.parts) < 2:
            continue  # the top-level faces may import anything
        folder = rel.parts[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("fanin"):
                parts = node.module.split(".")
                target = parts[1] if len(parts) > 1 else None
                names = [a.name for a in node.names] if target is None else [target]
                for name in names:
                    if name not in FLOORS:
                        upward.append(f"{rel}: imports fanin.{name} (a top-level face)")
                    elif name != folder and FLOORS[name] >= FLOORS[folder]:
                        upward.append(f"{rel}: imports fanin.{name}, not below {folder}/")
    assert not upward, "\n".join(upward)


def test_every_test_the_reliability_table_names_exists() -> None:
    """A guarantee is only as good as the test that proves it: every `file.py::name` (and every bare `test_…` name
    after it in the same row, which means the same file) in docs/GUARANTEES.md's table is a test function there."""
    readme = (REPO_ROOT / "docs" / "GUARANTEES.md").read_text(encoding="utf-8")
    table = readme.split("## Reliability", 1)[1].split("\n## ", 1)[0]
    named = 0
    for row in (line for line in table.splitlines() if line.startswith("| ") and "`" in line):
        current: str | None = None
        for item in re.findall(r"`([^`]+)`", row.rsplit("|", 2)[-2]):
            path, _, name = item.rpartition("::")
            if path.endswith(".py"):
                current = path.removeprefix("tests/")
            elif not re.fullmatch(r"test_\w+", name):
                continue
            if current is None:
                continue
            source = (REPO_ROOT / "tests" / current).read_text(encoding="utf-8")
            assert re.search(rf"^def {re.escape(name.split('[')[0])}\(", source, re.M), f"{current}::{name}"
            named += 1
    assert named > 40


README_LINES = 250  # what fanin is, set-up, the three uses, where to read on (issue 36); the rest lives in docs/


def test_the_readme_stays_short_and_every_page_it_sends_a_reader_to_exists() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_LINES, "move what is not set-up or a first command into docs/"
    targets = [t for t in re.findall(r"\]\(([^)#\s]+)", readme) if "://" not in t]
    assert targets, "the README sends its reader on into docs/"
    missing = [t for t in targets if not (REPO_ROOT / t).exists()]
    assert not missing, f"the README links to pages that do not exist: {missing}"
    docs = REPO_ROOT / "docs"  # a sample of rendered output (a fenced block) links as the bundle it came from
    outside = [
        (page.name, t)
        for page in sorted(docs.glob("*.md"))
        for t in re.findall(r"\]\(([^)#\s]+)", re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S))
        if "://" not in t
        and not t.startswith("mailto:")
        and not ((page.parent / t).resolve().is_relative_to(REPO_ROOT) and (page.parent / t).exists())
    ]
    assert not outside, f"docs/ links to files outside the repository or not in it: {outside}"
