"""The published data follows committed JSON Schemas (reference/schema/), made from the model's own definitions."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from fanin.model import matrix, schema
from fanin.model.results import HAZARDS
from fanin.model.source import REPO_ROOT
from fanin.report import data

SCHEMAS = REPO_ROOT / "reference" / "schema"
MATRIX = matrix.load()


def _validator(name: str) -> jsonschema.protocols.Validator:
    body = json.loads((SCHEMAS / schema.FILES[name]).read_text())
    jsonschema.Draft202012Validator.check_schema(body)
    return jsonschema.Draft202012Validator(body)


def test_the_committed_schemas_are_the_models() -> None:
    """One definition: the files are what fanin.model.schema makes (re-render with `./noxw -s report`)."""
    for name, body in schema.all_schemas().items():
        assert json.loads((SCHEMAS / name).read_text()) == body, f"reference/schema/{name} is stale"
    assert _validator("result-set").schema["properties"]["observations"]["additionalProperties"]["properties"][
        "hazard"
    ]["enum"] == list(HAZARDS)


@pytest.mark.parametrize("path", sorted((REPO_ROOT / "reference" / "results").glob("*.json")), ids=lambda p: p.stem)
def test_every_reference_result_set_follows_its_schema(path: Path) -> None:
    errors = sorted(_validator("result-set").iter_errors(json.loads(path.read_text())), key=str)
    assert not errors, "\n".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5])


def test_the_bisect_findings_follow_their_schema() -> None:
    errors = list(_validator("bisect").iter_errors(json.loads((REPO_ROOT / "reference" / "bisect.json").read_text())))
    assert not errors, errors[0].message


def test_the_published_data_is_consumable_without_fanin(tmp_path: Path) -> None:
    """data/index.json points at every result set and at the bisect findings; each follows its schema."""
    files = data.files(MATRIX, tmp_path)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    root = tmp_path / "data"
    index = json.loads((root / "index.json").read_text())
    assert not list(_validator("index").iter_errors(index))
    assert {c["id"] for c in index["cells"]} == {p.stem for p in (REPO_ROOT / "reference" / "results").glob("*.json")}
    for cell in index["cells"]:
        assert not list(_validator("result-set").iter_errors(json.loads((root / cell["results"]).read_text())))
    assert (root / index["bisect"]).is_file() and all((root / p).is_file() for p in index["schemas"].values())
    assert {p["id"] for p in index["probes"]} >= {"langgraph/same-key/no-reducer", "adk/output-key/same-key"}


def test_a_result_set_that_breaks_the_schema_is_caught() -> None:
    """The schema can fail: an unknown hazard and a missing field are both reported."""
    body = json.loads((REPO_ROOT / "reference" / "results" / f"{MATRIX.newest('langgraph').id}.json").read_text())
    first = next(iter(body["observations"]))
    body["observations"][first]["hazard"] = "fine"
    del body["observations"][first]["label"]
    messages = [e.message for e in _validator("result-set").iter_errors(body)]
    assert any("'fine' is not one of" in m for m in messages) and any(
        "'label' is a required property" in m for m in messages
    )
