"""docs/PROBES.md's table of what each probe is proven sensitive to, formatted from reference/sensitivity.toml.

It says what the data file says; whether each patch really moves its probes is for
`fanin sensitivity` to show (a table in the docs is only as good as the last green run of it).
"""

from __future__ import annotations

from fanin.model.sensitivity import Patch

BEGIN = "<!-- sensitivity table: rendered from reference/sensitivity.toml by `python -m fanin sensitivity --table` -->"
END = "<!-- end of the sensitivity table -->"


def table(patches: list[Patch]) -> str:
    """One row per probe: the behaviours (patches) that must and do change its hazard or label."""
    by_probe: dict[str, list[Patch]] = {}
    for patch in patches:
        for probe in patch.probes:
            by_probe.setdefault(probe, []).append(patch)
    lines = [BEGIN, "", "| probe | proven sensitive to (patch, cell: the behaviour it simulates) |", "|---|---|"]
    for probe in sorted(by_probe):
        cells = "; ".join(f"`{p.id}` ({p.cell}): {p.simulates}" for p in by_probe[probe])
        lines.append(f"| `{probe}` | {cells} |")
    return "\n".join([*lines, "", END])
