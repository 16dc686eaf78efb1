"""Session state around a fan-out: stale results, state prefixes, concurrent runs on one session."""

import asyncio
from typing import Any

from gates import Turns
from adk_kit import APP, USER, Event, EventActions, Step, run_turn, stored_state

from google.adk.agents import BaseAgent, ParallelAgent, SequentialAgent
from google.adk.sessions import InMemorySessionService

from fanin.probe import Claim, Observer, probe

STATE_DOC = "https://google.github.io/adk-docs/sessions/state/"


class Reader(BaseAgent):
    """Waits for its turn, notes what it reads at `key` in the session state, writes `result_<name>`."""

    turns: Any
    key: str
    seen: Any

    async def _run_async_impl(self, ctx: Any):
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
    "adk/session/stale-result",
    title="The same session runs the fan-out twice; in the second run one branch writes nothing",
    claim=Claim(
        "Session state persists across invocations of a session: a key written in an earlier run keeps "
        "its value until something overwrites it, so a branch that writes nothing leaves the old result.",
        STATE_DOC,
        expect={"value.run-2.result_b": "run-1:B"},
    ),
)
async def test_stale_result(obs: Observer) -> None:
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    after = {}
    for run_id, b_writes in (("run-1", True), ("run-2", False)):
        turns = Turns(["b", "a"])
        branches = [
            Step(name="a", turns=turns, delta={"result_a": f"{run_id}:A"}),
            Step(name="b", turns=turns, delta={"result_b": f"{run_id}:B"} if b_writes else {}),
        ]
        root = SequentialAgent(
            name="pipeline",
            sub_agents=[Step(name="stamp", delta={"run_id": run_id}), ParallelAgent(name="fanout", sub_agents=branches)],
        )
        with obs.framework():
            await run_turn(root, service, "s1")
        obs.require_in_flight(turns)
        state = await stored_state(service, "s1")
        after[run_id] = {k: state.get(k) for k in ("run_id", "result_a", "result_b")}
    final = after["run-2"]
    stale = final["result_b"] is not None and not str(final["result_b"]).startswith(final["run_id"] + ":")
    obs.record(
        after,
        label="stale result kept" if stale else "no stale result" if final["result_b"] is None else "fresh result",
        detail=f"after run-2 (b wrote nothing) result_b = {final['result_b']!r} while run_id = {final['run_id']!r}",
        hazard="silent" if stale else "safe",
    )


@probe(
    "adk/session/temp-prefix",
    title="A branch writes temp:x: visible to a later sibling in the same invocation? persisted?",
    claim=Claim(
        "Keys with the temp: prefix are specific to the current invocation and are discarded afterwards: "
        "they are never persisted to the session.",
        STATE_DOC,
        expect={"value.persisted_state": None, "value.in_stored_event_delta": False},
    ),
)
async def test_temp_prefix(obs: Observer) -> None:
    turns = Turns(["a", "b"])
    seen: dict = {}
    branches = [
        Step(name="a", turns=turns, delta={"temp:x": "A", "result_a": "done"}),
        Reader(name="b", turns=turns, key="temp:x", seen=seen),
    ]
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    with obs.framework():
        events = await run_turn(ParallelAgent(name="fanout", sub_agents=branches), service, "s1")
    obs.require_in_flight(turns)
    state = await stored_state(service, "s1")
    stored = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    value = {
        "sibling_reads": seen.get("temp:x"),
        "persisted_state": state.get("temp:x"),
        "in_yielded_event_delta": any("temp:x" in (e.actions.state_delta or {}) for e in events if e.author == "a"),
        "in_stored_event_delta": any("temp:x" in (e.actions.state_delta or {}) for e in stored.events if e.author == "a"),
        "result_a": state.get("result_a"),
    }
    visible = value["sibling_reads"] == "A"
    persisted = value["persisted_state"] is not None or value["in_stored_event_delta"]
    where = (
        "kept in state" if value["persisted_state"] is not None
        else "kept in stored event" if value["in_stored_event_delta"] else "not persisted"
    )
    obs.record(
        value,
        label=f"sibling {'sees it' if visible else 'blind'}; {where}",
        detail=f"b reads temp:x = {value['sibling_reads']!r} after a wrote it; stored state "
        f"{'has' if value['persisted_state'] is not None else 'lacks'} it, stored event delta "
        f"{'has' if value['in_stored_event_delta'] else 'lacks'} it",
        hazard="silent" if persisted or not visible else "safe",
    )


@probe(
    "adk/session/app-user-prefix",
    title="A branch writes app: and user: keys: visible in a new session of the same app and user?",
    claim=Claim(
        "app: keys are shared by all users and sessions of the application, user: keys by all sessions "
        "of that user; plain keys stay in their session.",
        STATE_DOC,
        expect={
            "value.same_session.plain": "A",
            "value.new_session_same_user.plain": None,
            "value.new_session_same_user.user:y": "A",
            "value.new_session_other_user.user:y": None,
            "value.new_session_other_user.app:x": "A",
        },
    ),
)
async def test_app_user_prefix(obs: Observer) -> None:
    turns = Turns(["a", "b"])
    branches = [
        Step(name="a", turns=turns, delta={"app:x": "A", "user:y": "A", "plain": "A"}),
        Step(name="b", turns=turns, delta={"result_b": "B"}),
    ]
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    with obs.framework():
        await run_turn(ParallelAgent(name="fanout", sub_agents=branches), service, "s1")
    obs.require_in_flight(turns)
    await service.create_session(app_name=APP, user_id=USER, session_id="s2")
    await service.create_session(app_name=APP, user_id="someone-else", session_id="s3")
    keys = ("app:x", "user:y", "plain")
    value = {
        "same_session": {k: (await stored_state(service, "s1")).get(k) for k in keys},
        "new_session_same_user": {k: (await stored_state(service, "s2")).get(k) for k in keys},
        "new_session_other_user": {k: (await stored_state(service, "s3", user_id="someone-else")).get(k) for k in keys},
    }
    expected = {
        "same_session": {"app:x": "A", "user:y": "A", "plain": "A"},
        "new_session_same_user": {"app:x": "A", "user:y": "A", "plain": None},
        "new_session_other_user": {"app:x": "A", "user:y": None, "plain": None},
    }
    shared = [k for k in keys if value["new_session_same_user"][k] is not None]
    obs.record(
        value,
        label="scoped as documented" if value == expected else f"new session sees {','.join(shared) or 'nothing'}",
        detail=f"a new session of the same user sees {', '.join(shared) or 'nothing'}; another user's sees "
        + (", ".join(k for k in keys if value["new_session_other_user"][k] is not None) or "nothing"),
        hazard="safe" if value == expected else "silent",
    )


@probe(
    "adk/session/concurrent-runs",
    title="Two runs on the same session at once, each writing its own key, through InMemorySessionService",
    claim=Claim(
        "When two agents running concurrently write to the same session through InMemorySessionService, "
        "one agent's writes are silently dropped.",
        "https://github.com/google/adk-python/issues/5244",
        expect={"hazard": "silent"},
    ),
)
async def test_concurrent_runs(obs: Observer) -> None:
    turns = Turns(["a", "b"])
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    runs = await asyncio.gather(
        obs.attempt_async(lambda: run_turn(Step(name="a", turns=turns, delta={"result_a": "A"}), service, "s1")),
        obs.attempt_async(lambda: run_turn(Step(name="b", turns=turns, delta={"result_b": "B"}), service, "s1")),
    )
    obs.require_in_flight(turns)
    state = await stored_state(service, "s1")
    stored = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    value = {
        "runs": {name: ("returned" if "returned" in r else r) for name, r in zip(("a", "b"), runs)},
        "persisted": {k: state.get(k) for k in ("result_a", "result_b")},
        "stored_event_authors": [e.author for e in stored.events],
    }
    kept = [k for k, v in value["persisted"].items() if v is not None]
    failed = [f"{name} raises {r['raises']}" for name, r in value["runs"].items() if r != "returned"]
    obs.record(
        value,
        label=f"{len(kept)} of 2 writes kept" + (f", {len(failed)} run failed" if failed else ""),
        detail=f"both runs in flight at once; persisted {', '.join(kept) or 'nothing'}; "
        f"stored events {','.join(value['stored_event_authors'])}"
        + (f"; {', '.join(failed)}" if failed else ""),
        hazard="safe" if len(kept) == 2 and not failed else "loud" if failed else "silent",
    )
