"""Run a scenario adapter as a program over the protocol (docs/ADAPTERS.md): `fanin scenarios -- COMMAND...`.

The adapter is any program that reads one JSON message a line on stdin and answers one a line on
stdout: a framework's maintainers run the suite from their own repository by pointing this at
their adapter, with no cell, no lock and no pytest. Each answer is checked against the protocol
(fanin.model.scenarios) and graded by the one grader, as a cell's scenario probe is. Nothing is
written; the adapter's process is ended (and waited for) whatever happens.
"""

from __future__ import annotations

import json
import select
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from fanin.model import scenarios
from fanin.model.errors import EnvironmentFault, FaninError
from fanin.model.results import Observation
from fanin.model.scenarios import Scenario, ScenarioError

ANSWER_SECONDS = 60.0  # one answer's bound: an adapter that never answers is stopped, never waited on forever


class AdapterFault(EnvironmentFault):
    """The adapter did not start, died, or wrote something that is not one JSON object a line."""


@dataclass
class Session:
    """One adapter process and the messages exchanged with it (kept for a conformance check)."""

    process: subprocess.Popen[str]
    sent: list[dict[str, Any]]
    received: list[Any]

    def ask(self, message: dict[str, Any], *, answer: bool = True) -> Any:
        stdin, stdout = self._pipes()
        self.sent.append(message)
        try:
            stdin.write(json.dumps(message, sort_keys=True) + "\n")
            stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise AdapterFault(f"the adapter stopped reading its input ({exc})") from None
        if not answer:
            return None
        ready, _, _ = select.select([stdout], [], [], ANSWER_SECONDS)
        if not ready:
            raise AdapterFault(f"the adapter gave no answer to {message['cmd']!r} within {ANSWER_SECONDS:g} s")
        line = stdout.readline()
        if not line:
            raise AdapterFault(f"the adapter ended without answering {message['cmd']!r} (exit {self.process.poll()})")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AdapterFault(f"the adapter's answer is not JSON ({exc.msg}): {line[:120]!r}") from None
        self.received.append(reply)
        return reply

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        return self.process.stdin, self.process.stdout


def _start(command: list[str], cwd: Path | None, env: dict[str, str] | None) -> Session:
    if not command:
        raise FaninError("name the adapter's command after `--`, e.g. `fanin scenarios -- python my_adapter.py`")
    try:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
    except OSError as exc:
        raise AdapterFault(f"cannot start the adapter {command[0]!r}: {exc.strerror or exc}") from None
    return Session(process, [], [])


def _end(session: Session) -> None:
    """Close its input (stop was sent, or the run failed), then wait; an adapter that lingers is killed."""
    process = session.process
    if process.stdin is not None:
        try:
            process.stdin.close()
        except OSError:
            pass
    try:
        process.wait(timeout=ANSWER_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def run(
    command: list[str],
    chosen: Iterable[Scenario],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, Observation], Session]:
    """The adapter's capabilities and one graded observation per scenario (start, every order, stop)."""
    session = _start(command, cwd, env)
    try:
        capabilities = scenarios.check_capabilities(session.ask({"cmd": "start", "protocol": scenarios.PROTOCOL}))
        found: dict[str, Observation] = {}
        for scenario in chosen:
            answers = {}
            if set(scenario.primitives()) <= set(capabilities["supports"]):
                for order in scenario.orders:
                    message = {"cmd": "run", "scenario": scenario.data, "order": order}
                    answers[scenarios.order_key(order)] = scenarios.check_reply(session.ask(message), scenario)
            found[scenario.id] = scenarios.observation(scenario, capabilities, answers)
        session.ask({"cmd": "stop"}, answer=False)
        return capabilities, found, session
    except ScenarioError as exc:
        raise AdapterFault(f"the adapter broke the protocol: {exc}") from None
    finally:
        _end(session)


def lines(capabilities: dict[str, Any], found: dict[str, Observation]) -> list[str]:
    """What `fanin scenarios` prints: the adapter, then each scenario's hazard, label and detail."""
    out = [f"{capabilities['framework']} {capabilities['version']} ({capabilities['language']} adapter)"]
    width = max((len(s) for s in found), default=0)
    for scenario_id, observation in found.items():
        out.append(f"  {scenario_id:<{width}}  {observation.hazard:<13}  {observation.label}")
        out.append(f"  {'':<{width}}  {observation.detail}")
    return out
