"""Issue 34 §2: a behaviour can move with a companion package, not the framework; the gate names what moved."""

from __future__ import annotations

from pathlib import Path

from report_helpers import result_set

from fanin.model import matrix
from fanin.model.results import ResultSet
from fanin.versions import dependencies

LOCK = """\
langgraph==1.2.9 \\
    --hash=sha256:00
    # via -r -
langgraph-checkpoint==4.1.1 \\
    --hash=sha256:00
    # via
    #   langgraph
    #   langgraph-prebuilt
orjson==3.11.0 \\
    --hash=sha256:00
    # via langsmith
xxhash==3.8.1 \\
    --hash=sha256:00
    # via langgraph
"""


def _with(packages: dict[str, str]) -> ResultSet:
    rs = result_set("langgraph-1.2.9", {}, [])
    rs.environment = {**rs.environment, "packages": packages}
    return rs


def test_the_frameworks_own_dependencies_that_moved_are_named(tmp_path: Path) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text(LOCK)
    assert dependencies.direct(lock, "langgraph") == {"langgraph-checkpoint", "xxhash"}
    framework = matrix.load().frameworks["langgraph"]
    base = _with({"langgraph": "1.2.9", "langgraph-checkpoint": "4.1.1", "orjson": "3.11.0", "aiosqlite": "0.21.0"})
    here = _with({"langgraph": "1.2.9", "langgraph-checkpoint": "4.3.0", "orjson": "3.12.0", "aiosqlite": "0.22.1"})
    moves = dependencies.moved(framework, base, here, [lock])
    assert moves == [
        ("aiosqlite", "0.21.0", "0.22.1"),
        ("langgraph-checkpoint", "4.1.1", "4.3.0"),
    ]  # orjson: not its own
    line = dependencies.said(framework, moves)
    assert line.startswith("fanin: beside langgraph, its own dependencies moved: aiosqlite 0.21.0 → 0.22.1, ")
    assert dependencies.said(framework, []) == ""
    assert dependencies.moved(framework, base, base, [lock]) == []
