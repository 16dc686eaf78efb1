"""The repeat check tells exact probes, probes nondeterministic by design, and flaky probes apart."""

from pathlib import Path

import pytest

from fanin.model.errors import FaninError
from fanin.model.results import Claim, Observation, ProbeInfo, ResultSet, save
from fanin.run import stability

EXACT = Observation("ok", {"final": "B"}, "B", "d", "silent")
BY_DESIGN = Observation("ok", {"outcomes": ["A", "B"], "runs": 20}, "A or B", "A ×12, B ×8", "nondeterministic")


def run(tmp_path: Path, index: int, observations: dict[str, Observation], cell: str = "adk-2.13.0") -> Path:
    infos = {pid: ProbeInfo(pid, "t", Claim("c", "s"), (), "f.py", "f", "abcdef") for pid in observations}
    path = tmp_path / f"run-{index}.json"
    save(ResultSet(cell, "adk", "2.13.0", {}, infos, observations), path)
    return path


def test_exact_by_design_and_flaky(tmp_path: Path) -> None:
    flaky_a = Observation("ok", {"final": "A"}, "A", "d", "silent")
    counts_differ = Observation("ok", {"outcomes": ["A", "B"], "runs": 20}, "A or B", "A ×9, B ×11", "nondeterministic")
    reworded = Observation("ok", {"final": "B"}, "B", "d, in another order", "silent")
    paths = [
        run(
            tmp_path,
            0,
            {
                "adk/x/exact": EXACT,
                "adk/x/design": BY_DESIGN,
                "adk/x/flaky": EXACT,
                "adk/x/gone": EXACT,
                "adk/x/wording": EXACT,
            },
        ),
        run(
            tmp_path,
            1,
            {"adk/x/exact": EXACT, "adk/x/design": counts_differ, "adk/x/flaky": flaky_a, "adk/x/wording": reworded},
        ),
    ]
    result = stability.check(paths)
    assert result.exact == ["adk/x/exact"]
    assert result.nondeterministic == ["adk/x/design"]  # counts live in the detail: not a difference
    assert set(result.flaky) == {"adk/x/flaky", "adk/x/gone", "adk/x/wording"}  # a varying detail is a loose probe


def test_needs_two_runs_of_one_cell(tmp_path: Path) -> None:
    with pytest.raises(FaninError, match="at least two runs"):
        stability.check([run(tmp_path, 0, {"adk/x/exact": EXACT})])
    with pytest.raises(FaninError, match="different cells"):
        stability.check(
            [run(tmp_path, 0, {"adk/x/exact": EXACT}), run(tmp_path, 1, {"adk/x/exact": EXACT}, "adk-2.9.2")]
        )
