"""The observation model and its JSON form."""

import dataclasses
import json
from pathlib import Path

import pytest

from fanin.model import matrix
from fanin.model.results import (
    SCHEMA_VERSION,
    Claim,
    Observation,
    ProbeInfo,
    ResultFileError,
    ResultSet,
    canonical,
    dumps,
    load,
    normalize_message,
    save,
)


def sample() -> ResultSet:
    info = ProbeInfo(
        "langgraph/same-key/no-reducer",
        "t",
        Claim("c", "https://example.org"),
        ("https://x",),
        "f.py",
        "test_x",
        "abc123",
    )
    obs = Observation(
        "raises:InvalidUpdateError",
        {"exception": "InvalidUpdateError"},
        "InvalidUpdateError",
        "raises InvalidUpdateError: x",
        "loud",
    )
    return ResultSet("langgraph-1.2.18", "langgraph", "1.2.18", {"python": "3.11.7"}, {info.id: info}, {info.id: obs})


def test_round_trip_is_lossless_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "langgraph-1.2.18.json"
    save(sample(), path)
    again = load(path, expect_cell="langgraph-1.2.18")
    assert again == sample()
    assert dumps(again) == path.read_text()
    assert json.loads(path.read_text())["schema"] == SCHEMA_VERSION


def test_canonical_sorts_sets_and_refuses_what_it_cannot_represent() -> None:
    assert canonical({"s": {"b", "a"}, "t": ("x", 1)}) == {"s": ["a", "b"], "t": ["x", 1]}
    with pytest.raises(TypeError, match="non-str key"):
        canonical({1: "a"})
    with pytest.raises(TypeError, match="not plain data"):
        canonical(object())


def test_addresses_uuids_and_timings_are_stripped() -> None:
    text = "<Foo at 0x7f3a2b4c5d60> id=123e4567-e89b-12d3-a456-426614174000 took 1.25s"
    assert canonical(text) == "<Foo at 0x…> id=<uuid> took 1.25s"
    assert normalize_message(text + "\n  second line") == "<Foo at 0x…> id=<uuid> took <duration> second line"


@pytest.mark.parametrize(
    ("outcome", "hazard", "label", "detail", "error"),
    [
        ("fine", "safe", "l", "d", "unknown outcome"),
        ("raises:not a name", "loud", "l", "d", "unknown outcome"),
        ("ok", "scary", "l", "d", "unknown hazard"),
        ("ok", "safe", "l", "  ", "detail"),
        ("ok", "safe", "", "d", "short label"),
        ("ok", "safe", "x" * 41, "d", "short label"),
    ],
)
def test_observation_refuses_bad_fields(outcome: str, hazard: str, label: str, detail: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        Observation(outcome, None, label, detail, hazard)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty file"),
        ('{"schema": 2, "cell": "langgraph-1.2.18", "observ', "not valid JSON"),
        ("[1, 2]", "not a fanin result set"),
        ('{"schema": 99}', "schema version 99"),
        ('{"schema": 1}', "schema version 1"),
        ('{"schema": 2, "cell": "x"}', "malformed result set"),
    ],
)
def test_broken_result_files_are_refused_with_one_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "langgraph-1.2.18.json"
    path.write_text(content)
    with pytest.raises(ResultFileError, match=message) as caught:
        load(path)
    assert "\n" not in str(caught.value)


def test_a_file_for_another_cell_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "langgraph-1.2.9.json"
    save(sample(), path)
    with pytest.raises(ResultFileError, match=r"holds cell 'langgraph-1\.2\.18'"):
        load(path, expect_cell="langgraph-1.2.9")


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ResultFileError, match="no such result file"):
        load(tmp_path / "nope.json")


def test_atomic_save_leaves_no_temporary_files(tmp_path: Path) -> None:
    save(sample(), tmp_path / "a.json")
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_result_file_that_is_only_lax_json_is_refused(tmp_path: Path) -> None:
    """A repeated key (whose second copy would silently win) and NaN are refused on read, with one line."""
    good = tmp_path / "langgraph-1.2.24.json"
    reference = matrix.load().newest("langgraph").reference_path.read_text()
    first = reference.index('"observations": {') + len('"observations": {')
    entry_end = reference.index("\n    },", first) + len("\n    },")
    repeated = reference[:first] + reference[first:entry_end] + reference[first:entry_end] + reference[entry_end:]
    good.write_text(repeated)
    with pytest.raises(ResultFileError, match="appears twice in one object"):
        load(good)
    good.write_text(reference.replace('"schema": 2', '"schema": 2, "x": NaN', 1))
    with pytest.raises(ResultFileError, match="NaN is not strict JSON"):
        load(good)


def test_nan_is_never_recorded_nor_written() -> None:
    with pytest.raises(TypeError, match="not strict JSON"):
        canonical({"x": float("nan")})
    rs = load(matrix.load().newest("langgraph").reference_path)
    first = next(iter(rs.observations))
    bad = dataclasses.replace(rs.observations[first], value={"x": float("inf")})
    rs.observations[first] = bad
    with pytest.raises(ResultFileError, match="not strict JSON"):
        dumps(rs)
