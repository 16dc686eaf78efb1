"""The mitigations, proved: every write kept whatever the order, the join fires once per run."""

import asyncio
from typing import Any

from agent_framework import WorkflowBuilder

import af_kit
from af_kit import Node, forward
from fanin.probe import Claim, Observer, probe
from gates import Turns

SRC = "https://github.com/microsoft/agent-framework/blob/python-1.0.0/python/packages/core/agent_framework/_workflows"
PATIENCE = 5.0  # deadlock breaker only


@probe(
    "agent_framework/same-key/last-writer-mitigated",
    title="last-writer, mitigated: each branch sets its own key (`result:a`, `result:b`); the fan-in target"
    " reads both; both finishing orders",
    claim=Claim(
        "Writes to different keys in one superstep are all committed: one key per branch keeps every branch's"
        " result, whatever the finishing order.",
        f"{SRC}/_state.py#L90-L100",
        expect={"hazard": "safe"},
    ),
)
async def test_last_writer_mitigated(obs: Observer) -> None:
    runs: dict[str, dict[str, Any]] = {}
    for order in (["a", "b"], ["b", "a"]):
        turns = Turns(order)
        seen: dict = {}

        async def write(node_id: str, message: str, ctx: Any, turns: Turns = turns) -> None:
            await turns.wait(node_id)
            ctx.set_state(f"result:{node_id}", node_id.upper())
            turns.done(node_id)
            await ctx.send_message(node_id)

        async def join(node_id: str, messages: list[str], ctx: Any, seen: dict[str, Any] = seen) -> None:
            seen.update({name: ctx.get_state(f"result:{name}") for name in ("a", "b")})

        start, a, b, joiner = Node("start", forward), Node("a", write), Node("b", write), Node("join", join)
        workflow = (
            WorkflowBuilder(start_executor=start).add_fan_out_edges(start, [a, b]).add_fan_in_edges([a, b], joiner).build()
        )
        with obs.framework():
            trace = await af_kit.run(workflow)
        obs.require_in_flight(turns)
        obs.require_same_step({n: trace["steps"][n][0] for n in ("a", "b")}, expected=2, what="writers")
        runs[" then ".join(order)] = {"finished": turns.acted, "kept": seen}
    lost = sorted({f"{n}: {n.upper()}" for r in runs.values() for n in ("a", "b") if r["kept"].get(n) != n.upper()})
    obs.record(
        {"runs": runs, "lost": lost},
        label="every write kept" if not lost else f"lost {lost}",
        detail=f"per-branch keys after each order: {[r['kept'] for r in runs.values()]}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "agent_framework/same-key/read-modify-write-mitigated",
    title="read-modify-write, mitigated: each branch sends its increment as a message; the fan-in target adds"
    " them to the counter in one write; both branches read before either sends, then one after the other",
    claim=Claim(
        "A fan-in target receives every source's message: applying the branches' deltas in the join, the only"
        " writer of the key, keeps every increment.",
        f"{SRC}/_workflow_builder.py#L461-L475",
        expect={"hazard": "safe"},
    ),
)
async def test_read_modify_write_mitigated(obs: Observer) -> None:
    runs: dict[str, dict[str, Any]] = {}
    for case in ("both read first", "b reads after a sent"):
        turns = Turns(["a", "b"])
        seen: dict = {}

        async def seed(node_id: str, message: str, ctx: Any) -> None:
            ctx.set_state("count", 0)
            await ctx.send_message(node_id)

        async def increment(node_id: str, message: str, ctx: Any, case: str = case, turns: Turns = turns) -> None:
            if case == "both read first":
                ctx.get_state("count")
            await turns.wait(node_id)
            await ctx.send_message("1")
            turns.done(node_id)

        async def join(node_id: str, messages: list[str], ctx: Any, seen: dict[str, Any] = seen) -> None:
            ctx.set_state("count", ctx.get_state("count") + sum(int(m) for m in messages))
            await ctx.send_message("read")

        async def report(node_id: str, message: str, ctx: Any, seen: dict[str, Any] = seen) -> None:
            seen["final"] = ctx.get_state("count")

        start, a, b = Node("start", seed), Node("a", increment), Node("b", increment)
        joiner, reader = Node("join", join), Node("report", report)
        workflow = (
            WorkflowBuilder(start_executor=start)
            .add_fan_out_edges(start, [a, b])
            .add_fan_in_edges([a, b], joiner)
            .add_edge(joiner, reader)
            .build()
        )
        with obs.framework():
            trace = await af_kit.run(workflow)
        obs.require_in_flight(turns)
        obs.require_same_step({n: trace["steps"][n][0] for n in ("a", "b")}, expected=2, what="branches")
        runs[case] = {"final": seen.get("final")}
    lost = [f"{case}: {2 - (r['final'] or 0)} increment(s)" for case, r in runs.items() if r["final"] != 2]
    obs.record(
        {"runs": runs, "lost": lost},
        label="every increment kept" if not lost else f"counter {[r['final'] for r in runs.values()]} of 2",
        detail=f"counter after both increments: {[r['final'] for r in runs.values()]}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "agent_framework/fold-order/fan-in-list-mitigated",
    title="fan-in-list, mitigated: each branch sends (its name, its result); the join sorts by name; the fan-in"
    " declared in two orders, the branches finishing in two orders",
    claim=Claim(
        "Sorting the fan-in list by a key the branches carry makes what the join sees independent of how the"
        " fan-in edges were declared and of the finishing order.",
        f"{SRC}/_edge_runner.py#L325-L330",
        expect={"hazard": "safe"},
    ),
)
async def test_fan_in_list_mitigated(obs: Observer) -> None:
    cases = {
        "fan-in c,a,b; finished b,a,c": (["c", "a", "b"], ["b", "a", "c"]),
        "fan-in b,c,a; finished c,b,a": (["b", "c", "a"], ["c", "b", "a"]),
    }
    observed = {}
    for case, (fan_in, finish) in cases.items():
        turns = Turns(finish)
        received: list = []

        async def branch(node_id: str, message: str, ctx: Any, turns: Turns = turns) -> None:
            await turns.wait(node_id)
            await ctx.send_message(f"{node_id}:{node_id.upper()}")
            turns.done(node_id)

        async def join(node_id: str, messages: list[str], ctx: Any, received: list[Any] = received) -> None:
            received.append([item.split(":")[1] for item in sorted(messages)])

        start, joiner = Node("start", forward), Node("join", join)
        nodes = {name: Node(name, branch) for name in ("a", "b", "c")}
        workflow = (
            WorkflowBuilder(start_executor=start)
            .add_fan_out_edges(start, [nodes["a"], nodes["b"], nodes["c"]])
            .add_fan_in_edges([nodes[n] for n in fan_in], joiner)
            .build()
        )
        with obs.framework():
            trace = await af_kit.run(workflow)
        obs.require_in_flight(turns)
        obs.require_same_step({n: trace["steps"][n][0] for n in nodes}, expected=3, what="branches")
        observed[case] = {"sorted": received, "finished": turns.acted}
    lists = [c["sorted"] for c in observed.values()]
    same = all(x == lists[0] for x in lists)
    obs.record(
        {"cases": observed, "same_in_every_case": same},
        label="same order in every case" if same else "order still varies",
        detail=f"the join's sorted list per case: {lists}",
        hazard="safe" if same else "order-coupled",
    )


@probe(
    "agent_framework/join/unselected-branch-mitigated",
    title="unselected-branch, mitigated: the selection sends to every target and the branch not chosen sends"
    " a `skipped` marker; run twice on one workflow, choosing `a`, then `b`",
    claim=Claim(
        "A fan-in target runs once every source has sent: when every branch always sends (a result or a"
        " marker), the join fires once per run, and nothing is left in its buffer for the next run.",
        f"{SRC}/_workflow_builder.py#L461-L475",
        expect={"hazard": "safe"},
    ),
)
async def test_unselected_branch_mitigated(obs: Observer) -> None:
    chosen = ["a"]
    join_runs: list = []

    async def relay(node_id: str, message: str, ctx: Any) -> None:
        await ctx.send_message(message)

    async def branch(node_id: str, message: str, ctx: Any) -> None:
        await ctx.send_message(f"{node_id}@{message}" if node_id in chosen else f"skipped {node_id}@{message}")

    async def join(node_id: str, messages: list[str], ctx: Any) -> None:
        join_runs.append(list(messages))
        await ctx.yield_output([m for m in messages if not m.startswith("skipped")])

    start, a, b, joiner = Node("start", relay), Node("a", branch), Node("b", branch), Node("join", join)
    workflow = (
        WorkflowBuilder(start_executor=start)
        .add_multi_selection_edge_group(start, [a, b], selection_func=lambda message, targets: list(targets))
        .add_fan_in_edges([a, b], joiner)
        .build()
    )
    with obs.framework():
        first = await af_kit.run(workflow, "run 1")
        chosen[:] = ["b"]
        second = await af_kit.run(workflow, "run 2")
    outputs = {"run 1": first["outputs"], "run 2": second["outputs"]}
    expected = {"run 1": [["a@run 1"]], "run 2": [["b@run 2"]]}
    lost = [run for run in expected if outputs[run] != expected[run]]
    obs.record(
        {"join_runs": join_runs, "outputs": outputs, "lost": lost},
        label="join ×1 per run, no stale arrival" if not lost else f"wrong output in {lost}",
        detail=f"join received {join_runs}; outputs {outputs}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "agent_framework/errors/resume-after-failure-mitigated",
    title="resume-after-failure, mitigated: the run is resumed from its latest checkpoint on a freshly built"
    " workflow (same name and storage) instead of the instance whose superstep failed",
    claim=Claim(
        "A workflow built anew starts with empty shared state, so resuming on it restores only the checkpoint's"
        " committed state: the failed superstep's writes are not seen.",
        f"{SRC}/_state.py#L106-L118",
        expect={"hazard": "safe"},
    ),
)
async def test_resume_after_failure_mitigated(obs: Observer) -> None:
    InMemoryCheckpointStorage = obs.need("agent_framework", "InMemoryCheckpointStorage")
    attempt = [1]
    wrote = asyncio.Event()
    keys = ["sibling@attempt 1", "sibling@attempt 2"]

    async def sibling(node_id: str, message: str, ctx: Any) -> None:
        ctx.set_state(f"sibling@attempt {attempt[0]}", "S")
        wrote.set()
        await ctx.send_message(node_id)

    async def fail(node_id: str, message: str, ctx: Any) -> None:
        await asyncio.wait_for(wrote.wait(), PATIENCE)
        if attempt[0] == 1:
            raise RuntimeError("branch failed")
        await ctx.send_message(node_id)

    async def join(node_id: str, messages: list[str], ctx: Any) -> None:
        await ctx.yield_output([key for key in keys if ctx.get_state(key) is not None])

    storage = InMemoryCheckpointStorage()

    def build() -> Any:
        start, failing, sib = Node("start", forward), Node("fail", fail), Node("sibling", sibling)
        joiner = Node("join", join)
        return (
            WorkflowBuilder(name="resume-after-failure", start_executor=start, checkpoint_storage=storage)
            .add_fan_out_edges(start, [failing, sib])
            .add_fan_in_edges([failing, sib], joiner)
            .build()
        )

    first = await af_kit.run(build(), catch=True)
    if "raises" not in first:
        obs.vacuous(f"the first run did not fail: {first['outputs']}")
    with obs.framework():
        latest = await storage.get_latest(workflow_name="resume-after-failure")
        attempt[0] = 2
        wrote.clear()
        resumed = await af_kit.run(build(), start={"checkpoint_id": latest.checkpoint_id})
    sees = resumed["outputs"][0] if resumed["outputs"] else None
    stale = [key for key in (sees or []) if key.endswith("attempt 1")]
    lost = [] if sees and "sibling@attempt 2" in sees else ["sibling@attempt 2"]
    obs.record(
        {"resumed_sees": sees, "stale": stale, "lost": lost},
        label="resume sees only its own writes" if not stale and not lost else "stale or lost writes",
        detail=f"resumed on a new instance from the latest checkpoint, the join sees {sees}",
        hazard="silent" if stale or lost else "safe",
    )
