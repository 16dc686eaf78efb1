"""The gate's table of changes, as `upgrade`, `diff`, `bless` and the release watch print it.

Regressions first, in compare's one order of change words; one line per changed probe, before and
after, cut to where they differ; given the target's proofs (fanin.model.mitigations), a regression or
changed row also names its mitigation and the probe that proves it there, or says there is none.
"""

from __future__ import annotations

from collections.abc import Mapping

from tabulate import tabulate

from fanin.model import compare
from fanin.model.mitigations import Proof
from fanin.model.results import Observation
from fanin.report.markdown import escape, label


def divergence(before: str, after: str) -> tuple[str, str]:
    """Drop the words two texts share at the start, so a table shows where they differ."""
    shared = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        shared += 1
    cut = before.rfind(" ", 0, shared) + 1 if shared < min(len(before), len(after)) else shared
    if cut <= 0:
        return before, after
    return "…" + before[cut:], "…" + after[cut:]


def _what_moved(change: compare.Change) -> tuple[str, str]:
    """Before/after where the hazard and detail read the same: the first outcome or value path that differs."""
    assert change.before is not None and change.after is not None
    if change.before.outcome != change.after.outcome:
        return f"outcome {change.before.outcome}", f"outcome {change.after.outcome}"
    for path, before, after in compare.value_differences(change.before.value, change.after.value):
        return f"{path}: {compare.compact(before)}", f"{path}: {compare.compact(after)}"
    return f"label {change.before.label}", f"label {change.after.label}"


def changes_table(rows: list[compare.Change], proofs: Mapping[str, Proof] | None = None) -> str:
    """The gate's table: regressions first; one line per changed probe, before and after, from where they differ.

    With `proofs` (by observation id) a fifth column holds each row's mitigation: a regression or changed row
    without a proof in it would be a bug of the caller, so it says so rather than leaving the cell blank.
    """
    table = []
    for change in sorted(rows, key=lambda c: (compare.change_order(c.label), c.probe_id)):
        before = f"[{change.before.hazard}] {change.before.detail}" if change.before else "—"
        after = f"[{change.after.hazard}] {change.after.detail}" if change.after else "—"
        if change.before and change.after and before == after:
            before, after = _what_moved(change)
        elif change.before and change.after:
            before, after = divergence(before, after)
        row = [change.label, change.probe_id, label(before, 64), label(after, 64)]
        if proofs is not None:
            found = proofs.get(change.probe_id)
            row.append(escape(found.words) if found else "—")
        table.append(row)
    headers = ["change", "probe", "before", "after", *(["mitigation"] if proofs is not None else [])]
    return tabulate(table, headers=headers, tablefmt="github")


def live_table(rows: list[tuple[str, str, Observation]]) -> str:
    """The upgrade's live-thread rows: the word compare gave each (broke, resumed, n/a, ...), the probe, what the
    target observed resuming the base's store."""
    table = [[word, probe_id, label(f"[{seen.hazard}] {seen.detail}", 96)] for word, probe_id, seen in rows]
    return tabulate(table, headers=["resume", "probe", "observed"], tablefmt="github")
