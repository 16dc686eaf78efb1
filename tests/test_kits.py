"""The probe kits every framework shares (suites/gates.py, suites/mitigation.py): framework-free, so tested here.

A gate that gives up must say what happened, and the mitigation verdict must rank by the harness's
order of harm, with a raise graded as an outcome (loud), never lost. The Node kit's verdict
(suites/fanin_node.mjs) must be the Python one: the same value, hazard and label for the same runs.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine
from types import ModuleType
from typing import Any

import pytest

from fanin.model.compare import harm
from fanin.model.results import HAZARDS, canonical
from fanin.model.source import SUITES


def _kit(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"fanin_test_{name}", SUITES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gates = _kit("gates")
mitigation = _kit("mitigation")


def _kept(*writes: str, result: object = "r") -> dict:
    return {"made": list(writes), "kept": list(writes), "result": result}


@pytest.mark.parametrize(
    ("runs", "hazard"),
    [
        ({"x": _kept("a"), "y": _kept("a")}, "safe"),
        ({"x": _kept("a", result=1), "y": _kept("a", result=2)}, "order-coupled"),
        ({"x": _kept("a"), "y": {"raises": "InvalidUpdateError"}}, "loud"),
        ({"x": {"hangs": "never ended"}, "y": {"raises": "ValueError"}}, "hangs"),
        ({"x": {"made": ["a", "b"], "kept": ["a"], "result": "r"}, "y": {"hangs": "never ended"}}, "silent"),
    ],
)
def test_the_verdict_is_the_worst_run_by_the_harness_order_of_harm(runs: dict, hazard: str) -> None:
    value, found = mitigation.judge({"variant": runs})
    assert found == hazard
    assert value["variants"]["variant"]["hazard"] == hazard
    assert value["wrong"] == [] and set(value) == {"writes", "lost", "wrong", "variants"}


def test_the_probe_is_its_worst_variant_and_n_a_variants_are_shown_not_ranked() -> None:
    variants = {"one": {"x": {"raises": "E"}}, "two": {"x": _kept("a")}, "three": {"n/a": "no such API"}}
    value, hazard = mitigation.judge(variants)
    assert hazard == max(["loud", "safe"], key=harm) == "loud"
    assert value["variants"]["three"] == {"n/a": "no such API"}
    assert mitigation.judge({"only": {"n/a": "no such API"}})[1] == "n/a"


def test_runs_are_shown_as_their_result_beside_what_was_observed() -> None:
    seen = {**_kept("a", result=[1]), "observed": {"finished": ["a"]}}
    value, _ = mitigation.judge({"v": {"x": seen}})
    assert value["variants"]["v"]["runs"] == {"x": {"result": [1], "finished": ["a"]}}


def test_turns_says_a_predecessor_never_finished_rather_than_that_nobody_was_in_flight() -> None:
    async def scenario() -> str | None:
        turns = gates.Turns(["a", "b"], patience=0.05)
        first = asyncio.create_task(turns.wait("a"))  # released, but never calls done("a")
        await turns.wait("b")
        await first
        return turns.vacuous

    reason = asyncio.run(scenario())
    assert reason is not None and "['a'] never finished" in reason and "never in flight" not in reason


def test_turns_says_which_branches_were_never_in_flight() -> None:
    async def scenario() -> str | None:
        turns = gates.Turns(["a", "b"], patience=0.05)
        await turns.wait("a")
        return turns.vacuous

    assert asyncio.run(scenario()) == "branches ['b'] were never in flight while a waited"


def test_thread_turns_orders_threads_and_names_a_predecessor_that_never_finished() -> None:
    turns = gates.ThreadTurns(["b", "a"], patience=5.0)
    threads = [threading.Thread(target=turns.turn, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert turns.acted == ["b", "a"] and turns.vacuous is None

    stuck = gates.ThreadTurns(["a", "b"], patience=0.05)
    first = threading.Thread(target=stuck.arrive, args=("a",))  # arrives, never calls done("a")
    first.start()
    stuck.arrive("b")
    first.join()
    assert stuck.vacuous is not None and "['a'] never finished" in stuck.vacuous
    stuck.done("not-gated")  # names outside the order are ignored (a stream chunk names every node)
    assert "not-gated" not in stuck.acted


_CASES = [
    ({"v": {"x": _kept("a"), "y": _kept("a")}}, None),
    ({"v": {"x": _kept("a", result={"k": 1, "j": 2}), "y": _kept("a", result={"j": 2, "k": 1})}}, "kept anyway"),
    ({"v": {"x": _kept("a", result=1), "y": _kept("a", result=2)}}, None),
    ({"v": {"x": _kept("a"), "y": {"raises": "Error"}}}, None),
    ({"v": {"x": {"hangs": "never ended"}, "y": {"raises": "ValueError"}}}, None),
    ({"v": {"x": {"made": ["a", "b"], "kept": ["a"], "result": "r", "wrong": ["dup"]}}}, None),
    ({"one run": {"x": {"raises": "E"}}, "two": {"x": _kept("a")}, "three": {"n/a": "no such API"}}, None),
    ({"only": {"n/a": "no such API"}}, None),
    (
        {"v": {"x": {**_kept("a", result=[1]), "observed": {"finished": ["a"]}}}},
        "a label longer than forty characters, cut",
    ),
]


def test_the_node_kits_verdict_is_the_python_one() -> None:
    script = (
        f"import {{ harm, judge, words }} from {json.dumps((SUITES / 'fanin_node.mjs').as_uri())};\n"
        f"const cases = {json.dumps([c for c, _ in _CASES])}; const safe = {json.dumps([s for _, s in _CASES])};\n"
        "const out = cases.map((c, i) => { const [value, hazard] = judge(c); return [value, hazard, words(value, hazard, safe[i])[0]]; });\n"
        f"console.log(JSON.stringify({{ out, harm: Object.fromEntries({json.dumps(list(HAZARDS))}.map((h) => [h, harm(h)])) }}));\n"
    )
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["harm"] == {h: harm(h) for h in HAZARDS}
    for (variants, safe), (value, hazard, label) in zip(_CASES, found["out"], strict=True):
        expected_value, expected_hazard = mitigation.judge(variants)
        assert (canonical(value), hazard) == (canonical(expected_value), expected_hazard), variants
        assert label == mitigation.words(expected_value, expected_hazard, safe)[0], variants


class _CountingLoop(asyncio.SelectorEventLoop):
    """An event loop that counts its iterations: a waiter that spins shows in the count, whatever the clock says."""

    iterations = 0

    def _run_once(self) -> None:
        self.iterations += 1
        super()._run_once()  # type: ignore[misc]


def _count_iterations(scenario: Callable[[], Coroutine[Any, Any, object]]) -> tuple[object, int]:
    loop = _CountingLoop()
    try:
        return loop.run_until_complete(scenario()), loop.iterations
    finally:
        loop.close()


@pytest.mark.parametrize(
    ("order", "arriving", "vacuous"),
    [
        (["a", "b"], ["a", "b"], None),  # the first to arrive is still settling when the second arrives
        (["a", "b", "c"], ["a", "b"], "branches ['c'] were never in flight while a waited"),
    ],
)
def test_idle_turns_with_two_waiters_at_once_waits_on_events_rather_than_spinning(
    order: list[str], arriving: list[str], vacuous: str | None
) -> None:
    async def scenario() -> tuple[list[str], str | None]:
        turns = gates.IdleTurns(order)

        async def branch(name: str) -> None:
            await turns.wait(name)
            turns.done(name)

        tasks = []
        for name in arriving:
            tasks.append(asyncio.create_task(branch(name)))
            await asyncio.sleep(0)  # each branch is waiting before the next one starts
        await asyncio.gather(*tasks)
        return turns.acted, turns.vacuous

    (acted, reason), iterations = _count_iterations(scenario)
    assert acted == arriving and reason == vacuous
    # A handful of iterations per hand-over; two settling waiters keep each other ready for settle's
    # 10,000 rounds (then raise).
    assert iterations < 100, f"{iterations} event-loop iterations for {len(arriving)} waiters"


def test_no_probe_keeps_its_own_order_of_harm() -> None:
    """Issue 36 §4: one order of harm (fanin.probe.harm); three test_upstream_* probes ranked their own partial one."""
    import ast

    own = []
    for path in sorted(SUITES.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Tuple, ast.List)):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if {"safe", "loud", "silent"} <= words:
                    own.append(f"{path.relative_to(SUITES)}:{node.lineno}")
    assert own == [], f"rank hazards with fanin.probe.harm, not a list of your own: {own}"


def _scenario_kit(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SUITES))  # the kit imports gates as a cell's suite copy does
    spec = importlib.util.spec_from_file_location("fanin_test_scenario_kit", SUITES / "scenario_kit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_raises_from_names_the_branches_an_exception_is_or_carries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A group's members, then a cause and a context, each once; an exception that carries none names none."""
    kit = _scenario_kit(monkeypatch)
    wrapped = RuntimeError("the run failed")
    wrapped.__cause__ = kit.BranchFailed("b failed", "b")
    group = ExceptionGroup("two", [kit.BranchFailed("a failed", "a"), wrapped, kit.BranchFailed("again", "a")])
    assert kit.carried(group) == ["a", "b"]
    assert kit.carried(kit.BranchFailed("c failed", "c")) == ["c"]
    assert kit.carried(ValueError("other")) == [] and kit.carried(None) == []


def test_until_idle_tells_a_run_that_never_returns_from_one_that_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read from the event loop, never a clock: a run waiting on what nothing will set is `returned` false."""
    kit = _scenario_kit(monkeypatch)
    scenario = {"branches": [{"name": "a", "do": ["turn"]}, {"name": "b", "do": ["turn"]}], "observe": ["returned"]}

    async def both() -> tuple[Any, ...]:
        stuck, done = kit.Script(scenario, ["a", "b"]), kit.Script(scenario, ["a", "b"])
        never = asyncio.get_running_loop().create_future()
        first = await stuck.run(never)

        async def steps() -> str:
            for _ in range(100):
                await asyncio.sleep(0)
            return "ran"

        polled = kit.Script(scenario, ["a", "b"])

        async def polls() -> str:  # Agent Framework 1.x waits 0.05 s for an event between its checks
            await asyncio.sleep(0.05)
            return "polled"

        ran = await done.run(steps())
        return first, stuck.returned, ran, done.returned, await polled.run(polls()), polled.returned

    assert asyncio.run(both()) == (None, False, "ran", True, "polled", True)


def test_then_hands_on_the_turn_when_the_node_holding_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Branch b is two nodes: its first hands on the turn (else a one-node sibling next in order, run by a
    superstep framework beside it, would wait on a node that cannot start); it is done only after its last."""
    kit = _scenario_kit(monkeypatch)
    scenario = {
        "branches": [
            {"name": "a", "do": ["turn", {"return": "a"}]},
            {"name": "b", "do": ["turn", "then", {"return": "b"}]},
        ],
        "observe": ["raises"],
    }

    async def steps() -> tuple[Any, ...]:
        script = kit.Script(scenario, ["b", "a"])
        assert (script.parts("b"), script.node("b", 1)) == (2, "b.2")
        first = await asyncio.gather(script.branch("b", dict, dict), script.branch("a", dict, dict))
        between = dict(script.ends)
        assert script.turns.vacuous is None  # a waited its turn on b's first node, not on the gate's patience
        last = await script.branch("b", dict, dict, part=1)
        return first, between, last, script.ends

    first, between, last, ends = asyncio.run(steps())
    assert first == [None, "a"] and between == {"a": "done", "b": "unfinished"}
    assert last == "b" and ends == {"a": "done", "b": "done"}


def test_a_second_failure_after_the_run_returned_is_released_not_spun_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A framework that cancels nothing returns at the first failure while its siblings run on: the second
    failure's release and the answer's own settle must not settle at once (each kept the other runnable, and
    the answer died with 'the event loop still had work': Agent Framework before 1.19, two-failing)."""
    kit = _scenario_kit(monkeypatch)
    scenario = {
        "branches": [
            {"name": "a", "do": ["turn", {"raise": "a failed"}]},
            {"name": "b", "do": ["turn", {"raise": "b failed"}]},
            {"name": "c", "do": ["turn"]},
        ],
        "observe": ["raises", "raises.from", "branch.b", "branch.c"],
    }

    async def run() -> Any:
        script = kit.Script(scenario, ["a", "b", "c"])
        tasks = [asyncio.ensure_future(script.branch(name, dict, dict)) for name in ("a", "b", "c")]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)  # the run returns at the first failure
        error = next(t.exception() for t in tasks if t.done() and t.exception())
        answer = await script.answer(raises=type(error).__name__, final=dict, error=error)
        await asyncio.gather(*tasks, return_exceptions=True)
        return answer, script.ends

    answer, ends = asyncio.run(run())
    # as the run returned, b and c still ran; then b raised and c went on to its end
    assert answer["observed"] == {
        "raises": "BranchFailed",
        "raises.from": ["a"],
        "branch.b": "unfinished",
        "branch.c": "unfinished",
    }
    assert ends == {"a": "raised", "b": "raised", "c": "done"}


def test_until_idle_waits_for_work_handed_to_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangGraph 0.2 runs a sync router in the loop's thread pool: the loop is idle while the thread works, and
    that is no hang (the scenario read 'the run never returns' there). The thread is let go only once the loop
    has settled with it still busy, so the order is forced, not raced."""
    kit = _scenario_kit(monkeypatch)
    release = threading.Event()
    settles = 0
    real = kit.settled

    async def settled() -> None:
        nonlocal settles
        await real()
        settles += 1
        if settles == 2:  # after one settle found the run pending with its thread busy
            release.set()

    monkeypatch.setattr(kit, "settled", settled)
    scenario = {"branches": [{"name": "a", "do": ["turn"]}, {"name": "b", "do": ["turn"]}], "observe": ["returned"]}

    async def run() -> tuple[Any, Any]:
        script = kit.Script(scenario, ["a", "b"])
        loop = asyncio.get_running_loop()

        async def routed() -> str:
            await loop.run_in_executor(None, release.wait)
            return "routed"

        try:
            return await script.run(routed()), script.returned
        finally:
            release.set()  # a run judged hung is cancelled, but its thread still waits: let it end

    assert asyncio.run(run()) == ("routed", True)


def _liveness(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SUITES))  # liveness imports gates as a cell's suite copy does
    spec = importlib.util.spec_from_file_location("fanin_test_liveness", SUITES / "liveness.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Clock:
    """A monotonic clock that moves one second per reading: patience runs out in readings, never wall time."""

    def __init__(self, passed: threading.Event | None = None, at: float = 0.0) -> None:
        self.now, self.passed, self.at = 0.0, passed, at

    def __call__(self) -> float:
        self.now += 1.0
        if self.passed is not None and self.now > self.at:
            self.passed.set()
        return self.now


def _pool_run(turns: Any, order: list[str], body: Callable[[str], None]) -> None:
    """Each name a task of one thread pool (as LangGraph's sync loop runs nodes), arriving at the gate first."""
    from concurrent.futures import ThreadPoolExecutor

    def task(name: str) -> None:
        turns.arrive(name)
        body(name)

    with ThreadPoolExecutor(max_workers=len(order)) as pool:
        for future in [pool.submit(task, name) for name in order]:
            future.result()


def test_pool_turns_releases_the_next_branch_when_a_lagging_signal_never_comes(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangGraph's sync `updates` chunk can come only after the held sibling ends: `done` for the first branch is
    held back until the second has acted. ThreadTurns waits out its patience and calls the run vacuous; PoolTurns,
    once the patience has passed, sees the first branch's pool thread idle again (its task and callbacks returned)
    and releases the second. Never before the patience: while the signal may still come, it alone orders."""
    liveness = _liveness(monkeypatch)
    clock = _Clock()
    monkeypatch.setattr(liveness.time, "monotonic", clock)  # patience 10 readings: the lag outlasts it
    turns = liveness.PoolTurns(["a", "b"])
    acted: list[str] = []
    released_at: list[float] = []

    def body(name: str) -> None:  # done("a") is never called: the loop would deliver it only after b
        acted.append(name)
        if name == "b":
            released_at.append(clock.now)
            turns.done("b")

    _pool_run(turns, ["a", "b"], body)
    assert turns.vacuous is None and released_at[0] >= turns.patience
    assert acted == ["a", "b"] and turns.acted == ["b"]  # done("a") never came: acted stays the probe's signal


def test_pool_turns_waits_on_a_busy_predecessor_past_its_patience(monkeypatch: pytest.MonkeyPatch) -> None:
    """Load, not a deadlock: the first branch is still working after the patience has run out (the clock's
    readings pass 30 while it works); the second waits on, then goes once it is done, and nothing is vacuous."""
    liveness = _liveness(monkeypatch)
    past_patience = threading.Event()
    monkeypatch.setattr(liveness.time, "monotonic", _Clock(past_patience, at=30.0))
    turns = liveness.PoolTurns(["a", "b"])

    def body(name: str) -> None:
        if name == "a":  # works until the patience has run out twice over, or b gave up on it
            assert past_patience.wait(60)  # a deadlock breaker only: b reads the clock every 5 ms
            turns.done("a")
        else:
            past_patience.set()

    _pool_run(turns, ["a", "b"], body)
    assert turns.vacuous is None and turns.acted == ["a"]


def test_pool_turns_still_says_when_a_sibling_never_came(monkeypatch: pytest.MonkeyPatch) -> None:
    """A framework that runs the branches one by one: nothing is working, the patience runs out, vacuous."""
    liveness = _liveness(monkeypatch)
    monkeypatch.setattr(liveness.time, "monotonic", _Clock())
    turns = liveness.PoolTurns(["a", "b"])
    _pool_run(turns, ["a"], lambda name: None)
    assert turns.vacuous is not None and "['b'] were never in flight" in turns.vacuous
