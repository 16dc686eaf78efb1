"""Progress of a matrix run: cells done of total, the running ones, an estimate from recorded run_seconds."""

import io
import json
from pathlib import Path

import pytest

from fanin.run import progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_after_each_cell_with_the_running_ones_and_an_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FANIN_PROGRESS", raising=False)
    out, clock = io.StringIO(), Clock()  # not a terminal: plain lines, as in CI and logs
    shown = progress.Progress(["a", "b", "c"], {"a": 10.0, "b": 20.0, "c": 30.0}, jobs=2, stream=out, clock=clock)
    assert shown.mode == "plain"
    shown.started("c")
    shown.started("b")
    clock.now = 20.0
    shown.finished("b", "fanin: b: same as the reference in 20.0 s")
    shown.started("a")
    clock.now = 25.0
    shown.finished("a", "fanin: a: same as the reference in 5.0 s")
    shown.finished("c", "fanin: c: same as the reference in 25.0 s")
    shown.close()
    assert out.getvalue().splitlines() == [
        "fanin: b: same as the reference in 20.0 s",
        "fanin: progress: 1/3 cells done; running: c; about 10 s left",  # (c: 10 s left + a: 10 s) / 2 jobs
        "fanin: a: same as the reference in 5.0 s",
        "fanin: progress: 2/3 cells done; running: c; about 2 s left",  # c: 30 s recorded, 25 s spent, / 2
        "fanin: c: same as the reference in 25.0 s",
    ]


def test_ci_means_plain_and_one_cell_shows_no_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("FANIN_PROGRESS", raising=False)
    monkeypatch.setenv("CI", "true")
    assert progress.mode(Terminal()) == "plain"
    monkeypatch.delenv("CI")
    assert progress.mode(Terminal()) == "live"
    out = io.StringIO()
    alone = progress.Progress(["a"], {"a": 1.0}, jobs=1, stream=out)
    alone.started("a")
    alone.finished("a", "fanin: a: same")
    assert out.getvalue() == "fanin: a: same\n"


def test_a_live_line_on_a_terminal_keeps_every_cells_own_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FANIN_PROGRESS", "live")
    out = io.StringIO()
    shown = progress.Progress(["a", "b"], {"a": 1.0, "b": 1.0}, jobs=1, stream=out)
    shown.started("a")
    shown.finished("a", "fanin: a: same as the reference in 1.0 s")
    shown.close()
    text = out.getvalue()
    assert "fanin: a: same as the reference in 1.0 s\n" in text
    assert "1/2 cells" in text and "running:" in text


def test_estimates_come_from_recorded_run_seconds_and_the_median_for_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"environment": {"run_seconds": 12.5}}))
    assert progress.recorded_seconds(path) == 12.5
    assert progress.recorded_seconds(tmp_path / "missing.json") is None
    assert progress.estimates({"a": 12.5, "b": 7.5, "c": None}) == {"a": 12.5, "b": 7.5, "c": 10.0}
    assert progress.duration(130) == "2 min 10 s" and progress.duration(42.4) == "42 s"
