"""The parallel matrix prints one line per cell with pytest's real counts."""

from pathlib import Path

from fanin.parallel import pytest_summary


def test_summary_is_the_last_pytest_result_line(tmp_path: Path) -> None:
    log = tmp_path / "cell.log"
    log.write_text(
        "nox > Running session probe(adk-2.13.0)\n"
        "======= 1 failed, 22 passed in 2.54s =======\n"
        "nox > Session probe(adk-2.13.0) failed.\n"
    )
    assert pytest_summary(log) == "1 failed, 22 passed in 2.54s"
    log.write_text("nox > Session probe(adk-2.13.0) aborted: no lock reference/locks/adk-9.txt\n")
    assert pytest_summary(log) is None
