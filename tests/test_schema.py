"""The published data follows committed JSON Schemas (reference/schema/), made from the model's own definitions."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fanin.model import matrix, schema
from fanin.model.results import HAZARDS, load
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


def _mutations(name: str) -> list[tuple[str, Any]]:
    """Real data, and one break each: what fanin's own check must judge as jsonschema does."""
    import copy

    if name == "result-set":
        real = json.loads((REPO_ROOT / "reference" / "results" / f"{MATRIX.newest('langgraph').id}.json").read_text())
    elif name == "bisect":
        real = json.loads((REPO_ROOT / "reference" / "bisect.json").read_text())
    elif name == "scenario":
        real = tomllib.loads((REPO_ROOT / "scenarios" / "same-key-two-writers.toml").read_text())
    elif name == "adapter-protocol":
        real = {"framework": "x", "version": "1", "protocol": 1, "language": "python", "supports": []}
    else:
        real = data.index(MATRIX, [load(p) for p in sorted((REPO_ROOT / "reference" / "results").glob("adk-*.json"))])

    def edit(how: Any) -> Any:
        changed = copy.deepcopy(real)
        how(changed)
        return changed

    first = lambda mapping: next(iter(mapping))  # noqa: E731
    cases: list[tuple[str, Any]] = [("as committed", real)]
    if name == "result-set":
        obs = lambda d: d["observations"][first(d["observations"])]  # noqa: E731
        probe = lambda d: d["probes"][first(d["probes"])]  # noqa: E731
        cases += [
            ("unknown hazard", edit(lambda d: obs(d).update(hazard="fine"))),
            ("no label", edit(lambda d: obs(d).pop("label"))),
            ("extra field", edit(lambda d: obs(d).update(extra=1))),
            ("bad outcome", edit(lambda d: obs(d).update(outcome="raises:1bad"))),
            ("good raises", edit(lambda d: obs(d).update(outcome="raises:ValueError"))),
            ("version a number", edit(lambda d: d.update(version=3))),
            ("version a boolean", edit(lambda d: d.update(version=True))),
            ("empty cell", edit(lambda d: d.update(cell=""))),
            ("old schema", edit(lambda d: d.update(schema=1))),
            ("bad observation id", edit(lambda d: d["observations"].update({"Not An Id": obs(d)}))),
            ("bad hash", edit(lambda d: probe(d).update(source_hash="XYZ"))),
            ("expect a list", edit(lambda d: probe(d)["claim"].update(expect=[1]))),
            ("dimension values", edit(lambda d: probe(d).update(dimensions={"mode": [1]}))),
            ("package version a number", edit(lambda d: d["environment"]["packages"].update(x=1))),
            ("environment a list", edit(lambda d: d.update(environment=[]))),
        ]
    elif name == "bisect":
        step = lambda d: d[first(d)][0]  # noqa: E731
        cases += [
            ("no good", edit(lambda d: step(d).pop("good"))),
            ("first_changed a number", edit(lambda d: step(d).update(first_changed=5))),
            ("yanked numbers", edit(lambda d: step(d).update(skipped_yanked=[1]))),
            ("steps an object", edit(lambda d: d.update({first(d): {}}))),
        ]
    elif name == "scenario":
        cases += [
            ("no id", edit(lambda d: d.pop("id"))),
            ("orders a string", edit(lambda d: d.update(orders="a,b"))),
            ("no branches", edit(lambda d: d.update(branches=[]))),
        ]
    elif name == "adapter-protocol":
        cases += [
            ("another protocol", edit(lambda d: d.update(protocol=2))),
            ("no version", edit(lambda d: d.pop("version"))),
            ("an unknown command", {"cmd": "dance"}),
            ("an answer with two verdicts", {"observed": {"raises": None}, "error": "x"}),
        ]
    else:
        cases += [
            ("bad resolution", edit(lambda d: d["cells"][0].update(resolution="nightly"))),
            ("bisect a number", edit(lambda d: d.update(bisect=1))),
            ("bad probe id", edit(lambda d: d["probes"][0].update(id="x"))),
            ("no date", edit(lambda d: d.pop("date"))),
        ]
    return cases


@pytest.mark.parametrize("name", list(schema.FILES))
def test_fanins_own_check_judges_as_jsonschema_does(name: str) -> None:
    """fanin validates its data without jsonschema (a test dependency only): same verdict on real and broken data."""
    validator = _validator(name)
    for case, instance in _mutations(name):
        expected = not list(validator.iter_errors(instance))
        assert (schema.problem(instance, name) is None) == expected, case
        assert expected == (case in ("as committed", "good raises")), case  # each break is one


def test_fanins_own_check_refuses_a_keyword_it_does_not_know() -> None:
    for body in schema.all_schemas().values():
        schema.problem({}, body)  # every keyword the schemas use is known
    with pytest.raises(ValueError, match="cannot check the keyword"):
        schema.problem({}, {"type": "object", "maxProperties": 1})


@pytest.mark.parametrize("how", ["off-schema", "another-version"])
def test_report_out_refuses_data_that_breaks_its_schema_or_its_name_and_writes_nothing(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30 §3: `report --out` published such data without a word; now one line, exit 2, no file."""
    import fanin.__main__ as cli

    reference = tmp_path / "reference" / "results"
    reference.mkdir(parents=True)
    monkeypatch.setattr(matrix, "REFERENCE_RESULTS", reference)
    cells = ["langgraph-1.2.9", "langgraph-1.2.18", "adk-2.13.0"]
    for cell in cells:
        shutil.copyfile(REPO_ROOT / "reference" / "results" / f"{cell}.json", reference / f"{cell}.json")
    body = json.loads((reference / "langgraph-1.2.18.json").read_text())
    if how == "off-schema":  # the model reads it (it ignores the extra field); the schema forbids it
        body["observations"][next(iter(body["observations"]))]["note"] = "hand-edited"
        said = "langgraph-1.2.18.json: does not follow result-set.schema.json (at /observations/"
    else:  # the file says langgraph-1.2.18, the set inside is of 1.2.99
        body["version"] = "1.2.99"
        said = "langgraph-1.2.18.json: holds langgraph 1.2.99, but langgraph-1.2.18 is langgraph 1.2.18"
    (reference / "langgraph-1.2.18.json").write_text(json.dumps(body))
    out = tmp_path / "site"
    assert cli.main(["report", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("fanin: error: ") and said in err[-1], err
    assert not out.exists()
