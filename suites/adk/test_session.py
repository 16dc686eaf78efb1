"""Session state around a fan-out: stale results, state prefixes, concurrent runs on one session."""

import asyncio
import time
from typing import Any

from gates import Turns
from adk_kit import APP, USER, Reader, Step, run_turn, stored_state
from adk_sessions import in_one_second, keeps_whole_seconds, session_service, window_start

from google.adk.agents import ParallelAgent, SequentialAgent

from fanin.probe import Claim, Observer, probe

STATE_DOC = "https://google.github.io/adk-docs/sessions/state/"


class RunTurns(Turns):
    """Turns for whole `Runner.run_async` runs on one session.

    `reached[name]` is set once that run's agent is at its gate, so a probe can start the next run only
    when the previous one is in flight: the order in which the runs read the session and append their
    messages is then fixed by the probe, not left to a database driver's threads. A run that ends
    without finishing its turn (it raised) gives the turn up, so the others go on at once instead of
    waiting out the patience. A run that ended before its agent ran never arrived: it is named in
    `never_reached` (and its `reached` is set only so that nobody waits for it), it is not counted in
    `arrived`, and the runs that did arrive are released without it.
    """

    def __init__(self, order: list) -> None:
        super().__init__(order)
        self.reached = {name: asyncio.Event() for name in self.order}
        self.never_reached: list = []

    def _release_if_all_accounted(self, arriving: tuple = ()) -> None:
        if set(self.arrived) | set(arriving) | set(self.never_reached) >= set(self.order):
            self._events[self.order[0]].set()

    async def wait(self, name: str) -> None:
        self.reached[name].set()
        self._release_if_all_accounted((name,))
        await super().wait(name)

    def give_up(self, name: str) -> None:
        if name in self.acted:
            return
        if not self.reached[name].is_set():
            self.never_reached.append(name)
            self.reached[name].set()
            self._release_if_all_accounted()
        self.done(name)


@probe(
    "adk/session/stale-result",
    title="The same session runs the fan-out twice; in the second run one branch writes nothing",
    claim=Claim(
        "Session state persists across invocations of a session: a key written in an earlier run keeps "
        "its value until something overwrites it, so a branch that writes nothing leaves the old result.",
        STATE_DOC,
        expect={"value.run-2.result_b": "run-1:B"},
    ),
    backends=("memory", "sqlite", "postgres", "sqlite-native"),
)
async def test_stale_result(obs: Observer) -> None:
    async with session_service(obs) as service:
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        after: dict[str, dict[str, Any]] = {}
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
    backends=("memory", "sqlite", "postgres", "sqlite-native"),
)
async def test_temp_prefix(obs: Observer) -> None:
    turns = Turns(["a", "b"])
    seen: dict = {}
    branches = [
        Step(name="a", turns=turns, delta={"temp:x": "A", "result_a": "done"}),
        Reader(name="b", turns=turns, key="temp:x", seen=seen),
    ]
    async with session_service(obs) as service:
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
            "value.same_session": {"app:x": "A", "user:y": "A", "plain": "A"},
            "value.new_session_same_user": {"app:x": "A", "user:y": "A", "plain": None},
            "value.new_session_other_user": {"app:x": "A", "user:y": None, "plain": None},
        },
    ),
    backends=("memory", "sqlite", "postgres", "sqlite-native"),
)
async def test_app_user_prefix(obs: Observer) -> None:
    turns = Turns(["a", "b"])
    branches = [
        Step(name="a", turns=turns, delta={"app:x": "A", "user:y": "A", "plain": "A"}),
        Step(name="b", turns=turns, delta={"result_b": "B"}),
    ]
    async with session_service(obs) as service:
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
    title="Two runs on the same session at once, each writing its own key, through one session service",
    claim=Claim(
        "When two agents running concurrently write to the same session through InMemorySessionService, "
        "one agent's writes are silently dropped.",
        "https://github.com/google/adk-python/issues/5244",
        expect={"hazard": "silent"},
    ),
    backends=("memory", "sqlite", "postgres", "sqlite-native"),
)
async def test_concurrent_runs(obs: Observer) -> None:
    async def scenario(attempt: int) -> tuple[dict, bool, tuple[float, float]]:
        turns = RunTurns(["a", "b"])
        session_id = f"s{attempt}"

        async def run(name: str) -> dict:
            try:
                step = Step(name=name, turns=turns, delta={f"result_{name}": name.upper()})
                return await obs.attempt_async(lambda: run_turn(step, service, session_id))
            finally:
                turns.give_up(name)

        start = await window_start(attempt)
        created = await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
        # b starts once a's agent is at its gate: a has read the session and appended its message.
        first, a_reached = asyncio.ensure_future(run("a")), asyncio.ensure_future(turns.reached["a"].wait())
        await asyncio.wait({first, a_reached}, return_when=asyncio.FIRST_COMPLETED)
        runs = await asyncio.gather(first, run("b"))
        end = time.time()
        await a_reached
        obs.require_in_flight(turns)
        state = await stored_state(service, session_id)
        stored = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
        value = {
            "runs": {name: ("returned" if "returned" in r else r) for name, r in zip(("a", "b"), runs)},
            "persisted": {k: state.get(k) for k in ("result_a", "result_b")},
            "stored_event_authors": [e.author for e in stored.events],
        }
        if turns.never_reached:
            value["ended_before_its_agent_ran"] = list(turns.never_reached)
        return value, keeps_whole_seconds(created), (start, end)

    async with session_service(obs) as service:
        value, clock = await in_one_second(obs, scenario)
    never = value.get("ended_before_its_agent_ran", [])
    kept = [k for k, v in value["persisted"].items() if v is not None]
    failed = [f"{name} raises {r['raises']}" for name, r in value["runs"].items() if r != "returned"]
    early = "; ".join(f"{name}'s run ended before its agent ran" for name in never)
    obs.record(
        value,
        label=f"{len(kept)} of 2 writes kept" + (f", {len(failed)} run failed" if failed else "")
        + "".join(f"; {name} never reached its agent" for name in never),
        detail=f"{early or 'both runs in flight at once'}; persisted {', '.join(kept) or 'nothing'}; "
        f"stored events {','.join(value['stored_event_authors'])}"
        + (f"; {', '.join(failed)}" if failed else "")
        + (f"; {clock}" if clock else ""),
        hazard="safe" if len(kept) == 2 and not failed else "loud" if failed else "silent",
    )
