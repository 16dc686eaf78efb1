"""The shared scenarios (scenarios/*.toml) in CrewAI Flows, through its adapter and the protocol's messages.

One probe per scenario, each the same line: the scenario is data, the adapter builds it, the harness grades.
"""

from scenario_adapter import ADAPTER
from scenario_kit import observe

from fanin.probe import Observer, scenario_probe


@scenario_probe("crewai/scenario/same-key-two-writers")
def test_same_key_two_writers(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/same-key-same-value")
def test_same_key_same_value(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/read-await-write")
def test_read_await_write(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/fan-in-order")
def test_fan_in_order(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/failing-branch")
def test_failing_branch(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/unequal-depth")
def test_unequal_depth(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/two-failing")
def test_two_failing(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/unselected-branch")
def test_unselected_branch(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/sibling-visibility")
def test_sibling_visibility(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/escalate")
def test_escalate(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/join-initial-shared")
def test_join_initial_shared(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/two-runs-one-thread")
def test_two_runs_one_thread(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/stalled-branch")
def test_stalled_branch(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/two-runs-together")
def test_two_runs_together(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/pause-resume")
def test_pause_resume(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("crewai/scenario/fail-resume")
def test_fail_resume(obs: Observer) -> None:
    observe(obs, ADAPTER)
