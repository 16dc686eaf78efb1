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
                row.append(f"{o.hazard}: {label(o.detail)}" if o else "not observed")
            row.extend(f"not run: {missing[c]}" for c in columns[len(sets):])
            rows.append(row)
        out.append(f"## {framework}\n")
        out.append(tabulate(rows, headers=["probe", *columns], tablefmt="github") + "\n")
    return "\n".join(out)


def changes(rows: list[compare.Change]) -> str:
    """The gate's table: one line per changed probe, before and after."""
    table = [
        [
            change.kind,
            change.probe_id,
            label(f"[{change.before.hazard}] {change.before.detail}", 64) if change.before else "—",
            label(f"[{change.after.hazard}] {change.after.detail}", 64) if change.after else "—",
        ]
        for change in rows
    ]
    return tabulate(table, headers=["change", "probe", "before", "after"], tablefmt="github")
