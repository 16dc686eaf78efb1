"""What makes a large report fast must never change what it says: the collector pause, the memos."""

import gc
import json
from pathlib import Path

from pytest import MonkeyPatch

from fanin.model.results import Observation
from fanin.report import common, gcpause, links, pages
from fanin.report.view import Column


def test_the_collector_is_paused_inside_and_left_as_it_was_after() -> None:
    assert gc.isenabled()
    with gcpause.paused():
        assert not gc.isenabled()
        with gcpause.paused():  # nested: the inner block does not resume it
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gcpause.paused():
            pass
        assert not gc.isenabled()  # a caller that paused it keeps it paused
    finally:
        gc.enable()


def test_a_paused_function_resumes_the_collector_when_it_raises() -> None:
    @gcpause.while_paused
    def fails() -> None:
        assert not gc.isenabled()
        raise RuntimeError("x")

    try:
        fails()
    except RuntimeError:
        pass
    assert gc.isenabled()


def test_pretty_json_lays_out_a_long_value_the_same_every_time_and_as_the_data() -> None:
    value = {"runs": [{"saw": ["a"] * 30, "step": n} for n in range(3)], "é": "ü"}
    first = common.pretty_json(value, width=60)
    again = common.pretty_json(json.loads(json.dumps(value)), width=60)  # an equal copy, another object
    assert first == again and "\n" in first and json.loads(first) == value
    assert common.pretty_json({"é": [1]}) == '{"é": [1]}'  # one line when it fits, not ASCII-escaped


def test_a_step_is_made_for_the_columns_asked_never_for_equal_looking_ones() -> None:
    before = Observation("ok", {"v": 1}, "one", "one", "safe")
    after = Observation("ok", {"v": 2}, "two", "two", "safe")
    a, b = Column("lg-1", "lg", "1"), Column("lg-2", "lg", "2")
    twin = Column("lg-2", "lg", "2", python_note="py3.10")  # the same cell id, another column
    pages.clear()
    step = pages.step_between("p", a, b, before, after, {})
    assert step is not None and step.after_column is b
    assert pages.step_between("p", a, b, before, after, {}) == step
    other = pages.step_between("p", a, twin, before, after, {})
    assert other is not None and other.after_column is twin
    found = {"p": [{"good": "1", "bad": "2", "first_changed": "1.5"}]}
    bisected = pages.step_between("p", a, b, before, after, found)
    assert bisected is not None and bisected.first_changed == "1.5"  # another bisect map: its own step
    assert pages.step_between("p", a, b, before, after, {}) == step


def test_cached_relative_links_still_follow_the_working_directory(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    """A place above the working directory resolves against it (relpath reads it): the cache keys on it."""
    here = links.Links("", (("REPORT.md", "../up/REPORT.md"), ("matrix.html", "out/matrix.html")))
    monkeypatch.chdir(tmp_path)
    assert here.href("REPORT.md", "a/b", "matrix.html") == "../../up/REPORT.md#a/b"
    monkeypatch.chdir("/")  # ".." stops at the root here
    assert here.href("REPORT.md", "a/b", "matrix.html") == "../up/REPORT.md#a/b"
