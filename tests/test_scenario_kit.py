"""suites/scenario_kit.py's Script, without a framework: the steps as writes, and when a branch hands on its turn.

A framework whose branches write by yielding (ADK's events) walks the steps (`Script.walk`); with `later`,
the next branch's turn waits until the adapter says the framework took the last event (`hand_on`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from typing import Any

from fanin.model.source import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "suites"))

import scenario_kit  # the suites' kit, as a cell imports it
from gates import settle

SCENARIO: dict[str, Any] = {
    "state": {"k": 0},
    "observe": ["final.k", "branch.a", "branch.b"],
    "branches": [
        {"name": "a", "do": ["turn", {"read": "k"}, {"write": {"key": "k", "add": 1}}, {"return": "a"}]},
        {"name": "b", "do": ["turn", {"write": {"key": "k", "value": 7}}]},
    ],
}


def test_walk_yields_the_writes_and_with_later_holds_the_next_turn_until_hand_on() -> None:
    async def main() -> tuple[list[Any], list[Any], list[Any], dict[str, Any]]:
        script = scenario_kit.Script(SCENARIO, ["a", "b"])
        log: list[Any] = []

        async def consume(name: str) -> None:
            async for key, value in script.walk(name, lambda key: 41, later=True):
                log.append((name, key, value))
            log.append((name, "returned", script.results[name]))

        tasks = [asyncio.ensure_future(consume(name)) for name in ("a", "b")]
        await settle()
        before = list(log)  # a walked to its end; b still waits: a has not handed on
        script.hand_on("a")
        await asyncio.gather(*tasks)
        after = list(log)
        script.hand_on("a")  # once per branch: a second call opens nothing more
        return before, after, script.turns.acted, dict(script.ends)

    before, after, acted, ends = asyncio.run(main())
    assert before == [("a", "k", 42), ("a", "returned", "a")]
    assert after == [*before, ("b", "k", 7), ("b", "returned", None)]
    assert acted == ["a"] and ends == {"a": "done", "b": "done"}


def test_branch_writes_through_the_writer_and_hands_on_as_it_ends() -> None:
    async def main() -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
        script = scenario_kit.Script(SCENARIO, ["b", "a"])
        state = script.state
        returned = await asyncio.gather(*(script.branch(n, state.__getitem__, state.__setitem__) for n in ("a", "b")))
        answer = await script.answer(raises=None, final=lambda: asyncio.sleep(0, result=dict(state)))
        return state, returned, answer

    state, returned, answer = asyncio.run(main())
    assert returned == ["a", None] and state == {"k": 8}  # b wrote 7, then a read 7 and wrote 8
    # `final` may be an awaitable (a session service's read).
    assert answer == {"observed": {"final.k": 8, "branch.a": "done", "branch.b": "done"}}


def test_a_branch_that_escalates_hands_on_its_turn_only_once_the_framework_reacted() -> None:
    """`escalate` is the branch's last step: the walk skips it (the adapter asks its framework to stop), and the next
    turn comes only once the loop settled, as after a failure, so a sibling the framework cancels on the stop is
    cancelled at its gate (pydantic-graph ends at the first end marker and cancels the rest)."""
    scenario = {
        "state": {"k": 0},
        "observe": ["branch.b", "read.b.k"],
        "branches": [
            {"name": "a", "do": ["turn", {"write": {"key": "k", "value": 1}}, "escalate"]},
            {"name": "b", "do": ["turn", {"read": "k"}]},
        ],
    }

    async def main() -> tuple[bool, dict[str, Any]]:
        script = scenario_kit.Script(scenario, ["a", "b"])
        state = script.state
        framework: list[asyncio.Task[Any]] = []

        async def a_then_stop() -> None:  # a framework that cancels b once a's node has returned
            await script.branch("a", state.__getitem__, state.__setitem__)
            framework[0].cancel()

        framework.append(asyncio.ensure_future(script.branch("b", state.__getitem__, state.__setitem__)))
        await asyncio.gather(a_then_stop(), framework[0], return_exceptions=True)
        return script.escalates("a"), await script.answer(raises=None, final=lambda: state)

    escalates, answer = asyncio.run(main())
    assert escalates
    assert answer == {"observed": {"branch.b": "cancelled", "read.b.k": None}}  # b never took its turn


def test_again_starts_the_next_run_fresh_and_keeps_an_earlier_runs_vacuous_gate() -> None:
    """`runs`: the fields observe the last run (its gate, ends, reads, join count), and a run whose order the gate
    could not force makes the whole answer vacuous, even when the last run's gate held."""

    async def main() -> tuple[int, dict[str, Any], dict[str, Any], dict[str, Any]]:
        script = scenario_kit.Script(
            {**SCENARIO, "runs": 2, "observe": ["final.k", "branch.a", "branch.b"]}, ["a", "b"]
        )
        state = script.state
        await asyncio.gather(*(script.branch(n, state.__getitem__, state.__setitem__) for n in ("a", "b")))
        script.join_runs += 1
        first = dict(script.ends)
        script.turns.vacuous = "run 1's branches were never in flight together"
        await script.again()
        fresh = {"ends": dict(script.ends), "join_runs": script.join_runs, "acted": list(script.turns.acted)}
        state = script.state
        await asyncio.gather(*(script.branch(n, state.__getitem__, state.__setitem__) for n in ("a", "b")))
        return script.runs, first, fresh, await script.answer(raises=None, final=lambda: dict(state))

    runs, first, fresh, answer = asyncio.run(main())
    assert runs == 2 and first == {"a": "done", "b": "done"}
    assert fresh == {"ends": {"a": "unfinished", "b": "unfinished"}, "join_runs": 0, "acted": []}
    assert answer == {"vacuous": "run 1's branches were never in flight together"}


def test_the_node_kit_hands_on_an_escalating_branchs_turn_only_once_the_framework_reacted() -> None:
    """As the Python kit does: the Node kit's `escalates` names a branch ending in `escalate`, and the next turn comes
    only once the loop settled after it, so a sibling the framework aborts on the stop is cancelled at its gate
    (without the settled release, b's gate opened as a's steps ended, before the framework could react)."""
    scenario = {
        "state": {"k": 0},
        "observe": ["branch.b", "read.b.k"],
        "branches": [
            {"name": "a", "do": ["turn", {"write": {"key": "k", "value": 1}}, "escalate"]},
            {"name": "b", "do": ["turn", {"read": "k"}]},
        ],
    }
    kit = (REPO_ROOT / "suites" / "scenario_kit.mjs").as_uri()
    script = (
        f"import {{ Script }} from {json.dumps(kit)};\n"
        f"const script = new Script({json.dumps(scenario)}, ['a', 'b']); const state = script.state;\n"
        "const stop = new AbortController(); const read = (k) => state[k]; const write = (k, v) => { state[k] = v; };\n"
        "const b = script.branch('b', read, write, stop.signal).catch(() => null);\n"
        "await script.branch('a', read, write, new AbortController().signal); stop.abort();  // the framework's stop\n"
        "await b; const answer = await script.answer({ raises: null, final: () => state, saw: null, error: null });\n"
        "console.log(JSON.stringify({ escalates: [script.escalates('a'), script.escalates('b')], answer }));\n"
    )
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["escalates"] == [True, False]
    assert found["answer"] == {"observed": {"branch.b": "cancelled", "read.b.k": None}}  # b never took its turn


def test_the_node_kits_again_starts_the_next_run_fresh_and_keeps_an_earlier_runs_vacuous_gate() -> None:
    """As the Python kit's `again`: the Node kit's fields observe the last run (fresh ends, join count, gate), and a
    run whose order the gate could not force makes the whole answer vacuous, even when the last run's gate held."""
    scenario = {
        "runs": 2,
        "thread": "same",
        "state": {"k": 0},
        "observe": ["branch.a", "branch.b", "join.runs"],
        "branches": [{"name": "a", "do": ["turn"]}, {"name": "b", "do": ["turn"]}],
    }
    kit = (REPO_ROOT / "suites" / "scenario_kit.mjs").as_uri()
    script = (
        f"import {{ Script }} from {json.dumps(kit)};\n"
        f"const script = new Script({json.dumps(scenario)}, ['a', 'b']); const state = script.state;\n"
        "const read = (k) => state[k]; const write = (k, v) => { state[k] = v; };\n"
        "const both = () => Promise.all(['a', 'b'].map((n) => script.branch(n, read, write)));\n"
        "await both(); script.joinRuns += 1; const first = { ...script.ends };\n"
        'script.turns.vacuous = "run 1\'s branches were never in flight together";\n'
        "await script.again();\n"
        "const fresh = { ends: { ...script.ends }, joinRuns: script.joinRuns, acted: [...script.turns.acted] };\n"
        "await both(); const answer = await script.answer({ raises: null, final: () => state, saw: null, error: null });\n"
        "console.log(JSON.stringify({ runs: script.runs, same: script.sameThread, first, fresh, answer }));\n"
    )
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["runs"] == 2 and found["same"] is True and found["first"] == {"a": "done", "b": "done"}
    assert found["fresh"] == {"ends": {"a": "unfinished", "b": "unfinished"}, "joinRuns": 0, "acted": []}
    assert found["answer"] == {"vacuous": "run 1's branches were never in flight together"}


STALLED: dict[str, Any] = {
    "state": {"k": "init"},
    "observe": ["returned", "raises"],
    "branches": [
        {"name": "a", "do": ["turn", {"write": {"key": "k", "value": "a"}}, {"return": "a"}]},
        {"name": "b", "do": ["turn", "stall"]},
    ],
}


def test_a_stalled_branch_hands_on_its_turn_and_the_run_is_seen_never_to_return() -> None:
    """`stall`: b hands on its turn (a, after it in the order, still writes), then waits on a gate nobody opens;
    `until_idle` learns from the event loop, never a clock, that a run waiting on it never returns."""

    async def main() -> tuple[Any, dict[str, Any], list[str], dict[str, Any]]:
        script = scenario_kit.Script(STALLED, ["b", "a"])
        state = script.state
        branches = [script.branch(n, state.__getitem__, state.__setitem__) for n in ("a", "b")]
        result = await script.run(asyncio.gather(*branches))  # a join on both: the framework's run
        return result, state, list(script.turns.acted), await script.answer(raises=None, final=lambda: state)

    result, state, acted, answer = asyncio.run(main())
    assert result is None and state == {"k": "a"}  # b handed its turn on, then a wrote
    assert acted == ["b", "a"]
    assert answer == {"observed": {"returned": False, "raises": None}}


def test_a_stalled_branch_ends_when_the_framework_cancels_it() -> None:
    """A framework's timeout cancels the stalled branch: it ends `cancelled`, and the run returns."""

    async def main() -> tuple[dict[str, str], dict[str, Any]]:
        script = scenario_kit.Script(STALLED, ["a", "b"])
        state = script.state
        stalled = asyncio.ensure_future(script.branch("b", state.__getitem__, state.__setitem__))

        async def run() -> None:
            await script.branch("a", state.__getitem__, state.__setitem__)
            while "b" not in script.turns.acted:  # b took its turn and stalls (loop iterations, never a timer)
                await asyncio.sleep(0)
            stalled.cancel()  # a timeout's way
            await asyncio.gather(stalled, return_exceptions=True)

        await script.run(run())
        return dict(script.ends), await script.answer(raises=None, final=lambda: state)

    ends, answer = asyncio.run(main())
    assert ends == {"a": "done", "b": "cancelled"}
    assert answer == {"observed": {"returned": True, "raises": None}}


def test_the_node_kit_stalls_a_branch_after_handing_on_its_turn() -> None:
    """As the Python kit: b hands on its turn, then waits on a gate nobody opens; untilIdle reads from the event loop
    that the run never returns, and a branch whose signal aborts while it stalls ends `cancelled`."""
    kit = (REPO_ROOT / "suites" / "scenario_kit.mjs").as_uri()
    script = (
        f"import {{ Script }} from {json.dumps(kit)};\n"
        f"const script = new Script({json.dumps(STALLED)}, ['b', 'a']); const state = script.state;\n"
        "const stop = new AbortController(); const read = (k) => state[k]; const write = (k, v) => { state[k] = v; };\n"
        "const b = script.branch('b', read, write, stop.signal).catch(() => null);\n"
        "const a = script.branch('a', read, write, new AbortController().signal);\n"
        "const result = await script.untilIdle(Promise.all([a, b]));\n"
        "const ends = { ...script.ends }; stop.abort(); await b;\n"
        "const answer = await script.answer({ raises: null, final: () => state, saw: null, error: null });\n"
        "console.log(JSON.stringify({ result, state, ends, after: script.ends, answer }));\n"
    )
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["result"] is None and found["state"] == {"k": "a"}
    assert found["ends"] == {"a": "done", "b": "unfinished"}
    assert found["after"] == {"a": "done", "b": "cancelled"}
    assert found["answer"] == {"observed": {"returned": False, "raises": None}}


def test_until_idle_sees_a_run_that_only_polls_while_a_branch_stalls_never_return() -> None:
    """Strands' graph polls its event queue every 0.1 s while a node runs: a poll that finds nothing, IDLE_POLLS
    times in a row with the branches no further on, is a run that never returns (without the count, until_idle
    let the poll fire forever: the bound here turns that into a failure)."""

    async def main() -> tuple[Any, dict[str, Any]]:
        script = scenario_kit.Script(STALLED, ["a", "b"])
        state = script.state
        queue: asyncio.Queue[None] = asyncio.Queue()

        async def framework() -> None:  # a graph that polls its queue for node events as Strands' does
            nodes = asyncio.gather(*(script.branch(n, state.__getitem__, state.__setitem__) for n in ("a", "b")))
            while not nodes.done():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(queue.get(), timeout=0.1)
            await nodes

        result = await asyncio.wait_for(script.run(framework()), 30)
        return result, await script.answer(raises=None, final=lambda: state)

    result, answer = asyncio.run(main())
    assert result is None and answer == {"observed": {"returned": False, "raises": None}}


TOGETHER: dict[str, Any] = {
    "runs": 2,
    "thread": "same",
    "together": True,
    "state": {"k": 0},
    "observe": ["raises", "final.k"],
    "branches": [
        {"name": "a", "do": [{"read": "k"}, "turn", {"write": {"key": "k", "add": 1}}]},
        {"name": "b", "do": ["turn"]},
    ],
}
INTERLEAVED = ["1.a", "2.a", "1.b", "2.b"]


def test_together_views_share_one_gate_keyed_run_dot_branch() -> None:
    """`of_run`: each run's branches take the turns `<run>.<branch>` of one gate, so the forced order interleaves
    the two runs; each view keeps its own ends and reads, and the gate opens only once all four wait."""

    async def main() -> tuple[list[str], dict[str, Any], list[dict[str, str]], list[Any]]:
        script = scenario_kit.Script(TOGETHER, INTERLEAVED)
        views = [script.of_run(1), script.of_run(2)]
        stored = {"k": 0}
        log: list[Any] = []

        def write(number: int) -> Any:
            def put(key: str, value: Any) -> None:
                log.append((number, key, value))
                stored[key] = value

            return put

        await asyncio.gather(
            *(view.branch(name, stored.__getitem__, write(view.run_number)) for view in views for name in ("a", "b"))
        )
        answer = await script.answer(raises=None, final=lambda: dict(stored))
        return script.turns.acted, answer, [dict(view.ends) for view in views], log

    acted, answer, ends, log = asyncio.run(main())
    assert acted == INTERLEAVED
    assert log == [(1, "k", 1), (2, "k", 1)]  # both read k = 0 before either wrote: the write of run 1 is lost
    assert answer == {"observed": {"raises": None, "final.k": 1}}
    assert ends == [{"a": "done", "b": "done"}, {"a": "done", "b": "done"}]


def test_the_store_dir_is_removed_when_the_block_ends() -> None:
    with scenario_kit.Script.store_dir() as folder:
        (folder / "one.sqlite").write_text("x")
        assert folder.is_dir()
    assert not folder.exists()


def test_the_node_kits_together_views_share_one_gate_keyed_run_dot_branch() -> None:
    """As the Python kit's `of_run`: the Node kit's `ofRun` views take the turns `<run>.<branch>` of one gate."""
    kit = (REPO_ROOT / "suites" / "scenario_kit.mjs").as_uri()
    script = (
        f"import {{ Script, storeDir }} from {json.dumps(kit)};\n"
        f"const script = new Script({json.dumps(TOGETHER)}, {json.dumps(INTERLEAVED)}); const state = script.state;\n"
        "const read = (k) => state[k]; const write = (k, v) => { state[k] = v; };\n"
        "const views = [script.ofRun(1), script.ofRun(2)];\n"
        "await Promise.all(views.flatMap((v) => ['a', 'b'].map((n) => v.branch(n, read, write))));\n"
        "const answer = await script.answer({ raises: null, final: () => state, saw: null, error: null });\n"
        "const dir = storeDir(); dir.remove();\n"
        "console.log(JSON.stringify({ acted: script.turns.acted, answer, ends: views.map((v) => v.ends),"
        " together: script.together, scratch: dir.path.includes('fanin-scratch-') }));\n"
    )
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["acted"] == INTERLEAVED and found["together"] is True and found["scratch"] is True
    assert found["answer"] == {"observed": {"raises": None, "final.k": 1}}
    assert found["ends"] == [{"a": "done", "b": "done"}, {"a": "done", "b": "done"}]


RESUMED: dict[str, Any] = {
    "state": {"k": "init"},
    "resume": True,
    "observe": ["raises", "ran.a", "ran.b", "ran.c", "final.k"],
    "branches": [
        {"name": "a", "do": ["turn", "pause", {"return": "a"}]},
        {"name": "b", "do": ["turn", {"write": {"key": "k", "value": "b"}}, {"return": "b"}]},
        {"name": "c", "do": ["turn", {"raise": "c failed", "once": True}, {"return": "c"}]},
    ],
}


class Interrupt(Exception):
    """A framework's interrupt, as LangGraph's interrupt() raises it on the first run."""


def test_a_pause_stops_its_branch_a_once_raise_passes_on_resume_and_ran_counts_over_both_runs() -> None:
    """`pause` calls the adapter's pauser (raising the framework's interrupt in the first run, answering on resume);
    a paused branch hands on its turn once the loop settled, as a failure does; on `resume` no turn waits, the
    `once` raise passes, and `ran.<branch>` counts the runs to a branch's end over both runs."""

    async def main() -> tuple[list[str], list[Any], dict[str, Any], dict[str, Any]]:
        script = scenario_kit.Script(RESUMED, ["a", "b", "c"])
        state = script.state
        answered = iter([Interrupt("paused"), "yes"])

        def pause(name: str) -> Any:
            answer = next(answered)
            if isinstance(answer, Exception):
                raise answer
            return answer

        def branch(name: str) -> Any:
            return script.branch(name, state.__getitem__, state.__setitem__, pause=pause)

        first = await asyncio.gather(*(branch(n) for n in ("a", "b", "c")), return_exceptions=True)
        acted = list(script.turns.acted)
        assert script.resumes
        await script.resume()
        second = await asyncio.gather(branch("a"), branch("c"))  # the framework re-runs what did not finish
        answer = await script.answer(raises=None, final=lambda: state)
        return (
            acted,
            [type(r).__name__ if isinstance(r, Exception) else r for r in [*first, *second]],
            script.answers,
            answer,
        )

    acted, results, answers, answer = asyncio.run(main())
    assert acted == ["a", "b", "c"]  # a's pause handed its turn on: b went on
    assert results == ["Interrupt", "b", "BranchFailed", "a", "c"]
    assert answers == {"a": "yes"}
    assert answer == {"observed": {"raises": None, "ran.a": 1, "ran.b": 1, "ran.c": 1, "final.k": "b"}}


def test_the_node_kit_pauses_passes_a_once_raise_on_resume_and_counts_runs() -> None:
    """As the Python kit does: the Node kit's pause, resume, `once` raise and `ran.<branch>`."""
    program = (
        "import { Script } from './scenario_kit.mjs';\n"
        f"const script = new Script({json.dumps(RESUMED)}, ['a', 'b', 'c']);\n"
        "const state = script.state;\n"
        "let asked = 0;\n"
        "const pause = async () => { if (asked++ === 0) throw new Error('interrupt'); return 'yes'; };\n"
        "const branch = (n) => script.branch(n, (k) => state[k], (k, v) => { state[k] = v; }, undefined, 0, pause);\n"
        "const first = await Promise.allSettled(['a', 'b', 'c'].map(branch));\n"
        "const acted = [...script.turns.acted];\n"
        "await script.resume();\n"
        "const second = await Promise.all([branch('a'), branch('c')]);\n"
        "const answer = await script.answer({ raises: null, final: () => state });\n"
        "console.log(JSON.stringify({ first: first.map((r) => r.status), acted, second, answers: script.answers, answer }));\n"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", program],
        cwd=REPO_ROOT / "suites",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found = json.loads(done.stdout)
    assert found["first"] == ["rejected", "fulfilled", "rejected"] and found["acted"] == ["a", "b", "c"]
    assert found["second"] == ["a", "c"] and found["answers"] == {"a": "yes"}
    assert found["answer"] == {"observed": {"raises": None, "ran.a": 1, "ran.b": 1, "ran.c": 1, "final.k": "b"}}
