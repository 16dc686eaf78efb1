"""Classifying a change: behaviour (with its direction), wording, new or missing."""

import pytest

from fanin.model import compare
from fanin.model.results import Observation

BEFORE = Observation("ok", {"final": {"value": "B"}}, "B wins", "no error; last write wins: B", "silent")


@pytest.mark.parametrize(
    ("after", "kind", "fields"),
    [
        (BEFORE, compare.SAME, ()),
        (
            Observation("ok", {"final": {"value": "B"}}, "B wins", "reworded", "silent"),
            compare.Kind.WORDING,
            ("detail",),
        ),
        (
            Observation("ok", {"final": {"value": "B"}}, "B kept", "no error; last write wins: B", "silent"),
            compare.Kind.WORDING,
            ("label",),
        ),
        (
            Observation("ok", {"final": {"value": "A"}}, "B wins", "no error; last write wins: B", "silent"),
            compare.Kind.BEHAVIOUR,
            ("value",),
        ),
        (
            Observation("ok", {"final": {"value": "B"}}, "B wins", "no error; last write wins: B", "safe"),
            compare.Kind.BEHAVIOUR,
            ("hazard",),
        ),
        (
            Observation(
                "raises:InvalidUpdateError", {"exception": "InvalidUpdateError"}, "InvalidUpdateError", "raises", "loud"
            ),
            compare.Kind.BEHAVIOUR,
            ("outcome", "hazard", "value", "label", "detail"),
        ),
    ],
)
def test_classify(after: Observation, kind: str, fields: tuple[str, ...]) -> None:
    change = compare.classify("p", BEFORE, after)
    assert (change.kind, change.fields) == (kind, fields)
    assert change.is_breaking == (kind == compare.Kind.BEHAVIOUR)


def test_new_and_missing() -> None:
    assert compare.classify("p", None, BEFORE).kind == compare.NEW
    missing = compare.classify("p", BEFORE, None)
    assert missing.kind == compare.MISSING and missing.is_breaking


def test_describe_shows_the_changed_path_before_and_after() -> None:
    after = Observation("ok", {"final": {"value": "A"}}, "A wins", "no error; last write wins: A", "silent")
    text = compare.describe(compare.classify("langgraph/same-key/no-reducer", BEFORE, after))
    assert "value.final.value" in text
    assert 'before: "B"' in text and 'after:  "A"' in text
    assert "last write wins: B" in text and "last write wins: A" in text


def test_value_differences_reports_absent_keys() -> None:
    diffs = list(compare.value_differences({"a": 1}, {"b": 2}))
    assert diffs == [("value.a", 1, "(absent)"), ("value.b", "(absent)", 2)]


def test_counts_in_a_nondeterministic_detail_are_not_a_change() -> None:
    first = Observation("ok", {"outcomes": ["A", "B"], "runs": 20}, "A or B", "A ×12, B ×8", "nondeterministic")
    second = Observation("ok", {"outcomes": ["A", "B"], "runs": 20}, "A or B", "A ×9, B ×11", "nondeterministic")
    assert compare.classify("p", first, second).kind == compare.SAME


def _o(outcome: str, hazard: str, value: object = None) -> Observation:
    return Observation(outcome, value if value is not None else {"v": hazard}, "l", "d", hazard)


@pytest.mark.parametrize(
    ("before", "after", "label", "gates"),
    [
        (_o("ok", "safe"), _o("ok", "silent"), "regression", True),
        (_o("raises:X", "loud", {"exception": "X"}), _o("ok", "silent"), "regression", True),
        (_o("ok", "silent"), _o("ok", "safe"), "fix", False),
        (_o("ok", "silent"), _o("raises:X", "loud", {"exception": "X"}), "fix", False),
        # hangs sits between loud and silent: a timeout that turns a hang into an error is a fix
        (_o("raises:X", "loud", {"exception": "X"}), _o("ok", "hangs"), "regression", True),
        (_o("ok", "hangs"), _o("raises:X", "loud", {"exception": "X"}), "fix", False),
        (_o("ok", "hangs"), _o("ok", "silent"), "regression", True),
        (_o("ok", "nondeterministic"), _o("ok", "hangs"), "regression", True),
        (_o("n/a", "n/a", {"reason": "no API"}), _o("ok", "silent"), "new coverage", False),
        (_o("ok", "safe"), _o("n/a", "n/a", {"reason": "API removed"}), "regression", True),
        (_o("ok", "silent", {"final": "A"}), _o("ok", "silent", {"final": "B"}), "changed", True),
        (_o("ok", "safe"), Observation("ok", {"v": "safe"}, "reworded", "d", "safe"), "wording", False),
    ],
)
def test_the_direction_of_a_change_follows_the_legend(
    before: Observation, after: Observation, label: str, gates: bool
) -> None:
    change = compare.classify("x/y/z", before, after)
    assert (change.label, change.gates) == (label, gates)


def test_an_na_whose_reason_alone_changed_is_wording() -> None:
    """n/a in both versions, the reason put another way: wording (exit 0), not a behaviour change."""
    before = Observation("n/a", {"reason": "no module google.adk.apps in this version"}, "n/a", "n/a: no module", "n/a")
    after = Observation("n/a", {"reason": "no attribute App in google.adk.apps"}, "n/a", "n/a: no attribute", "n/a")
    change = compare.classify("adk/x/y", before, after)
    assert change.kind == compare.Kind.WORDING and not change.gates
    observed = Observation("ok", {"x": 1}, "safe", "x", "safe")
    assert compare.classify("adk/x/y", before, observed).direction == compare.Direction.NEW_COVERAGE


def test_the_gate_table_reads_regressions_first_and_says_what_moved() -> None:
    """Regressions, then changed, fix, new coverage, wording; a row whose texts match names the value path that moved."""
    from fanin.report.gate_table import changes_table

    safe = Observation("ok", {"kept": ["a", "b"]}, "kept", "both kept", "safe")
    silent = Observation("ok", {"kept": ["a"]}, "lost", "b lost", "silent")
    moved = Observation("ok", {"kept": ["b", "a"]}, "kept", "both kept", "safe")
    worded = Observation("ok", {"kept": ["a", "b"]}, "kept", "both kept, reworded", "safe")
    rows = [
        compare.classify("x/a/fix", silent, safe),
        compare.classify("x/b/wording", safe, worded),
        compare.classify("x/c/changed", safe, moved),
        compare.classify("x/d/regression", safe, silent),
    ]
    table = changes_table(rows).splitlines()[2:]
    assert [line.split("|")[1].strip() for line in table] == ["regression", "changed", "fix", "wording"]
    assert 'value.kept[0]: "a"' in table[1] and 'value.kept[0]: "b"' in table[1]


def test_the_gate_table_says_each_regression_and_changed_rows_mitigation_whole() -> None:
    """With the target's proofs a fifth column holds the mitigation of a regression or changed row (a row that moved
    the other way gets "—"); the text is one table cell, whatever it holds (a `|` split the row in two)."""
    from fanin.model import mitigations
    from fanin.report.gate_table import changes_table

    safe = Observation("ok", {"kept": ["a", "b"]}, "kept", "both kept", "safe")
    silent = Observation("ok", {"kept": ["a"]}, "lost", "b lost", "silent")
    rows = [compare.classify("x/d/regression", safe, silent), compare.classify("x/a/fix", silent, safe)]
    table = {
        "x/d/regression": mitigations.Entry("use a | b reducer", "https://example.org", "x/d/regression-mitigated")
    }
    proofs = mitigations.of_changes(
        table, [(c.probe_id, c.label) for c in rows], {"x/d/regression-mitigated": safe}, "2.0"
    )
    lines = changes_table(rows, proofs).splitlines()
    assert lines[0].split("|")[5].strip() == "mitigation"
    regression, fix = (line.split(" | ") for line in lines[2:])
    assert regression[-1].strip(" |") == "use a \\| b reducer (proven: x/d/regression-mitigated safe at 2.0)"
    assert fix[-1].strip(" |") == "—"
    assert changes_table(rows).splitlines()[0].count("|") == 5  # without proofs: the table as before


def test_a_live_thread_probe_with_no_earlier_release_here_is_not_covered_not_a_regression() -> None:
    """probe --here has one environment: a probe that resumes what an earlier release wrote is n/a there, and the
    reference's observation of it is not the installed version's behaviour going away."""
    from fanin.model.results import NEEDS_EARLIER_RELEASE

    before = _o("ok", "safe", {"across": {}})
    here = _o("n/a", "n/a", {"reason": "no earlier release", NEEDS_EARLIER_RELEASE: True})
    change = compare.classify("langgraph/upgrade/live-thread", before, here)
    assert change.direction == compare.Direction.REGRESSION  # as an upgrade's table reads it
    judged = compare.standing(change)
    assert judged.standing == compare.Standing.NOT_COVERED and not judged.gates
    gone = compare.standing(compare.classify("x/y/z", before, _o("n/a", "n/a", {"reason": "no API"})))
    assert gone.standing is None and gone.gates  # an API that went away still fails
