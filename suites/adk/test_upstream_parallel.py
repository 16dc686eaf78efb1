"""A fork-join (SequentialAgent[ParallelAgent[A, B], reducer]) nested inside a ParallelAgent branch.

On its own the reducer, an LlmAgent after the fan-out, sees what A and B said. adk-python #3470 reports that
the same shape nested one level deeper loses it: the reducer's branch is the outer ParallelAgent's, and ADK
shows an LlmAgent only the events of its own branch and of its ancestors, while A's and B's events sit on
descendant branches. The probe reads what each reducer's model request holds (the real request ADK built),
and what the session state holds (output_key, the route that crosses branches).
"""

from typing import Any

from gates import Turns
from adk_kit import APP, USER, FakeModel, Step, run_turn, stored_state

from google.adk.agents import LlmAgent, ParallelAgent, SequentialAgent
from google.adk.sessions import InMemorySessionService

from fanin.probe import Claim, Observer, probe

ISSUE = "https://github.com/google/adk-python/issues/3470"
PR = "https://github.com/google/adk-python/pull/3889"


@probe(
    "adk/parallel-agent/fork-join-inside-parallel",
    title="ParallelAgent[Seq1[Par1[A, B], R1], Seq2[Par2[C, D], R2]]: what the reducers R1, R2 see of their"
    " own fork's outputs, beside a top-level Seq[Par[A, B], R]",
    claim=Claim(
        "A reducer LlmAgent after a ParallelAgent sees its branches' outputs in its model request, also when "
        "the fork-join is itself a branch of a ParallelAgent (adk-python #3470; PR #3889 proposes token-set "
        "branches for it).",
        ISSUE,
        expect={"value.nested.R1.sees_own_fork": ["A-out", "B-out"], "value.top_level.R.sees_own_fork": ["A-out", "B-out"]},
    ),
    sources=[PR],
)
async def test_fork_join_inside_parallel(obs: Observer) -> None:
    outputs = {"A": "A-out", "B": "B-out", "C": "C-out", "D": "D-out"}

    def leaf(name: str, turns: Any) -> LlmAgent:
        return LlmAgent(name=name, model=FakeModel(replies=[outputs[name]], turns=turns, gate=name),
                        instruction=f"you are {name}", output_key=f"out_{name}")

    def reducer(name: str) -> tuple[LlmAgent, FakeModel]:
        model = FakeModel(replies=[f"{name} reduced"])
        return LlmAgent(name=name, model=model, instruction=f"you are {name}: combine what the others said"), model

    def seen(model: FakeModel) -> list:
        texts = " ".join(t for request in model.requests for t in request)
        return sorted(out for out in outputs.values() if out in texts)

    # Nested: every leaf is held until all four are in flight (both inner forks run at once), then released
    # A, B, C, D; a gate before each reducer holds it until both inner forks are done, so each reducer's
    # request is built when every leaf output exists, whichever branch it sits on.
    leaves = Turns(["A", "B", "C", "D"])
    joins = Turns(["g1", "g2"])
    r1, r1_model = reducer("R1")
    r2, r2_model = reducer("R2")
    nested = ParallelAgent(name="outer", sub_agents=[
        SequentialAgent(name="seq1", sub_agents=[
            ParallelAgent(name="par1", sub_agents=[leaf("A", leaves), leaf("B", leaves)]), Step(name="g1", turns=joins), r1]),
        SequentialAgent(name="seq2", sub_agents=[
            ParallelAgent(name="par2", sub_agents=[leaf("C", leaves), leaf("D", leaves)]), Step(name="g2", turns=joins), r2]),
    ])
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="nested")
    with obs.framework():
        events = await run_turn(nested, service, "nested")
    obs.require_in_flight(leaves)
    obs.require_in_flight(joins)
    state = await stored_state(service, "nested")
    branches = {e.author: e.branch for e in events if e.author in ("A", "B", "C", "D", "R1", "R2")}

    # Top level: the same fork-join as the root's own sequence.
    top_turns = Turns(["A", "B"])
    r, r_model = reducer("R")
    top = SequentialAgent(name="seq", sub_agents=[
        ParallelAgent(name="par", sub_agents=[leaf("A", top_turns), leaf("B", top_turns)]), r])
    service_top = InMemorySessionService()
    await service_top.create_session(app_name=APP, user_id=USER, session_id="top")
    with obs.framework():
        await run_turn(top, service_top, "top")
    obs.require_in_flight(top_turns)

    nested_value = {
        "R1": {"sees_own_fork": [o for o in seen(r1_model) if o in ("A-out", "B-out")],
               "sees_other_fork": [o for o in seen(r1_model) if o in ("C-out", "D-out")], "model_calls": len(r1_model.requests)},
        "R2": {"sees_own_fork": [o for o in seen(r2_model) if o in ("C-out", "D-out")],
               "sees_other_fork": [o for o in seen(r2_model) if o in ("A-out", "B-out")], "model_calls": len(r2_model.requests)},
    }
    value = {
        "nested": nested_value,
        "top_level": {"R": {"sees_own_fork": seen(r_model), "model_calls": len(r_model.requests)}},
        "state_output_keys": sorted(k for k in state if k.startswith("out_") and state[k] == outputs[k[4:]]),
    }
    blind = [name for name, v in nested_value.items() if len(v["sees_own_fork"]) < 2]
    leaked = [name for name, v in nested_value.items() if v["sees_other_fork"]]
    top_ok = value["top_level"]["R"]["sees_own_fork"] == ["A-out", "B-out"]
    if blind:
        label = f"nested reducers blind: {','.join(blind)}"
    elif leaked:
        label = f"nested reducers see the other fork: {','.join(leaked)}"
    else:
        label = "every reducer sees its own fork"
    obs.record(
        value,
        label=label + ("" if top_ok else "; top level blind too"),
        detail=f"nested: R1 sees {nested_value['R1']['sees_own_fork']} of A, B (and {nested_value['R1']['sees_other_fork']} of"
        f" C, D), R2 sees {nested_value['R2']['sees_own_fork']} of C, D; top level: R sees "
        f"{value['top_level']['R']['sees_own_fork']}; output_key state holds {value['state_output_keys']} (the"
        f" reducers read the conversation, include_contents='default'; event branches, named differently by"
        f" version: {branches})",
        # A reducer that answers without its fork's outputs, with no error, has lost them; one that sees
        # the other fork's outputs breaks the isolation the branches promise.
        hazard="silent" if blind or leaked or not top_ok else "safe",
    )
