"""Mitigations of the ParallelAgent, output_key, AgentTool, escalation and session hazards.

Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. Each
probe is its hazard probe's scenario (same agents, same gates) with the fix applied, run in two or more
forced completion orders: every write the branches made must be kept (in state, or in the merge
record with the branch it came from), and the outcome must be the same in every order.

Where branches would write one key, they write one key each and a deterministic merge step after the
ParallelAgent (`Merge`) folds them in a declared authority order, keeping every other value as an
agreement or a conflict with its provenance; nothing depends on which branch finished first.
"""

import asyncio
from typing import Any, AsyncGenerator

from gates import Turns
from adk_kit import (
    APP,
    USER,
    Event,
    EventActions,
    FakeModel,
    GatedWriter,
    Step,
    fake_llm_agent,
    run_once,
    run_turn,
    settle,
    stored_state,
)

from google.adk.agents import BaseAgent, LlmAgent, ParallelAgent, SequentialAgent
from google.adk.sessions import InMemorySessionService

from fanin.probe import Claim, Observer, probe
from mitigation import judge, words

PARALLEL_AGENT_DOC = "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/"
STATE_DOC = "https://google.github.io/adk-docs/sessions/state/"







class Merge(BaseAgent):
    """The deterministic merge step after a ParallelAgent whose branches each wrote their own key.

    Branch `b` wrote `<prefix><b>`. The merge folds them in `authority` order (highest first): the first
    branch with a value provides it; every later branch is kept with its provenance, as an agreement
    (same value) or a conflict (another value); a branch that wrote nothing is listed as missing. The
    record written to `target` depends only on the authority order, never on which branch finished first.
    """

    authority: list[str]
    prefix: str
    target: str

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        record: dict[str, Any] = {"value": None, "from": None, "agrees": [], "conflicts": [], "missing": []}
        for branch in self.authority:
            value = state.get(self.prefix + branch)
            if value is None:
                record["missing"].append(branch)
            elif record["from"] is None:
                record["value"], record["from"] = value, branch
            elif value == record["value"]:
                record["agrees"].append(branch)
            else:
                record["conflicts"].append({"branch": branch, "value": value})
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={self.target: record}),
        )


def merged_writes(writes: dict[str, Any], record: dict) -> list[str]:
    """The branch writes (`branch: value`) the merge record keeps, each with the branch it came from."""
    kept = []
    for branch, value in writes.items():
        if (record.get("from") == branch and record.get("value") == value) or (
            branch in record.get("agrees", []) and record.get("value") == value
        ) or {"branch": branch, "value": value} in record.get("conflicts", []):
            kept.append(f"{branch}: {value}")
    return kept


@probe(
    "adk/parallel-agent/same-key-mitigated",
    title="same-key, mitigated: the three ParallelAgent children each write their own key; a merge step after the"
    " ParallelAgent folds them in authority order a, b, c, keeping conflicts with their branch; two completion orders",
    claim=Claim(
        "Give each parallel child its own state key and merge them in the step after the ParallelAgent: no write"
        " is lost and the merged value does not depend on which branch finished last.",
        PARALLEL_AGENT_DOC,
        expect={"hazard": "safe", "value.variants.own keys, merge in authority order.runs.a,b,c.result.from": "a"},
    ),
)
async def test_same_key_mitigated(obs: Observer) -> None:
    runs = {}
    for order in (["a", "b", "c"], ["c", "b", "a"]):
        turns = Turns(order)
        children = [GatedWriter(name=n, turns=turns, delta={f"result_{n}": n.upper()}) for n in ("a", "b", "c")]
        root = SequentialAgent(
            name="pipeline",
            sub_agents=[
                ParallelAgent(name="fanout", sub_agents=children),
                Merge(name="merge", authority=["a", "b", "c"], prefix="result_", target="result"),
            ],
        )
        with obs.framework():
            events, state = await run_once(root)
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        writes = {n: n.upper() for n in ("a", "b", "c")}
        record = state.get("result") or {}
        runs[",".join(order)] = {
            "made": [f"{b}: {v}" for b, v in writes.items()],
            "kept": merged_writes(writes, record),
            "result": record,
            "observed": {"finished": [e.author for e in events if e.author in writes]},
        }
    value, hazard = judge({"own keys, merge in authority order": runs})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/output-key/same-key-mitigated",
    title="output-key same-key, mitigated: the three LlmAgent children each get their own output_key; a merge step"
    " folds the replies in authority order a, b, c, keeping conflicts with their branch; two completion orders",
    claim=Claim(
        "Give every parallel LlmAgent its own output_key and merge them in the next step: every reply is kept and"
        " the merged value does not depend on which reply was stored last.",
        PARALLEL_AGENT_DOC,
        expect={"hazard": "safe"},
    ),
)
async def test_output_key_same_key_mitigated(obs: Observer) -> None:
    runs = {}
    for order in (["a", "b", "c"], ["c", "b", "a"]):
        turns = Turns(order)
        children = [fake_llm_agent(n, f"reply {n}", turns=turns, output_key=f"result_{n}") for n in ("a", "b", "c")]
        root = SequentialAgent(
            name="pipeline",
            sub_agents=[
                ParallelAgent(name="fanout", sub_agents=children),
                Merge(name="merge", authority=["a", "b", "c"], prefix="result_", target="result"),
            ],
        )
        with obs.framework():
            events, state = await run_once(root)
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        writes = {n: f"reply {n}" for n in ("a", "b", "c")}
        record = state.get("result") or {}
        stored = [e.author for e in events if e.actions and any(k.startswith("result_") for k in e.actions.state_delta or {})]
        runs[",".join(order)] = {
            "made": [f"{b}: {v}" for b, v in writes.items()],
            "kept": merged_writes(writes, record),
            "result": record,
            "observed": {"output_key_events": stored},
        }
    value, hazard = judge({"own output_keys, merge in authority order": runs})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/parallel-agent/all-permutations-mitigated",
    title="all-permutations, mitigated: the three children write distinct keys, merged in authority order; all six"
    " completion orders, then eight writers ungated",
    claim=Claim(
        "With distinct keys per branch the finishing order no longer decides what survives: every branch's value is"
        " kept and the merge gives one result in every completion order.",
        PARALLEL_AGENT_DOC,
        expect={"hazard": "safe"},
    ),
)
async def test_all_permutations_mitigated(obs: Observer) -> None:
    import itertools

    gated = {}
    for order in itertools.permutations("abc"):
        turns = Turns(list(order))
        children = [Step(name=n, turns=turns, delta={f"result_{n}": n.upper()}) for n in ("a", "b", "c")]
        root = SequentialAgent(
            name="pipeline",
            sub_agents=[
                ParallelAgent(name="fanout", sub_agents=children),
                Merge(name="merge", authority=["a", "b", "c"], prefix="result_", target="result"),
            ],
        )
        with obs.framework():
            _, state = await run_once(root)
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        writes = {n: n.upper() for n in ("a", "b", "c")}
        record = state.get("result") or {}
        gated["".join(order)] = {"made": [f"{b}: {v}" for b, v in writes.items()], "kept": merged_writes(writes, record), "result": record}
    # Nobody forcing an order, as in the hazard probe's ungated half (where 1.0/1.5 vary the survivor): a fixed
    # number of runs, each of which must merge to the same record.
    names = [f"w{i}" for i in range(8)]
    ungated = {}
    for attempt in range(10):
        children = [Step(name=n, delta={f"result_{n}": n}) for n in names]
        root = SequentialAgent(
            name="pipeline",
            sub_agents=[
                ParallelAgent(name="fanout", sub_agents=children),
                Merge(name="merge", authority=names, prefix="result_", target="result"),
            ],
        )
        with obs.framework():
            _, state = await run_once(root)
        writes = {n: n for n in names}
        record = state.get("result") or {}
        ungated[f"run {attempt + 1}"] = {"made": [f"{b}: {v}" for b, v in writes.items()], "kept": merged_writes(writes, record), "result": record}
    value, hazard = judge({"3 writers, 6 gated orders": gated, "8 writers ungated, 10 runs": ungated})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


class Combine(BaseAgent):
    """After the ParallelAgent: folds each branch's own key `<prefix><branch>` into the dict at `target`, in the
    order of `branches` (the sub-agent list), keeping what `target` held before."""

    branches: list[str]
    prefix: str
    target: str

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        combined = dict(state.get(self.target) or {})
        for branch in self.branches:
            if state.get(self.prefix + branch) is not None:
                combined[branch] = state[self.prefix + branch]
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={self.target: combined}),
        )


@probe(
    "adk/parallel-agent/read-modify-write-mitigated",
    title="read-modify-write, mitigated: the two children write per-branch keys instead of {**old, mine: value};"
    " a step after the ParallelAgent combines them into the tally; both completion orders",
    claim=Claim(
        "Per-branch keys combined after the ParallelAgent keep every branch's update (and what the key held before),"
        " whatever the completion order.",
        STATE_DOC,
        expect={"hazard": "safe"},
    ),
)
async def test_read_modify_write_mitigated(obs: Observer) -> None:
    runs = {}
    for order in (["a", "b"], ["b", "a"]):
        turns = Turns(order)
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1", state={"tally": {"seed": "0"}})
        children = [Step(name=n, turns=turns, delta={f"tally_{n}": n.upper()}) for n in ("a", "b")]
        root = SequentialAgent(
            name="pipeline",
            sub_agents=[
                ParallelAgent(name="fanout", sub_agents=children),
                Combine(name="combine", branches=["a", "b"], prefix="tally_", target="tally"),
            ],
        )
        with obs.framework():
            await run_turn(root, service, "s1")
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        tally = (await stored_state(service, "s1")).get("tally") or {}
        writes = {"seed": "0", "a": "A", "b": "B"}
        runs[",".join(order)] = {
            "made": [f"{k}: {v}" for k, v in writes.items()],
            "kept": [f"{k}: {v}" for k, v in writes.items() if tally.get(k) == v],
            "result": tally,
        }
    value, hazard = judge({"per-branch keys, combined after": runs})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


class Present(BaseAgent):
    """After the ParallelAgent: reads each branch's key in the order of the sub-agent list, writes that list."""

    branches: list[str]
    prefix: str
    target: str

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        presented = [state.get(self.prefix + branch) for branch in self.branches]
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={self.target: presented}),
        )


@probe(
    "adk/parallel-agent/completion-order-mitigated",
    title="completion-order, mitigated: a step after the ParallelAgent presents the results in sub-agent list order"
    " (reading each branch's key); children released c, b, a, then a, b, c",
    claim=Claim(
        "Results read from each branch's key in the order of the sub-agent list come out in that order whatever the"
        " completion order.",
        PARALLEL_AGENT_DOC,
        expect={"hazard": "safe", "value.variants.read in sub-agent order.runs.c,b,a.result": ["A", "B", "C"]},
    ),
)
async def test_completion_order_mitigated(obs: Observer) -> None:
    runs = {}
    for order in (["c", "b", "a"], ["a", "b", "c"]):
        turns = Turns(order)
        children = [Step(name=n, turns=turns, delta={f"result_{n}": n.upper()}) for n in ("a", "b", "c")]
        root = SequentialAgent(
            name="pipeline",
            sub_agents=[
                ParallelAgent(name="fanout", sub_agents=children),
                Present(name="present", branches=["a", "b", "c"], prefix="result_", target="presented"),
            ],
        )
        with obs.framework():
            events, state = await run_once(root)
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        presented = state.get("presented") or []
        writes = {n: n.upper() for n in ("a", "b", "c")}
        runs[",".join(order)] = {
            "made": [f"{b}: {v}" for b, v in writes.items()],
            "kept": [f"{b}: {v}" for b, v in writes.items() if v in presented],
            "result": presented,
            "observed": {"event_order": [e.author for e in events if e.author in writes]},
        }
    value, hazard = judge({"read in sub-agent order": runs})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/parallel-agent/branch-name-prefix-mitigated",
    title="branch-name-prefix, mitigated: the sibling LlmAgents named worker_01 and worker_10 (no name a prefix of"
    " another); both completion orders",
    claim=Claim(
        "Sibling names of which none is a prefix of another keep each branch's conversation isolated.",
        "https://github.com/google/adk-python/issues/2948",
        expect={"hazard": "safe"},
    ),
)
async def test_branch_name_prefix_mitigated(obs: Observer) -> None:
    names = ("worker_01", "worker_10")
    runs = {}
    for first, second in (names, names[::-1]):
        turns = Turns([first, second])
        models = {n: FakeModel(replies=[f"REPORT-OF-{n}"]) for n in names}

        def gate(name: str) -> dict:
            async def before(callback_context: Any) -> None:
                await turns.wait(name)

            def after(callback_context: Any) -> None:
                turns.done(name)

            return {"before_agent_callback": before, "after_agent_callback": after}

        children = [LlmAgent(name=n, model=models[n], output_key=f"out_{n}", **gate(n)) for n in names]
        with obs.framework():
            events, state = await run_once(ParallelAgent(name="fanout", sub_agents=children))
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        leaks = [
            f"{reader} sees {other}"
            for reader in names
            for other in names
            if other != reader and any(f"REPORT-OF-{other}" in t for request in models[reader].requests for t in request)
        ]
        writes = {f"out_{n}": f"REPORT-OF-{n}" for n in names}
        runs[f"{first} first"] = {
            "made": [f"{k}: {v}" for k, v in writes.items()],
            "kept": [f"{k}: {v}" for k, v in writes.items() if state.get(k) == v],
            "wrong": leaks,
            "result": {"leaks": leaks, "outputs": {k: state.get(k) for k in writes}},
        }
    value, hazard = judge({"names without a shared prefix": runs})
    label, detail = words(value, hazard, safe="isolated both ways, every reply kept")
    obs.record(value, label=label, detail=detail, hazard=hazard)


class Guard(BaseAgent):
    """A branch that runs its one sub-agent and catches what it raises, recording a failure result in `key`.

    `turns` is gate plumbing only: a branch that raised never marks its turn done, so its guard does,
    after the failure result is stored, to let the next branch go as in the hazard probe's order.
    """

    key: str
    turns: Any = None

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        child = self.sub_agents[0]
        try:
            async for event in child.run_async(ctx):
                yield event
        except Exception as exc:  # noqa: BLE001 - the mitigation: every failure becomes this branch's result
            yield Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                branch=ctx.branch,
                actions=EventActions(state_delta={self.key: {"failed": type(exc).__name__}}),
            )
            if self.turns is not None:
                self.turns.done(child.name)


@probe(
    "adk/parallel-agent/child-exception-mitigated",
    title="child-exception, mitigated: each ParallelAgent branch catches its exception and records a failure result"
    " in its own key; `a` raises between b's and c's writes; two completion orders",
    claim=Claim(
        "With exceptions caught inside each branch and recorded as that branch's result, the run completes and every"
        " branch's result (failures included) is kept, whatever the exception type.",
        "https://github.com/google/adk-python/blob/main/src/google/adk/agents/parallel_agent.py",
        expect={"hazard": "safe", "value.variants.caught in each branch.runs.b,a,c.result.result_a": {"failed": "RuntimeError"}},
    ),
)
async def test_child_exception_mitigated(obs: Observer) -> None:
    runs = {}
    for order in (["b", "a", "c"], ["c", "a", "b"]):
        turns = Turns(order)
        log: list = []
        branches = [
            Guard(name="guard_a", key="result_a", turns=turns, sub_agents=[Step(name="a", turns=turns, fail=True, log=log)]),
            Guard(name="guard_b", key="result_b", turns=turns, sub_agents=[Step(name="b", turns=turns, delta={"result_b": "B"}, log=log)]),
            Guard(name="guard_c", key="result_c", turns=turns, sub_agents=[Step(name="c", turns=turns, delta={"result_c": "C"}, log=log)]),
        ]
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        result = await obs.attempt_async(lambda: run_turn(ParallelAgent(name="fanout", sub_agents=branches), service, "s1"))
        if "raises" in result:
            runs[",".join(order)] = {"raises": result["raises"]}
            continue
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        state = await stored_state(service, "s1")
        writes = {"result_a": {"failed": "RuntimeError"}, "result_b": "B", "result_c": "C"}
        runs[",".join(order)] = {
            "made": [f"{k}: {v}" for k, v in writes.items()],
            "kept": [f"{k}: {v}" for k, v in writes.items() if state.get(k) == v],
            "result": {k: state.get(k) for k in writes},
            "observed": {"branches": dict(sorted({name: what for name, what in log}.items()))},
        }
    value, hazard = judge({"caught in each branch": runs})
    label, detail = words(value, hazard, safe="run completes, every result kept")
    obs.record(value, label=label, detail=detail, hazard=hazard)


class Accept(BaseAgent):
    """The step after the fan-out: accepts `result_<branch>` only if stamped with this run's id (`<run_id>:...`);
    a value of another run is rejected, a branch without one is listed as missing."""

    branches: list[str]

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        run_id = state.get("run_id")
        verdict: dict[str, Any] = {"accepted": {}, "rejected": [], "missing": []}
        for branch in self.branches:
            value = state.get(f"result_{branch}")
            if value is None:
                verdict["missing"].append(branch)
            elif str(value).startswith(f"{run_id}:"):
                verdict["accepted"][branch] = value
            else:
                verdict["rejected"].append(branch)
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={"gathered": verdict}),
        )


def accounted(made: dict[str, str], verdict: dict, run_id: str) -> dict:
    """A run's branch writes against what the checking step accepted; a value of another run accepted is wrong."""
    accepted = verdict.get("accepted", {})
    return {
        "made": [f"{b}: {v}" for b, v in made.items()],
        "kept": [f"{b}: {v}" for b, v in made.items() if accepted.get(b) == v],
        "wrong": [f"{b}: stale {v}" for b, v in accepted.items() if not str(v).startswith(f"{run_id}:")],
    }


@probe(
    "adk/escalate/direct-child-mitigated",
    title="escalate direct-child, mitigated: the step after the ParallelAgent checks which branch results are present"
    " and stamped with this run, after an earlier run on the same session left all three",
    claim=Claim(
        "A fan-in step that checks which branch results are present, and which run they belong to, never uses a"
        " cancelled branch's missing result or an earlier run's value as if it were this run's.",
        "https://github.com/google/adk-python/issues/5104",
        expect={"hazard": "safe"},
    ),
)
async def test_direct_child_mitigated(obs: Observer) -> None:
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    runs = {}
    for run_id, escalate in (("run-1", False), ("run-2", True)):
        turns = Turns(["a", "b", "c"])
        log: list = []
        branches = [
            Step(name="a", turns=turns, escalate=escalate, delta={"result_a": f"{run_id}:A"}, log=log),
            Step(name="b", turns=turns, delta={"result_b": f"{run_id}:B"}, log=log),
            Step(name="c", turns=turns, delta={"result_c": f"{run_id}:C"}, log=log),
        ]
        root = SequentialAgent(
            name="pipeline",
            sub_agents=[
                Step(name="stamp", delta={"run_id": run_id}),
                ParallelAgent(name="fanout", sub_agents=branches),
                Accept(name="gather", branches=["a", "b", "c"]),
            ],
        )
        with obs.framework():
            await run_turn(root, service, "s1")
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        verdict = (await stored_state(service, "s1")).get("gathered") or {}
        acted = [name for name, what in log if what == "acted"]
        made = {n: f"{run_id}:{n.upper()}" for n in ("a", "b", "c") if n in acted}
        runs[f"{run_id}{', a escalates' if escalate else ''}"] = {
            **accounted(made, verdict, run_id),
            "result": verdict,
            "observed": {"siblings": {n: dict(log).get(n, "never started") for n in ("b", "c")}},
        }
    # The runs differ on purpose (the second escalates): each is judged alone, not against the other.
    value, hazard = judge({run: {"run": seen} for run, seen in runs.items()})
    label, detail = words(value, hazard, safe="partial and stale results flagged")
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "adk/session/stale-result-mitigated",
    title="stale-result, mitigated: the fan-out twice on one session, b writing nothing the second time; results"
    " stamped with the run id and checked, or the branch keys cleared at the start of each run",
    claim=Claim(
        "Results stamped with the run id (or branch keys cleared when a run starts), checked after the fan-out, never"
        " let an earlier run's value pass for this run's.",
        STATE_DOC,
        expect={"hazard": "safe"},
    ),
)
async def test_stale_result_mitigated(obs: Observer) -> None:
    async def sequence(clear: bool, order: list[str]) -> dict:
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        after = {}
        made_all: list[str] = []
        kept_all: list[str] = []
        wrong_all: list[str] = []
        for run_id, b_writes in (("run-1", True), ("run-2", False)):
            turns = Turns(order)
            branches = [
                Step(name="a", turns=turns, delta={"result_a": f"{run_id}:A"}),
                Step(name="b", turns=turns, delta={"result_b": f"{run_id}:B"} if b_writes else {}),
            ]
            start = {"run_id": run_id, **({"result_a": None, "result_b": None} if clear else {})}
            root = SequentialAgent(
                name="pipeline",
                sub_agents=[
                    Step(name="stamp", delta=start),
                    ParallelAgent(name="fanout", sub_agents=branches),
                    Accept(name="gather", branches=["a", "b"]),
                ],
            )
            with obs.framework():
                await run_turn(root, service, "s1")
            if turns.vacuous:
                obs.vacuous(turns.vacuous)
            verdict = (await stored_state(service, "s1")).get("gathered") or {}
            made = {"a": f"{run_id}:A", **({"b": f"{run_id}:B"} if b_writes else {})}
            seen = accounted(made, verdict, run_id)
            made_all += [f"{run_id} {w}" for w in seen["made"]]
            kept_all += [f"{run_id} {w}" for w in seen["kept"]]
            wrong_all += [f"{run_id} {w}" for w in seen["wrong"]]
            after[run_id] = verdict
        return {"made": made_all, "kept": kept_all, "wrong": wrong_all, "result": after}

    variants = {}
    for variant, clear in (("stamped with the run id, checked", False), ("branch keys cleared at the start", True)):
        variants[variant] = {
            f"finish {','.join(order)}": await sequence(clear, order) for order in (["b", "a"], ["a", "b"])
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe="stale result rejected, order-independent")
    obs.record(value, label=label, detail=detail, hazard=hazard)


class Reader(BaseAgent):
    """Waits for its turn, notes what it reads at `key` in the session state, writes `result_<name>`."""

    turns: Any
    key: str
    seen: Any

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        await self.turns.wait(self.name)
        self.seen[self.key] = ctx.session.state.get(self.key)
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EventActions(state_delta={f"result_{self.name}": "done"}),
        )
        self.turns.done(self.name)


@probe(
    "adk/session/temp-prefix-mitigated",
    title="temp-prefix, mitigated: branch a passes x to its sibling b through a regular key, removed by a cleanup"
    " step after the ParallelAgent; a finishing first (the hazard's order), then b first",
    claim=Claim(
        "A regular key is visible to every later reader in the invocation; a cleanup step removes it from the stored"
        " state once the branches are done.",
        STATE_DOC,
        expect={"value.variants.regular key, cleaned up.runs.a first.result.sibling_reads": "A"},
    ),
)
async def test_temp_prefix_mitigated(obs: Observer) -> None:
    runs = {}
    for order in (["a", "b"], ["b", "a"]):
        turns = Turns(order)
        seen: dict = {}
        branches = [
            Step(name="a", turns=turns, delta={"handoff_x": "A", "result_a": "done"}),
            Reader(name="b", turns=turns, key="handoff_x", seen=seen),
        ]
        root = SequentialAgent(
            name="pipeline",
            sub_agents=[ParallelAgent(name="fanout", sub_agents=branches), Step(name="cleanup", delta={"handoff_x": None})],
        )
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        with obs.framework():
            events = await run_turn(root, service, "s1")
        if turns.vacuous:
            obs.vacuous(turns.vacuous)
        state = await stored_state(service, "s1")
        # The write is kept if it reached the session (an event's state_delta before the cleanup).
        stored = any((e.actions.state_delta or {}).get("handoff_x") == "A" for e in events if e.author == "a")
        runs[f"{order[0]} first"] = {
            "made": ["a: handoff_x=A"],
            "kept": ["a: handoff_x=A"] if stored else [],
            "wrong": [f"handoff_x left in state: {state.get('handoff_x')!r}"] if state.get("handoff_x") is not None else [],
            "result": {"sibling_reads": seen.get("handoff_x"), "after_cleanup": state.get("handoff_x")},
        }
    value, hazard = judge({"regular key, cleaned up": runs})
    label, detail = words(value, hazard, safe="sibling sees it, cleaned up")
    if hazard == "order-coupled":
        label = "b sees x only if a finished first"
    obs.record(value, label=label, detail=detail, hazard=hazard)


class Calls:
    """`Turns` for calls that a version may run concurrently or one by one, told apart without a clock.

    The first call to arrive lets the event loop settle (`adk_kit.settle`: loop iterations, no wall time):
    if the other call has not arrived by then, nothing else is in flight, so the version runs the calls one
    after the other (`sequential`) and every call goes at once; otherwise they are released in `order`.
    """

    def __init__(self, order: list[str]) -> None:
        self.order = list(order)
        self.arrived: list[str] = []
        self.acted: list[str] = []
        self.sequential = False
        self._events = {name: asyncio.Event() for name in self.order}

    async def wait(self, name: str) -> None:
        self.arrived.append(name)
        if set(self.arrived) >= set(self.order):
            self._events[self.order[0]].set()
        elif len(self.arrived) == 1:
            await settle()
            if not set(self.arrived) >= set(self.order):
                self.sequential = True
                for event in self._events.values():
                    event.set()
        await self._events[name].wait()

    def done(self, name: str) -> None:
        self.acted.append(name)
        position = self.order.index(name)
        if position + 1 < len(self.order):
            self._events[self.order[position + 1]].set()


@probe(
    "adk/agent-tool/parallel-state-delta-mitigated",
    title="parallel-state-delta, mitigated: the two AgentTool results read from their function responses, not from"
    " the output_keys; both completion orders",
    claim=Claim(
        "Each AgentTool's result is in its function response, whichever output_key landed in the session state.",
        "https://github.com/google/adk-python/issues/1153",
        expect={"hazard": "safe"},
    ),
)
async def test_parallel_state_delta_mitigated(obs: Observer) -> None:
    AgentTool = obs.need("google.adk.tools.agent_tool", "AgentTool")
    runs = {}
    for order in (["prime", "roll"], ["roll", "prime"]):
        # the hazard probe's gate gives up after `patience` when a version runs the calls one by one; this one
        # tells the two cases apart by letting the event loop settle, so no run waits on a clock
        turns = Calls(order)
        roll = LlmAgent(name="roll", model=FakeModel(replies=["6"], turns=turns, gate="roll"), output_key="result_roll")
        prime = LlmAgent(name="prime", model=FakeModel(replies=["yes"], turns=turns, gate="prime"), output_key="result_prime")
        calls = [("roll", {"request": "roll a die"}), ("prime", {"request": "is 2 prime?"})]
        root = LlmAgent(
            name="root",
            model=FakeModel(replies=[calls, "both answered"]),
            tools=[AgentTool(agent=roll), AgentTool(agent=prime)],
        )
        with obs.framework():
            events, state = await run_once(root)
        responses = {r.name: r.response for e in events for r in e.get_function_responses()}
        results = {name: (responses.get(name) or {}).get("result") for name in ("roll", "prime")}
        writes = {"roll": "6", "prime": "yes"}
        runs[f"{order[0]} first"] = {
            "made": [f"{k}: {v}" for k, v in writes.items()],
            "kept": [f"{k}: {v}" for k, v in writes.items() if results.get(k) == v],
            "result": results,
            "observed": {
                "tool_calls_ran": "one after the other" if turns.sequential else "concurrently",
                "finished": turns.acted,
                "output_keys_in_state": sorted(k for k in ("result_roll", "result_prime") if state.get(k) is not None),
            },
        }
    value, hazard = judge({"read from the function responses": runs})
    label, detail = words(value, hazard, safe="both results read, order-independent")
    obs.record(value, label=label, detail=detail, hazard=hazard)
