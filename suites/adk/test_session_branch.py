"""Session state written from inside a ParallelAgent branch, outside the event stream.

The session service is built in one place per probe (`session_service(obs)`, adk_sessions.py): the probe
runs on every session backend it declares.
"""

from typing import Any, AsyncGenerator

from gates import Turns
from adk_kit import APP, USER, Event, EventActions, run_turn, stored_state
from adk_sessions import session_service

from google.adk.agents import BaseAgent, ParallelAgent

from fanin.probe import Claim, Observer, probe


@probe(
    "adk/session/direct-state-mutation",
    title="A branch writes ctx.session.state[...] directly: visible to its sibling? persisted? next turn?",
    claim=Claim(
        "State should be updated through EventActions.state_delta (output_key, context.state); directly "
        "modifying the session's state dictionary bypasses event tracking, so the change is not persisted.",
        "https://google.github.io/adk-docs/sessions/state/",
        expect={"value.persisted.direct_a": None},
    ),
    backends=("memory", "sqlite", "postgres", "sqlite-native"),
)
async def test_direct_state_mutation(obs: Observer) -> None:
    class Direct(BaseAgent):
        """Writes direct_<name> into ctx.session.state by hand and delta_<name> through an event."""

        turns: Any

        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
            await self.turns.wait(self.name)
            ctx.session.state[f"direct_{self.name}"] = self.name.upper()
            yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch,
                        actions=EventActions(state_delta={f"delta_{self.name}": self.name.upper()}))
            self.turns.done(self.name)

    class Reader(BaseAgent):
        """Notes what it finds at the keys in `seen` when its turn comes."""

        turns: Any
        seen: Any  # Any: pydantic would copy a dict, and the probe keeps the original

        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
            if self.turns is not None:
                await self.turns.wait(self.name)
            for key in self.seen:
                self.seen[key] = ctx.session.state.get(key)
            yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch,
                        actions=EventActions(state_delta={f"result_{self.name}": "done"}))
            if self.turns is not None:
                self.turns.done(self.name)

    async with session_service(obs) as service:  # the one session service of this probe (per backend)
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        turns = Turns(["a", "b"])
        sibling_saw = {"direct_a": "unread", "delta_a": "unread"}
        fanout = ParallelAgent(name="fanout", sub_agents=[Direct(name="a", turns=turns),
                                                           Reader(name="b", turns=turns, seen=sibling_saw)])
        with obs.framework():
            await run_turn(fanout, service, "s1")
        obs.require_in_flight(turns)
        state = await stored_state(service, "s1")
        next_turn_saw = {"direct_a": "unread", "delta_a": "unread"}
        with obs.framework():
            await run_turn(Reader(name="later", turns=None, seen=next_turn_saw), service, "s1")
        value: dict[str, Any] = {
            "sibling_reads": sibling_saw,
            "persisted": {k: state.get(k) for k in ("direct_a", "delta_a")},
            "next_turn_reads": next_turn_saw,
        }
        direct = {
            "sibling": value["sibling_reads"]["direct_a"] == "A",
            "stored": value["persisted"]["direct_a"] == "A",
            "next turn": value["next_turn_reads"]["direct_a"] == "A",
        }
        seen_by = [k for k, v in direct.items() if v]
        obs.record(
            value,
            label="direct write: seen by " + (", ".join(seen_by) if seen_by else "nobody"),
            detail=f"a's direct write is {'visible' if direct['sibling'] else 'invisible'} to its sibling, "
            f"{'in' if direct['stored'] else 'absent from'} the stored session and "
            f"{'visible' if direct['next turn'] else 'invisible'} to the next turn; the state_delta write is "
            f"{'persisted' if value['persisted']['delta_a'] == 'A' else 'lost'}",
            hazard="safe" if all(direct.values()) else "silent",
        )
