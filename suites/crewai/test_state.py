"""Shared `self.state` written by two parallel listeners: a read-modify-write across an await."""


import cw_kit
from fanin.probe import Claim, Observer, probe


@probe(
    "crewai/state/lost-update",
    title="start `s` sets state['n'] = 0; listeners `a` and `b` each read n, await, write n + 1; both read first",
    claim=Claim(
        "Precondition: two listeners of one method update the same state key with a read-modify-write across"
        " an await. They run concurrently (asyncio.gather of the triggered listeners) on one shared state"
        " object with no merge: the last writer wins and one increment is lost. 1.9.0's StateProxy takes a"
        " lock for each single write, not across the read and the write, so it loses the update too.",
        cw_kit.GATHER_181,
        expect={"hazard": "silent", "value.n": 1},
    ),
    sources=(cw_kit.PROXY_190, cw_kit.DOCS),
)
async def test_lost_update(obs: Observer) -> None:
    log: list[str] = []
    flow = cw_kit.counter_flow(log)
    await cw_kit.kickoff(flow)
    n = flow.state["n"]
    obs.record(
        {"n": n, "log": log},
        label="one increment lost" if n == 1 else f"n = {n}",
        detail=f"two increments of 0 left n = {n}; writes {log}",
        hazard="silent" if n < 2 else "safe",
    )
