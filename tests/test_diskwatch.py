"""The CI command's disk line: the lowest free space seen while it ran, so a disk that filled is told apart
from a failure of the code (a CI run once failed at pytest's capture file, INTERNALERROR, mid-run)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from fanin.run.diskwatch import DiskWatch

GB = 1024**3


def _readings(*free: float) -> Iterator[int]:
    yield from (int(f * GB) for f in free)


def test_the_line_names_the_lowest_free_space_and_warns_when_it_fell_under_two_gb(tmp_path: Path) -> None:
    readings = _readings(40, 12.5, 0.3, 25)
    watch = DiskWatch(tmp_path, interval=3600, free=lambda path: next(readings))
    watch.sample()
    watch.sample()
    line = watch.stop()  # the last reading, taken at the end
    assert line.startswith("disk: 40.0 GB free at the start, 0.3 GB at the lowest (")
    assert "25.0 GB at the end" in line and str(tmp_path) in line
    assert line.endswith("a failure above may be the disk filling (ENOSPC), not the code") and "\n" not in line


def test_no_warning_while_there_was_room_and_a_reading_that_fails_is_skipped(tmp_path: Path) -> None:
    readings = iter([30 * GB, 20 * GB])

    def free(path: Path) -> int:
        value = next(readings, None)
        if value is None:
            raise OSError("the filesystem went away")
        return value

    watch = DiskWatch(tmp_path, interval=3600, free=free)
    watch.sample()
    line = watch.stop()  # this reading fails: the one before stands
    assert (
        line
        == f"disk: 30.0 GB free at the start, 20.0 GB at the lowest ({watch.lowest_at}), 20.0 GB at the end, on the filesystem of {tmp_path}"
    )


def test_the_thread_samples_until_stopped(tmp_path: Path) -> None:
    seen: list[Path] = []

    def free(path: Path) -> int:
        seen.append(path)
        return 5 * GB

    watch = DiskWatch(tmp_path, interval=0.001, free=free).start()
    while len(seen) < 3:  # the thread's own samples, counted; no clock decides
        pass
    watch.stop()
    assert not watch.thread.is_alive() and set(seen) == {tmp_path}
