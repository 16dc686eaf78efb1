"""How a mitigation probe judges what it saw, in every framework: every write kept, in every order.

One verdict for all the kits (LangGraph, ADK, the join mitigations), so each probe reads as its
scenario. The order of harm is the harness's (`fanin.probe.harm`, the legend's: safe < order-coupled
< loud, nondeterministic < hangs < silent), never a copy.
"""

from typing import Any

from fanin.probe import harm


def judge(variants: dict[str, dict[str, dict]]) -> tuple[dict, str]:
    """The value and hazard of a mitigation observed in several variants and runs (namings, orders).

    `variants[variant][run]` is `{"made": [...], "kept": [...], "result": ...}` (optionally `"wrong"`:
    what went wrong although no write is missing, e.g. a duplicate or a stale value accepted;
    `"observed"`: shown, not compared), `{"raises": "Name"}` for a run the framework stopped with an
    error, or `{"hangs": what}` for a run that never ended (the probe's bound stopped it); a variant the
    version cannot build is `{"n/a": reason}`. Writes are named `variant | run | write`. A variant is
    silent if a write is missing (or something is wrong), hangs or loud if a run did, order-coupled if
    its runs' results differ, safe otherwise; the probe is its worst variant by the legend's order.
    """
    made: list[str] = []
    kept: list[str] = []
    lost: list[str] = []
    wrong: list[str] = []
    shown: dict[str, Any] = {}
    hazards: dict[str, str] = {}
    for variant, runs in variants.items():
        if "n/a" in runs:
            shown[variant] = runs
            continue
        found = ["safe"]
        results = []
        for run, seen in runs.items():
            stopped = "loud" if "raises" in seen else "hangs" if "hangs" in seen else None
            if stopped:
                found.append(stopped)
                results.append(seen)
                continue
            tag = " | ".join([*([variant] if len(variants) > 1 else []), *([run] if len(runs) > 1 else [])])
            named = {w: f"{tag} | {w}" if tag else w for w in seen["made"] + seen.get("wrong", [])}
            made += [named[w] for w in seen["made"]]
            kept += [named[w] for w in seen["made"] if w in seen["kept"]]
            missing = [named[w] for w in seen["made"] if w not in seen["kept"]]
            lost += missing
            wrong += [named[w] for w in seen.get("wrong", [])]
            found.append("silent" if missing or seen.get("wrong") else "safe")
            results.append(seen["result"])
        same = all(result == results[0] for result in results)
        if not same:
            found.append("order-coupled")
        hazards[variant] = max(found, key=harm)
        shown[variant] = {
            "hazard": hazards[variant],
            **({"order_independent": same} if len(runs) > 1 else {}),
            "runs": {
                run: seen if "raises" in seen or "hangs" in seen else {"result": seen["result"], **seen.get("observed", {})}
                for run, seen in runs.items()
            },
        }
    hazard = max(hazards.values(), key=harm) if hazards else "n/a"
    return {"writes": {"made": made, "kept": kept}, "lost": lost, "wrong": wrong, "variants": shown}, hazard


def words(value: dict, hazard: str, safe: str | None = None) -> tuple[str, str]:
    """A label (at most 40 characters) and a detail line for a judged mitigation.

    `safe` is the label when nothing went wrong; by default "every write kept", with
    ", order-independent" when some variant was run in more than one order.
    """
    variants = {k: v for k, v in value["variants"].items() if "n/a" not in v}
    total, kept = len(value["writes"]["made"]), len(value["writes"]["kept"])
    if hazard == "safe":
        compared = any("order_independent" in v for v in variants.values())
        label = safe or "every write kept" + (", order-independent" if compared else "")
    elif len(variants) == 1:
        label = {
            "order-coupled": "all kept, order-coupled",
            "loud": "raises",
            "hangs": "never ends",
            "silent": f"lost {total - kept} of {total}, {len(value['wrong'])} wrong",
        }.get(hazard, hazard)
    else:
        unsafe = [f"{name.split()[0]}: {v['hazard']}" for name, v in variants.items() if v["hazard"] != "safe"]
        label = "; ".join(unsafe) + ("; rest safe" if len(unsafe) < len(variants) else "")
    label = label if len(label) <= 40 else label[:39] + "…"
    detail = f"{kept} of {total} writes kept" + (f"; wrong: {value['wrong']}" if value["wrong"] else "") + "; "
    detail += "; ".join(
        f"{name}: n/a ({v['n/a']})"
        if "n/a" in v
        else f"{name}: {v['hazard']}, results {[r.get('result', r) for r in v['runs'].values()]}"
        for name, v in value["variants"].items()
    )
    return label, detail
