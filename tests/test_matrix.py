"""reference/matrix.toml and the locks: what the issue asked for, and one clear line per mistake."""

import copy
import tomllib
from pathlib import Path

import pytest

from fanin import matrix, pythons
from fanin.matrix import MatrixError, parse

COMMITTED = matrix.load()
RAW = tomllib.loads(matrix.MATRIX_FILE.read_text())


def test_committed_matrix_covers_the_required_versions() -> None:
    langgraph = [c.version for c in COMMITTED.of("langgraph")]
    adk = [c.version for c in COMMITTED.of("adk")]
    for minor in ("0.2.", "0.3.", "0.4.", "0.5.", "0.6.", "1.0.", "1.1.", "1.2."):
        assert any(v.startswith(minor) for v in langgraph), minor
    assert {"1.2.9", "1.2.18"} <= set(langgraph)
    assert "1.0.0" in adk and "2.0.0" in adk
    assert len([v for v in adk if v.startswith("1.") and v != "1.0.0"]) >= 5  # four minors + the last 1.x
    assert len([v for v in adk if v.startswith("2.") and v != "2.0.0"]) >= 3  # two later minors + newest
    assert COMMITTED.smoke() == {COMMITTED.newest("langgraph").id, COMMITTED.newest("adk").id}


def test_every_cell_has_a_hashed_lock_of_its_framework_and_harness() -> None:
    for cell in COMMITTED.cells:
        text = cell.lock_path.read_text()
        assert f"\n{cell.requirement} \\" in text, cell.id
        assert "--hash=sha256:" in text, cell.id
        for requirement in COMMITTED.harness_requirements:
            assert f"\n{requirement}==" in text, (cell.id, requirement)
        assert f"nox -s lock -- {cell.id}" in text, cell.id


def test_ids_are_derived_from_framework_version_and_python() -> None:
    data = copy.deepcopy(RAW)
    data["cell"] = [dict(RAW["cell"][0], python="3.13")]
    cell = parse(data).cells[0]
    assert cell.id == f"{cell.framework.key}-{cell.version}-py3.13"
    assert cell.lock_path.name == f"{cell.id}.txt"


def broken(mutate) -> str:
    data = copy.deepcopy(RAW)
    mutate(data)
    with pytest.raises(MatrixError) as caught:
        parse(data)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_duplicate_cell() -> None:
    assert "duplicates cell #1" in broken(lambda d: d["cell"].append(dict(d["cell"][0])))


def test_missing_field() -> None:
    assert "'exclude_newer' is missing" in broken(lambda d: d["cell"][0].pop("exclude_newer"))


def test_unknown_cell_field() -> None:
    assert "unknown field(s) pyhton" in broken(lambda d: d["cell"][0].update(pyhton="3.12"))


def test_unknown_top_level_key() -> None:
    assert "unknown top-level key(s) cells" in broken(lambda d: d.update(cells=[]))


def test_unknown_framework() -> None:
    assert "unknown framework 'crewai'" in broken(lambda d: d["cell"][0].update(framework="crewai"))


@pytest.mark.parametrize("version", ["1.2.*", ">=1.2.0", "1.2.x", "latest"])
def test_version_must_be_exact(version: str) -> None:
    assert "not an exact release" in broken(lambda d: d["cell"][0].update(version=version))


def test_resolution_and_date_are_checked() -> None:
    assert "resolution 'today'" in broken(lambda d: d["cell"][0].update(resolution="today"))
    assert "not an ISO date-time" in broken(lambda d: d["cell"][0].update(exclude_newer="last year"))


def test_python_must_be_a_minor_version() -> None:
    assert "python '3'" in broken(lambda d: d["cell"][0].update(python="3"))


def test_not_toml_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text("[[cell]\nframework = ")
    with pytest.raises(MatrixError, match="not valid TOML"):
        matrix.load(path)


def test_unknown_cell_lookup_names_the_known_ones() -> None:
    with pytest.raises(MatrixError, match="no cell 'langgraph-9.9.9'.*langgraph-1.2.18"):
        COMMITTED.cell("langgraph-9.9.9")


def test_framework_accepts_key_or_package_name() -> None:
    assert COMMITTED.framework("google-adk").key == "adk"
    assert COMMITTED.framework("ADK").package == "google-adk"
    with pytest.raises(MatrixError, match="unknown framework 'crewai'"):
        COMMITTED.framework("crewai")


def test_python_discovery() -> None:
    assert pythons.find("3.99") is None
    found = pythons.find(COMMITTED.default_python)
    assert found is not None and Path(found).exists()
