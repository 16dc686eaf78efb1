"""docs/ARCHITECTURE.md stays true: its module table names every harness module, and only those."""

from __future__ import annotations

import re

from fanin.source import REPO_ROOT


def test_the_architecture_table_names_every_harness_module() -> None:
    text = (REPO_ROOT / "docs" / "ARCHITECTURE.md").read_text()
    named = set()
    for cell in re.findall(r"^\| ([^|]+) \|", text, flags=re.MULTILINE):
        named |= set(re.findall(r"`([a-z_/]+)`", cell))
    modules = {p.stem for p in (REPO_ROOT / "fanin").glob("*.py") if p.stem not in ("__init__", "__main__", "errors")}
    modules |= {"render/"}
    modules -= {"journal", "failures", "netblock", "environment", "pythons", "pypi", "audit_inspect", "add_cell"}
    assert modules <= named, f"modules missing from docs/ARCHITECTURE.md: {sorted(modules - named)}"
    assert named - {"render/"} <= {p.stem for p in (REPO_ROOT / "fanin").glob("*.py")}, (
        "the table names a module that is gone"
    )
