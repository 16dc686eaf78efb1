"""Scenarios as data (scenarios/*.toml): every file follows the schema and the loader, and the one grader
grades hand-made observations by the legend (fanin.model.scenarios)."""

from __future__ import annotations

import copy
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fanin.model import catalog, scenarios, schema, source
from fanin.model.scenarios import SCENARIOS, Scenario, ScenarioError
from fanin.model.source import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "suites"))

import scenario_kit  # the suites' kit, as a cell imports it

FILES = sorted(SCENARIOS.glob("*.toml"))
SCHEMA = jsonschema.Draft202012Validator(schema.scenario())
CAPABLE = {
    "framework": "toy",
    "version": "1.0",
    "protocol": scenarios.PROTOCOL,
    "language": "python",
    "supports": list(scenarios.PRIMITIVES),
}


def _scenario(name: str) -> Scenario:
    return scenarios.catalogue()[name]


def _answers(scenario: Scenario, *observed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {scenarios.order_key(o): {"observed": seen} for o, seen in zip(scenario.orders, observed, strict=True)}


def test_the_catalogue_has_the_first_four_scenarios_each_with_two_orders() -> None:
    found = scenarios.catalogue()
    assert {"same-key-two-writers", "read-await-write", "fan-in-order", "failing-branch"} <= set(found)
    assert all(len(s.orders) >= 2 for s in found.values())
    fan_in = found["fan-in-order"]
    assert all(order != fan_in.branches for order in fan_in.orders)  # every forced order differs from declaration


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_scenario_file_follows_the_schema_and_the_loader(path: Path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    errors = sorted(SCHEMA.iter_errors(data), key=str)
    assert not errors, "\n".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5])
    assert scenarios.load(path).id == path.stem


def _broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(_scenario("read-await-write").data)
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.pop("grade"), "missing"),
        (lambda d: d.update(orders=[["a", "b"]]), "two or more finish orders"),
        (lambda d: d.update(orders=[["a", "b"], ["a", "a"]]), "names every selected branch once"),
        (lambda d: d["branches"][0].update(do=[{"read": "n"}]), "exactly one 'turn'"),
        (lambda d: d["branches"][0]["do"].append({"write": {"key": "zz", "value": 1}}), "a key of [state]"),
        (lambda d: d["grade"][0].update(when={"final.n": {"null": False}}), "loud means an error"),
        (lambda d: d["grade"][1].update(hazard="fine"), "not one of the legend's"),
        (lambda d: d["grade"][1].update(when={"final.m": {"equals": 1}}), "does not observe"),
        (lambda d: d["grade"][1].update(when={"final.n": {"bigger": 1}}), "unknown test"),
        (lambda d: d.update(observe=["final.n"]), "observes `raises`"),
        (lambda d: d.update(state={"n": 0, "a": "x"}), "name both a branch and a"),
        (lambda d: d.update(source="the seed"), "https:// address"),
        (lambda d: d["branches"][0].update(do=["then", *d["branches"][0]["do"]]), "'then' separates two nodes"),
        (lambda d: d["branches"][0]["do"].extend(["then", "then", {"read": "n"}]), "'then' separates two nodes"),
        (lambda d: d["branches"][0]["do"].extend([{"return": 1}, "then", {"read": "n"}]), "only its last node"),
        (lambda d: d["branches"][0].update(selected=False), "never takes a 'turn'"),
        (lambda d: d["branches"][0].update(selected="no"), "selected is true or false"),
    ],
)
def test_a_broken_scenario_is_refused_by_the_loader_and_the_schema(change: Any, said: str) -> None:
    data = _broken(change)
    with pytest.raises(ScenarioError, match=said.replace("[", r"\[").replace("]", r"\]")):
        scenarios.validate(data, "x.toml")
    structural = said in (
        "missing",
        "two or more finish orders",
        "not one of the legend's",
        "unknown test",
        "https:// address",
    )
    if structural:  # what the schema can say, it says too
        assert list(SCHEMA.iter_errors(data))


def test_a_file_whose_id_is_not_its_name_is_refused(tmp_path: Path) -> None:
    text = _scenario("same-key-two-writers").path.read_text(encoding="utf-8")
    (tmp_path / "other.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError, match="not the file's name"):
        scenarios.catalogue(tmp_path)
    (tmp_path / "other.toml").write_text("id = ", encoding="utf-8")
    with pytest.raises(ScenarioError, match="not valid TOML"):
        scenarios.catalogue(tmp_path)


def test_the_primitives_come_from_the_steps() -> None:
    assert _scenario("read-await-write").primitives() == ["turn", "read", "write.add", "join.all"]
    assert _scenario("failing-branch").primitives() == ["turn", "write", "raise", "join.all"]
    assert _scenario("unequal-depth").primitives() == ["turn", "then", "return", "join.all"]


def test_then_splits_a_branch_into_nodes_in_sequence() -> None:
    """A branch of several nodes is one list of steps cut at each `then`; the turn may sit in any of them."""
    assert scenarios.parts(["turn", "then", {"return": "b"}]) == [["turn"], [{"return": "b"}]]
    assert scenarios.parts([{"read": "n"}, "turn"]) == [[{"read": "n"}, "turn"]]
    b = next(branch for branch in _scenario("unequal-depth").data["branches"] if branch["name"] == "b")
    assert len(scenarios.parts(b["do"])) == 2


def test_the_join_runs_grade_unequal_depth() -> None:
    """Once after both is safe; once per arrival, or once before the longer path wrote, is silent."""
    deep = _scenario("unequal-depth")
    once = scenarios.observation(
        deep, CAPABLE, _answers(deep, *({"join.runs": 1, "join.saw": ["a", "b"], "raises": None} for _ in deep.orders))
    )
    assert (once.hazard, once.label) == ("safe", "joined once, after both")
    early = scenarios.observation(
        deep, CAPABLE, _answers(deep, *({"join.runs": 1, "join.saw": ["a"], "raises": None} for _ in deep.orders))
    )
    assert (early.hazard, early.label) == ("silent", "joined before the longer path finished")
    twice = scenarios.observation(
        deep, CAPABLE, _answers(deep, *({"join.runs": 2, "join.saw": ["a", "b"], "raises": None} for _ in deep.orders))
    )
    assert (twice.hazard, twice.label) == ("silent", "joined once per arrival")


def test_a_conditional_fan_out_needs_select_and_orders_only_the_selected_branches() -> None:
    unselected = _scenario("unselected-branch")
    assert unselected.primitives() == ["turn", "return", "select", "join.all"]
    assert unselected.selected == ["a", "b"] and unselected.branches == ["a", "b", "c"]
    data = copy.deepcopy(unselected.data)
    data["orders"] = [["a", "b", "c"], ["b", "a", "c"]]
    with pytest.raises(ScenarioError, match="names every selected branch once"):
        scenarios.validate(data, "x.toml")
    never = {"join.runs": 0, "returned": True, "raises": None}
    assert scenarios.observation(unselected, CAPABLE, _answers(unselected, never, never)).hazard == "silent"
    stuck = {"join.runs": 0, "returned": False, "raises": None}
    hung = scenarios.observation(unselected, CAPABLE, _answers(unselected, stuck, stuck))
    assert (hung.hazard, hung.label) == ("hangs", "the run never returns")
    with pytest.raises(ScenarioError, match="returned is true or false"):
        scenarios.check_reply({"observed": {**never, "returned": None}}, unselected)


def test_two_failing_is_graded_by_what_the_caller_sees_and_the_third_branch() -> None:
    two = _scenario("two-failing")
    base = {"branch.a": "raised", "branch.b": "raised", "final.c_before": "c", "final.c_after": "c"}

    def seen(carries: list[str], third: str) -> dict[str, Any]:
        return {**base, "raises": "BranchFailed", "raises.from": carries, "branch.c": third}

    group = scenarios.observation(two, CAPABLE, _answers(two, seen(["a", "b"], "done"), seen(["b", "a"], "done")))
    assert group.label == "raises both failures"
    cancelled = scenarios.observation(two, CAPABLE, _answers(two, seen(["a"], "cancelled"), seen(["b"], "cancelled")))
    assert (cancelled.hazard, cancelled.label) == ("loud", "raises one, the third cancelled")
    ran_on = scenarios.observation(two, CAPABLE, _answers(two, seen(["a"], "done"), seen(["b"], "unfinished")))
    assert ran_on.label == "raises one, the third finished"  # the first of the most harmful: both loud
    swallowed = {**base, "raises": None, "raises.from": [], "branch.c": "done"}
    assert scenarios.observation(two, CAPABLE, _answers(two, swallowed, swallowed)).hazard == "silent"


def test_the_grader_grades_by_the_legend() -> None:
    same = _scenario("same-key-two-writers")
    lost = scenarios.observation(
        same, CAPABLE, _answers(same, {"final.k": "b", "raises": None}, {"final.k": "a", "raises": None})
    )
    assert (lost.outcome, lost.hazard, lost.label) == ("ok", "silent", "one write kept, no error")
    assert lost.value["grades"] == {"a,b": "silent", "b,a": "silent"}
    refused = scenarios.observation(
        same,
        CAPABLE,
        _answers(same, {"final.k": None, "raises": "InvalidUpdateError"}, {"final.k": None, "raises": "X"}),
    )
    assert refused.hazard == "loud"
    kept = scenarios.observation(
        same, CAPABLE, _answers(same, {"final.k": ["a", "b"], "raises": None}, {"final.k": ["b", "a"], "raises": None})
    )
    # each order keeps both writes, but the two orders observe different things: the result depends on the order
    assert (kept.hazard, kept.label) == ("order-coupled", "safe per order, differs by order")
    fan_in = _scenario("fan-in-order")
    declared = scenarios.observation(
        fan_in, CAPABLE, _answers(fan_in, *({"join.saw": ["a", "b", "c"], "raises": None} for _ in fan_in.orders))
    )
    assert (declared.hazard, declared.label) == ("safe", "declaration order")
    arrival = scenarios.observation(
        fan_in, CAPABLE, _answers(fan_in, *({"join.saw": order, "raises": None} for order in fan_in.orders))
    )
    assert (arrival.hazard, arrival.label) == ("order-coupled", "completion order")
    dropped = scenarios.observation(
        fan_in, CAPABLE, _answers(fan_in, {"join.saw": ["a", "b"], "raises": None}, {"join.saw": ["a"], "raises": None})
    )
    assert dropped.hazard == "silent"


def test_a_wrong_grade_is_caught() -> None:
    """A rule that grades a run that raised as anything but loud breaks the legend: the grader refuses it,
    whatever the rule's order, so a scenario cannot call an error silent or safe by putting its rule first."""
    raw = _scenario("read-await-write")
    wrong = copy.deepcopy(raw.data)
    wrong["grade"] = [{"hazard": "safe", "label": "whatever happened", "when": {"final.n": {"null": True}}}]
    scenarios.validate(wrong, "wrong.toml")  # valid data: only grading an observation shows it wrong
    raised = _answers(raw, {"final.n": None, "raises": "InvalidUpdateError"}, {"final.n": None, "raises": "X"})
    assert scenarios.observation(raw, CAPABLE, raised).hazard == "loud"
    with pytest.raises(ScenarioError, match="grade rule 1 calls order a,b safe, but the run raised InvalidUpdateError"):
        scenarios.observation(Scenario(raw.id, raw.path, wrong), CAPABLE, raised)


def test_an_observation_no_rule_names_is_refused_not_guessed() -> None:
    raw = _scenario("read-await-write")
    with pytest.raises(ScenarioError, match="no grading rule matches order a,b"):
        scenarios.observation(
            raw, CAPABLE, _answers(raw, {"final.n": 7, "raises": None}, {"final.n": 2, "raises": None})
        )


def test_an_unsupported_primitive_is_n_a_with_the_adapters_reason() -> None:
    raw = _scenario("failing-branch")
    caps = {**CAPABLE, "supports": ["turn", "write", "join.all"], "cannot": {"raise": "errors end the process"}}
    found = scenarios.observation(raw, caps, {})
    assert (found.outcome, found.hazard) == ("n/a", "n/a")
    assert found.value == {"reason": "the toy adapter cannot express raise: errors end the process"}


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ({"observed": {"final.n": 1}}, "observed fields"),
        ({"observed": {"final.n": 1, "raises": 3}}, "class name or null"),
        ({"observed": {"final.n": 1, "raises": None}, "vacuous": "x"}, "one of"),
        ({"error": "adapter crashed"}, "the adapter failed"),
    ],
)
def test_a_malformed_or_failed_answer_is_refused(reply: dict[str, Any], said: str) -> None:
    raw = _scenario("read-await-write")
    answers = {scenarios.order_key(o): reply for o in raw.orders}
    with pytest.raises(ScenarioError, match=said):
        scenarios.observation(raw, CAPABLE, answers)


@pytest.mark.parametrize(
    ("scenario_id", "field", "value", "said"),
    [
        ("unequal-depth", "join.runs", -1, "counts the join's runs"),
        ("unequal-depth", "join.runs", True, "counts the join's runs"),
        ("two-failing", "raises.from", ["z"], "lists branch names"),
        ("two-failing", "raises.from", "a", "lists branch names"),
    ],
)
def test_a_join_count_or_a_carried_branch_that_cannot_be_is_refused(
    scenario_id: str, field: str, value: Any, said: str
) -> None:
    raw = _scenario(scenario_id)
    observed = dict.fromkeys(raw.observe, None) | {"raises": None, field: value}
    with pytest.raises(ScenarioError, match=said):
        scenarios.check_reply({"observed": observed}, raw)


def test_an_answer_n_a_or_vacuous_is_the_observation() -> None:
    raw = _scenario("read-await-write")
    na = scenarios.observation(raw, CAPABLE, {k: {"not_applicable": "no beta API"} for k in ("a,b", "b,a")})
    assert (na.outcome, na.value) == ("n/a", {"reason": "no beta API"})
    vac = scenarios.observation(raw, CAPABLE, {k: {"vacuous": "never in flight"} for k in ("a,b", "b,a")})
    assert vac.outcome == "vacuous"


def test_the_protocol_schema_accepts_what_the_model_accepts() -> None:
    body = schema.adapter_protocol()
    jsonschema.Draft202012Validator.check_schema(body)
    validator = jsonschema.Draft202012Validator(body)
    raw = _scenario("read-await-write")
    messages = [
        {"cmd": "start", "protocol": 1},
        {"cmd": "run", "scenario": json.loads(json.dumps(raw.data)), "order": ["a", "b"]},
        {"cmd": "stop"},
        CAPABLE,
        {"observed": {"final.n": 1, "raises": None}, "detail": "x", "took_s": 0.01},
    ]
    for message in messages:
        assert not list(validator.iter_errors(message)), message
    assert list(validator.iter_errors({"observed": {}, "vacuous": "x"}))


def test_a_scenario_probes_hash_covers_its_scenario_file_and_its_adapter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = REPO_ROOT / "suites" / "pydantic_graph" / "test_scenarios.py"
    covered = dict(source.dependencies(probes, "test_read_await_write"))
    assert covered[("scenarios/read-await-write.toml", "data")].startswith("# Two branches")
    assert ("scenarios/fan-in-order.toml", "data") not in covered  # only the scenario it runs
    files = {where for where, _ in covered}
    assert {"scenario_adapter.py", "scenario_kit.py", "pg_kit.py", "gates.py"} <= files  # the adapter and its kits
    before = {name: source.probe_source_hash(probes, name) for name in ("test_read_await_write", "test_fan_in_order")}
    for path in SCENARIOS.glob("*.toml"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(source, "SCENARIOS", tmp_path)
    blank = tmp_path / "read-await-write.toml"
    blank.write_text(blank.read_text(encoding="utf-8") + "\n\n", encoding="utf-8")  # blank lines do not count
    assert source.probe_source_hash(probes, "test_read_await_write") == before["test_read_await_write"]
    edited = blank.read_text(encoding="utf-8").replace("equals = 2", "equals = 3")
    blank.write_text(edited, encoding="utf-8")
    assert source.probe_source_hash(probes, "test_read_await_write") != before["test_read_await_write"]
    assert source.probe_source_hash(probes, "test_fan_in_order") == before["test_fan_in_order"]


def test_every_framework_with_an_adapter_observes_every_scenario() -> None:
    """A scenario is never skipped: a framework that cannot express it records n/a with the reason."""
    adapters = {p.parent.name for p in (REPO_ROOT / "suites").glob("*/scenario_adapter.*")}
    assert "pydantic_graph" in adapters
    declared = {p.id for p in catalog.declared()}
    wanted = {f"{fw}/{scenarios.TOPIC}/{sid}" for fw in adapters for sid in scenarios.catalogue()}
    assert sorted(wanted - declared) == []
    assert all(scenarios.scenario_id(p) in scenarios.catalogue() for p in declared if "/scenario/" in p)


def _twice(name: str) -> Scenario:
    """A catalogue scenario run twice on the same built graph (`runs = 2`): it needs the later primitive `runs`."""
    data = {**copy.deepcopy(_scenario(name).data), "runs": 2}
    return Scenario(name, _scenario(name).path, scenarios.validate(data, "twice"))


def test_a_primitive_newer_than_an_adapter_is_n_a_and_never_sent_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """An adapter written before a primitive existed declares it by not naming it: its scenarios are n/a with the
    reason and never run, with no edit to the adapter (adapters written in parallel stay valid)."""
    twice = _twice("fan-in-order")
    assert twice.primitives() == ["turn", "return", "join.all", "runs"]
    caps = scenario_kit.declare("toy", "1.0")  # what every adapter that names no later primitive answers
    assert "runs" not in caps["supports"] and "join.all" in caps["supports"]
    found = scenarios.observation(twice, caps, {})
    assert (found.outcome, found.hazard) == ("n/a", "n/a")
    assert found.value == {"reason": "the toy adapter does not express runs"}
    sent: list[dict[str, Any]] = []

    async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
        sent.append(scenario)
        return {"error": "never asked"}

    class Obs:
        scenario = twice

        def record_scenario(self, capable: dict[str, Any], answers: dict[str, Any]) -> None:
            self.recorded = scenarios.observation(self.scenario, capable, answers)

    obs = Obs()
    scenario_kit.observe(obs, scenario_kit.Adapter(capabilities=lambda: caps, run=run))
    assert sent == [] and obs.recorded.value == found.value
    named = scenario_kit.declare("toy", "1.0", also=("runs",))
    assert named["supports"][-1] == "runs"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"thread": "same"}, "with runs"),
        ({"runs": 2, "thread": "each"}, "one stored thread"),
        ({"runs": 2, "thread": True}, "one stored thread"),
    ],
)
def test_a_thread_is_shared_only_by_a_scenarios_runs(extra: dict[str, Any], said: str) -> None:
    """`thread = "same"` says every run goes on one stored thread: without `runs`, or any other value, is refused."""
    data = {**copy.deepcopy(_scenario("fan-in-order").data), **extra}
    with pytest.raises(ScenarioError, match=said):
        scenarios.validate(data, "threaded")


def test_runs_on_one_thread_need_the_later_primitive_thread() -> None:
    """The catalogue's two-runs-one-thread needs `runs` and `thread`; an adapter naming only `runs` is n/a for it."""
    threaded = _scenario("two-runs-one-thread")
    assert threaded.primitives()[-2:] == ["runs", "thread"]
    assert "thread" not in _scenario("join-initial-shared").primitives()
    found = scenarios.observation(threaded, scenario_kit.declare("toy", "1.0", also=("runs",)), {})
    assert found.value == {"reason": "the toy adapter does not express thread"}


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"together": True}, "with runs"),
        ({"runs": 2, "thread": "same", "together": "yes"}, "with runs"),
        ({"runs": 2, "thread": "same", "together": True}, "every <run>.<branch>"),
    ],
)
def test_runs_together_need_one_thread_and_orders_of_run_dot_branch(extra: dict[str, Any], said: str) -> None:
    """`together = true` runs the runs at once on one stored thread: without `thread = "same"`, or with orders that
    do not name each run's branches `<run>.<branch>`, it is refused."""
    data = {**copy.deepcopy(_scenario("fan-in-order").data), **extra}
    with pytest.raises(ScenarioError, match=said):
        scenarios.validate(data, "together")


def test_two_runs_together_needs_the_later_primitive_together() -> None:
    together = _scenario("two-runs-together")
    assert together.primitives()[-3:] == ["runs", "thread", "together"]
    assert all(sorted(o) == ["1.a", "1.b", "2.a", "2.b"] for o in together.orders)
    found = scenarios.observation(together, scenario_kit.declare("toy", "1.0", also=("runs", "thread")), {})
    assert found.value == {"reason": "the toy adapter does not express together"}


def test_an_adapter_names_only_later_primitives_and_both_kits_agree_on_the_base() -> None:
    with pytest.raises(ValueError, match="after the base ones"):
        scenario_kit.declare("toy", "1.0", also=("read",))
    node = (REPO_ROOT / "suites" / "scenario_kit.mjs").read_text(encoding="utf-8")
    base = json.loads(node.split("export const BASE_PRIMITIVES = ", 1)[1].split(";", 1)[0])
    assert base == list(scenarios.BASE_PRIMITIVES)
    later = [p for p in scenarios.PRIMITIVES if p not in scenarios.BASE_PRIMITIVES]
    assert f"export const PRIMITIVES = [...BASE_PRIMITIVES, {', '.join(json.dumps(p) for p in later)}];" in node


def test_a_cannot_and_a_does_not_express_are_both_said() -> None:
    twice = _twice("failing-branch")
    caps = {**CAPABLE, "supports": ["turn", "write", "join.all"], "cannot": {"raise": "errors end the process"}}
    reason = scenarios.observation(twice, caps, {}).value["reason"]
    assert (
        reason == "the toy adapter cannot express raise: errors end the process; the toy adapter does not express runs"
    )


def test_a_join_that_received_something_but_never_counted_a_run_is_refused() -> None:
    """An adapter whose join forgot `script.join_runs += 1` (Haystack's, before it built unequal-depth) would
    read as "the join never ran" while the join shows what it received: refused, a probe-error, never graded."""
    raw = _scenario("unequal-depth")
    said = {"join.runs": 0, "join.saw": ["a", "b"], "raises": None}
    with pytest.raises(ScenarioError, match=r"join\.runs is 0 but join\.saw"):
        scenarios.observation(raw, CAPABLE, _answers(raw, said, said))
    never = {"join.runs": 0, "join.saw": None, "raises": None}
    assert scenarios.observation(raw, CAPABLE, _answers(raw, never, never)).label == "the join never ran, no error"


def test_escalate_is_a_later_primitive_and_a_branchs_last_step() -> None:
    found = _scenario("escalate")
    assert found.primitives() == ["turn", "write", "join.all", "escalate"]
    assert scenarios.observation(found, scenario_kit.declare("toy", "1.0"), {}).value == {
        "reason": "the toy adapter does not express escalate"
    }
    data = copy.deepcopy(found.data)
    data["branches"][0]["do"] = ["escalate", "turn"]
    with pytest.raises(ScenarioError, match="'escalate' is its last step"):
        scenarios.validate(data, "x")


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.update(resume="yes"), "resume = true"),
        (lambda d: d.update(runs=2), "not with runs"),
        (lambda d: d["branches"][0]["do"].__setitem__(1, {"raise": "a failed", "once": 1}), "once is true"),
        (lambda d: d["branches"][0]["do"].__setitem__(1, {"raise": "a failed", "twice": True}), "a step is one of"),
        (lambda d: d.update(observe=[*d["observe"], "ran.z"]), "cannot observe 'ran.z'"),
    ],
)
def test_a_broken_resume_is_refused_by_the_loader_and_the_schema(change: Any, said: str) -> None:
    """`resume = true` (alone, without runs), a raise's `once = true` and `ran.<branch>` of a branch that exists."""
    data = copy.deepcopy(_scenario("fail-resume").data)
    change(data)
    with pytest.raises(ScenarioError, match=said):
        scenarios.validate(data, "x.toml")
    if said != "not with runs" and not said.startswith("cannot observe"):
        assert list(SCHEMA.iter_errors(data))


def test_pause_and_resume_are_later_primitives_from_the_steps_and_the_field() -> None:
    """pause-resume needs `pause` (its step) and `resume` (its field); fail-resume `resume` and a plain `raise`. An
    adapter that names neither is n/a for both, "does not express", and a ran count that is no integer is refused."""
    paused, failed = _scenario("pause-resume"), _scenario("fail-resume")
    assert paused.primitives()[-2:] == ["pause", "resume"]
    assert "pause" not in failed.primitives() and {"raise", "resume"} <= set(failed.primitives())
    older = scenario_kit.declare("toy", "1.0", also=("runs",))
    assert scenarios.observation(paused, older, {}).value == {
        "reason": "the toy adapter does not express pause, resume"
    }
    seen = {"raises": None, "ran.a": 1, "ran.b": "once", "final.k": "b", "join.saw": ["a", "b"], "join.runs": 1}
    with pytest.raises(ScenarioError, match=r"ran\.b counts"):
        scenarios.observation(failed, CAPABLE, _answers(failed, seen, seen))


def test_a_resume_that_reruns_the_finished_sibling_or_loses_the_join_is_silent() -> None:
    """The legend: the sibling run again (its side effects repeated) or the join never run after the resume is
    silent; kept, not re-run and joined once is safe; a refused resume is loud."""
    failed = _scenario("fail-resume")
    safe = {"raises": None, "ran.a": 1, "ran.b": 1, "final.k": "b", "join.saw": ["a", "b"], "join.runs": 1}
    assert scenarios.grade(failed, ["a", "b"], safe) == ("safe", "kept, not re-run; the join saw both")
    assert scenarios.grade(failed, ["b", "a"], {**safe, "ran.b": 2})[0] == "silent"
    lost = {**safe, "join.saw": None, "join.runs": 0}
    assert scenarios.grade(failed, ["b", "a"], lost) == ("silent", "the join never ran")
    assert scenarios.grade(failed, ["b", "a"], {**safe, "raises": "ValueError"}) == ("loud", "raises")
