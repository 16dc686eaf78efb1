"""ParallelAgent in production shapes: a ParallelAgent inside a LoopAgent, nested lanes, include_contents='none',
resuming a fan-out.

Orders are forced with gates (`Turns`) and with holds: an asyncio.Event only the probe sets, so a branch
stays in flight for as long as the probe needs.
"""

import asyncio
from typing import Any, AsyncGenerator

from gates import Turns
from adk_kit import APP, USER, Event, EventActions, FanOut, Step, run_turn, stored_state, user_message, settle

from google.adk.agents import BaseAgent, ParallelAgent
from google.adk.sessions import InMemorySessionService

from fanin.probe import Claim, Observer, probe


class Lane(BaseAgent):
    """A branch that may run once per loop iteration: its n-th run waits for its turn in `turns[n]`
    (under `gate`, default its name), then writes `<name>_<n+1>` and escalates if `escalate`.

    `log` gets `(name, "acted")` or `(name, "cancelled")` per run; `mark_done=False` leaves ending the
    turn to someone else (the callback of an enclosing loop that may never resume this agent).
    """

    turns: Any
    log: Any
    gate: str = ""
    escalate: bool = False
    mark_done: bool = True

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        run = sum(1 for who, _ in self.log if who == self.name)
        turns, turn = self.turns[run], self.gate or self.name
        try:
            await turns.wait(turn)
        except asyncio.CancelledError:
            self.log.append((self.name, "cancelled"))
            raise
        self.log.append((self.name, "acted"))
        yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch,
                    actions=EventActions(state_delta={f"{self.name}_{run + 1}": "done"},
                                         escalate=True if self.escalate else None))
        if self.mark_done:
            turns.done(turn)


@probe(
    "adk/parallel-agent/in-loop",
    title="ParallelAgent inside LoopAgent(max_iterations=3): one branch escalates, directly or from its own inner loop",
    claim=Claim(
        "An escalation inside a nested LoopAgent breaks every enclosing LoopAgent, not just the innermost: "
        "the outer loop exits after its first iteration.",
        "https://github.com/google/adk-python/issues/2808",
        expect={"value.inner_loop.outer_iterations": 1},
    ),
    sources=("https://github.com/google/adk-python/issues/526",),
)
async def test_in_loop(obs: Observer) -> None:
    from google.adk.agents import LoopAgent, SequentialAgent

    variants: dict[str, dict[str, Any]] = {}
    for variant in ("direct", "inner_loop"):
        turns = [Turns(["a", "b", "c"]) for _ in range(3)]  # one set of turns per outer iteration
        log: list = []
        if variant == "direct":
            a = Lane(name="a", turns=turns, log=log, escalate=True)
        else:  # a's turn ends when its inner loop ends (the loop may stop without resuming the escalating child)
            check = Lane(name="check", turns=turns, log=log, gate="a", escalate=True, mark_done=False)
            a = LoopAgent(name="a", max_iterations=3, sub_agents=[check], after_agent_callback=lambda callback_context: turns[
                sum(1 for who, _ in log if who == "check") - 1].done("a"))
        lanes = [a, Lane(name="b", turns=turns, log=log), Lane(name="c", turns=turns, log=log)]
        root = SequentialAgent(name="pipeline", sub_agents=[
            LoopAgent(name="loop", max_iterations=3, sub_agents=[ParallelAgent(name="fanout", sub_agents=lanes)]),
            Step(name="after", delta={"after": "ran"}),
        ])
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        with obs.framework():
            await run_turn(root, service, "s1")
        for t in turns:
            obs.require_in_flight(t)
        escalator = "a" if variant == "direct" else "check"
        runs = {name: [what for who, what in log if who == name] for name in (escalator, "b", "c")}
        for name in ("b", "c"):  # a sibling still waiting for its turn when the run returned was stranded
            if len(runs[name]) < sum(name in t.arrived for t in turns):
                runs[name].append("stranded")
        state = await stored_state(service, "s1")
        variants[variant] = {
            "outer_iterations": len(runs[escalator]),
            "runs": runs,
            "after_ran": state.get("after") == "ran",
            "final_keys": sorted(k for k in state if k != "after"),
        }

    def siblings(v: dict) -> str:
        fates = set(v["runs"]["b"] + v["runs"]["c"])
        return "stranded" if "stranded" in fates else "cancelled" if "cancelled" in fates else "ran on"

    partial = any(siblings(v) != "ran on" and v["after_ran"] for v in variants.values())
    cut_short = variants["inner_loop"]["outer_iterations"] < 3
    obs.record(
        variants,
        label="; ".join(f"{k.split('_')[0]} {v['outer_iterations']}x {siblings(v)}" for k, v in variants.items()),
        detail="; ".join(
            f"{name}: the outer loop runs {v['outer_iterations']} of 3 iterations, b {','.join(v['runs']['b'])}, "
            f"c {','.join(v['runs']['c'])}, after {'runs' if v['after_ran'] else 'never runs'}"
            for name, v in variants.items()),
        hazard="silent" if partial or cut_short else "safe",
    )


@probe(
    "adk/parallel-agent/nested-visibility",
    title="Agents after nested parallel lanes: which earlier outputs reach their model request?",
    claim=Claim(
        "Outputs are hidden across ParallelAgent lanes and visible otherwise: a reducer after its lane's "
        "fan-out sees its workers, the final reducer sees everything, and a second parallel stage sees the "
        "first stage's outputs.",
        "https://github.com/google/adk-python/issues/3470",
        expect={
            "value.tree.r1": ["a", "b", "c"],
            "value.tree.r2": ["d", "e", "f"],
            "value.tree.r3": ["a", "b", "c", "d", "e", "f", "r1", "r2"],
            "value.stages.c": ["a", "b"],
        },
    ),
    sources=("https://github.com/google/adk-python/blob/main/tests/unittests/agents/test_parallel_branch_visibility.py",),
)
async def test_nested_visibility(obs: Observer) -> None:
    import re

    from adk_kit import fake_llm_agent
    from google.adk.agents import SequentialAgent

    names = re.compile(r"(?<!\w)(r1|r2|[a-f]) out\b")

    def gated(name: str, turns: Turns) -> Any:  # an LlmAgent whose run starts on its turn and ends it when done
        async def before(callback_context: Any) -> None:
            await turns.wait(name)

        def after(callback_context: Any) -> None:
            turns.done(name)

        return fake_llm_agent(name, f"{name} out", before_agent_callback=before, after_agent_callback=after)

    def seen(agent: Any) -> list:
        """Whose output is in the agent's (last) model request."""
        texts = agent.model.requests[-1] if agent.model.requests else []
        return sorted({m for text in texts for m in names.findall(text)})

    # The #3470 tree: two lanes, each a fan-out (abc, def) then its reducer (r1, r2); r3 after both.
    workers = Turns(["a", "b", "c", "d", "e", "f"])  # all six in flight, then done in this order
    reducers = Turns(["r1", "r2"])  # each starts once its lane is done; r1 goes first
    a, b, c, d, e, f = (gated(n, workers) for n in "abcdef")
    r1, r2, r3 = gated("r1", reducers), gated("r2", reducers), fake_llm_agent("r3", "r3 out")
    tree = SequentialAgent(name="final_seq", sub_agents=[
        ParallelAgent(name="final_par", sub_agents=[
            SequentialAgent(name="group1", sub_agents=[ParallelAgent(name="abc", sub_agents=[a, b, c]), r1]),
            SequentialAgent(name="group2", sub_agents=[ParallelAgent(name="def", sub_agents=[d, e, f]), r2]),
        ]),
        r3,
    ])
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    with obs.framework():
        await run_turn(tree, service, "s1")
    # The follow-up: two parallel stages in sequence; what the second stage sees of the first.
    stage1, stage2 = Turns(["a", "b"]), Turns(["c", "d"])
    sa, sb, sc, sd = gated("a", stage1), gated("b", stage1), gated("c", stage2), gated("d", stage2)
    stages = SequentialAgent(name="seq", sub_agents=[ParallelAgent(name="stage1", sub_agents=[sa, sb]),
                                                     ParallelAgent(name="stage2", sub_agents=[sc, sd])])
    await service.create_session(app_name=APP, user_id=USER, session_id="s2")
    with obs.framework():
        await run_turn(stages, service, "s2")
    for turns in (workers, reducers, stage1, stage2):
        obs.require_in_flight(turns)
    value = {
        "tree": {"a": seen(a), "r1": seen(r1), "r2": seen(r2), "r3": seen(r3)},
        "stages": {"a": seen(sa), "c": seen(sc), "d": seen(sd)},
    }
    # The rule the claim states: hidden across parallel lanes, visible along a sequence.
    rule = {"tree": {"a": [], "r1": list("abc"), "r2": list("def"), "r3": [*"abcdef", "r1", "r2"]},
            "stages": {"a": [], "c": ["a", "b"], "d": ["a", "b"]}}
    missing = [f"{who} misses {','.join(sorted(set(rule[k][who]) - set(got)))}"
               for k in value for who, got in value[k].items() if set(rule[k][who]) - set(got)]
    leaked = [f"{who} sees {','.join(sorted(set(got) - set(rule[k][who])))}"
              for k in value for who, got in value[k].items() if set(got) - set(rule[k][who])]
    obs.record(
        value,
        label="as the tree says" if not missing and not leaked else
        f"r1 sees {','.join(value['tree']['r1']) or 'none'}; c sees {','.join(value['stages']['c']) or 'none'}",
        detail=f"r1 sees {value['tree']['r1']}, r2 {value['tree']['r2']}, r3 {value['tree']['r3']}; stage 2 "
        f"sees {value['stages']['c']}" + (f"; {'; '.join(missing + leaked)}" if missing or leaked else ""),
        hazard="silent" if missing or leaked else "safe",
    )


def parts_summary(content: Any) -> str:
    """A content's parts as plain text: `call <tool>`, `response <tool>` or the quoted text."""
    parts = []
    for part in content.parts or []:
        if part.function_call:
            parts.append(f"call {part.function_call.name}")
        elif part.function_response:
            parts.append(f"response {part.function_response.name}")
        elif part.text:
            parts.append(repr(part.text))
    return ", ".join(parts)


def request_summary(llm_request: Any) -> list:
    """A model request as plain data: one `role: parts` line per content, in order."""
    return [f"{content.role}: {parts_summary(content)}" for content in llm_request.contents or []]


@probe(
    "adk/parallel-agent/include-contents-none",
    title="A branch with include_contents='none' calls a tool while its sibling's reply lands in between",
    claim=Claim(
        "With include_contents='none' inside a ParallelAgent, interleaved sibling events make an agent lose "
        "its own earlier events: its next model request has the function response without the function call.",
        "https://github.com/google/adk-python/issues/3612",
        expect={"value.none.second_request_has_own_call": False},
    ),
)
async def test_include_contents_none(obs: Observer) -> None:
    from adk_kit import FakeModel
    from google.adk.agents import LlmAgent

    variants: dict[str, dict[str, Any]] = {}
    for include in ("none", "default"):
        # a asks for lookup; b's reply is stored after a's function call and before lookup returns.
        turns = Turns(["b", "lookup"])
        requests: list = []

        async def lookup() -> dict:
            """Looks something up."""
            await turns.wait("lookup")
            turns.done("lookup")
            return {"found": "42"}

        def note(callback_context: Any, llm_request: Any) -> None:
            requests.append(request_summary(llm_request))

        a = LlmAgent(name="a", model=FakeModel(replies=[[("lookup", {})], "A-FINAL"]), tools=[lookup],
                     include_contents=include, before_model_callback=note)
        b = LlmAgent(name="b", model=FakeModel(replies=["B-REPORT"], turns=turns, gate="b"))
        fan = await FanOut.on_new_session([a, b])
        result = await obs.attempt_async(fan.run)
        obs.require_in_flight(turns)
        order = [f"{e.author}: {parts_summary(e.content)}" for e in fan.events if e.content]
        second = requests[1] if len(requests) > 1 else []
        variants[include] = {
            "run": "returned" if "returned" in result else {
                **result, "inside": [type(e).__name__ for e in getattr(fan.caught[0], "exceptions", [])]},
            "session_order": order,
            "a_requests": requests,
            "second_request_has_own_call": any("call lookup" in line for line in second),
            "second_request_has_sibling_reply": any("B-REPORT" in line for line in second),
        }
    none = variants["none"]
    order = none["session_order"]
    landed = [line in order for line in ("a: call lookup", "b: 'B-REPORT'", "a: response lookup")]
    if not all(landed) or not order.index("a: call lookup") < order.index("b: 'B-REPORT'") < order.index("a: response lookup"):
        obs.vacuous(f"b's reply did not land between a's call and its response: {order}")
    raised = none["run"]["raises"] if none["run"] != "returned" else None
    raised_text = raised and raised + (f"({','.join(none['run']['inside'])})" if none["run"]["inside"] else "")
    lost = not none["second_request_has_own_call"]
    leak = none["second_request_has_sibling_reply"]
    obs.record(
        variants,
        label=f"none: raises {raised_text}" if raised else "none: request empty" if second_request(none) == [] else
        "none: 2nd request never made" if second_request(none) == "never made" else
        "none: " + ("own call lost" if lost else "own call kept") + (", sibling leaks" if leak else ""),
        detail=f"session order {none['session_order']}; with include_contents='none' "
        + (f"a's second model request raises {raised_text}" if raised else
           "a's second model request is never made and the run returns without an error"
           if second_request(none) == "never made" else f"a's second request is {second_request(none)}")
        + f"; with 'default' it is {second_request(variants['default'])}",
        hazard="loud" if raised else "silent" if lost or leak else "safe",
        outcome=f"raises:{raised}" if raised else "ok",
    )


def second_request(variant: dict) -> Any:
    return variant["a_requests"][1] if len(variant["a_requests"]) > 1 else "never made"


@probe(
    "adk/parallel-agent/resume",
    title="A resumable app's fan-out of LlmAgents fails (or pauses on a long-running call whose tool returns None)"
    " midway, then is resumed",
    claim=Claim(
        "A resumable app resumes an invocation paused or failed midway from where it stopped: sub-agents that "
        "finished are not run again, with at-least-once behaviour for the step that was cut. Here the paused "
        "branch's long-running tool returns None (no interim result); the interim-result form is "
        "adk/parallel-agent/resume-interim-result.",
        "https://google.github.io/adk-docs/runtime/resume/",
        expect={
            "value.failed.reran": ["b", "c"],
            "value.paused.reran": ["a"],
            "value.failed.stored_writes": {"a": 1, "b": 1, "c": 1},
            "value.paused.stored_writes": {"a": 1, "b": 1, "c": 1},
            "value.paused.final": {"result_a": "A-OUT", "result_b": "B-OUT", "result_c": "C-OUT"},
        },
    ),
    sources=("https://github.com/google/adk-python/issues/5064",),
)
async def test_resume(obs: Observer) -> None:
    await resume_fan_out(obs, interim=None)


@probe(
    "adk/parallel-agent/resume-interim-result",
    title="resume's paused case with a long-running tool that returns an interim result ({'status': 'pending'})"
    " instead of None (the failed case is resume's alone)",
    claim=Claim(
        "A long-running tool may return an interim result before the final one arrives; a resumable app resumes"
        " the paused invocation when the client sends the function response: finished sub-agents are not run"
        " again.",
        "https://google.github.io/adk-docs/tools/function-tools/#long-run-tool",
        expect={
            "value.paused.reran": ["a"],
            "value.paused.stored_writes": {"a": 1, "b": 1, "c": 1},
            "value.paused.final": {"result_a": "A-OUT", "result_b": "B-OUT", "result_c": "C-OUT"},
        },
    ),
    sources=("https://google.github.io/adk-docs/runtime/resume/", "https://github.com/google/adk-python/issues/5064"),
)
async def test_resume_interim_result(obs: Observer) -> None:
    await resume_fan_out(obs, interim={"status": "pending"})


async def resume_fan_out(obs: Observer, interim: Any) -> None:
    """resume's scenario; `interim` is what the long-running tool returns when called (None, or an interim
    result): with None ADK has nothing to record as the call's response until the client answers."""
    App, ResumabilityConfig = obs.need("google.adk.apps", "App", "ResumabilityConfig")
    from adk_kit import FakeModel
    from google.adk.agents import LlmAgent
    from google.adk.runners import Runner
    from google.adk.tools import LongRunningFunctionTool
    from google.genai import types

    def branch(name: str, turns: Turns, phase: dict, log: list, fail_first: bool = False, **kwargs: Any) -> Any:
        """An LlmAgent (fake model) writing result_<name> via output_key; in the first run it starts on its
        turn, and with `fail_first` its model call raises instead of answering."""

        async def before(callback_context: Any) -> None:
            log.append((name, phase["attempt"]))
            if phase["attempt"] == 0 and "model" not in kwargs:
                await turns.wait(name)

        def after(callback_context: Any) -> None:
            if phase["attempt"] == 0 and "model" not in kwargs:
                turns.done(name)

        def fail(callback_context: Any, llm_request: Any) -> None:
            if phase["attempt"] == 0:
                raise RuntimeError(f"{name}'s model call failed")

        return LlmAgent(name=name, model=kwargs.pop("model", None) or FakeModel(replies=[f"{name.upper()}-OUT"]),
                        output_key=f"result_{name}", before_agent_callback=before, after_agent_callback=after,
                        before_model_callback=fail if fail_first else None, **kwargs)

    async def first_then_resume(root: Any, log: list, phase: dict, resume_message: Any) -> dict:
        app = App(name=APP, root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True))
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        runner = Runner(app=app, session_service=service)
        first: list = []

        async def run_first() -> None:
            async for event in runner.run_async(user_id=USER, session_id="s1", new_message=user_message()):
                first.append(event)

        async def resume() -> list:
            return [e async for e in runner.run_async(
                user_id=USER, session_id="s1", invocation_id=first[0].invocation_id, new_message=resume_message(first))]

        result1 = await obs.attempt_async(run_first)
        await settle()
        phase["attempt"] = 1
        result2 = await obs.attempt_async(resume)
        stored = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        writes = {n: sum(1 for e in stored.events if e.author == n and f"result_{n}" in (e.actions.state_delta or {}))
                  for n in ("a", "b", "c")}
        return {
            "first_run": "returned" if "returned" in result1 else result1,
            "first_run_started": sorted({who for who, attempt in log if attempt == 0}),
            "resume": "returned" if "returned" in result2 else result2,
            "reran": sorted({who for who, attempt in log if attempt == 1}),
            "stored_writes": writes,
            "final": {k: v for k, v in sorted(stored.state.items()) if k.startswith("result_")},
        }

    # 1. Failed: a answers, then b's model call raises while c waits for its turn; resume by invocation id.
    #    (Only in resume: what the long-running tool returns plays no part in it.)
    value: dict = {}
    log: list[tuple[str, int]]
    if interim is None:
        phase, log = {"attempt": 0}, []
        turns = Turns(["a", "b", "c"])
        fanout = ParallelAgent(name="fanout", sub_agents=[branch(n, turns, phase, log, fail_first=(n == "b")) for n in "abc"])
        value["failed"] = await first_then_resume(fanout, log, phase, lambda first: None)
        obs.require_in_flight(turns)

    # 2. Paused: b and c answer, then a's model asks for a long-running tool, which pauses the invocation;
    #    resume by answering that call.
    phase, log = {"attempt": 0}, []
    turns = Turns(["b", "c", "a"])

    if interim is None:

        def approve() -> None:
            """Asks a human to approve; the answer comes later (a long-running tool returns nothing now)."""

    else:

        def approve() -> dict:  # type: ignore[misc]  # the same tool, with an interim result: ADK reads its return hint
            """Asks a human to approve; the answer comes later (now: an interim result)."""
            return dict(interim)

    a = branch("a", turns, phase, log, model=FakeModel(replies=[[("approve", {})], "A-OUT"], turns=turns, gate="a"),
               tools=[LongRunningFunctionTool(func=approve)])
    fanout = ParallelAgent(name="fanout", sub_agents=[a, branch("b", turns, phase, log), branch("c", turns, phase, log)])

    before_resume: dict = {}

    def answer(first: list) -> Any:
        before_resume["a_model_calls"] = len(a.model.requests)  # the first run is over: a paused, or answered?
        calls = [call for e in first for call in (e.get_function_calls() or []) if call.name == "approve"]
        return types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            id=calls[0].id if calls else "none", name="approve", response={"approved": True}))])

    paused = await first_then_resume(fanout, log, phase, answer)
    paused["a_model_calls"] = len(a.model.requests)
    if interim is not None:  # resume's value stays as it was; here: did the interim result pause a at all?
        paused["a_model_calls_before_resume"] = before_resume.get("a_model_calls")
    obs.require_in_flight(turns)
    value["paused"] = paused
    problems = []
    cut = {"failed": ("b", "c"), "paused": ("a",)}  # the steps the first run cut: at-least-once by the claim
    again = [f"{name}: {n} (cut) written {k}x" for name, v in value.items() for n, k in v["stored_writes"].items()
             if k > 1 and n in cut[name]]
    for name, v in value.items():
        if v["resume"] != "returned":
            problems.append(f"{name}: resume raises {v['resume']['raises']}")
        problems += [f"{name}: {n} written {k}x" for n, k in v["stored_writes"].items() if k > 1 and n not in cut[name]]
        problems += [f"{name}: {n} never written" for n, k in v["stored_writes"].items() if k == 0]
        problems += [f"{name}: result_{n} is {v['final'].get(f'result_{n}')!r}" for n, k in v["stored_writes"].items()
                     if k and v["final"].get(f"result_{n}") != f"{n.upper()}-OUT"]

    def run_text(result: Any) -> str:
        return "returns" if result == "returned" else f"raises {result['raises']}"

    obs.record(
        value,
        label="; ".join(f"{name}: reran {','.join(v['reran']) or 'none'}" for name, v in value.items())
        + (f"; {(problems or again)[0].split(': ', 1)[1]}" if interim is not None and (problems or again) else ""),
        detail="; ".join(
            f"{name}: first run {run_text(v['first_run'])}, resume {run_text(v['resume'])}, reran "
            f"{','.join(v['reran']) or 'none'}, stored writes {v['stored_writes']}"
            for name, v in value.items())
        + (f"; a's model called {paused['a_model_calls_before_resume']}x before the resume"
           if interim is not None else "")
        + "".join(f"; {line} (at-least-once)" for line in again)
        + (f"; {', '.join(problems)}" if problems else "; nothing doubled or lost"),
        hazard="loud" if any("raises" in p for p in problems) else "silent" if problems else "safe",
    )
