"""The committed reference must be what today's probes and locks produce (python/typing's
conformance suite fails CI on stale results; so does fanin).

These checks need no framework: the probe sources are read with ast. That the
observations themselves still reproduce is proven by the probe sessions that
`./noxw -s tests` runs after these tests, one per cell.
"""

import pytest

from fanin import catalog, matrix, report
from fanin.environment import file_sha256
from fanin.model import NOT_APPLICABLE, PROBE_ERROR, load

MATRIX = matrix.load()
DECLARED = catalog.declared()
CELLS = [pytest.param(cell, id=cell.id) for cell in MATRIX.cells]
STALE = "stale reference: run ./noxw -s 'probe({cell})' and, after review, ./noxw -s bless -- {cell}"


def test_probe_ids_are_unique_and_well_formed() -> None:
    ids = [p.id for p in DECLARED]
    assert len(ids) == len(set(ids))
    assert {p.framework for p in DECLARED} == {"langgraph", "adk"}


@pytest.mark.parametrize("cell", CELLS)
def test_reference_exists_and_is_for_its_cell(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path, expect_cell=cell.id)
    assert (reference.framework, reference.version) == (cell.framework.key, cell.version)
    assert reference.environment["packages"][cell.framework.package] == cell.version


@pytest.mark.parametrize("cell", CELLS)
def test_reference_holds_every_declared_probe_and_nothing_else(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path)
    declared = {p.id for p in DECLARED if p.framework == cell.framework.key}
    assert set(reference.observations) == declared, STALE.format(cell=cell.id)


@pytest.mark.parametrize("cell", CELLS)
def test_reference_was_made_by_todays_probe_code(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path)
    edited = [
        p.id for p in DECLARED
        if p.id in reference.probes and reference.probes[p.id].source_hash != p.source_hash
    ]
    assert not edited, f"probes edited since blessing: {edited}; " + STALE.format(cell=cell.id)


@pytest.mark.parametrize("cell", CELLS)
def test_reference_was_made_from_todays_lock(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path)
    assert reference.environment.get("lock_sha256") == file_sha256(cell.lock_path), STALE.format(cell=cell.id)


@pytest.mark.parametrize("cell", CELLS)
def test_reference_has_no_probe_errors_and_every_na_has_a_reason(cell: matrix.Cell) -> None:
    reference = load(cell.reference_path)
    for probe_id, observation in reference.observations.items():
        assert observation.outcome != PROBE_ERROR, probe_id
        if observation.outcome == NOT_APPLICABLE:
            assert observation.value["reason"].strip(), probe_id


def test_reference_report_is_rendered_from_the_reference() -> None:
    text, unreadable = report.render(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    assert unreadable == 0
    assert matrix.REFERENCE_REPORT.read_text() == text, "reference/REPORT.md is stale: run ./noxw -s report -- --reference"
