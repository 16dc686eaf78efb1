"""The stability pass (fanin.run.repetitions): a repetition probe whose verdict varies from run to run is caught.

The cells are stood in for by an observer that answers per seed, so the pass's choice of cells and probes,
its tally and its exit code are tested without a framework.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import fanin.__main__ as cli
from fanin.model import exits
from fanin.model.catalog import DeclaredProbe, declared
from fanin.model.errors import FaninError
from fanin.model.matrix import Cell
from fanin.model.results import Observation
from fanin.run import repetitions

KEPT = Observation("ok", {"lost": 0}, "kept", "kept ×20", "nondeterministic")
LOST = Observation("ok", {"lost": 1}, "lost", "lost ×1", "silent")
FAKE = DeclaredProbe("langgraph/x/repeated", "suites/langgraph/test_x.py", "test_x", "abc", repetition=True)


def varying(cell: Cell, probes: list[DeclaredProbe], seed: int) -> dict[str, Observation]:
    """A repetition probe whose stopping rule is too narrow: one run in five sees only one outcome."""
    return {FAKE.id: LOST if seed % 5 == 4 else KEPT}


def test_a_verdict_that_varies_across_runs_is_caught_and_counted() -> None:
    said: list[str] = []
    cell = cli.load_matrix().newest("langgraph")
    tallies = repetitions.check([cell], lambda c: [FAKE], 10, varying, said.append)
    assert [t.seen for t in tallies] == [(("ok nondeterministic: kept", 8), ("ok silent: lost", 2))]
    assert repetitions.exit_code(tallies) == exits.CHANGED
    assert said[0] == f"{cell.id}: 10 runs of 1 probe(s); 0 stable, 1 vary"
    assert said[1].startswith("  VARIES langgraph/x/repeated: ok nondeterministic: kept ×8 | ok silent: lost ×2")


def test_the_same_verdict_every_run_is_stable_whatever_its_counts() -> None:
    def counts_move(cell: Cell, probes: list[DeclaredProbe], seed: int) -> dict[str, Observation]:
        return {FAKE.id: Observation("ok", {"lost": 0}, "kept", f"kept ×{seed}", "nondeterministic")}

    tallies = repetitions.check([cli.load_matrix().newest("langgraph")], lambda c: [FAKE], 3, counts_move, print)
    assert not tallies[0].varies and repetitions.exit_code(tallies) == exits.SAME


def test_a_run_that_lacks_the_observation_varies() -> None:
    runs = [{FAKE.id: KEPT}, {}]
    (only,) = repetitions.tally("langgraph-1.2.24", runs, [FAKE.id])
    assert only.varies and dict(only.seen) == {"ok nondeterministic: kept": 1, repetitions.ABSENT: 1}


def test_it_needs_two_runs() -> None:
    with pytest.raises(FaninError, match="at least 2 runs"):
        repetitions.check([], lambda c: [], 1, varying)


def test_the_probes_chosen_are_the_frameworks_repetition_probes_or_the_ones_named() -> None:
    catalogue = declared()
    chosen = {p.id for p in repetitions.chosen_probes("langgraph", (), catalogue)}
    assert chosen == {p.id for p in catalogue if p.repetition and p.framework == "langgraph"}
    assert "langgraph/errors/sync-sibling-pending-writes" in chosen
    named = ("langgraph/fold-order/completion-time", "adk/parallel-agent/all-permutations")
    assert [p.id for p in repetitions.chosen_probes("langgraph", named, catalogue)] == [named[0]]
    with pytest.raises(FaninError, match="did you mean langgraph/fold-order/completion-time"):
        repetitions.check_names(("langgraph/fold-order/completion-tim",), catalogue)


def _fake_cells(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, observe: repetitions.Observe, fake_probe: bool = True
) -> list[str]:
    ran: list[str] = []
    monkeypatch.setattr(cli, "REPORTS", tmp_path)

    def observer(matrix: object, work: Path) -> repetitions.Observe:
        assert work == tmp_path / "stability"

        def recorded(cell: Cell, probes: list[DeclaredProbe], seed: int) -> dict[str, Observation]:
            ran.append(f"{cell.id}#{seed}")
            return observe(cell, probes, seed)

        return recorded

    monkeypatch.setattr(repetitions, "cell_observer", observer)
    if fake_probe:
        monkeypatch.setattr(repetitions, "chosen_probes", lambda framework, wanted, catalogue: [FAKE])
    return ran


def test_the_command_exits_1_when_a_verdict_varies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _fake_cells(monkeypatch, tmp_path, varying)
    assert cli.main(["stability", "--cells", "langgraph-1.2.24", "--runs", "5"]) == exits.CHANGED
    assert ran == [f"langgraph-1.2.24#{seed}" for seed in range(5)]
    assert "VARIES langgraph/x/repeated" in capsys.readouterr().out


def test_the_command_runs_each_frameworks_newest_cell_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _fake_cells(monkeypatch, tmp_path, lambda cell, probes, seed: {FAKE.id: KEPT})
    assert cli.main(["stability", "--runs", "2"]) == exits.SAME
    matrix = cli.load_matrix()
    assert ran == [f"{matrix.newest(key).id}#{seed}" for key in matrix.frameworks for seed in (0, 1)]
    ran.clear()
    assert cli.main(["stability", "--framework", "adk", "--runs", "2"]) == exits.SAME
    assert ran == [f"{matrix.newest('adk').id}#0", f"{matrix.newest('adk').id}#1"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["stability", "--probe", "langgraph/fold-order/completion-tim"], "did you mean"),
        (["stability", "--cells", "langgraph-9.9"], "no cell 'langgraph-9.9'"),
        (["stability", "--runs", "1", "--cells", "langgraph-1.2.24"], "at least 2 runs"),
        (["stability", "--repeated", "--runs", "3"], "choose a stability pass, not repeated runs"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _fake_cells(monkeypatch, tmp_path, varying, fake_probe=False)  # the real probe names and cells
    assert cli.main(args) == 2 and ran == []  # refused before any cell ran
    err = capsys.readouterr().err.strip()
    assert err.startswith("fanin: error: ") and "\n" not in err and message in err


def test_a_pass_leaves_the_runs_of_other_cells_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two passes side by side (one over ADK, one over LangGraph): the second must not delete the first's runs."""
    _fake_cells(monkeypatch, tmp_path, lambda cell, probes, seed: {FAKE.id: KEPT})
    other = tmp_path / "stability" / "adk-2.5.0" / "run-006"
    other.mkdir(parents=True)
    (tmp_path / "stability" / "langgraph-1.2.24" / "run-009").mkdir(parents=True)  # this pass's old runs
    assert cli.main(["stability", "--cells", "langgraph-1.2.24", "--runs", "2"]) == exits.SAME
    assert other.is_dir() and not (tmp_path / "stability" / "langgraph-1.2.24" / "run-009").exists()
