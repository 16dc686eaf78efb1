"""The live-thread probes' labels fit the result schema: a longer one made the observation a probe-error (the
bisect of adk/upgrade/live-session lost five releases' observations to a 50-character fallback)."""

from __future__ import annotations

import sys

from fanin.model.results import LABEL_LIMIT
from fanin.model.source import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "suites"))

import live_kit

STORES = ("thread", "session", "checkpoint", "state", "snapshot")  # what each framework's live probe resumes


def test_every_live_label_fits_the_schema() -> None:
    for store in STORES:
        for label in (live_kit.same(store), live_kit.unlike(store)):
            assert 0 < len(label) <= LABEL_LIMIT, label


def test_an_error_class_named_past_the_limit_is_left_to_the_value() -> None:
    assert live_kit.raised("the resume", "OperationalError") == "the resume raised OperationalError"
    long_name = "WorkflowCheckpointIncompatibleError"
    assert live_kit.raised("reading the state", long_name) == "reading the state raised"
    assert len(live_kit.raised("the resume", long_name)) <= LABEL_LIMIT
