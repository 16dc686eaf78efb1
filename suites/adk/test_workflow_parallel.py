"""ADK 2.x graph workflows under concurrency: ParallelWorker order, failure and cap; JoinNode in a loop,
fed by START, and on a second run of the same session.

Every probe is `n/a` before 2.0 (no google.adk.workflow). Nodes are async functions (a sync function node
may run in a worker thread, which the event loop cannot see settle). Orders are forced with gates: a
worker waits for its turn and its turn ends when the probe, reading the runner's event stream, sees
that worker's output event, so each completion is processed before the next one is released.
"""

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from gates import Turns
from adk_kit import APP, USER, user_message, settle

from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService

from fanin.probe import Claim, Observer, probe

WORKER_TESTS = "https://github.com/google/adk-python/blob/main/tests/unittests/workflow/test_workflow_parallel_worker.py"
JOIN_TESTS = "https://github.com/google/adk-python/blob/main/tests/unittests/workflow/test_join_node.py"


async def drive(
    workflow: Any, service: InMemorySessionService, session_id: str, on_event: Callable[[Any], None] | None = None
) -> list:
    """One `Runner(node=workflow).run_async` turn; `on_event(event)` sees each event as the runner yields it."""
    runner = Runner(app_name=APP, node=workflow, session_service=service)
    events = []
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=user_message()):
        events.append(event)
        if on_event is not None:
            on_event(event)
    return events


def outputs(events: list) -> list:
    """The `output` of each event that carries one, in order."""
    return [e.output for e in events if getattr(e, "output", None) is not None]


@probe(
    "adk/workflow/parallel-worker-order",
    title="A ParallelWorker's items finish in the order i2, i1, i0: the order of its output list",
    claim=Claim(
        "The ParallelWorker's output list preserves input order regardless of the order in which the "
        "workers complete; each item's own output event arrives as it completes.",
        WORKER_TESTS,
        expect={"value.worker_output": ["i0:done", "i1:done", "i2:done"], "value.item_event_order": ["i2", "i1", "i0"]},
    ),
)
async def test_parallel_worker_order(obs: Observer) -> None:
    Workflow, node = obs.need("google.adk.workflow", "Workflow", "node")
    obs.need_parameter(node, "parallel_worker", "google.adk.workflow.node")
    items = ["i0", "i1", "i2"]
    turns = Turns(["i2", "i1", "i0"])
    received: list = []

    async def produce(node_input: Any) -> list:
        return list(items)

    async def work(node_input: str) -> str:
        await turns.wait(node_input)
        return f"{node_input}:done"

    async def collect(node_input: Any) -> str:
        received.append(node_input)
        return "collected"

    def on_event(event: Any) -> None:  # an item's turn ends once the runner has yielded its output event
        output = getattr(event, "output", None)
        if isinstance(output, str) and output.endswith(":done"):
            turns.done(output.split(":")[0])

    workflow = Workflow(name="wf", edges=[("START", produce, node(work, parallel_worker=True), collect)])
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    with obs.framework():
        await drive(workflow, service, "s1", on_event)
    obs.require_in_flight(turns)
    stored = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    lists = [o for o in outputs(stored.events) if isinstance(o, list) and o != items]
    value: dict[str, Any] = {
        "item_event_order": [o.split(":")[0] for o in outputs(stored.events) if isinstance(o, str) and o.endswith(":done")],
        "worker_output": lists[0] if len(lists) == 1 else lists,
        "collect_received": received,
    }
    in_input_order = value["worker_output"] == [f"{i}:done" for i in items]
    obs.record(
        value,
        label="input order" if in_input_order else "completion order" if value["worker_output"] == [
            f"{i}:done" for i in value["item_event_order"]] else "other order",
        detail=f"items finish {','.join(value['item_event_order'])}; the worker outputs {value['worker_output']} "
        f"and collect receives {received}",
        hazard="safe" if in_input_order and received == [value["worker_output"]] else "order-coupled",
    )


async def _all_fail_at_once(obs: Observer, Workflow: Any, node: Any) -> tuple[dict[str, Any], list]:
    """test_parallel_worker_failure's second case: (what the run surfaces, each run's surfaced error)."""
    # 2. Eight items all raise in the same loop iteration: which one's error does the run surface?
    #    Where ADK picks it from asyncio.wait's unordered done-set, it differs from run to run; the
    #    runs stop as soon as two differ (<= MAX_RUNS).
    MAX_RUNS = 10
    names = [f"x{i}" for i in range(8)]
    failures = {name: type(f"{name.upper()}Failed", (ValueError,), {}) for name in names}  # whose error: its class
    surfaced: list = []
    for _ in range(MAX_RUNS):
        release = asyncio.Event()
        waiting: list = []

        async def fail(node_input: str) -> str:
            waiting.append(node_input)
            if len(waiting) == len(names):
                release.set()
            await release.wait()
            raise failures[node_input](node_input)

        async def produce_all(node_input: Any) -> list:
            return list(names)

        flow = Workflow(name="wf", edges=[("START", produce_all, node(fail, parallel_worker=True))])
        svc = InMemorySessionService()
        await svc.create_session(app_name=APP, user_id=USER, session_id="s1")
        outcome = await obs.attempt_async(lambda: drive(flow, svc, "s1"))
        surfaced.append(outcome.get("raises", "no error"))
        if len(waiting) < len(names):
            obs.vacuous(f"only {len(waiting)} of {len(names)} items were in flight together")
        if len(set(surfaced)) > 1:
            break
    varies = len(set(surfaced)) > 1
    all_fail: dict[str, Any] = {"items": 8, "surfaced": sorted(set(surfaced)), "varies": varies}
    if varies:
        all_fail["surfaced"] = "varies from run to run"
    return all_fail, surfaced


@probe(
    "adk/workflow/parallel-worker-failure",
    title="ParallelWorker: one item fails while another is in flight; eight items fail in the same wake-up",
    repetition=True,
    claim=Claim(
        "One worker failure cancels the remaining workers and propagates the exception; when several fail "
        "at once, the exception surfaced is always the lowest-index item's.",
        WORKER_TESTS,
        expect={
            "value.one_fails.t3": "cancelled",
            "value.one_fails.run.raises": "ValueError",
            "value.all_fail_at_once.surfaced": ["X0Failed"],
        },
    ),
)
async def test_parallel_worker_failure(obs: Observer) -> None:
    Workflow, node = obs.need("google.adk.workflow", "Workflow", "node")
    obs.need_parameter(node, "parallel_worker", "google.adk.workflow.node")

    # 1. t1 finishes; t3 passes its gate and parks on `hold` (in flight); only then t2 raises.
    turns = Turns(["t1", "t3", "t2"])
    hold = asyncio.Event()
    fate: dict = {}

    async def produce(node_input: Any) -> list:
        return ["t1", "t2", "t3"]

    async def work(node_input: str) -> str:
        await turns.wait(node_input)
        if node_input == "t2":
            fate["t2"] = "raised"
            raise ValueError("t2 failed")
        if node_input == "t3":
            turns.done("t3")
            try:
                await hold.wait()
            except asyncio.CancelledError:
                fate["t3"] = "cancelled"
                raise
        fate[node_input] = "returned"
        return f"{node_input}:done"

    after: list = []

    async def collect(node_input: Any) -> str:
        after.append(node_input)
        return "collected"

    def on_event(event: Any) -> None:
        if getattr(event, "output", None) == "t1:done":
            turns.done("t1")

    workflow = Workflow(name="wf", edges=[("START", produce, node(work, parallel_worker=True), collect)])
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    run = await obs.attempt_async(lambda: drive(workflow, service, "s1", on_event))
    obs.require_in_flight(turns)
    await settle()
    t3_at_end = fate.get("t3", "still parked")
    hold.set()  # a t3 left running would now finish; see whether its output lands anywhere
    await settle()
    stored = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    one_fails = {
        "run": {"raises": run["raises"]} if "raises" in run else "returned",
        "t1": fate.get("t1"),
        "t3": t3_at_end,
        "t3_after_release": fate.get("t3", "still parked"),
        "stored_item_outputs": [o for o in outputs(stored.events) if isinstance(o, str) and o.endswith(":done")],
        "collect_ran": bool(after),
    }

    all_fail, surfaced = await _all_fail_at_once(obs, Workflow, node)
    varies = all_fail["varies"]

    raised = one_fails["run"]["raises"] if isinstance(one_fails["run"], dict) else None
    t3 = {"cancelled": "cancelled", "still parked": "left running"}.get(t3_at_end, t3_at_end)
    obs.record(
        {"one_fails": one_fails, "all_fail_at_once": all_fail},
        label=f"{raised or 'no error'}, {t3}; " + ("surfaced varies" if varies else f"surfaces {all_fail['surfaced'][0]}"),
        detail=f"t2 fails: run {'raises ' + raised if raised else 'returns'}, t1's output "
        f"{'is' if 't1:done' in one_fails['stored_item_outputs'] else 'is not'} stored, in-flight t3 {t3}, collect "
        f"{'runs' if after else 'never runs'}; 8 items failing at once surface "
        + ("different items' errors from run to run (stopping rule: until two differ, at most 10 runs)" if varies
           else f"{all_fail['surfaced'][0]} in all {len(surfaced)} runs"),
        # The run stops with an error either way (loud); which item's error it names is the part that varies,
        # recorded in the value. Data is not at stake, so the legend's hazard is the error's.
        hazard="loud" if raised else "nondeterministic" if varies else "silent",
        outcome=f"raises:{raised}" if raised else "ok",
    )


@probe(
    "adk/workflow/parallel-worker-concurrency-limit",
    title="A ParallelWorker over five items with max_parallel_workers=2: how many run at once",
    claim=Claim(
        "max_parallel_workers limits the number of concurrent workers at any time; a finished worker "
        "lets the next item start.",
        WORKER_TESTS,
        expect={"value.capped.max_in_flight": 2, "value.uncapped.max_in_flight": 5},
    ),
)
async def test_parallel_worker_concurrency_limit(obs: Observer) -> None:
    Workflow, node = obs.need("google.adk.workflow", "Workflow", "node")
    obs.need_parameter(node, "parallel_worker", "google.adk.workflow.node")
    if "max_parallel_workers" not in inspect.signature(node).parameters:
        private = obs.need("google.adk.workflow._parallel_worker", "_ParallelWorker")
        obs.not_applicable(
            "google.adk.workflow.node has no parameter 'max_parallel_workers' in this version"
            + (" (only the private _ParallelWorker(max_concurrency=...) has a cap)" if "max_concurrency" in private.model_fields else "")
        )
    items = [f"i{k}" for k in range(5)]

    async def measure(cap: Any) -> dict:
        # Every worker holds until the probe releases it. Whenever the loop has nothing else to run,
        # the probe notes who is in flight, then releases the earliest started one.
        running: list = []
        peak = 0
        release = {item: asyncio.Event() for item in items}

        async def work(node_input: str) -> str:
            nonlocal peak
            running.append(node_input)
            peak = max(peak, len(running))
            try:
                await release[node_input].wait()
            finally:
                running.remove(node_input)
            return f"{node_input}:done"

        async def produce(node_input: Any) -> list:
            return list(items)

        workflow = Workflow(
            name="wf", edges=[("START", produce, node(work, parallel_worker=True, max_parallel_workers=cap))]
        )
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        run = asyncio.ensure_future(obs.attempt_async(lambda: drive(workflow, service, "s1")))
        in_flight: list = []
        while True:
            await settle()
            if run.done() or not running:
                break
            in_flight.append(list(running))
            release[running[0]].set()
        result = await run if run.done() else {"raises": "stuck with no item in flight"}
        stored = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        return {
            "max_in_flight": peak,
            "in_flight_at_each_release": in_flight,
            "run": "returned" if "returned" in result else result,
            "output": [o for o in outputs(stored.events) if isinstance(o, list) and o != items],
        }

    capped, uncapped = await measure(2), await measure(None)
    if uncapped["max_in_flight"] < 2:
        obs.vacuous(f"without a cap at most {uncapped['max_in_flight']} item ran at once")
    held = capped["max_in_flight"] <= 2 and capped["run"] == "returned" and len(capped["in_flight_at_each_release"]) == 5
    obs.record(
        {"capped": capped, "uncapped": uncapped},
        label=f"at most {capped['max_in_flight']} at once (cap 2)",
        detail=f"with max_parallel_workers=2, at most {capped['max_in_flight']} of 5 items run at once and each "
        f"release starts the next ({capped['in_flight_at_each_release']}); without it {uncapped['max_in_flight']}",
        hazard="safe" if held else "silent",
    )


def plain(value: Any) -> Any:
    """A join input as plain data: the user's Content becomes "Content('<text>')", dicts are sorted by key."""
    if isinstance(value, dict):
        return {k: plain(value[k]) for k in sorted(value)}
    if hasattr(value, "parts"):  # google.genai Content (what START passes on)
        return f"Content({''.join(p.text or '' for p in value.parts or [])!r})"
    return value


@probe(
    "adk/workflow/join-in-loop",
    title="A JoinNode inside a loop: in iteration 2, A is done and B still running; does the join wait?",
    claim=Claim(
        "A JoinNode in a loop waits for every predecessor's new run: it must not fire with a predecessor's "
        "output left over from the previous iteration.",
        JOIN_TESTS,
        expect={"value.join_inputs": [{"A": "A1", "B": "B1"}, {"A": "A2", "B": "B2"}]},
    ),
)
async def test_join_in_loop(obs: Observer) -> None:
    Workflow, JoinNode, Edge, START, node = obs.need("google.adk.workflow", "Workflow", "JoinNode", "Edge", "START", "node")
    from google.adk.events import Event

    a_runs: list = []
    b_waiting: list = []
    release_b = [asyncio.Event() for _ in range(3)]
    join_inputs: list = []

    async def run_a(node_input: Any) -> str:
        a_runs.append(len(a_runs) + 1)
        return f"A{len(a_runs)}"

    async def run_x(node_input: Any) -> str:
        return "x"

    async def run_b(node_input: Any) -> str:  # one hop further from START than A, and held by the probe
        iteration = len(b_waiting) + 1
        b_waiting.append(iteration)
        await release_b[min(iteration, 3) - 1].wait()
        return f"B{iteration}"

    async def check(node_input: Any):  # type: ignore[no-untyped-def]  # a node: ADK reads a return hint as its output schema
        join_inputs.append(plain(node_input))
        if len(join_inputs) < 2:
            yield Event(route="again")
        else:
            yield Event(route="done", output="finished")

    async def end(node_input: Any) -> Any:
        return node_input

    a, x, b = node(run_a, name="A"), node(run_x, name="X"), node(run_b, name="B")
    chk, fin, join = node(check, name="Check"), node(end, name="End"), JoinNode(name="Join")
    workflow = Workflow(
        name="wf",
        edges=[
            Edge(from_node=START, to_node=a),
            Edge(from_node=START, to_node=x),
            Edge(from_node=x, to_node=b),
            Edge(from_node=a, to_node=join),
            Edge(from_node=b, to_node=join),
            Edge(from_node=join, to_node=chk),
            Edge(from_node=chk, to_node=a, route="again"),
            Edge(from_node=chk, to_node=x, route="again"),
            Edge(from_node=chk, to_node=fin, route="done"),
        ],
    )
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    run = asyncio.ensure_future(obs.attempt_async(lambda: drive(workflow, service, "s1")))
    # Each time B is held and nothing else can run, note what the join has fired with so far; release B.
    fired_while_b_held: dict = {}
    released = 0
    while True:
        await settle()
        if run.done() or released >= len(b_waiting) or released >= 3:
            break
        fired_while_b_held[f"iteration {b_waiting[released]}"] = list(join_inputs)
        release_b[released].set()
        released += 1
    for gate in release_b:
        gate.set()
    result = await run
    if not a_runs or not b_waiting:
        obs.vacuous("the loop never ran both branches")
    value = {
        "run": "returned" if "returned" in result else result,
        "join_inputs": join_inputs,
        "fired_while_b_held": fired_while_b_held,
        "a_runs": len(a_runs),
        "b_runs": len(b_waiting),
    }
    stale = [j for j in join_inputs if isinstance(j, dict) and j.get("A", "")[1:] != j.get("B", "")[1:]]
    obs.record(
        value,
        label=f"fires on stale input {stale[0]['B']}" if stale else f"waits each iteration ({len(join_inputs)} fires)",
        detail=f"join fires {len(join_inputs)}x with {join_inputs}"
        + (f"; {len(stale)} of them pair A with an earlier iteration's B" if stale else "; each pairs A and B of one iteration"),
        hazard="silent" if stale else "safe" if "returned" in result else "loud",
    )


@probe(
    "adk/workflow/join-start-predecessor",
    title="A JoinNode fed by START as well as by A and B: when it fires and what it receives",
    claim=Claim(
        "A JoinNode with a direct START edge beside its parallel branches waits for A and B and receives "
        "START's input (the user content) under START's name alongside their outputs.",
        JOIN_TESTS,
        expect={"value.collect_runs": 1, "value.received[0].__START__": "Content('go')"},
    ),
)
async def test_join_start_predecessor(obs: Observer) -> None:
    Workflow, JoinNode, Edge, START, node = obs.need("google.adk.workflow", "Workflow", "JoinNode", "Edge", "START", "node")
    hold = {"A": asyncio.Event(), "B": asyncio.Event()}
    held: list = []
    received: list = []

    async def run_a(node_input: Any) -> dict:
        held.append("A")
        await hold["A"].wait()
        return {"a": 1}

    async def run_b(node_input: Any) -> dict:
        held.append("B")
        await hold["B"].wait()
        return {"b": 2}

    async def collect(node_input: Any) -> str:
        received.append(plain(node_input))
        return "collected"

    a, b, join, cap = node(run_a, name="A"), node(run_b, name="B"), JoinNode(name="Join"), node(collect, name="Collect")
    workflow = Workflow(
        name="wf",
        edges=[
            Edge(from_node=START, to_node=a),
            Edge(from_node=START, to_node=b),
            Edge(from_node=START, to_node=join),
            Edge(from_node=a, to_node=join),
            Edge(from_node=b, to_node=join),
            Edge(from_node=join, to_node=cap),
        ],
    )
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    run = asyncio.ensure_future(obs.attempt_async(lambda: drive(workflow, service, "s1")))
    await settle()
    if sorted(held) != ["A", "B"]:
        obs.vacuous(f"A and B were not both in flight (held: {held})")
    before_branches = list(received)  # what collect got while A and B were both held
    hold["B"].set()
    await settle()
    hold["A"].set()
    result = await run
    value = {
        "run": "returned" if "returned" in result else result,
        "collect_runs": len(received),
        "received": received,
        "received_before_a_and_b": before_branches,
    }
    complete = len(received) == 1 and isinstance(received[0], dict) and {"A", "B"} <= set(received[0])
    if "raises" in result:
        label, hazard = f"raises {result['raises']}", "loud"
    elif not received:
        label, hazard = "join never fires", "silent"
    elif before_branches:
        label, hazard = "fires early on START alone", "silent"
    elif complete:
        label, hazard = "waits for A and B, gets START too", "safe"
    else:
        label, hazard = f"fires {len(received)}x", "silent"
    obs.record(
        value,
        label=label,
        detail=f"run {'raises ' + result['raises'] if 'raises' in result else 'returns'}; collect runs "
        f"{len(received)}x, receiving {received}; {len(before_branches)} of its runs came before A and B finished",
        hazard=hazard,
    )


@probe(
    "adk/workflow/join-second-run",
    title="The same session runs a JoinNode workflow twice; in run 2, A finishes while B is held",
    claim=Claim(
        "A second run of the same session triggers the JoinNode again and it waits for both predecessors "
        "of that run, receiving their new outputs.",
        JOIN_TESTS,
        expect={"value.run-2.fired_while_b_held": [], "value.run-2.collect_received": [{"A": "A2", "B": "B2"}]},
    ),
)
async def test_join_second_run(obs: Observer) -> None:
    Workflow, JoinNode, node = obs.need("google.adk.workflow", "Workflow", "JoinNode", "node")
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    runs = {}
    for run_id in ("1", "2"):
        release_b = asyncio.Event()
        received: list = []

        async def run_a(node_input: Any) -> str:
            return f"A{run_id}"

        async def run_b(node_input: Any) -> str:
            await release_b.wait()
            return f"B{run_id}"

        async def collect(node_input: Any) -> str:
            received.append(plain(node_input))
            return "collected"

        workflow = Workflow(
            name="wf",
            edges=[("START", (node(run_a, name="A"), node(run_b, name="B")), JoinNode(name="Join"), node(collect, name="Collect"))],
        )
        run = asyncio.ensure_future(obs.attempt_async(lambda: drive(workflow, service, "s1")))
        await settle()  # A is done, B is held: has the join fired already?
        fired_early = list(received)
        b_held = not run.done()
        release_b.set()
        result = await run
        if not b_held:
            obs.vacuous(f"run {run_id} ended before B was released")
        runs[f"run-{run_id}"] = {
            "run": "returned" if "returned" in result else result,
            "fired_while_b_held": fired_early,
            "collect_received": received,
        }
    second = runs["run-2"]
    stale = any(isinstance(r, dict) and ("A1" in r.values() or "B1" in r.values()) for r in second["collect_received"])
    early = bool(second["fired_while_b_held"])
    ok = second["collect_received"] == [{"A": "A2", "B": "B2"}] and runs["run-1"]["collect_received"] == [{"A": "A1", "B": "B1"}]
    obs.record(
        runs,
        label="fires early on stale input" if early and stale else "fires early" if early
        else "stale input" if stale else "waits for both each run" if ok else "other",
        detail=f"run 1: collect gets {runs['run-1']['collect_received']}; run 2: while B was held the join "
        f"{'fired with ' + str(second['fired_while_b_held']) if early else 'waited'}; collect gets {second['collect_received']}",
        hazard="silent" if early or stale or not ok else "safe",
    )
