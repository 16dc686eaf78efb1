"""pytest-html's page of a cell (FANIN_HTML=1): each observation and its before/after, the cell in the Environment table.

Only when pytest-html (and pytest-metadata) are loaded; otherwise every function here does nothing.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from fanin.model import compare, contract


def add_observation(report: pytest.TestReport, change: compare.Change) -> None:
    """With pytest-html loaded, the cell's page shows each observation and, for a change, its before/after."""
    try:
        from pytest_html import extras
    except ImportError:
        return
    assert change.after is not None
    added = [extras.json(change.after.to_json(), name=f"observation {change.probe_id}")]
    if change.kind not in (compare.Kind.SAME, compare.Kind.NEW):
        added.append(extras.text(compare.describe(change), name="before / after"))
    report.extras = [*getattr(report, "extras", []), *added]  # type: ignore[attr-defined]  # pytest-html reads it


def describe_cell(config: pytest.Config, recorder: Any) -> None:
    """pytest-html's Environment table shows the cell (pytest-metadata's stash), when those plugins are loaded."""
    try:
        from pytest_metadata.plugin import metadata_key
    except ImportError:
        return
    if metadata_key not in config.stash:
        return
    lock = config.getoption("fanin_lock")
    config.stash[metadata_key].update(
        {
            "fanin cell": recorder.cell,
            "framework": f"{config.getoption('fanin_package') or recorder.framework}",
            "lock": str(lock) if lock else "none",
            "reference": str(recorder.reference_path) if recorder.reference_path else "none",
            "network isolation": os.environ.get(contract.NETWORK_ISOLATION, contract.NETWORK_ISOLATION_UNSET),
            "postgresql": os.environ.get(contract.POSTGRES_VERSION, "not started"),
        }
    )
