"""The upgrade gate's live-thread probes: the target's observation is the upgrade's own answer (it resumed what the
base wrote), never compared with the base's (which resumed what the release before the base wrote)."""

from __future__ import annotations

import pytest

from fanin.model import compare, exits, matrix
from fanin.model.results import Observation, ResultSet
from fanin.versions import upgrade

MATRIX = matrix.load()
SAFE = Observation("ok", {"across": 1}, "resumes as a session it wrote itself", "written by A: alike", "safe")
LOUD = Observation("raises:OperationalError", {"across": 2}, "the resume raised OperationalError", "raised", "loud")
NOT_APPLICABLE = Observation("n/a", {"reason": "no API"}, "n/a", "n/a: no API", "n/a")
BROKEN = Observation("probe-error", {"error": "x"}, "probe-error", "the writer failed", "n/a")


def _results(observations: dict[str, Observation]) -> ResultSet:
    return ResultSet("adk-1.25.1", "adk", "1.25.1", {}, {}, observations)


def test_only_the_upgrade_topic_is_live() -> None:
    seen = {"adk/upgrade/live-session": SAFE, "adk/upgrade/live-session[postgres]": LOUD, "adk/join/x": LOUD}
    assert compare.live_ids(_results(seen)) == {"adk/upgrade/live-session", "adk/upgrade/live-session[postgres]"}


@pytest.mark.parametrize(
    ("seen", "word", "breaks"),
    [(SAFE, "resumed", False), (LOUD, "broke", True), (NOT_APPLICABLE, "n/a", False), (BROKEN, "probe-error", True)],
)
def test_a_resume_breaks_unless_safe_or_not_applicable(seen: Observation, word: str, breaks: bool) -> None:
    assert (compare.resume_word(seen), compare.breaks_resume(seen)) == (word, breaks)


def test_the_live_gate_fails_on_a_loud_resume_even_where_the_base_was_loud_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ADK 1.15.1 -> 1.25.1: the base's own observation (1.5.0's session read by 1.15.1) is loud as well, so a diff
    would have called the pair unchanged; the target's own verdict gates."""
    target = _results({"adk/upgrade/live-session": LOUD, "adk/upgrade/live-session[postgres]": SAFE})
    assert upgrade.live_gate("google-adk 1.15.1", target, compare.live_ids(target)) == exits.CHANGED
    said = capsys.readouterr().out
    assert "resumed what google-adk 1.15.1 wrote mid-fan-out, 2 probes: 1 did not resume as its own" in said
    assert "| broke    | adk/upgrade/live-session " in said
    assert "| resumed  | adk/upgrade/live-session[postgres] " in said


def test_the_live_gate_passes_when_every_resume_is_safe_or_not_applicable() -> None:
    target = _results({"adk/upgrade/live-session": SAFE, "adk/upgrade/live-session[postgres]": NOT_APPLICABLE})
    assert upgrade.live_gate("google-adk 1.15.1", target, compare.live_ids(target)) == exits.SAME


@pytest.mark.parametrize(
    ("args", "rerun"),
    [
        (["google-adk==1.25.1", "--from", "1.15.1"], False),  # the cell below wrote the reference's stores
        (["google-adk==1.25.1", "--from", "1.5.0"], True),  # the reference resumed 1.15.1's, not 1.5.0's
        (["google-adk==1.15.1", "--from", "1.25.1"], True),  # a downgrade: the newer release writes
        (["haystack-ai==3.4.1", "--from", "2.31.0"], False),
        (["haystack-ai==3.4.1", "--from", "2.7.0"], True),
        (["pydantic-graph==2.68.0", "--from", "1.5.0"], False),  # no live threads
        (["adkjs==1.6.0", "--from", "1.3.0"], False),  # a Node framework's, as a Python one's
        (["adkjs==1.6.0", "--from", "1.0.0"], True),
    ],
)
def test_a_reference_target_runs_again_when_its_stores_were_not_the_bases(
    args: list[str], rerun: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fanin.versions import pypi, registry

    monkeypatch.setattr(
        registry, "resolve", lambda framework, wanted: pypi.Release(wanted, "2026-01-01T00:00:00Z", False)
    )
    assert upgrade.resumes_elsewhere(upgrade.plan(args, MATRIX), MATRIX) is rerun
