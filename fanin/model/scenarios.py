"""Scenarios: framework-neutral fan-in cases as data (scenarios/*.toml), and the one grader.

A scenario says what its branches do (steps), how they join, the finish orders a gate forces,
what an adapter must observe, and how each observation is graded by the legend. An adapter
(suites/<framework>/scenario_adapter.*) only builds the scenario in its framework's API and
reports the observed fields (docs/ADAPTERS.md); everything that judges lives here, once, for
Python and Node cells alike. The grading rules are data: the first rule whose tests all hold
gives an order's hazard and label; a scenario's hazard is its worst order's (the legend's order
of harm), and orders that are each safe but observe different things are order-coupled.

Runs in a cell (the plugin grades Python probes there) on the oldest Python a cell uses, so TOML
is read with tomllib or, on 3.10, pytest's own tomli.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from fanin.model.compare import harm
from fanin.model.errors import FaninError
from fanin.model.results import HAZARDS, NOT_APPLICABLE, VACUOUS, Claim, Observation, canonical, normalize_message
from fanin.model.source import SCENARIOS, shown

try:
    import tomllib
except ImportError:  # pragma: no cover - a 3.10 cell: pytest depends on tomli there
    import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]

PROTOCOL = 1
TOPIC = "scenario"  # a scenario's observation id is <framework>/scenario/<scenario id>

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
KEY = re.compile(r"^[a-z][a-z0-9_]*$")

# The steps a branch can take, and the primitive each needs from an adapter.
TURN = "turn"  # wait for this branch's turn in the forced order (every branch is in flight first)
THEN = "then"  # the steps after it run in the branch's next node, once the node before it has ended
ESCALATE = "escalate"  # the branch's last step: it asks the framework to stop the whole run (ADK's escalate, an end)
# The branch's last step, after its turn: it hands on its turn, then awaits a gate nobody opens (a branch that never
# finishes, never a sleep): does the run hang, and does a timeout of the framework's end it?
STALL = "stall"
# The branch asks for human input the framework's way (an interrupt, a request for input, a suspend): the run stops
# there, and a scenario with `resume` resumes it once with an answer (a later primitive, as `resume` is).
PAUSE = "pause"
MARKS = (TURN, THEN, ESCALATE, STALL, PAUSE)  # the steps that are a bare word, not a table
STEPS = ("read", "write", "raise", "return")
JOINS = ("all",)
SELECT = "select"  # a conditional fan-out: only the branches not marked `selected = false` start
RUNS = "runs"  # `runs = 2`: the same built graph run that many times; the fields observe its last run
# `thread = "same"` (with `runs`): every run on one stored thread or session (a checkpointer's thread, a session
# service's session), each given its input the framework's way for a thread that already exists
THREAD = "thread"
# `together = true` (with `runs` and `thread = "same"`): the runs are in flight at once on the one stored thread, each
# through its own store object opened on the same backing store (two workers, one database); the orders name each
# run's branches `<run>.<branch>` (`1.a`, `2.a`), so one gate interleaves them, and `final` is read back by a third
# store object once both runs have ended
TOGETHER = "together"
# `resume = true`: once the first run stopped (a branch paused, or raised), the adapter resumes it from the
# framework's store its own way, once (an answer for a pause); a `{ raise = ..., once = true }` step raises only the
# first time its branch reaches it, so the branch succeeds when re-run. The fields observe the resumed run, and
# `join.saw`, `join.runs` and `ran.<branch>` count over both.
RESUME = "resume"
# What an adapter declares in `supports`: one name per step kind, `write.add`, `select`, and each join.
# BASE_PRIMITIVES are what every adapter expressed when the protocol began: a kit's `declare` claims them
# unless the adapter names why it cannot. Every primitive after them an adapter names itself (`declare(...,
# also=[...])`), so a scenario needing one it has not named is n/a ("does not express"), never sent to an
# adapter written before the primitive existed.
BASE_PRIMITIVES = (
    TURN,
    THEN,
    "read",
    "write",
    "write.add",
    "raise",
    "return",
    SELECT,
    *(f"join.{kind}" for kind in JOINS),
)
PRIMITIVES = (*BASE_PRIMITIVES, RUNS, ESCALATE, THREAD, STALL, TOGETHER, PAUSE, RESUME)
# Fields an adapter reports: the caller's exception class (or null), the branches whose failures that
# exception is or carries, whether the run returned to its caller (false: it still waited once nothing
# was left to run), a state key after the run (null when the framework gives the caller no state), what
# the join received in arrival order, how many times the join ran, a branch's end.
# (In a scenario of several `runs`, each field observes the last run.) `read.<branch>.<key>`: what the
# branch's last read of the key returned, as the framework showed it (what a branch sees of its siblings).
# `ran.<branch>`: how many times the branch ran to its end over all the scenario's runs (a resume that runs again a
# sibling which had finished counts 2: its side effects repeated).
FIELDS = (
    "raises",
    "raises.from",
    "returned",
    "final.<key>",
    "join.saw",
    "join.runs",
    "branch.<name>",
    "read.<branch>.<key>",
    "ran.<branch>",
)
BRANCH_ENDS = ("done", "raised", "cancelled", "unfinished")
LANGUAGES = ("python", "javascript")
# The tests a grading rule applies to one observed field.
TESTS = ("null", "equals", "one_of", "contains_all", "lacks_any", "is_order", "is_declared")
SAME_AS = "same_as"  # a framework's own probes that observe exactly this scenario: the source for that framework
_TOP = (
    "id",
    "question",
    "source",
    "state",
    "orders",
    "observe",
    "branches",
    "join",
    "grade",
    RUNS,
    THREAD,
    TOGETHER,
    RESUME,
    SAME_AS,
)
_REQUIRED = tuple(key for key in _TOP if key not in (RUNS, THREAD, TOGETHER, RESUME, SAME_AS))
PROBE_ID = re.compile(r"^[a-z0-9_]+/[a-z0-9-]+/[a-z0-9-]+$")
_LABEL_LIMIT = 40
RUNS_LIMIT = 3


class ScenarioError(FaninError):
    """A scenario file, an adapter's message or a grading that cannot be trusted: one line saying which and why."""


@dataclass(frozen=True)
class Scenario:
    """One scenario file, validated. `data` is what an adapter receives (the TOML as JSON)."""

    id: str
    path: Path
    data: dict[str, Any]

    @property
    def question(self) -> str:
        return str(self.data["question"])

    @property
    def source(self) -> str:
        return str(self.data["source"])

    @property
    def branches(self) -> list[str]:
        return [str(b["name"]) for b in self.data["branches"]]

    @property
    def selected(self) -> list[str]:
        """The branches the fan-out starts (all of them unless the scenario selects)."""
        return [str(b["name"]) for b in self.data["branches"] if b.get("selected", True)]

    @property
    def orders(self) -> list[list[str]]:
        return [list(order) for order in self.data["orders"]]

    @property
    def observe(self) -> list[str]:
        return list(self.data["observe"])

    def same_as(self, framework: str) -> str | None:
        """The framework's own probe that observes exactly this scenario, if it has one: that probe is the source
        for the framework (the comparison cites it instead of the framework's scenario probe)."""
        return next((p for p in self.data.get(SAME_AS, []) if p.split("/")[0] == framework), None)

    def primitives(self) -> list[str]:
        """What an adapter must support to express this scenario (derived from the steps, never declared)."""
        return primitives_of(self.data)


def claim_of(scenario: Scenario) -> Claim:
    """What a scenario probe claims, in every framework: its rules grade what the adapter observes."""
    rules = "; ".join(f"{rule['label']}: {rule['hazard']}" for rule in scenario.data["grade"])
    return Claim(f"Graded by the scenario's rules, worst order first: {rules}.", scenario.source)


def order_key(order: list[str]) -> str:
    """How an order is named in an observation's value: `b,a`."""
    return ",".join(order)


def turn_key(run: int, branch: str) -> str:
    """The name a `together` scenario's order gives branch `branch` of run `run` (1 for the first): `1.a`."""
    return f"{run}.{branch}"


def primitives_of(data: dict[str, Any]) -> list[str]:
    found = {f"join.{data['join']['kind']}"}
    if data.get(RUNS, 1) > 1:
        found.add(RUNS)
    if THREAD in data:
        found.add(THREAD)
    if data.get(TOGETHER):
        found.add(TOGETHER)
    if data.get(RESUME):
        found.add(RESUME)
    if not all(branch.get("selected", True) for branch in data["branches"]):
        found.add(SELECT)
    for branch in data["branches"]:
        for step in branch["do"]:
            if step in MARKS:
                found.add(step)
                continue
            kind, argument = step_kind(step)
            found.add("write.add" if kind == "write" and "add" in argument else kind)
    return sorted(found, key=PRIMITIVES.index)


def step_kind(step: dict[str, Any]) -> tuple[str, Any]:
    """A table step's kind and argument (`{ raise = "m", once = true }` is a raise; `once` qualifies it)."""
    return next((kind, argument) for kind, argument in step.items() if kind != "once")


# --- loading and validation -------------------------------------------------


def _fail(where: str, message: str) -> ScenarioError:
    return ScenarioError(f"{where}: {message}")


def parts(steps: list[Any]) -> list[list[Any]]:
    """A branch's steps split at each `then`: one list per node of the branch, in sequence."""
    found: list[list[Any]] = [[]]
    for step in steps:
        if step == THEN:
            found.append([])
        else:
            found[-1].append(step)
    return found


def _check_step(where: str, step: Any, keys: set[str]) -> None:
    if step in MARKS:
        return
    once = isinstance(step, dict) and "raise" in step and set(step) == {"raise", "once"}
    if once and step["once"] is not True:
        raise _fail(
            where, f"a raise's once is true (it raises the first time its branch reaches it), got {step['once']!r}"
        )
    if not isinstance(step, dict) or (len(step) != 1 and not once) or step_kind(step)[0] not in STEPS:
        raise _fail(
            where, f"a step is one of {', '.join(map(repr, MARKS))} or {{{', '.join(STEPS)} = ...}}, got {step!r}"
        )
    kind, argument = step_kind(step)
    if kind == "read" and argument not in keys:
        raise _fail(where, f"reads {argument!r}, which is not a key of [state]")
    if kind == "write":
        if not isinstance(argument, dict) or argument.get("key") not in keys:
            raise _fail(where, f"a write names a key of [state]: {{ key = ..., value = ... }}, got {argument!r}")
        if set(argument) not in ({"key", "value"}, {"key", "add"}):
            raise _fail(where, f"a write has `value` or `add` (what it read plus add), got {sorted(argument)}")
        if "add" in argument and not isinstance(argument["add"], int):
            raise _fail(where, f"write.add adds an integer, got {argument['add']!r}")
    if kind == "raise" and not (isinstance(argument, str) and argument):
        raise _fail(where, "raise takes the message of the error the branch raises")


def _check_field(where: str, name: str, keys: set[str], branches: list[str], reads: set[str]) -> None:
    head, _, rest = name.partition(".")
    if name in ("raises", "raises.from", "returned", "join.saw", "join.runs"):
        return
    if head == "read" and rest in reads:
        return
    if head == "final" and rest in keys:
        return
    if head in ("branch", "ran") and rest in branches:
        return
    raise _fail(
        where,
        f"cannot observe {name!r}: fields are {', '.join(FIELDS)} (a [state] key, a branch name; a read the branch makes)",
    )


def _check_test(where: str, test: str, argument: Any) -> None:
    if test not in TESTS:
        raise _fail(where, f"unknown test {test!r}; tests are {', '.join(TESTS)}")
    if test in ("null", "is_order", "is_declared") and not isinstance(argument, bool):
        raise _fail(where, f"{test} takes true or false, got {argument!r}")
    if test in ("one_of", "contains_all", "lacks_any") and not isinstance(argument, list):
        raise _fail(where, f"{test} takes a list, got {argument!r}")


def validate(data: Any, where: str) -> dict[str, Any]:
    """The scenario's data, or one line saying what is wrong with it (the JSON Schema says the same)."""
    if not isinstance(data, dict):
        raise _fail(where, "a scenario is a table")
    unknown = sorted(set(data) - set(_TOP))
    missing = [key for key in _REQUIRED if key not in data]
    if unknown or missing:
        raise _fail(where, f"unknown keys {unknown}, missing keys {missing}" if unknown else f"missing {missing}")
    same = data.get(SAME_AS, [])
    if not isinstance(same, list) or not all(isinstance(p, str) and PROBE_ID.match(p) for p in same):
        raise _fail(where, f"same_as lists framework probes (<framework>/<topic>/<case>), got {same!r}")
    frameworks = [p.split("/")[0] for p in same]
    if len(set(frameworks)) != len(frameworks) or any(p.split("/")[1] == TOPIC for p in same):
        raise _fail(where, "same_as names at most one probe per framework, none of them a scenario probe")
    if RUNS in data and not (type(data[RUNS]) is int and 2 <= data[RUNS] <= RUNS_LIMIT):
        raise _fail(where, f"runs is how many times the same built graph runs, 2 to {RUNS_LIMIT}, got {data[RUNS]!r}")
    if THREAD in data and (data[THREAD] != "same" or RUNS not in data):
        raise _fail(
            where,
            f'thread = "same" puts every one of the scenario\'s runs on one stored thread (with runs), got {data[THREAD]!r}',
        )
    if TOGETHER in data and (data[TOGETHER] is not True or data.get(THREAD) != "same"):
        raise _fail(
            where,
            f'together = true runs the scenario\'s runs at once on one stored thread (with runs, thread = "same"), '
            f"got {data[TOGETHER]!r}",
        )
    if RESUME in data and (data[RESUME] is not True or RUNS in data):
        raise _fail(where, f"resume = true resumes the stopped run once (not with runs), got {data[RESUME]!r}")
    if not isinstance(data["id"], str) or not SLUG.match(data["id"]):
        raise _fail(where, f"id {data['id']!r} is lower-case words joined by dashes")
    for text in ("question", "source"):
        if not isinstance(data[text], str) or not data[text].strip():
            raise _fail(where, f"{text} is a non-empty string")
    if not data["source"].startswith("https://"):
        raise _fail(where, "source is the https:// address of what the question rests on (a claim's source)")
    state = data["state"]
    if not isinstance(state, dict) or not state or not all(KEY.match(k) for k in state):
        raise _fail(where, "[state] names the keys (lower_case) and their values before the run")
    if not all(isinstance(v, (str, int, bool)) for v in state.values()):
        raise _fail(where, "a [state] value is a string, an integer or a boolean (what every framework stores alike)")
    keys = set(state)
    branches = data["branches"]
    if not isinstance(branches, list) or len(branches) < 2:
        raise _fail(where, "a fan-in scenario has two or more [[branches]]")
    names: list[str] = []
    chosen: list[str] = []
    for branch in branches:
        if not isinstance(branch, dict) or not {"name", "do"} <= set(branch) <= {"name", "do", "selected"}:
            raise _fail(where, f"a branch is {{ name, do }} and maybe selected = false, got {branch!r}")
        if not isinstance(branch.get("selected", True), bool):
            raise _fail(where, f"selected is true or false, got {branch['selected']!r}")
        name = branch["name"]
        if not isinstance(name, str) or not SLUG.match(name) or name in names:
            raise _fail(where, f"branch names are distinct lower-case words, got {name!r}")
        names.append(name)
        steps = branch["do"]
        if not isinstance(steps, list) or not steps:
            raise _fail(where, f"branch {name} does nothing")
        for step in steps:
            _check_step(f"{where}: branch {name}", step, keys)
        if not branch.get("selected", True):
            if TURN in steps:
                raise _fail(where, f"branch {name} is not selected, so it never takes a {TURN!r}")
        elif steps.count(TURN) != 1:
            raise _fail(where, f"branch {name} takes exactly one {TURN!r}: where the forced order holds it")
        else:
            chosen.append(name)
        if ESCALATE in steps and steps.index(ESCALATE) != len(steps) - 1:
            raise _fail(where, f"branch {name}: {ESCALATE!r} is its last step (the stop it asks for ends it)")
        if STALL in steps and (steps.index(STALL) != len(steps) - 1 or TURN not in steps[: steps.index(STALL)]):
            raise _fail(where, f"branch {name}: {STALL!r} is its last step, after its {TURN!r} (it hands the turn on)")
        nodes = parts(steps)
        if not all(nodes):
            raise _fail(
                where, f"branch {name}: {THEN!r} separates two nodes' steps (none before, after or next to another)"
            )
        if any("return" in step for node in nodes[:-1] for step in node if isinstance(step, dict)):
            raise _fail(where, f"branch {name}: only its last node returns (what it returns reaches the join)")
    clash = sorted(keys & set(names))
    if clash:
        raise _fail(where, f"{clash} name both a branch and a [state] key (a graph's nodes and channels share names)")
    orders = data["orders"]
    if not isinstance(orders, list) or len(orders) < 2:
        raise _fail(where, "a scenario forces two or more finish orders")
    if data.get(TOGETHER):  # one gate over both runs: each run's branches named `<run>.<branch>`
        chosen = [turn_key(number, name) for number in range(1, data[RUNS] + 1) for name in chosen]
    for order in orders:
        if not isinstance(order, list) or sorted(order) != sorted(chosen):
            raise _fail(
                where, f"an order names every selected branch once (together: every <run>.<branch>), got {order!r}"
            )
    if len({order_key(o) for o in orders}) != len(orders):
        raise _fail(where, "an order is forced twice")
    join = data["join"]
    if not isinstance(join, dict) or set(join) != {"kind"} or join["kind"] not in JOINS:
        raise _fail(where, f"[join] is {{ kind = {' | '.join(JOINS)} }}, got {join!r}")
    observe = data["observe"]
    if not isinstance(observe, list) or not observe or len(set(observe)) != len(observe):
        raise _fail(where, "observe lists the fields an adapter reports, each once")
    reads = {
        f"{branch['name']}.{step['read']}"
        for branch in branches
        for step in branch["do"]
        if isinstance(step, dict) and "read" in step
    }
    for name in observe:
        _check_field(where, name, keys, names, reads)
    if "raises" not in observe:
        raise _fail(where, "every scenario observes `raises`: the legend grades an error as loud")
    rules = data["grade"]
    if not isinstance(rules, list) or not rules:
        raise _fail(where, "[[grade]] rules say how the legend grades an observation")
    for number, rule in enumerate(rules, 1):
        at = f"{where}: grade rule {number}"
        if not isinstance(rule, dict) or set(rule) != {"hazard", "label", "when"}:
            raise _fail(at, "a rule is { hazard, label, when }")
        if rule["hazard"] not in HAZARDS or rule["hazard"] == NOT_APPLICABLE:
            raise _fail(at, f"hazard {rule['hazard']!r} is not one of the legend's ({', '.join(HAZARDS)}, not n/a)")
        if not isinstance(rule["label"], str) or not 0 < len(rule["label"]) <= _LABEL_LIMIT:
            raise _fail(at, f"a label is 1 to {_LABEL_LIMIT} characters")
        when = rule["when"]
        if not isinstance(when, dict) or not when:
            raise _fail(at, "when = { field = { test = ... } } names one or more fields")
        for field, tests in when.items():
            if field not in observe:
                raise _fail(at, f"tests {field!r}, which the scenario does not observe")
            if not isinstance(tests, dict) or not tests:
                raise _fail(at, f"{field} = {{ test = ... }}")
            for test, argument in tests.items():
                _check_test(at, test, argument)
        if rule["hazard"] == "loud" and when.get("raises") != {"null": False}:
            raise _fail(at, "loud means an error stopped the run: the rule tests raises = { null = false }")
    return data


def load(path: Path) -> Scenario:
    """One scenario file; its id is its file name."""
    where = shown(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(where, f"cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise _fail(where, f"not valid TOML ({exc})") from None
    validate(data, where)
    if data["id"] != path.stem:
        raise _fail(where, f"id {data['id']!r} is not the file's name {path.stem!r}")
    return Scenario(data["id"], path, data)


@lru_cache(maxsize=4)
def _catalogue(directory: Path, stamps: tuple[tuple[str, int, int], ...]) -> dict[str, Scenario]:
    return {path.stem: load(path) for path in sorted(directory.glob("*.toml"))}


def catalogue(directory: Path = SCENARIOS) -> dict[str, Scenario]:
    """Every scenario, by id (read again when a file changed)."""
    paths = sorted(directory.glob("*.toml")) if directory.is_dir() else []
    return _catalogue(directory, tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths))


def scenario_id(probe_id: str) -> str | None:
    """The scenario a probe id names (`pydantic_graph/scenario/fan-in-order` -> `fan-in-order`), if it is one."""
    parts = probe_id.split("/")
    return parts[2] if len(parts) == 3 and parts[1] == TOPIC else None


def for_probe(probe_id: str) -> Scenario:
    """The scenario a scenario probe runs; a probe id naming none is a defect of the probe."""
    wanted = scenario_id(probe_id)
    found = catalogue().get(wanted or "")
    if found is None:
        raise ScenarioError(f"{probe_id}: no scenario {wanted!r} in {shown(SCENARIOS)}")
    return found


def scenario_file(probe_id: str) -> Path | None:
    """The file a scenario probe's citation hash covers (fanin.model.source), if the id names a scenario."""
    wanted = scenario_id(probe_id)
    path = SCENARIOS / f"{wanted}.toml"
    return path if wanted and path.is_file() else None


# --- the protocol's messages ------------------------------------------------


def check_capabilities(reply: Any) -> dict[str, Any]:
    """The adapter's answer to `start`, or one line saying what is wrong with it."""
    if not isinstance(reply, dict):
        raise ScenarioError(f"an adapter answers start with an object, got {reply!r}")
    for key in ("framework", "version"):
        if not isinstance(reply.get(key), str) or not reply[key]:
            raise ScenarioError(f"an adapter's capabilities name its {key}, got {reply.get(key)!r}")
    if reply.get("protocol") != PROTOCOL:
        raise ScenarioError(f"the adapter speaks protocol {reply.get('protocol')!r}, the harness {PROTOCOL}")
    if reply.get("language") not in LANGUAGES:
        raise ScenarioError(f"language is one of {', '.join(LANGUAGES)}, got {reply.get('language')!r}")
    supports, cannot = reply.get("supports"), reply.get("cannot", {})
    if not isinstance(supports, list) or not set(supports) <= set(PRIMITIVES):
        raise ScenarioError(f"supports lists primitives among {', '.join(PRIMITIVES)}, got {supports!r}")
    if not isinstance(cannot, dict) or not all(p in PRIMITIVES and isinstance(r, str) for p, r in cannot.items()):
        raise ScenarioError(f"cannot maps a primitive to the reason the adapter cannot express it, got {cannot!r}")
    extra = set(reply) - {"framework", "version", "protocol", "language", "supports", "cannot"}
    if extra:
        raise ScenarioError(f"capabilities carry unknown keys {sorted(extra)}")
    return reply


_ANSWERS = ("observed", "not_applicable", "vacuous", "error")


def check_reply(reply: Any, scenario: Scenario) -> dict[str, Any]:
    """An adapter's answer to `run`, or one line saying what is wrong with it."""
    if not isinstance(reply, dict):
        raise ScenarioError(f"an adapter answers run with an object, got {reply!r}")
    answers = [key for key in _ANSWERS if key in reply]
    if len(answers) != 1 or set(reply) - {*_ANSWERS, "detail", "took_s"}:
        raise ScenarioError(
            f"a run's answer has one of {', '.join(_ANSWERS)} (and detail, took_s), got {sorted(reply)}"
        )
    if "detail" in reply and not isinstance(reply["detail"], str):
        raise ScenarioError("detail is a string")
    answer = answers[0]
    if answer != "observed":
        if not isinstance(reply[answer], str) or not reply[answer]:
            raise ScenarioError(f"{answer} gives its reason as a string")
        return reply
    observed = reply["observed"]
    if not isinstance(observed, dict) or sorted(observed) != sorted(scenario.observe):
        got = sorted(observed) if isinstance(observed, dict) else observed
        raise ScenarioError(f"{scenario.id}: observed fields {got}, the scenario observes {sorted(scenario.observe)}")
    if observed["raises"] is not None and not isinstance(observed["raises"], str):
        raise ScenarioError(f"raises is an exception's class name or null, got {observed['raises']!r}")
    for name, value in observed.items():
        if name.startswith("branch.") and value not in BRANCH_ENDS:
            raise ScenarioError(f"{name} is one of {', '.join(BRANCH_ENDS)}, got {value!r}")
        if name == "returned" and not isinstance(value, bool):
            raise ScenarioError(f"returned is true or false, got {value!r}")
        if name.startswith("ran.") and not (type(value) is int and value >= 0):
            raise ScenarioError(f"{name} counts the branch's runs to its end (an integer, 0 or more), got {value!r}")
        if name == "join.runs" and not (type(value) is int and value >= 0):
            raise ScenarioError(f"join.runs counts the join's runs (an integer, 0 or more), got {value!r}")
        if name == "raises.from" and not (isinstance(value, list) and set(value) <= set(scenario.branches)):
            raise ScenarioError(f"raises.from lists branch names, got {value!r}")
    if observed.get("join.runs") == 0 and observed.get("join.saw"):
        # The join received something yet never ran: an adapter whose join does not count its runs.
        raise ScenarioError(
            f"join.runs is 0 but join.saw is {observed['join.saw']!r}: the join ran and did not count it"
        )
    return reply


# --- the one grader ---------------------------------------------------------


def _holds(test: str, argument: Any, value: Any, order: list[str], declared: list[str]) -> bool:
    items = value if isinstance(value, list) else [value]
    if test == "null":
        return (value is None) is argument
    if test == "equals":
        return bool(value == argument)
    if test == "one_of":
        return value in argument
    if test == "contains_all":
        return isinstance(value, list) and all(item in items for item in argument)
    if test == "lacks_any":
        return any(item not in items for item in argument)
    if test == "is_order":
        return (value == order) is argument
    if test == "is_declared":
        return (value == declared) is argument
    raise ScenarioError(f"unknown test {test!r}")


def grade(scenario: Scenario, order: list[str], observed: dict[str, Any]) -> tuple[str, str]:
    """(hazard, label) of one order's observation: the first rule whose tests all hold.

    The legend holds whatever a rule says: a run that raised stopped, so it is loud (a rule that grades
    it otherwise is refused, as the loader refuses a loud rule that does not test `raises`)."""
    for number, rule in enumerate(scenario.data["grade"], 1):
        if all(
            _holds(test, argument, observed.get(field), order, scenario.branches)
            for field, tests in rule["when"].items()
            for test, argument in tests.items()
        ):
            if observed.get("raises") is not None and rule["hazard"] != "loud":
                raise ScenarioError(
                    f"{scenario.id}: grade rule {number} calls order {order_key(order)} {rule['hazard']}, but the run"
                    f" raised {observed['raises']}: the legend says loud (put the loud rule first)"
                )
            return str(rule["hazard"]), str(rule["label"])
    raise ScenarioError(
        f"{scenario.id}: no grading rule matches order {order_key(order)}: {json.dumps(observed, sort_keys=True)}"
        " (a behaviour the scenario's [[grade]] rules do not name: add the rule that says what it means)"
    )


def _shown(observed: dict[str, Any]) -> str:
    return ", ".join(f"{name}={json.dumps(value, sort_keys=True)}" for name, value in observed.items())


def observation(scenario: Scenario, capabilities: dict[str, Any], replies: dict[str, dict[str, Any]]) -> Observation:
    """The observation of one scenario in one cell, from the adapter's capabilities and its answer per order."""
    check_capabilities(capabilities)
    missing = [p for p in scenario.primitives() if p not in capabilities["supports"]]
    if missing:
        cannot = capabilities.get("cannot", {})
        said = [f"{p}: {cannot[p]}" for p in missing if p in cannot]
        unsaid = [p for p in missing if p not in cannot]  # a primitive newer than the adapter, or one it forgot
        reason = "; ".join(
            [f"the {capabilities['framework']} adapter cannot express {'; '.join(said)}"] * bool(said)
            + [f"the {capabilities['framework']} adapter does not express {', '.join(unsaid)}"] * bool(unsaid)
        )
        return Observation(NOT_APPLICABLE, {"reason": reason}, "n/a", f"n/a: {reason}", "n/a")
    if sorted(replies) != sorted(order_key(o) for o in scenario.orders):
        raise ScenarioError(f"{scenario.id}: answers for orders {sorted(replies)}, forced {scenario.orders}")
    observed: dict[str, dict[str, Any]] = {}
    for order in scenario.orders:
        reply = check_reply(replies[order_key(order)], scenario)
        if "error" in reply:
            raise ScenarioError(f"{scenario.id}: the adapter failed on order {order_key(order)}: {reply['error']}")
        if "not_applicable" in reply:
            reason = normalize_message(reply["not_applicable"])
            return Observation(NOT_APPLICABLE, {"reason": reason}, "n/a", f"n/a: {reason}", "n/a")
        if "vacuous" in reply:
            reason = normalize_message(f"order {order_key(order)}: {reply['vacuous']}")
            return Observation(VACUOUS, {"reason": reason}, "vacuous", f"vacuous: {reason}", "n/a")
        observed[order_key(order)] = reply["observed"]
    grades = {key: grade(scenario, key.split(","), seen) for key, seen in observed.items()}
    worst = max(grades, key=lambda key: harm(grades[key][0]))  # the first of the most harmful
    hazard, label = grades[worst]
    distinct = {json.dumps(seen, sort_keys=True) for seen in observed.values()}
    if hazard == "safe" and len(distinct) > 1:
        hazard, label = "order-coupled", "safe per order, differs by order"
    detail = "; ".join(
        f"{key}: {_shown(seen)} -> {grades[key][0]} ({grades[key][1]})" for key, seen in observed.items()
    )
    value = {"orders": observed, "grades": {key: grades[key][0] for key in observed}}
    return Observation("ok", canonical(value), label, normalize_message(detail), hazard)
