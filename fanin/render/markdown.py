"""Markdown tables with tabulate: the probe × cell matrix, and the table of changes a gate prints."""

from __future__ import annotations

from tabulate import tabulate

from fanin import compare
from fanin.model import ResultSet

LABEL_WIDTH = 48


def label(text: str, width: int = LABEL_WIDTH) -> str:
    """A cell label short enough for a table, escaped for Markdown."""
    text = text.replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def matrix(result_sets: list[ResultSet], missing: dict[str, str] | None = None) -> str:
    """One table per framework: rows = probes, columns = cells (oldest first)."""
    missing = missing or {}
    out: list[str] = []
    frameworks = sorted({rs.framework for rs in result_sets} | {cell.split("-", 1)[0] for cell in missing})
    for framework in frameworks:
        sets = [rs for rs in result_sets if rs.framework == framework]
        columns = [rs.cell for rs in sets] + sorted(c for c in missing if c.startswith(f"{framework}-"))
        probe_ids = sorted({pid for rs in sets for pid in rs.observations})
        rows = []
        for pid in probe_ids:
            row = [f"`{pid}`"]
            for rs in sets:
                o = rs.observations.get(pid)
                row.append(f"{label(o.label)} ({o.hazard})" if o else "not observed")
            row.extend(f"not run: {missing[c]}" for c in columns[len(sets):])
            rows.append(row)
        out.append(f"## {framework}\n")
        out.append(tabulate(rows, headers=["probe", *columns], tablefmt="github") + "\n")
    return "\n".join(out)


def divergence(before: str, after: str) -> tuple[str, str]:
    """Drop the words two texts share at the start, so a table shows where they differ."""
    shared = 0
    for a, b in zip(before, after):
        if a != b:
            break
        shared += 1
    cut = before.rfind(" ", 0, shared) + 1 if shared < min(len(before), len(after)) else shared
    if cut <= 0:
        return before, after
    return "…" + before[cut:], "…" + after[cut:]


def changes(rows: list[compare.Change]) -> str:
    """The gate's table: one line per changed probe, before and after, from where they differ."""
    table = []
    for change in rows:
        before = f"[{change.before.hazard}] {change.before.detail}" if change.before else "—"
        after = f"[{change.after.hazard}] {change.after.detail}" if change.after else "—"
        if change.before and change.after:
            before, after = divergence(before, after)
        table.append([change.kind, change.probe_id, label(before, 64), label(after, 64)])
    return tabulate(table, headers=["change", "probe", "before", "after"], tablefmt="github")
