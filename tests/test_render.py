"""The rendered report: deterministic, self-contained, every probe an anchor with its cite line, every claim checked."""

import json
import re

from fanin.model import matrix
from fanin.model.results import Claim, Observation
from fanin.report import build as report
from fanin.report import common, markdown, outputs

MATRIX = matrix.load()


def test_rendering_is_byte_identical_across_runs() -> None:
    first, _ = outputs.reference(MATRIX)
    again, _ = outputs.reference(MATRIX)
    assert first == again


def test_html_is_self_contained_and_every_probe_is_an_anchor() -> None:
    files, _ = outputs.reference(MATRIX)
    page = files[matrix.REPORTS / "matrix.html"]
    assert "<link" not in page and " src=" not in page
    assert page.count("<script>") == 1  # the optional column picker; the page works without it
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    for view in rep.frameworks:
        for probe in view.probes:
            assert f'id="{probe.id}"' in page
            assert f'href="#{probe.id}"' in page


def test_markdown_report_has_an_anchor_and_a_cite_line_per_probe() -> None:
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    for view in rep.frameworks:
        text = markdown.probe_page(rep, view)
        for probe in view.probes:
            assert f'<a id="{probe.id}"></a>' in text
            assert re.search(
                rf"Cite as:\n\n```text\nfanin {re.escape(probe.id)}@[0-9a-f]{{6}} · \S+ \S+ · reference \d{{4}}-\d\d-\d\d @[0-9a-f]{{12}}\n```",
                text,
            )


def test_claim_check_reads_observation_fields_and_value_paths() -> None:
    observation = Observation("ok", {"final": {"items": ["A", "B"]}}, "both kept", "d", "order-coupled")
    assert Claim("c", "s", {"outcome": "ok", "value.final.items[1]": "B"}).holds(observation) is True
    assert Claim("c", "s", {"label": "A wins"}).holds(observation) is False
    assert Claim("c", "s", {"value.final.missing": 1}).holds(observation) is False
    assert Claim("c", "s").holds(observation) is None
    na = Observation("n/a", {"reason": "r"}, "n/a", "n/a: r", "n/a")
    assert Claim("c", "s", {"outcome": "ok"}).holds(na) is None


def test_spans_collapse_identical_versions_and_changes_are_marked() -> None:
    rep = report.build(matrix.REFERENCE_RESULTS, MATRIX, reference=True)
    for view in rep.frameworks:
        for probe in view.probes:
            for variant in probe.variants:
                spans = variant.observed_spans
                assert sum(1 for c in view.columns if c.cell in variant.observations) >= len(spans) >= 1
                assert len(variant.changed_cells) <= len(spans) - 1
                assert sum(len(s.columns) for s in variant.spans) == len(view.columns)


def test_pretty_json_is_the_same_data_and_fits_short_values_on_one_line() -> None:
    value = {"final": {"items": ["a", "b"]}, "runs": [{"saw": ["a"] * 30, "step": 2}], "flag": True, "n": 1.5}
    text = common.pretty_json(value)
    assert json.loads(text) == value
    assert '"final": {"items": ["a", "b"]}' in text
    assert common.pretty_json({"x": [1, True]}) == json.dumps({"x": [1, True]}, sort_keys=True)
