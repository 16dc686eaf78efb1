"""Mitigations of the ParallelAgent and output_key hazards where branches write one key (lost writes).

Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. Each
probe is its hazard probe's scenario (same agents, same gates) with the fix applied, run in two or more
forced completion orders: every write the branches made must be kept (in state, or in the merge
record with the branch it came from), and the outcome must be the same in every order.

Where branches would write one key, they write one key each and a deterministic merge step after the
ParallelAgent (`Merge`) folds them in a declared authority order, keeping every other value as an
agreement or a conflict with its provenance; nothing depends on which branch finished first.
"""

from typing import Any, AsyncGenerator

from gates import Turns
from adk_kit import (
    fan_out_then,
    APP,
    USER,
    Event,
    EventActions,
    GatedWriter,
    Step,
    fake_llm_agent,
)

from google.adk.agents import BaseAgent
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
        merge = Merge(name="merge", authority=["a", "b", "c"], prefix="result_", target="result")
        events, state = await fan_out_then(obs, children, [merge], turns=turns)
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
        merge = Merge(name="merge", authority=["a", "b", "c"], prefix="result_", target="result")
        events, state = await fan_out_then(obs, children, [merge], turns=turns)
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
        merge = Merge(name="merge", authority=["a", "b", "c"], prefix="result_", target="result")
        _, state = await fan_out_then(obs, children, [merge], turns=turns)
        writes = {n: n.upper() for n in ("a", "b", "c")}
        record = state.get("result") or {}
        gated["".join(order)] = {"made": [f"{b}: {v}" for b, v in writes.items()], "kept": merged_writes(writes, record), "result": record}
    # Nobody forcing an order, as in the hazard probe's ungated half (where 1.0/1.5 vary the survivor): a fixed
    # number of runs, each of which must merge to the same record.
    names = [f"w{i}" for i in range(8)]
    ungated = {}
    for attempt in range(10):
        children = [Step(name=n, delta={f"result_{n}": n}) for n in names]
        _, state = await fan_out_then(obs, children, [Merge(name="merge", authority=names, prefix="result_", target="result")])
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
        combine = Combine(name="combine", branches=["a", "b"], prefix="tally_", target="tally")
        _, state = await fan_out_then(obs, children, [combine], turns=turns, service=service)
        tally = state.get("tally") or {}
        writes = {"seed": "0", "a": "A", "b": "B"}
        runs[",".join(order)] = {
            "made": [f"{k}: {v}" for k, v in writes.items()],
            "kept": [f"{k}: {v}" for k, v in writes.items() if tally.get(k) == v],
            "result": tally,
        }
    value, hazard = judge({"per-branch keys, combined after": runs})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)
