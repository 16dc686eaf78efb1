"""The shared scenarios (scenarios/*.toml) in Strands Agents, through its adapter and the protocol's messages.

One probe per scenario, each the same line: the scenario is data, the adapter builds it, the harness grades.
The adapter runs as a program under a fixed hash seed (st_kit.observe_seeded: GraphBuilder's edge sets
order a join's inputs by hash).
"""

import scenario_adapter
from st_kit import observe_seeded

from fanin.probe import Observer, scenario_probe


@scenario_probe("strands/scenario/same-key-two-writers")
def test_same_key_two_writers(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/same-key-same-value")
def test_same_key_same_value(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/read-await-write")
def test_read_await_write(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/fan-in-order")
def test_fan_in_order(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/failing-branch")
def test_failing_branch(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/unequal-depth")
def test_unequal_depth(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/two-failing")
def test_two_failing(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/unselected-branch")
def test_unselected_branch(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/sibling-visibility")
def test_sibling_visibility(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/escalate")
def test_escalate(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/join-initial-shared")
def test_join_initial_shared(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/two-runs-one-thread")
def test_two_runs_one_thread(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/stalled-branch")
def test_stalled_branch(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/two-runs-together")
def test_two_runs_together(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/pause-resume")
def test_pause_resume(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)


@scenario_probe("strands/scenario/fail-resume")
def test_fail_resume(obs: Observer) -> None:
    observe_seeded(obs, scenario_adapter.__file__)
