"""ParallelAgent children writing shared session state."""

import itertools
from collections import Counter
from typing import Any, AsyncGenerator

from gates import Turns
from adk_failure import ChildFailure, where_the_child_failure_is
from adk_kit import APP, USER, Event, callback_gate, EventActions, FakeModel, FanOut, GatedWriter, Step, run_once, run_turn, settle, stored_state

from google.adk.agents import BaseAgent, LlmAgent, ParallelAgent
from google.adk.sessions import InMemorySessionService

from fanin.probe import Claim, Observer, probe

PARALLEL_AGENT_DOC = "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/"


@probe(
    "adk/parallel-agent/same-key",
    title="Three ParallelAgent children emit a state_delta for the same key",
    claim=Claim(
        "Branches share session state and nothing merges their writes: each state_delta is applied "
        "as its event arrives, so the last arrival wins and the others are lost without an error.",
        PARALLEL_AGENT_DOC,
        expect={"value.a,b,c.final": "C", "value.c,b,a.final": "A"},
    ),
)
async def test_same_key(obs: Observer) -> None:
    runs: dict = {}
    lost: list = []
    for order in (["a", "b", "c"], ["c", "b", "a"]):
        turns = Turns(order)
        children = [GatedWriter(name=n, turns=turns, delta={"result": n.upper()}) for n in ("a", "b", "c")]
        root = ParallelAgent(name="fanout", sub_agents=children)
        with obs.framework():
            events, state = await run_once(root)
        obs.require_in_flight(turns)
        # What each branch wrote: the delta of every writer whose event ADK took (its turn ends after the yield).
        wrote = {child.name: child.delta["result"] for child in children if child.name in turns.acted}
        final = state.get("result")
        held = final if isinstance(final, (list, tuple)) else [final]
        deltas = [e.author for e in events if e.actions and "result" in (e.actions.state_delta or {})]
        survivors = [name for name, written in wrote.items() if written in held]
        runs[",".join(order)] = {"state_delta_events": deltas, "final": final, "survivors": survivors}
        # A write is lost when its branch wrote it and the stored state no longer holds it (one key, three writers).
        lost += [f"{','.join(order)} | {wrote[name]}" for name in order if name in wrote and name not in survivors]
    last_wins = all(r["final"] == r["state_delta_events"][-1].upper() for r in runs.values() if r["state_delta_events"])
    arrived = sorted({len(r["state_delta_events"]) for r in runs.values()})
    rule = "last arrival wins" if last_wins else "the final value is not the last arrival"
    obs.record(
        {**runs, "lost": lost},
        label="last arrival wins" if last_wins else "not the last arrival",
        detail=f"{'/'.join(map(str, arrived))} deltas arrive, {rule}: "
        + "; ".join(f"{k} -> {r['final']} (survives: {','.join(r['survivors']) or 'none'})" for k, r in runs.items())
        + f"; lost: {', '.join(lost) or 'nothing'}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "adk/parallel-agent/distinct-keys",
    title="Three ParallelAgent children each write their own state key",
    claim=Claim(
        "Give each parallel branch its own output key so results do not overwrite each other.",
        PARALLEL_AGENT_DOC,
        expect={"value.final": {"result_a": "A", "result_b": "B", "result_c": "C"}},
    ),
)
async def test_distinct_keys(obs: Observer) -> None:
    turns = Turns(["c", "b", "a"])
    children = [GatedWriter(name=n, turns=turns, delta={f"result_{n}": n.upper()}) for n in ("a", "b", "c")]
    root = ParallelAgent(name="fanout", sub_agents=children)
    with obs.framework():
        events, state = await run_once(root)
    obs.require_in_flight(turns)
    deltas = [e.author for e in events if e.actions and e.actions.state_delta]
    kept = {key: state.get(key) for key in ("result_a", "result_b", "result_c")}
    obs.record(
        {"state_delta_events": deltas, "final": kept},
        label=f"{sum(v is not None for v in kept.values())} of 3 keys kept",
        detail=f"{len(deltas)} deltas, kept {sum(v is not None for v in kept.values())} of 3 keys",
        hazard="safe" if all(kept.values()) else "silent",
    )


@probe(
    "adk/parallel-agent/branch-state-visibility",
    title="A ParallelAgent child reads state after its sibling wrote: shared state, isolated history?",
    claim=Claim(
        "Sub-agents of a ParallelAgent run on separate branches: each sees the conversation history up to "
        "the fan-out and its own events, not its siblings' (isolated history), while session state is shared.",
        PARALLEL_AGENT_DOC,
        expect={"value.b_prompt_has_a_reply": False, "value.b_reads_state_result_a": "A-REPORT"},
    ),
)
async def test_branch_state_visibility(obs: Observer) -> None:
    turns = Turns(["a", "b"])
    seen_by_b = {}

    async def wait_for_a(callback_context: Any) -> None:  # b's before_agent_callback: b starts once a is stored
        await turns.wait("b")
        seen_by_b["result_a"] = callback_context.state.get("result_a")

    def b_done(callback_context: Any) -> None:
        turns.done("b")

    a = LlmAgent(name="a", model=FakeModel(replies=["A-REPORT"], turns=turns, gate="a"), output_key="result_a")
    b_model = FakeModel(replies=["B-REPORT"])
    b = LlmAgent(
        name="b", model=b_model, output_key="result_b", before_agent_callback=wait_for_a, after_agent_callback=b_done
    )
    with obs.framework():
        events, state = await run_once(ParallelAgent(name="fanout", sub_agents=[a, b]))
    obs.require_in_flight(turns)
    b_prompt = [text for request in b_model.requests for text in request]
    value: dict[str, Any] = {
        "b_reads_state_result_a": seen_by_b.get("result_a"),
        "b_prompt_has_a_reply": any("A-REPORT" in text for text in b_prompt),
        "branches": {e.author: e.branch for e in events if e.author in ("a", "b")},
        "final": {k: state.get(k) for k in ("result_a", "result_b")},
    }
    state_shared = value["b_reads_state_result_a"] == "A-REPORT"
    history_isolated = not value["b_prompt_has_a_reply"]
    label = f"state {'shared' if state_shared else 'not shared'}, history {'isolated' if history_isolated else 'shared'}"
    obs.record(
        value,
        label=label,
        detail=f"b reads result_a={value['b_reads_state_result_a']!r} from state; a's reply is "
        f"{'absent from' if history_isolated else 'in'} b's model request; branches "
        + ", ".join(f"{k}={v}" for k, v in value["branches"].items()),
        hazard="safe" if history_isolated else "silent",
    )


@probe(
    "adk/parallel-agent/branch-name-prefix",
    title="ParallelAgent children worker_1 and worker_10: does one see the other's conversation?",
    claim=Claim(
        "Branch isolation is a string-prefix test, so a sub-agent whose name starts with a sibling's name "
        "(agent_10 vs agent_1) receives that sibling's conversation history.",
        "https://github.com/google/adk-python/issues/2948",
        expect={"value.runs.worker_1 first.worker_10_sees_worker_1": True},
    ),
)
async def test_branch_name_prefix(obs: Observer) -> None:
    # The names use a dash; ADK's name validator decides whether that is even possible.
    dashed = obs.attempt(lambda: LlmAgent(name="worker-1", model=FakeModel()).name)
    names = ("worker_1", "worker_10")
    runs = {}
    for first, second in (names, names[::-1]):
        turns = Turns([first, second])
        models = {n: FakeModel(replies=[f"REPORT-OF-{n}"]) for n in names}

        children = [LlmAgent(name=n, model=models[n], output_key=f"out_{n}", **callback_gate(turns, n)) for n in names]
        with obs.framework():
            events, state = await run_once(ParallelAgent(name="fanout", sub_agents=children))
        obs.require_in_flight(turns)
        prompt = [text for request in models[second].requests for text in request]
        runs[f"{first} first"] = {
            f"{second}_sees_{first}": any(f"REPORT-OF-{first}" in text for text in prompt),
            "branches": {e.author: e.branch for e in events if e.author in names},
        }
    leaks = [k for r in runs.values() for k, v in r.items() if k.endswith(tuple(names)) and v is True]
    obs.record(
        {"dashed_name": dashed, "runs": runs},
        label=f"leak: {', '.join(k.replace('_sees_', ' sees ') for k in leaks)}" if leaks else "isolated both ways",
        detail=("conversation leaks: " + ", ".join(leaks) if leaks else "neither sees the other's reply")
        + f"; the name 'worker-1' {'raises ' + dashed['raises'] if 'raises' in dashed else 'is accepted'}",
        hazard="silent" if leaks else "safe",
    )


@probe(
    "adk/parallel-agent/completion-order",
    title="Children released in the order c, b, a: event order vs key order in the final state",
    claim=Claim(
        "ParallelAgent runs its sub-agents concurrently; the order of their events (and so of their "
        "writes to state) is the order in which they finish, not the order they are listed in.",
        PARALLEL_AGENT_DOC,
        expect={"value.event_order": ["c", "b", "a"]},
    ),
)
async def test_completion_order(obs: Observer) -> None:
    turns = Turns(["c", "b", "a"])
    children = [Step(name=n, turns=turns, delta={f"result_{n}": n.upper()}) for n in ("a", "b", "c")]
    with obs.framework():
        events, state = await run_once(ParallelAgent(name="fanout", sub_agents=children))
    obs.require_in_flight(turns)
    arrival = [e.author for e in events if e.actions and e.actions.state_delta]
    key_order = [k for k in state if k.startswith("result_")]
    follows = [k.removeprefix("result_") for k in key_order] == arrival
    obs.record(
        {"listed": ["a", "b", "c"], "event_order": arrival, "state_key_order": key_order},
        label="completion order" if arrival == ["c", "b", "a"] else f"order {','.join(arrival)}",
        detail=f"events arrive {','.join(arrival)} (listed a,b,c); state keys are ordered "
        + ("as the events arrived" if follows else ",".join(key_order)),
        hazard="order-coupled" if arrival != ["a", "b", "c"] else "safe",
    )


@probe(
    "adk/parallel-agent/all-permutations",
    title="Three ParallelAgent children write one key, in each of the six completion orders",
    repetition=True,
    claim=Claim(
        "Branches share session state and their writes are not merged: the surviving value is the one "
        "written last, so it depends only on which branch finishes last.",
        PARALLEL_AGENT_DOC,
        expect={"value.gated": {"abc": "C", "acb": "B", "bac": "C", "bca": "A", "cab": "B", "cba": "A"}},
    ),
)
async def test_all_permutations(obs: Observer) -> None:
    survivors = {}
    for order in itertools.permutations("abc"):
        turns = Turns(list(order))
        children = [Step(name=n, turns=turns, delta={"result": n.upper()}) for n in ("a", "b", "c")]
        with obs.framework():
            _, state = await run_once(ParallelAgent(name="fanout", sub_agents=children))
        obs.require_in_flight(turns)
        survivors["".join(order)] = state.get("result")
    # Nobody forcing an order: what ADK's own scheduling decides. Where it varies (1.0/1.5 iterate the
    # `done` set of asyncio.wait, ordered by task addresses), the rate differs from process to process
    # (from 1 in 500 to 1 in 2 runs with three writers), so a set of winners over a fixed number of runs
    # is not reproducible. Eight writers finishing together make a deviation show up in ~1 run in 6 in
    # every process. Stopping rule: run until both outcomes are seen, or MAX_RUNS runs with one outcome;
    # then, by the rule of three, the other outcome's rate is below 3/60 = 5% with 95% confidence
    # (where it varies, ~1 run in 6 deviates: 60 runs without one happen with probability < 2e-5).
    MAX_RUNS = 60
    names = [f"w{i}" for i in range(8)]
    seen: Counter[str] = Counter()
    while sum(seen.values()) < MAX_RUNS and len(seen) < 2:
        children = [Step(name=n, delta={"result": n}) for n in names]
        with obs.framework():
            _, state = await run_once(ParallelAgent(name="fanout", sub_agents=children))
        seen["last listed wins" if state.get("result") == names[-1] else "another writer wins"] += 1
    outcomes = sorted(seen)
    last_wins = all(value == order[-1].upper() for order, value in survivors.items())
    counts = ", ".join(f"{v} ×{seen[v]}" for v in outcomes)
    obs.record(
        {
            "gated": survivors,
            "ungated_8_writers": {
                "outcomes": outcomes,
                "max_runs": MAX_RUNS,
                "stopping_rule": "until both outcomes are seen, else 60 runs: another outcome's rate < 5% (95% confidence)",
            },
        },
        label=("last finisher wins" if last_wins else "not the last finisher")
        + ("; ungated varies" if len(outcomes) > 1 else "; ungated fixed"),
        detail=f"gated: {'the last to finish wins in all 6 orders' if last_wins else survivors}; "
        f"ungated, 8 writers, {sum(seen.values())} runs: {counts}",
        hazard="nondeterministic" if len(outcomes) > 1 else "order-coupled",
    )


class Raiser(BaseAgent):
    """Waits for its turn, notes `(name, "raised")` and raises ChildFailure."""

    turns: Any
    log: Any

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        await self.turns.wait(self.name)
        self.log.append((self.name, "raised"))
        raise ChildFailure(f"{self.name} failed")
        yield  # an async generator, as ADK expects


@probe(
    "adk/parallel-agent/child-exception",
    title="One ParallelAgent child raises after a sibling wrote and before another writes; observed once the"
    " event loop has settled",
    claim=Claim(
        "An exception in a sub-agent ends the ParallelAgent run; whether the other branches are cancelled "
        "depends on the merge implementation (asyncio.wait before TaskGroup).",
        "https://github.com/google/adk-python/blob/main/src/google/adk/agents/parallel_agent.py",
    ),
)
async def test_child_exception(obs: Observer) -> None:
    turns = Turns(["b", "a", "c"])
    log: list = []
    children = [
        Raiser(name="a", turns=turns, log=log),
        Step(name="b", turns=turns, delta={"result_b": "B"}, log=log),
        Step(name="c", turns=turns, delta={"result_c": "C"}, log=log),
    ]
    fan = await FanOut.on_new_session(children)
    await fan.run_keeping_exception()  # recorded below with where the child's own exception went
    obs.require_in_flight(turns)
    await settle()  # every task ADK left behind has run as far as it can: c is cancelled or still waiting
    state = await fan.state()
    fate = {name: what for name, what in log}
    fate.setdefault("c", "still waiting" if "c" in turns.arrived else "never started")
    surfaced = fan.caught[0] if fan.caught else None
    value: dict[str, Any] = {
        "run_async": {
            "raises": type(surfaced).__name__,
            "inside": sorted(type(e).__name__ for e in getattr(surfaced, "exceptions", [])),
            "child_failure": where_the_child_failure_is(surfaced),
        }
        if surfaced
        else "returned",
        "event_authors": [e.author for e in fan.events],
        "branches": fate,
        "persisted": {k: state.get(k) for k in ("result_b", "result_c")},
    }
    sibling = {"cancelled": "c cancelled", "still waiting": "c left waiting"}.get(fate["c"], f"c {fate['c']}")
    raised = type(surfaced).__name__ if surfaced else None
    own = value["run_async"]["child_failure"] if surfaced else ""
    obs.record(
        value,
        label=f"{raised}, {sibling}" if raised else f"no error, {sibling}",
        detail=f"run_async {'raises ' + raised + ': ' + str(surfaced) if raised else 'returns'}"
        + (f" (the child's ChildFailure {own})" if raised else "")
        + f"; c, waiting for its turn when a raised, "
        f"{'was cancelled' if fate['c'] == 'cancelled' else 'is ' + fate['c'] + ' once the loop has settled'}; "
        f"persisted: {', '.join(k for k, v in value['persisted'].items() if v is not None) or 'nothing'}",
        hazard="loud" if raised else "silent",
        outcome=f"raises:{raised}" if raised else "ok",
    )


class ReadModifyWrite(BaseAgent):
    """Reads the dict at `tally`, waits for its turn, writes back {**old, name: value}."""

    turns: Any
    value: str

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        old = dict(ctx.session.state.get("tally") or {})
        await self.turns.wait(self.name)
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={"tally": {**old, self.name: self.value}}),
        )
        self.turns.done(self.name)


@probe(
    "adk/parallel-agent/read-modify-write",
    title="Two ParallelAgent children each read a dict key and write back {**old, mine: value}",
    claim=Claim(
        "A state_delta replaces the value of a key; there is no merge or reducer, so concurrent "
        "read-modify-write of one key loses an update.",
        "https://google.github.io/adk-docs/sessions/state/",
        expect={"hazard": "silent"},
    ),
)
async def test_read_modify_write(obs: Observer) -> None:
    turns = Turns(["a", "b"])
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1", state={"tally": {"seed": "0"}})
    children = [ReadModifyWrite(name=n, turns=turns, value=n.upper()) for n in ("a", "b")]
    with obs.framework():
        await run_turn(ParallelAgent(name="fanout", sub_agents=children), service, "s1")
    obs.require_in_flight(turns)
    tally = (await stored_state(service, "s1")).get("tally") or {}
    lost = sorted(k for k in ("a", "b", "seed") if k not in tally)
    obs.record(
        {"final": tally, "lost": lost},
        label=f"update of {', '.join(lost)} lost" if lost else "both updates kept",
        detail=f"both read the tally before either wrote; final tally {tally}; lost: {', '.join(lost) or 'nothing'}",
        hazard="silent" if lost else "safe",
    )
