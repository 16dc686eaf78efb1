"""The Python side of the scenario protocol (docs/ADAPTERS.md): what every Python adapter shares.

An adapter (suites/<framework>/scenario_adapter.py) builds a scenario (scenarios/*.toml) in its
framework's own API and reports what it observed; it never grades. Three parts live here, once:

- `Script`: a scenario's branch steps run inside the framework's branch (`turn`, `read`, `write`,
  `raise`, `return`), the order forced with `gates.Turns` (never a sleep), each branch's end
  (done, raised, cancelled, unfinished) and the observed fields the scenario names.
- `Adapter.handle` and `serve`: the messages (start -> capabilities, run -> an answer, stop), one JSON
  object a line on stdin/stdout when the adapter runs as a program (`python scenario_adapter.py`).
- `observe`: a scenario probe (suites/<framework>/test_scenarios.py) runs every forced order through
  the adapter with the same messages, each a JSON round trip, and the harness grades them
  (`obs.record_scenario`, fanin.model.scenarios' one grader).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import json
import sys
import time
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import IO, Any

import gates

from fanin.model.scenarios import BASE_PRIMITIVES, PRIMITIVES, parts, step_kind, turn_key
from fanin.run.memory import scratch

PROTOCOL = 1


class BranchFailed(Exception):
    """The error a `raise` step raises: one name in every adapter, so `raises` compares across frameworks."""

    def __init__(self, message: str, branch: str) -> None:
        super().__init__(message)
        self.branch = branch  # which branch raised it: `raises.from`


def carried(error: BaseException | None) -> list[str]:
    """The branches whose BranchFailed `error` is or carries (a group's members, a cause, a context), in order."""
    found: list[str] = []
    stack, seen = [error], set()
    while stack:
        current = stack.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, BranchFailed) and current.branch not in found:
            found.append(current.branch)
        stack += [*getattr(current, "exceptions", ()), current.__cause__, current.__context__]
    return found


class NotExpressible(Exception):
    """This version of the framework cannot build the scenario (the reason comes from the installed package)."""


Reader = Callable[[str], Any]  # a key's value as the branch sees it (may return an awaitable)
Writer = Callable[[str, Any], Any]  # set a key as the framework lets a branch (may return an awaitable)
# A `pause` step: ask for human input the framework's way for branch `name` (an interrupt raised, a request
# awaited); returns the answer once resumed (may return an awaitable; may raise the framework's interrupt).
Pauser = Callable[[str], Any]
ANSWER = "approved"  # what an adapter's resume answers a paused branch (`resume`), the same in every framework


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


POLL = 1.0  # seconds: a timer due sooner is a framework's poll, not a bound (until_idle)
# Polls in a row after which a run whose branches got no further waits on nothing a poll changes (until_idle):
# Strands' graph polls its event queue every 0.1 s for as long as a node runs, a stalled one too.
IDLE_POLLS = 10
_RELEASES: list[asyncio.Task[None]] = []  # turns released once the loop settles after a failure (one settle at a time)


class Script:
    """One run of a scenario in one forced order: the branches' steps, their ends, and the observed fields."""

    def __init__(self, scenario: dict[str, Any], order: list[str]) -> None:
        self.scenario = scenario
        self.steps = {str(b["name"]): parts(list(b["do"])) for b in scenario["branches"]}
        self.branches = list(self.steps)
        # The branches the fan-out starts: a conditional fan-out (`select`) routes to these only.
        self.selected = [str(b["name"]) for b in scenario["branches"] if b.get("selected", True)]
        self.returned: bool | None = None  # set by `until_idle`: did the run return to its caller?
        self.turns = gates.Turns(order)
        self.ends = dict.fromkeys(self.branches, "unfinished")
        self.results: dict[str, Any] = {}  # what each branch's `return` step handed to the join
        self.join_runs = 0  # the adapter counts each run of its join (`join.runs`)
        self._seen: dict[str, dict[str, Any]] = {name: {} for name in self.branches}
        self._vacuous: str | None = None  # an earlier run's (`again`): the gate could not force that run's order
        self.run_number = 0  # `together`: which run this view of the script is (1, 2...), 0 for the script itself
        self.ran = dict.fromkeys(self.branches, 0)  # how many times each branch ran to its end, over every run
        self.resuming = False  # `resume`: the stopped run is being resumed (no order is forced in it)
        self.answers: dict[str, Any] = {}  # what each paused branch was answered on resume
        self.paused: set[str] = set()  # branches whose pause stopped them (the framework's interrupt raised)
        self._raised_once: set[tuple[str, int, int]] = set()  # `once` raises already raised: never again

    @property
    def runs(self) -> int:
        """How many times the adapter runs the graph it built once (`runs`, 1 unless the scenario says)."""
        return int(self.scenario.get("runs", 1))

    @property
    def same_thread(self) -> bool:
        """Whether every run goes on one stored thread or session (`thread = "same"`), not a new one each."""
        return self.scenario.get("thread") == "same"

    @property
    def together(self) -> bool:
        """Whether the runs are in flight at once on the one stored thread (`together = true`), each through its own
        store object on one backing store (two workers, one database), one gate over every run's branches."""
        return bool(self.scenario.get("together"))

    def of_run(self, number: int) -> Script:
        """Run `number` (1 for the first) of a `together` scenario: a view of this script whose branches take the
        turns `<number>.<branch>` of the one shared gate, with its own ends, reads, results and join count. The
        adapter builds one graph per view (each branch calls the view's `branch` or `walk`) and starts every run at
        once; the answer is the script's own (`answer`), raises and the store read back after both runs."""
        view = copy.copy(self)
        view.run_number = number
        view.ends = dict.fromkeys(self.branches, "unfinished")
        view.results, view.join_runs, view.returned = {}, 0, None
        view._seen = {name: {} for name in self.branches}
        return view

    def _turn(self, name: str) -> str:
        """The gate's name for branch `name`: its own, or `<run>.<branch>` in a view of one run (`of_run`)."""
        return turn_key(self.run_number, name) if self.run_number else name

    @staticmethod
    def store_dir() -> contextlib.AbstractContextManager[Any]:
        """A directory of its own for the run's store files (`together`: the one SQLite file or folder every store
        object opens), where the harness puts a cell's scratch (fanin.run.memory), removed when the block ends."""
        return scratch("scenario")

    @property
    def resumes(self) -> bool:
        """Whether the adapter resumes the stopped run once from the framework's store (`resume = true`)."""
        return self.scenario.get("resume") is True

    async def resume(self) -> None:
        """Before the adapter resumes the stopped run (`resume`): the first run has settled; in the resumed run no
        turn waits (the order was forced in the first), a `once` raise passes, and the fields observe this run but
        `join.runs` and `ran.<branch>`, which count over both (the adapter keeps its join's record too)."""
        await settled(threads=True)
        self._vacuous = self._vacuous or self.turns.vacuous
        self.resuming = True
        self.ends = dict.fromkeys(self.branches, "unfinished")
        self.returned = None

    async def again(self) -> None:
        """The next run of the same built graph (`runs`), with a fresh input (`state`): once the previous run has
        settled, a new gate in the same order and fresh ends, results, reads and join count, so the fields observe
        this run. What the framework kept of the previous run (a join's value, a node object's attribute, a
        stored state) is what the scenario asks about; the adapter keeps nothing of its own."""
        await settled(threads=True)
        self._vacuous = self._vacuous or self.turns.vacuous
        self.turns = gates.Turns(list(self.turns.order))
        self.ends = dict.fromkeys(self.branches, "unfinished")
        self.results = {}
        self.join_runs = 0
        self.returned = None
        self._seen = {name: {} for name in self.branches}

    def parts(self, name: str) -> int:
        """How many nodes branch `name` is, in sequence (its steps split at each `then`)."""
        return len(self.steps[name])

    def escalates(self, name: str) -> bool:
        """Whether branch `name` ends asking the framework to stop the whole run (its last step, `escalate`): the
        adapter makes that request the framework's way once the branch's steps have run."""
        return "escalate" in self.steps[name][-1]

    @staticmethod
    def node(name: str, part: int) -> str:
        """The name of part `part` of branch `name`: the branch's own name, then `b.2`, `b.3`..."""
        return name if part == 0 else f"{name}.{part + 1}"

    @property
    def state(self) -> dict[str, Any]:
        """The keys and values before the run (a fresh copy each time)."""
        return json.loads(json.dumps(self.scenario["state"]))

    async def branch(
        self, name: str, read: Reader, write: Writer, part: int = 0, pause: Pauser | None = None
    ) -> Any:
        """Run the steps of part `part` of branch `name` (one node of it; a branch without `then` is one part);
        returns what its `return` step hands to the join (None without one). The branch is done when its last
        part ends; the next branch's turn comes when the part holding this one's turn ends."""
        async with contextlib.aclosing(self.walk(name, read, part=part, pause=pause)) as steps:
            async for key, value in steps:
                try:
                    await _maybe(write(key, value))
                except asyncio.CancelledError:
                    self.ends[name] = "cancelled"
                    raise
        return self.results.get(name)

    async def walk(
        self, name: str, read: Reader, later: bool = False, part: int = 0, pause: Pauser | None = None
    ) -> AsyncGenerator[tuple[str, Any], None]:
        """Part `part` of branch `name` as an async generator of its writes, `(key, value)`; what its `return`
        step hands to the join is `results[name]` once the generator ends. For a framework whose branches write
        by yielding (ADK's events), `branch` for the rest. With `later`, a branch that ends normally hands on
        its turn only when the adapter calls `hand_on(name)`: once the framework has taken what it returned
        (ADK: the event yielded with it was consumed). `pause` asks for human input the framework's way."""
        seen = self._seen[name]
        self.results.setdefault(name, None)
        steps = self.steps[name][part]
        holds_turn = "turn" in steps
        try:
            for index, step in enumerate(steps):
                if step == "turn":
                    if not self.resuming:
                        await self.turns.wait(self._turn(name))
                    continue
                if step == "pause":
                    if pause is None:
                        raise RuntimeError(f"branch {name} pauses: the adapter gives branch/walk a pause")
                    try:
                        self.answers[name] = await _maybe(pause(name))
                    except Exception:  # the framework's interrupt: the run stops here, to be resumed
                        self.paused.add(name)
                        raise
                    continue
                if step == "escalate":  # the adapter asks its framework to stop the run (`escalates`)
                    continue
                if step == "stall":  # a branch that never finishes: its turn handed on, then a gate nobody opens
                    self.hand_on(name)
                    await asyncio.Event().wait()
                kind, argument = step_kind(step)
                if kind == "raise" and step.get("once"):
                    if (name, part, index) in self._raised_once:
                        continue  # raised the first time; the branch re-run goes on
                    self._raised_once.add((name, part, index))
                if kind == "read":
                    seen[argument] = await _maybe(read(argument))
                elif kind == "write":
                    key = argument["key"]
                    yield key, (seen[key] + argument["add"] if "add" in argument else argument["value"])
                elif kind == "raise":
                    self.ends[name] = "raised"
                    raise BranchFailed(argument, name)
                elif kind == "return":
                    self.results[name] = argument
            if part == self.parts(name) - 1:
                self.ends[name] = "done"
                self.ran[name] += 1
        except asyncio.CancelledError:
            self.ends[name] = "cancelled"
            raise
        finally:
            stops = (
                self.ends[name] == "raised"
                or (self.ends[name] == "unfinished" and name in self.paused)
                or (self.ends[name] == "done" and not later and self.escalates(name))
            )
            if stops and self.turns.order[-1] != self._turn(name):
                # The next branch's turn comes once the framework has reacted to the failure or the stop the
                # branch asked for (the loop settled): a sibling it cancels is cancelled at its gate, one it
                # waits for goes on.
                _RELEASES.append(asyncio.get_running_loop().create_task(self._release_settled(name)))
            elif self._turn(name) not in self.turns.acted and (holds_turn or self.ends[name] != "unfinished"):
                if not (later and self.ends[name] == "done"):
                    self.turns.done(self._turn(name))  # the next branch's turn comes however this one ended

    def hand_on(self, name: str) -> None:
        """The next branch's turn (once per branch): for `walk(..., later=True)`, once the framework took its end."""
        if self._turn(name) not in self.turns.acted:
            self.turns.done(self._turn(name))

    async def run(self, run: Awaitable[Any]) -> Any:
        """The framework's run awaited: through `until_idle` when the scenario observes `returned`, plainly otherwise."""
        return await (self.until_idle(run) if "returned" in self.scenario["observe"] else run)

    async def until_idle(self, run: Awaitable[Any]) -> Any:
        """Await the framework's run, or learn from the event loop that it never returns: once nothing is left to
        run (gates.settle) and no timer of the framework's is due, it has not returned and nothing can make it
        (`returned` false; the run is cancelled and None returned). What it raises propagates, as from a plain
        await."""
        task = asyncio.ensure_future(run)
        loop = asyncio.get_running_loop()
        polls, mark = 0, ""
        while not task.done():
            await settled()
            if task.done() or _RELEASES:
                continue
            if _pool_busy(loop):  # work handed to a thread (LangGraph 0.2 runs a sync router there) wakes it
                await asyncio.sleep(0)
                continue
            await settled()  # what a pool thread handed on as it went idle has run
            if task.done() or _RELEASES or _pool_busy(loop):
                continue
            # A timer due soon is the framework's own poll (Agent Framework 1.x waits 0.05 s for an event
            # between checks): let it fire. Later ones are deadlock breakers (the gate's patience, af_kit's bound).
            soon = [h.when() - loop.time() for h in getattr(loop, "_scheduled", ()) if not h.cancelled()]
            due = min((delay for delay in soon if delay < POLL), default=None)
            # A poll that finds nothing to do, IDLE_POLLS times in a row with the branches no further on (ends,
            # turns, reads, results, join runs unchanged), is the framework waiting on a branch that never ends.
            progress = repr((self.ends, self.turns.acted, self.join_runs, self.results, self._seen))
            polls, mark = (polls + 1 if progress == mark else 0), progress
            if due is None or polls >= IDLE_POLLS:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                self.returned = False
                return None
            await asyncio.wait({task}, timeout=max(due, 0.0))
        self.returned = True  # returned, or raised: what it raises propagates
        return task.result()

    async def _release_settled(self, name: str) -> None:
        await settle_alone(threads=True)
        self.turns.done(self._turn(name))

    def observed(
        self, ends: dict[str, str], raises: str | None, final: dict[str, Any] | None, saw: Any, carries: list[str]
    ) -> dict[str, Any]:
        """The fields the scenario observes: `final` is the state the caller can read (None: none)."""
        found: dict[str, Any] = {}
        for name in self.scenario["observe"]:
            head, _, rest = name.partition(".")
            if name == "raises":
                found[name] = raises
            elif name == "raises.from":
                found[name] = carries
            elif name == "join.saw":
                found[name] = saw
            elif name == "join.runs":
                found[name] = self.join_runs
            elif name == "returned":
                if self.returned is None:
                    raise RuntimeError("the scenario observes `returned`: run the framework through until_idle")
                found[name] = self.returned
            elif head == "final":
                found[name] = None if final is None else final.get(rest)
            elif head == "branch":
                found[name] = ends[rest]
            elif head == "ran":
                found[name] = self.ran[rest]
            elif head == "read":
                branch, _, key = rest.partition(".")
                found[name] = self._seen[branch].get(key)
        return found

    async def answer(
        self,
        *,
        raises: str | None,
        final: Callable[[], Any],
        saw: Any = None,
        error: BaseException | None = None,
    ) -> dict[str, Any]:
        """The run's answer, called as the run returns: each branch's end as it was then (`unfinished`: the run
        returned while it still ran), the state `final()` reads once the loop has settled (a dict or None, or an
        awaitable of one: a session service's read); vacuous when the gate could not force the order (the
        branches were never in flight together). `error` is the exception the caller caught, for `raises.from`."""
        ends = dict(self.ends)
        await settled(threads=True)
        vacuous = self._vacuous or self.turns.vacuous
        if vacuous:
            return {"vacuous": vacuous}
        return {"observed": self.observed(ends, raises, await _maybe(final()), saw, carried(error))}


def _pool_busy(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the loop's default thread pool (`asyncio.to_thread`, `run_in_executor(None, ...)`) has work queued or
    running, which gates.settle cannot see: CPython's ThreadPoolExecutor keeps one semaphore count per idle thread.
    A pool thread hands its result to the loop before it counts itself idle, so once it is idle and nothing is
    ready, nothing is left that could wake the run."""
    pool: Any = getattr(loop, "_default_executor", None)
    return pool is not None and not (pool._work_queue.empty() and pool._idle_semaphore._value >= len(pool._threads))


_SETTLING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


async def settle_alone(threads: bool = False) -> None:
    """gates.settle (with `threads`, settle_with_threads), one at a time in a loop: two at once keep each other
    runnable, so neither ever sees the loop idle (a second failure's release, made while the answer settles, waits
    here: a sibling raising after the run returned, in a framework that cancels nothing)."""
    lock = _SETTLING.setdefault(asyncio.get_running_loop(), asyncio.Lock())
    async with lock:
        await (settle_with_threads() if threads else gates.settle())


async def settled(threads: bool = False) -> None:
    """Every turn a failure holds is released, then the loop settles: nothing the run started is still runnable
    (with `threads`, nothing is left in the loop's default thread pool either: an answer's final read, a failure's
    release; `until_idle` asks without, since a busy pool is its own question there)."""
    while True:
        while _RELEASES:
            await _RELEASES.pop()
        await settle_alone(threads)
        if not _RELEASES:  # a failure while it settled holds a turn again
            return


async def settle_with_threads() -> None:
    """`gates.settle`, and the work the loop handed to its default thread pool too (`run_in_executor(None, ...)`:
    langchain runs a sync callback handler there on a tool's error, on the failure's way to the framework), which
    `gates.settle` cannot see: a turn released while a pool thread still works would race the framework's reaction.
    Loop iterations, never a timer."""
    loop = asyncio.get_running_loop()
    while True:
        await gates.settle()
        if not _pool_busy(loop):
            await gates.settle()
            if not loop._ready:  # type: ignore[attr-defined]  # CPython's queue of ready callbacks, as gates.settle reads it
                return
        await asyncio.sleep(0)


@dataclass(frozen=True)
class Adapter:
    """A Python adapter: its capabilities and how it runs one scenario in one order."""

    capabilities: Callable[[], dict[str, Any]]
    run: Callable[[dict[str, Any], list[str]], Awaitable[dict[str, Any]]]

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The answer to one message (None for stop, which has none)."""
        command = message.get("cmd")
        if command == "start":
            if message.get("protocol") != PROTOCOL:
                return {"error": f"this adapter speaks protocol {PROTOCOL}, not {message.get('protocol')!r}"}
            return self.capabilities()
        if command == "stop":
            return None
        if command != "run":
            return {"error": f"unknown command {command!r}"}
        started = time.perf_counter()
        try:
            reply = asyncio.run(self._settled(message["scenario"], list(message["order"])))
        except NotExpressible as exc:
            reply = {"not_applicable": str(exc)}
        except Exception as exc:  # the adapter's own defect: the harness records probe-error, never a finding
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        return {**reply, "took_s": round(time.perf_counter() - started, 4)}

    async def _settled(self, scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
        reply = await self.run(scenario, order)
        await settled(threads=True)  # whatever the adapter did, nothing of this run is left for the next one
        return reply


def declare(
    framework: str, version: str, cannot: dict[str, str] | None = None, also: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A Python adapter's answer to start: every base primitive but those it names with the reason it cannot, and
    the later primitives it names in `also` (one it does not name is n/a, "does not express", for its scenarios:
    an adapter written before a primitive existed stays valid)."""
    cannot = cannot or {}
    unknown = sorted(set(also) - set(PRIMITIVES) | set(also) & set(BASE_PRIMITIVES))
    if unknown:
        raise ValueError(f"also names primitives after the base ones, not {unknown}")
    return {
        "framework": framework,
        "version": version,
        "protocol": PROTOCOL,
        "language": "python",
        "supports": [p for p in (*BASE_PRIMITIVES, *also) if p not in cannot],
        **({"cannot": cannot} if cannot else {}),
    }


def serve(adapter: Adapter, source: IO[str] = sys.stdin, sink: IO[str] = sys.stdout) -> None:
    """The adapter as a program: one JSON message a line in, one JSON answer a line out, until stop.

    The sink carries the protocol alone: what a framework prints meanwhile goes to standard error."""
    with contextlib.redirect_stdout(sys.stderr):
        for line in source:
            if not line.strip():
                continue
            reply = adapter.handle(json.loads(line))
            if reply is None:
                return
            sink.write(json.dumps(reply, sort_keys=True) + "\n")
            sink.flush()


def _exchange(adapter: Adapter, message: dict[str, Any]) -> Any:
    """One message and its answer as the protocol carries them: JSON text both ways."""
    reply = adapter.handle(json.loads(json.dumps(message)))
    return None if reply is None else json.loads(json.dumps(reply))


def observe(obs: Any, adapter: Adapter) -> None:
    """A scenario probe: start, every forced order the adapter can express, stop; the harness grades."""
    scenario = obs.scenario
    capable = _exchange(adapter, {"cmd": "start", "protocol": PROTOCOL})
    answers = {}
    if isinstance(capable, dict) and set(scenario.primitives()) <= set(capable.get("supports", ())):
        for order in scenario.orders:
            answers[",".join(order)] = _exchange(adapter, {"cmd": "run", "scenario": scenario.data, "order": order})
    _exchange(adapter, {"cmd": "stop"})
    obs.record_scenario(capable, answers)
