"""The CI command's second lane (fanin.run.lane): its commands in order, stopped at the first failure or by stop()."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fanin.model import matrix
from fanin.run.lane import Lane

MATRIX = matrix.load()


def fanin(*args: str) -> tuple[str, list[str]]:
    return f"python -m fanin {' '.join(args)}", [sys.executable, "-m", "fanin", *args]


def test_the_lane_stops_at_the_first_failure_with_fanins_code(tmp_path: Path) -> None:
    """`./noxw -s tests` runs the cells, then the sensitivity check, beside the tests: one lane, one log."""
    lane = Lane(tmp_path / "cells.log", [fanin("cells"), fanin("probe", "no-such-cell"), fanin("cells")], os.environ)
    lane.thread.start()
    lane.thread.join()
    assert lane.code == 2
    assert [line.rsplit(" in ", 1)[0] for line in lane.lines] == [
        "fanin cells: exit 0",
        "fanin probe no-such-cell: exit 2",
    ]
    log = (tmp_path / "cells.log").read_text()
    assert MATRIX.cells[0].id in log and "no-such-cell" in log.split("nox > python -m fanin probe no-such-cell", 1)[1]


def test_stopping_the_lane_ends_what_runs_as_ctrl_c_would_and_starts_nothing_after(tmp_path: Path) -> None:
    """A failure of the tests stops the cells beside them: wherever the lane is, what runs ends and nothing after it
    starts."""
    lane = Lane(
        tmp_path / "cells.log", [fanin("cells"), fanin("probe", "pydantic_graph-2.68.0"), fanin("cells")], os.environ
    )
    lane.thread.start()
    lane.stop()
    assert lane.code not in (None, 0) and not lane.thread.is_alive()  # 130, or a signal caught it starting
    assert len(lane.lines) < 3
