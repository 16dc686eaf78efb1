"""The shared scenarios (scenarios/*.toml) in Google ADK (Python), through its adapter and the protocol's messages.

One probe per scenario, each the same line: the scenario is data, the adapter builds it, the harness grades.
"""

from scenario_adapter import ADAPTER
from scenario_kit import observe

from fanin.probe import Observer, scenario_probe


@scenario_probe("adk/scenario/same-key-two-writers")
def test_same_key_two_writers(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/same-key-same-value")
def test_same_key_same_value(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/read-await-write")
def test_read_await_write(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/fan-in-order")
def test_fan_in_order(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/failing-branch")
def test_failing_branch(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/unequal-depth")
def test_unequal_depth(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/two-failing")
def test_two_failing(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/unselected-branch")
def test_unselected_branch(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/sibling-visibility")
def test_sibling_visibility(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/escalate")
def test_escalate(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/join-initial-shared")
def test_join_initial_shared(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/two-runs-one-thread")
def test_two_runs_one_thread(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/stalled-branch")
def test_stalled_branch(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/two-runs-together")
def test_two_runs_together(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/pause-resume")
def test_pause_resume(obs: Observer) -> None:
    observe(obs, ADAPTER)


@scenario_probe("adk/scenario/fail-resume")
def test_fail_resume(obs: Observer) -> None:
    observe(obs, ADAPTER)
