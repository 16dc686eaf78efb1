"""or_ and and_ listeners fed by two parallel branches, and what kickoff returns."""

import asyncio
from typing import Any

import cw_kit
from cw_kit import Flow, and_, listen, or_, start
from fanin.probe import Claim, Observer, probe


def _or_flow(log: list[str], with_and: bool) -> Any:
    """s -> a, b -> j = or_(a, b); with_and: k = and_(a, b) listens to the same two (a and b then feed two listeners).
    b waits until j has started (a returned and its trigger reached j first) and j until b has returned, so b
    finishes while j is still in flight: one order, in every release."""
    j_started, b_done = asyncio.Event(), asyncio.Event()

    class Fan(Flow):
        @start()
        async def s(self) -> str:
            log.append("s")
            return "s"

        @listen(s)
        async def a(self) -> str:
            log.append("a")
            return "a"

        @listen(s)
        async def b(self) -> str:
            await cw_kit.bounded(j_started, log, "b")  # a returned and its trigger reached j first
            log.append("b")
            b_done.set()
            return "b"

        @listen(or_(a, b))
        async def j(self, value: Any = None) -> str:
            log.append(f"j-start:{value}")
            j_started.set()
            await cw_kit.bounded(b_done, log, "j")
            log.append(f"j-end:{value}")
            return f"j:{value}"

        if with_and:

            @listen(and_(a, b))
            async def k(self) -> str:
                log.append("k")
                return "k"

    return Fan()


@probe(
    "crewai/or-listener/two-branches",
    title="start `s` fans out to `a` and `b`; `j` listens to or_(a, b) and is still running when `b` finishes;"
    " alone, and beside an and_(a, b) listener",
    claim=Claim(
        "Precondition: both branches of an or_ listener complete in one run. Up to 1.8.1 _find_triggered_methods"
        " triggers an or_ listener on every method that completes, so j runs once per branch; from 1.9.0 a"
        " multi-source or_ listener is marked fired (_fired_or_listeners) and the second trigger is dropped"
        " without a log; where a and b feed only j they form a racing group, run first-completed-wins, and the"
        " losing task is cancelled.",
        cw_kit.OR_190,
        expect={"hazard": "silent"},
    ),
    sources=(cw_kit.OR_181, cw_kit.RACING_190, cw_kit.DOCS, "https://github.com/crewAIInc/crewAI/issues/5972"),
)
async def test_or_two_branches(obs: Observer) -> None:
    runs: dict[str, Any] = {}
    for shape in ("or alone", "or beside and"):
        log: list[str] = []
        flow = _or_flow(log, shape == "or beside and")
        returned = await cw_kit.kickoff(flow)
        starts = [e.split(":", 1)[1] for e in log if e.startswith("j-start:")]
        ends = [e.split(":", 1)[1] for e in log if e.startswith("j-end:")]
        runs[shape] = {"log": log, "j_started_for": starts, "j_finished_for": ends, "returned": repr(returned)}
    counts = {shape: len(r["j_finished_for"]) for shape, r in runs.items()}
    rule = (
        "once per branch" if all(n == 2 for n in counts.values())
        else "once" if all(n == 1 for n in counts.values())
        else ", ".join(f"{shape}: {n}x" for shape, n in counts.items())
    )
    dropped = {shape: sorted({"a", "b"} - set(r["j_finished_for"])) for shape, r in runs.items()}
    lost = any(dropped.values())
    obs.record(
        {"runs": runs, "finished": counts, "rule": rule, "dropped": dropped},
        label={"once per branch": "or_ ran once per branch", "once": "or_ ran once, 2nd trigger dropped"}.get(
            rule, "or_ runs differ by shape"
        ),
        detail="; ".join(
            f"{shape}: j started for {r['j_started_for']}, finished for {r['j_finished_for']}, kickoff returned"
            f" {r['returned']}"
            for shape, r in runs.items()
        ),
        hazard="silent" if lost else "order-coupled",
    )


@probe(
    "crewai/and-listener/two-branches",
    title="start `s` fans out to `a` and `b`; `k` listens to and_(a, b)",
    claim=Claim(
        "Precondition: both branches of an and_ listener complete in one run. _find_triggered_methods keeps the"
        " methods still pending per and_ listener (_pending_and_listeners) and triggers it once the set is"
        " empty: k runs once, after both a and b, handed the output of the one that completed last.",
        cw_kit.AND_181,
        expect={"hazard": "safe", "value.k_runs": 1},
    ),
    sources=(cw_kit.DOCS,),
)
async def test_and_two_branches(obs: Observer) -> None:
    log: list[str] = []

    class Fan(Flow):
        @start()
        async def s(self) -> str:
            log.append("s")
            return "s"

        @listen(s)
        async def a(self) -> str:
            log.append("a")
            return "a"

        @listen(s)
        async def b(self) -> str:
            log.append("b")
            return "b"

        @listen(and_(a, b))
        async def k(self, value: Any = None) -> str:
            log.append("k")
            handed.append(value)
            return "k"

    handed: list[Any] = []
    await cw_kit.kickoff(Fan())
    runs = log.count("k")
    after_both = runs > 0 and log.index("k") > max(log.index("a"), log.index("b"))
    obs.record(
        {"k_runs": runs, "after_both": after_both, "log": log, "handed": handed},
        label=f"and_ listener ran {runs}x" + (", after both" if after_both else ""),
        detail=f"ran in order {log}; k was handed {handed} (the output of the method that completed last)",
        hazard="safe" if runs == 1 and after_both else "silent",
    )


@probe(
    "crewai/kickoff/return-value",
    title="a linear flow `s` -> `t`, each returning its name: what kickoff() and kickoff_async() return",
    claim=Claim(
        "Precondition: code that uses kickoff's return value as the flow's result. Issue 33's spike saw 1.4.0"
        " return None and later releases the last method's value (kickoff_async returns the final output of"
        " _method_outputs when there is one).",
        cw_kit.KICKOFF_181,
        expect={"hazard": "safe"},
    ),
    sources=(cw_kit.DOCS,),
)
async def test_kickoff_return(obs: Observer) -> None:
    class Line(Flow):
        @start()
        async def s(self) -> str:
            return "s"

        @listen(s)
        async def t(self) -> str:
            return "t"

    returned = {
        "kickoff_async": repr(await Line().kickoff_async()),
        "kickoff": repr(await asyncio.to_thread(Line().kickoff)),  # sync kickoff runs its own loop: off ours
    }
    same = len(set(returned.values())) == 1
    obs.record(
        {"returned": returned},
        label=f"kickoff returned {returned['kickoff']}" + ("" if same else f", async {returned['kickoff_async']}"),
        detail="; ".join(f"{how}() of s -> t returned {value}" for how, value in returned.items()),
        hazard="safe" if set(returned.values()) == {"'t'"} else "silent",
    )
