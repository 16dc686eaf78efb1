"""How a LangGraph mitigation probe judges what it saw: every write kept, in every naming and order.

Shared by the `-mitigated` probes so each reads as its scenario; the verdict logic is one piece of code.
"""

from collections import Counter
from typing import Any



# Worst last: a write lost with no error outranks a stopped run, which outranks an order dependence.
RANK = ("safe", "order-coupled", "nondeterministic", "loud", "silent")


# The same two writers under both namings: node name -> the writer's role (what it writes).
NAMINGS = {"a writes A, b writes B": {"a": "A", "b": "B"}, "a writes B, b writes A": {"a": "B", "b": "A"}}


def kept_of(made: dict[str, Any], final_items: list) -> list[str]:
    """The writes (`node:item`) whose item is in `final_items`, counting repeats (two equal writes need two copies)."""
    left = Counter(map(repr, final_items))
    kept = []
    for node, item in made.items():
        if left[repr(item)] > 0:
            left[repr(item)] -= 1
            kept.append(f"{node}:{item}")
    return kept


def judge(variants: dict[str, dict[str, dict]]) -> tuple[dict, str]:
    """The value and hazard of a mitigation observed in several variants and runs.

    `variants[variant][run]` is `{"made": [...], "kept": [...], "result": ...}` (optionally `"wrong"`:
    writes present in a wrong form, e.g. duplicated) or `{"raises": "Name"}`; a variant the version
    cannot build is `{"n/a": reason}`. Writes are named `variant | run | write`. A variant is silent if
    a write is missing from (or wrong in) a run's final state, loud if a run raised, order-coupled if
    its runs' results differ, safe otherwise; the probe is its worst variant.
    """
    made: list[str] = []
    kept: list[str] = []
    lost: list[str] = []
    wrong: list[str] = []
    shown: dict[str, Any] = {}
    hazards: dict[str, str] = {}
    judged_wrong = False
    for variant, runs in variants.items():
        if "n/a" in runs:
            shown[variant] = runs
            continue
        found = ["safe"]
        results = []
        for run, seen in runs.items():
            if "raises" in seen:
                found.append("loud")
                results.append(seen)
                continue
            tag = " | ".join([*([variant] if len(variants) > 1 else []), *([run] if len(runs) > 1 else [])])
            named = {w: f"{tag} | {w}" if tag else w for w in seen["made"] + seen.get("wrong", [])}
            made += [named[w] for w in seen["made"]]
            kept += [named[w] for w in seen["made"] if w in seen["kept"]]
            missing = [named[w] for w in seen["made"] if w not in seen["kept"]]
            lost += missing
            judged_wrong = judged_wrong or "wrong" in seen
            wrong += [named[w] for w in seen.get("wrong", [])]
            found.append("silent" if missing or seen.get("wrong") else "safe")
            results.append(seen["result"])
        same = all(result == results[0] for result in results)
        if not same:
            found.append("order-coupled")
        hazards[variant] = max(found, key=RANK.index)
        shown[variant] = {
            "hazard": hazards[variant],
            **({"order_independent": same} if len(runs) > 1 else {}),
            "runs": {run: seen if "raises" in seen else seen["result"] for run, seen in runs.items()},
        }
    hazard = max(hazards.values(), key=RANK.index) if hazards else "n/a"
    value = {"writes": {"made": made, "kept": kept}, "lost": lost, **({"wrong": wrong} if judged_wrong else {})}
    return {**value, "variants": shown}, hazard


def words(value: dict, hazard: str) -> tuple[str, str]:
    """A label (at most 40 characters) and a detail line for a judged mitigation."""
    variants = {k: v for k, v in value["variants"].items() if "n/a" not in v}
    total, kept = len(value["writes"]["made"]), len(value["writes"]["kept"])
    compared = any("order_independent" in v for v in variants.values())
    if hazard == "safe":
        label = "every write kept" + (", order-independent" if compared else "")
    elif len(variants) == 1:
        label = {
            "order-coupled": "all kept, order-coupled",
            "loud": "raises",
            "silent": f"lost or wrong: {total - kept + len(value.get('wrong', []))} of {total}",
        }.get(hazard, hazard)
    else:
        unsafe = [f"{name.split()[0]}: {v['hazard']}" for name, v in variants.items() if v["hazard"] != "safe"]
        label = "; ".join(unsafe) + ("; rest safe" if len(unsafe) < len(variants) else "")
    label = label if len(label) <= 40 else label[:39] + "…"
    detail = f"{kept} of {total} writes kept" + (f", {len(value['wrong'])} wrong" if value.get("wrong") else "") + "; "
    detail += "; ".join(
        f"{name}: n/a ({v['n/a']})" if "n/a" in v else f"{name}: {v['hazard']}, results {list(v['runs'].values())}"
        for name, v in value["variants"].items()
    )
    return label, detail
