"""GraphBuilder joins of two entry points: equal depth (a, b -> join) and unequal depth (a -> join, b -> b2 -> join)."""

import asyncio
from typing import Any

import st_kit
from fanin.probe import Claim, Observer, probe
from gates import IdleTurns, settle

SRC = "https://github.com/strands-agents/sdk-python/blob/v1.62.0/src/strands/multiagent/graph.py"
OLD = "https://github.com/strands-agents/sdk-python/blob/v1.0.0/src/strands/multiagent/graph.py"


def _entries(turns: IdleTurns, log: list[str]) -> dict[str, st_kit.Step]:
    """The two entry points, each holding until both are in flight (where the graph runs them together)."""

    def gated(name: str) -> st_kit.StepFn:
        async def fn(fed: list[str], state: dict[str, Any] | None) -> None:
            await turns.wait(name)
            log.append(name)
            turns.done(name)

        return fn

    return {"a": st_kit.Step(gated("a")), "b": st_kit.Step(gated("b"))}


@probe(
    "strands/join/equal-depth",
    title="Two entry points `a` and `b`, each with an edge to `join`: how often the join runs, and which inputs"
    " each run is handed",
    claim=Claim(
        "A node is ready when any incoming edge's source completed in the batch just run (1.10 on; before,"
        " any completed source and the node not yet completed): `a` and `b` finish in one batch, so `join`"
        " runs once with both inputs. Precondition: no edge conditions.",
        f"{SRC}#L975-L992",
        expect={"hazard": "safe"},
    ),
    sources=(f"{OLD}#L349-L380",),
)
async def test_equal_depth(obs: Observer) -> None:
    turns, log = IdleTurns(["a", "b"]), list[str]()
    steps = {**_entries(turns, log), "join": st_kit.Step(st_kit.nothing)}
    graph, _ = st_kit.build(steps, [("a", "join"), ("b", "join")], ["a", "b"], limit=20)
    with obs.framework():
        await st_kit.run(graph)
    fed = [sorted(f) for f in steps["join"].fed]
    obs.record(
        {"join runs": len(fed), "fed": fed, "together": not turns.vacuous},
        label=f"the join ran {len(fed)} time(s)",
        detail=f"the join's inputs per run: {fed}; entry points in flight together: {not turns.vacuous}",
        hazard="safe" if fed == [["a", "b"]] else "silent",
    )


async def _unequal(join_first: bool) -> dict[str, Any]:
    """a -> join, b -> b2 -> join; b2 holds until the join has started or nothing else can run (settle: loop
    iterations, no wall time), so a join the graph starts before b2 ends is seen as such. `join_first`: the
    join is added to the builder before b2 (an older graph picks its next batch in insertion order)."""
    turns, log = IdleTurns(["a", "b"]), list[str]()
    started = asyncio.Event()
    finished: list[str] = []
    partial: list[bool] = []

    async def b2(fed: list[str], state: dict[str, Any] | None) -> None:
        for _ in range(3):
            if started.is_set():
                break
            await settle()
        finished.append("b2")

    async def join(fed: list[str], state: dict[str, Any] | None) -> None:
        partial.append("b2" not in finished)
        started.set()

    entries = _entries(turns, log)
    tail = {"join": st_kit.Step(join), "b2": st_kit.Step(b2)}
    steps = {**entries, **(tail if join_first else dict(reversed(list(tail.items()))))}
    graph, _ = st_kit.build(steps, [("a", "join"), ("b", "b2"), ("b2", "join")], ["a", "b"], limit=20)
    await st_kit.run(graph)
    return {
        "join runs": len(steps["join"].fed),
        "fed": [sorted(f) for f in steps["join"].fed],
        "before b2 ended": partial,
        "together": not turns.vacuous,
    }


@probe(
    "strands/join/unequal-depth",
    title="Entry points `a` -> `join` and `b` -> `b2` -> `join`, `b2` still running when `a` is done: how often"
    " the join runs, and whether a run starts before `b2` has ended; the join added before and after `b2`",
    claim=Claim(
        "Readiness is 'any incoming edge's source completed': after the first batch (a, b) `join` is ready"
        " through `a` and starts beside `b2`, before b2's result exists; from 1.10 it is ready again through"
        " `b2` in the next batch and runs a second time (no completed-node check), before that it never runs"
        " again, so b2's result never reaches it. Precondition: no edge conditions, no reset_on_revisit.",
        f"{SRC}#L953-L992",
        expect={"hazard": "silent"},
    ),
    sources=(f"{OLD}#L336-L380",),
)
async def test_unequal_depth(obs: Observer) -> None:
    with obs.framework():
        runs = {"join added first": await _unequal(True), "join added last": await _unequal(False)}
    early = [name for name, run in runs.items() if any(run["before b2 ended"])]
    never = [name for name, run in runs.items() if not any("b2" in f for f in run["fed"])]
    counts = sorted({run["join runs"] for run in runs.values()})
    obs.record(
        {"runs": runs, "joined before b2": early, "b2 never joined": never},
        label="joined before b2; b2 never joined"
        if never
        else f"joined {'/'.join(map(str, counts))}x, first before b2 ended"
        if early
        else "joined after b2 ended",
        detail=f"per shape: {runs}",
        hazard="silent" if early or never else "safe",
    )


@probe(
    "strands/deprecation/unbounded-graph",
    title="GraphBuilder.build() of `a` -> `b` with neither max_node_executions nor execution_timeout set: does"
    " the build warn that execution is unbounded?",
    claim=Claim(
        "The newest builder's _validate_graph warns ('graph has no max_node_executions or execution_timeout"
        " set; execution is unbounded') when neither limit is set; earlier builders build it silently."
        " Precondition: neither set_max_node_executions nor set_execution_timeout called.",
        f"{SRC}#L490-L502",
        expect={"hazard": "safe"},
    ),
)
async def test_unbounded_graph(obs: Observer) -> None:
    steps = {"a": st_kit.Step(st_kit.nothing), "b": st_kit.Step(st_kit.nothing)}
    with obs.framework():
        _, warned = st_kit.build(steps, [("a", "b")], ["a"])
    unbounded = [w for w in warned if "unbounded" in w]
    obs.record(
        {"warns unbounded": bool(unbounded)},
        label="build() warns: unbounded" if unbounded else "built without a warning",
        detail=f"warnings at build(): {warned}",
        hazard="safe" if unbounded else "silent",
    )
