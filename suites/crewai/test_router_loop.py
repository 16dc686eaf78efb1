"""An or_ listener inside a router-driven loop: does it fire on every pass (crewAI #5972, PR #5994)?"""

from typing import Any

import cw_kit
from cw_kit import Flow, listen, or_, router, start
from fanin.probe import Claim, Observer, probe

PASSES = 3  # the router sends the flow round the loop until `work` has run this often
ISSUE = "https://github.com/crewAIInc/crewAI/issues/5972"
FIX = "https://github.com/crewAIInc/crewAI/pull/5994"


def _loop(log: list[str], entry_by_router: bool) -> Any:
    """begin -> work -> decide ("again" until work ran PASSES times, then "done") -> finish. `work` listens to
    or_(begin, "again"); entry_by_router: it listens to "again" alone and a router after begin emits it."""

    class Loop(Flow):
        @start()
        async def begin(self) -> str:
            log.append("begin")
            return "begin"

        if entry_by_router:

            @router(begin)
            async def enter(self) -> str:
                return "again"

            @listen("again")
            async def work(self) -> str:
                log.append("work")
                return "work"

        else:

            @listen(or_("begin", "again"))
            async def work(self) -> str:
                log.append("work")
                return "work"

        @router(work)
        async def decide(self) -> str:
            return "again" if log.count("work") < PASSES else "done"

        @listen("done")
        async def finish(self) -> str:
            log.append("finish")
            return "finish"

    return Loop()


async def _observe(obs: Observer, entry_by_router: bool) -> None:
    log: list[str] = []
    try:
        returned: Any = await cw_kit.kickoff(_loop(log, entry_by_router))
        raised = None
    except Exception as exc:  # a release that refuses the loop says so
        returned, raised = None, f"{type(exc).__name__}: {exc}"
    passes, finished = log.count("work"), "finish" in log
    value = {"passes": passes, "wanted": PASSES, "finished": finished, "log": log, "returned": repr(returned)}
    if raised:
        value["raises"] = raised
        obs.record(value, label=f"raises {raised.split(':')[0]}", detail=raised, hazard="loud")
        return
    ok = passes == PASSES and finished
    obs.record(
        value,
        label=f"work ran {passes} of {PASSES} passes" + ("" if finished else ", finish never ran"),
        detail=f"ran in order {log}; kickoff returned {returned!r}",
        hazard="safe" if ok else "silent",
    )


@probe(
    "crewai/or-listener/router-loop",
    title=f'`work` listens to or_(begin, "again"); a router after it emits "again" until it ran {PASSES} times,'
    ' then "done" to `finish`',
    claim=Claim(
        "Precondition: a multi-source or_ listener one of whose sources is a router label emitted again by a loop."
        " From 1.9.0 a multi-source or_ listener is marked fired once it runs and is never triggered again in"
        ' the run, so the loop\'s second "again" reaches no listener: the flow ends after one pass, no error,'
        " finish never runs, and kickoff returns the router's label; PR #5994 re-arms such a listener when a"
        " router emits a fresh signal.",
        cw_kit.OR_190,
        expect={"hazard": "silent"},
    ),
    sources=(ISSUE, FIX, cw_kit.DOCS),
)
async def test_or_listener_in_router_loop(obs: Observer) -> None:
    await _observe(obs, entry_by_router=False)


@probe(
    "crewai/or-listener/router-loop-mitigated",
    title='The router loop with `work` listening to the label "again" alone and a router after `begin` emitting'
    " it, so no or_ is left",
    claim=Claim(
        "Precondition: a loop that re-enters a method through a router label. A single-source listener fires"
        " every time its trigger is emitted, in every release (only multi-source or_ listeners are tracked as"
        " fired from 1.9.0), so the loop runs every pass and reaches finish.",
        cw_kit.OR_190,
        expect={"hazard": "safe"},
    ),
    sources=(ISSUE, cw_kit.DOCS),
)
async def test_or_listener_in_router_loop_mitigated(obs: Observer) -> None:
    await _observe(obs, entry_by_router=True)
