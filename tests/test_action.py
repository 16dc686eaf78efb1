"""The GitHub Action (action.yml): its steps run in order as the runner would, with fanin's exit code passed on.

A local runner of a composite action's steps: action.yml is parsed, each `run:` script runs in
order under `bash -eo pipefail` (GitHub's `shell: bash`) with the step's `env:` evaluated from the
inputs and earlier steps' outputs, a fresh GITHUB_OUTPUT and GITHUB_STEP_SUMMARY per step, a recorded
pull_request event, and a stand-in `gh` first on PATH that records its calls and keeps the PR's
comments in a file (never the network). `fanin upgrade` between two reference cells is the real
command (no install; PyPI's answer is the recorded one); `probe --here`, which would run the
catalogue, and pip are stand-ins in the interpreter the action is given.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from fanin.model import exits
from fanin.model.errors import FaninError
from fanin.model.source import REPO_ROOT
from fanin.project import action
from fanin.versions import pypi

ACTION = REPO_ROOT / "action.yml"
EVENT = REPO_ROOT / "tests" / "data" / "github" / "pull_request.json"
RECORDED_PYPI = (REPO_ROOT / "tests" / "data" / "pypi").as_uri()
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")

GH = f"""#!{sys.executable}
import json, os, sys
state = os.environ["FAKE_GH_STATE"]
args = sys.argv[1:]
body = sys.stdin.read() if "--input" in args else ""
with open(state + ".calls", "a") as log:
    log.write(json.dumps({{"args": args, "stdin": body, "token": os.environ.get("GH_TOKEN", "")}}) + "\\n")
if os.environ.get("FAKE_GH_FAIL"):
    sys.stderr.write("HTTP 403: Resource not accessible by integration\\n")
    sys.exit(1)
comments = json.load(open(state)) if os.path.exists(state) else []
path = next(a for a in args if a.startswith("repos/"))
method = args[args.index("--method") + 1] if "--method" in args else "GET"
if method == "GET":
    for comment in comments:  # one page per comment: the action must read every page
        print(json.dumps([comment]))
elif method == "POST":
    comments.append({{"id": 1000 + len(comments), "body": json.loads(body)["body"], "path": path}})
elif method == "PATCH":
    wanted = int(path.rsplit("/", 1)[1])
    for comment in comments:
        if comment["id"] == wanted:
            comment["body"] = json.loads(body)["body"]
json.dump(comments, open(state, "w"))
"""

# The interpreter the action is given: pip and `probe --here` are stand-ins, everything else is this Python.
PYTHON = f"""#!/bin/bash
if [ "$1 $2" = "-m pip" ]; then echo "$@" >> "$FAKE_PIP_LOG"; exit 0; fi
if [ "$1 $2 $3 $4" = "-m fanin probe --here" ] && [ -n "${{FAKE_HERE_OUTPUT:-}}" ]; then
  echo "$@" >> "$FAKE_HERE_LOG"; cat "$FAKE_HERE_OUTPUT"; exit "$FAKE_HERE_CODE"
fi
exec {sys.executable} "$@"
"""

HERE_OUTPUT = """fanin: langgraph 1.2.24 installed here; comparing with langgraph-1.2.24: the reference cell of this very version and Python
langgraph-1.2.24 (reference) -> langgraph 1.2.24 installed here: 1 regression
| change     | probe                    | before   | after        |
|------------|--------------------------|----------|--------------|
| regression | langgraph/send/fold-order | [safe] … | [silent] <x> |

langgraph/send/fold-order: regression
  hazard:
    before: safe
    after:  silent

| framework   | installed here   | compared with                                    | verdict                                 |
|-------------|------------------|--------------------------------------------------|-----------------------------------------|
| langgraph   | 1.2.24           | langgraph-1.2.24 (same version and Python)       | 1 regression in 186 observations covered here |
"""


@dataclass
class Ran:
    code: int
    summary: str
    outputs: dict[str, str]
    log: str


def _definition() -> dict[str, Any]:
    loaded: dict[str, Any] = YAML(typ="safe").load(ACTION.read_text())
    return loaded


def _evaluate(text: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    """The few expressions action.yml may use; anything else fails the test (keep the action simple)."""

    def one(match: re.Match[str]) -> str:
        expr = match.group(1)
        if m := re.fullmatch(r"inputs\.([\w-]+)", expr):
            return inputs[m.group(1)]
        if m := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr):
            return steps.get(m.group(1), {}).get(m.group(2), "")
        raise AssertionError(f"action.yml uses an expression the local runner does not know: {expr}")

    return EXPRESSION.sub(one, text)


def _read_outputs(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    lines = path.read_text().splitlines() if path.exists() else []
    while lines:
        line = lines.pop(0)
        if "<<" in line:
            name, end = line.split("<<", 1)
            value = []
            while lines and lines[0] != end:
                value.append(lines.pop(0))
            lines.pop(0)
            found[name] = "\n".join(value)
        elif "=" in line:
            name, value_text = line.split("=", 1)
            found[name] = value_text
    return found


class Runner:
    """One job's workspace: the stand-ins, the event, the PR's comments; `run(**inputs)` is one use of the action."""

    def __init__(self, tmp: Path, event_name: str = "pull_request") -> None:
        self.tmp = tmp
        bin_dir = tmp / "bin"
        bin_dir.mkdir(parents=True)
        for name, text in (("gh", GH), ("python-env", PYTHON)):
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        self.python = str(bin_dir / "python-env")
        self.state = tmp / "comments.json"
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_ACTION_PATH": str(REPO_ROOT),
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(EVENT),
            "GITHUB_REPOSITORY": "acme/agents",
            "RUNNER_TEMP": str(tmp / "runner-temp"),
            "FAKE_GH_STATE": str(self.state),
            "FAKE_PIP_LOG": str(tmp / "pip.log"),
            "FAKE_HERE_LOG": str(tmp / "here.log"),
            pypi.INDEX_VARIABLE: RECORDED_PYPI,
        }
        (tmp / "runner-temp").mkdir()

    def gh_calls(self) -> list[dict[str, Any]]:
        path = Path(f"{self.state}.calls")
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def comments(self) -> list[dict[str, Any]]:
        loaded: list[dict[str, Any]] = json.loads(self.state.read_text()) if self.state.exists() else []
        return loaded

    def run(self, extra_env: dict[str, str] | None = None, **given: str) -> Ran:
        definition = _definition()
        inputs = {name: str(spec.get("default", "")) for name, spec in definition["inputs"].items()}
        unknown = {k.replace("_", "-") for k in given} - set(inputs)
        assert not unknown, f"no such inputs: {unknown}"
        inputs.update({k.replace("_", "-"): v for k, v in given.items()})
        if "python" not in given:
            inputs["python"] = self.python  # the job's environment: the stand-in interpreter
        steps: dict[str, dict[str, str]] = {}
        summary, log = [], []
        for index, step in enumerate(definition["runs"]["steps"]):
            assert step["shell"] == "bash" and "run" in step, step
            output, step_summary = self.tmp / f"output-{index}", self.tmp / f"summary-{index}"
            output.write_text("")
            step_summary.write_text("")
            env = {
                **self.env,
                **(extra_env or {}),
                **{k: _evaluate(str(v), inputs, steps) for k, v in step.get("env", {}).items()},
                "GITHUB_OUTPUT": str(output),
                "GITHUB_STEP_SUMMARY": str(step_summary),
            }
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _evaluate(step["run"], inputs, steps)],
                env=env,
                cwd=self.tmp,
                capture_output=True,
                text=True,
            )
            log.append(done.stdout + done.stderr)
            summary.append(step_summary.read_text())
            if "id" in step:
                steps[step["id"]] = _read_outputs(output)
            if done.returncode != 0:  # a failed step ends a composite action: the later steps are skipped
                break
        outputs = {name: _evaluate(str(spec["value"]), inputs, steps) for name, spec in definition["outputs"].items()}
        return Ran(done.returncode, "".join(summary), outputs, "".join(log))


def test_action_yml_follows_githubs_action_schema() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions", str(ACTION)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_input_reaches_a_script_through_env_never_pasted_into_it() -> None:
    """An input pasted into a script is a script injection (a PR title, a branch name); env values are data."""
    definition = _definition()
    assert definition["runs"]["using"] == "composite"
    for step in definition["runs"]["steps"]:
        assert "${{" not in step["run"], step["name"]
    used = {
        m for step in definition["runs"]["steps"] for v in step.get("env", {}).values() for m in EXPRESSION.findall(v)
    }
    assert {f"inputs.{name}" for name in definition["inputs"]} <= used  # every input is used somewhere


def _direct(*args: str) -> int:
    """What fanin itself exits with, run as a user would, outside the action."""
    env = {**os.environ, pypi.INDEX_VARIABLE: RECORDED_PYPI}
    return subprocess.run([sys.executable, "-m", "fanin", *args], env=env, capture_output=True).returncode


def test_an_upgrade_between_reference_cells_fails_with_fanins_code_and_keeps_one_comment(tmp_path: Path) -> None:
    runner = Runner(tmp_path)
    runner.state.write_text(json.dumps([{"id": 7, "body": "LGTM, merging after CI"}]))  # someone else's comment
    given = {"mode": "upgrade", "upgrade": "langgraph==1.2.24", "from": "1.2.18", "github_token": "t0ken"}
    first = runner.run(**given)
    assert first.code == exits.CHANGED == _direct("upgrade", "langgraph==1.2.24", "--from", "1.2.18")
    assert first.outputs["exit-code"] == "1"
    assert "### `fanin upgrade langgraph==1.2.24 --from 1.2.18`: a behaviour changed (exit 1)" in first.summary
    # fanin's own table, apart from the text above; the live-thread rows in their own table, never diffed with the
    # base's (whose detail names another writer)
    assert ": 2 changed  \n\n| change   | probe " in first.summary
    assert "live threads: langgraph-1.2.24 resumed what langgraph 1.2.18 wrote mid-fan-out, 2 probes: none broke" in (
        first.summary
    )
    assert "| changed  | langgraph/interrupt/parallel-tools-one-node " in first.summary
    assert "<details><summary>Before and after of each change (2)</summary>" in first.summary
    calls = runner.gh_calls()
    assert [c["args"][:3] for c in calls] == [
        ["api", "--paginate", "repos/acme/agents/issues/42/comments?per_page=100"],
        ["api", "--method", "POST"],
    ]
    assert all(c["token"] == "t0ken" for c in calls)
    posted = json.loads(calls[1]["stdin"])["body"]
    assert posted.startswith(action.marker("fanin") + "\n") and "parallel-tools-one-node" in posted
    assert calls[1]["args"][3] == "repos/acme/agents/issues/42/comments"

    second = runner.run(**given)
    assert second.code == exits.CHANGED
    calls = runner.gh_calls()[2:]
    assert [c["args"][:4] for c in calls] == [
        ["api", "--paginate", "repos/acme/agents/issues/42/comments?per_page=100"],
        ["api", "--method", "PATCH", "repos/acme/agents/issues/comments/1001"],
    ]
    comments = runner.comments()
    assert [c["id"] for c in comments] == [7, 1001]  # updated in place, not added; the other comment untouched
    assert comments[0]["body"] == "LGTM, merging after CI" and comments[1]["body"] == posted


@pytest.mark.parametrize(
    ("given", "code", "step_code"),
    [
        ({"mode": "upgrade", "upgrade": "langgraph==1.2.24"}, exits.SAME, exits.SAME),  # the newest cell: no change
        ({"mode": "upgrade", "upgrade": "langgraph==1.2.24 google-adk==2.13.0"}, exits.SAME, exits.SAME),
        ({"mode": "upgrade", "upgrade": "langgraph==not-a-version"}, exits.BAD_INPUT, exits.BAD_INPUT),
        ({"mode": "upgrade", "upgrade": "langgraph==1.2.24 google-adk==2.13.0", "from": "1.2.18"}, 2, 2),
        ({"mode": "sideways"}, exits.BAD_INPUT, exits.BAD_INPUT),
        ({"mode": "upgrade", "upgrade": "langgraph==1.2.24", "from": "1.2.18", "fail_on": "error"}, 1, 0),
        ({"mode": "upgrade", "upgrade": "langgraph==1.2.24", "from": "1.2.18", "fail_on": "never"}, 1, 0),
        ({"mode": "upgrade", "upgrade": "langgraph==not-a-version", "fail_on": "error"}, 2, 2),
        ({"mode": "upgrade", "upgrade": "langgraph==1.2.24", "fail_on": "sometimes"}, 0, 2),
    ],
)
def test_fanins_exit_code_passes_through(tmp_path: Path, given: dict[str, str], code: int, step_code: int) -> None:
    ran = Runner(tmp_path).run(**given)
    assert (ran.outputs["exit-code"], ran.code) == (str(code), step_code), ran.log
    if given.get("upgrade", "").startswith("langgraph==not"):
        assert code == _direct("upgrade", given["upgrade"])
        assert "fanin: error: malformed spec" in ran.summary
    if "sideways" in given.values():
        assert "fanin: error: mode is here or upgrade, not 'sideways'" in ran.summary


@pytest.mark.parametrize("code", [exits.SAME, exits.CHANGED, exits.NOT_RUN])
def test_mode_here_installs_fanin_from_the_action_and_probes_the_environment(tmp_path: Path, code: int) -> None:
    runner = Runner(tmp_path)
    recorded = tmp_path / "here.txt"
    recorded.write_text(HERE_OUTPUT)
    env = {"FAKE_HERE_OUTPUT": str(recorded), "FAKE_HERE_CODE": str(code)}
    ran = runner.run(extra_env=env, github_token="t0ken")
    assert (ran.code, ran.outputs["exit-code"]) == (code, str(code))
    pip = (tmp_path / "pip.log").read_text().split()
    assert pip[:3] == ["-m", "pip", "install"] and str(REPO_ROOT) in pip and {"pytest", "pytest-timeout"} <= set(pip)
    (here,) = (tmp_path / "here.log").read_text().splitlines()
    assert here.split() == ["-m", "fanin", "probe", "--here", "--out", f"{ran.outputs['results-dir']}/here"]
    assert "| regression | langgraph/send/fold-order | [safe] … | [silent] &lt;x&gt; |" in ran.summary
    assert "| framework   | installed here " in ran.summary
    (_, post) = runner.gh_calls()
    assert json.loads(post["stdin"])["body"].startswith("<!-- fanin-action:fanin -->")


def test_no_token_or_no_pull_request_means_no_comment_and_the_same_exit(tmp_path: Path) -> None:
    given = {"mode": "upgrade", "upgrade": "langgraph==1.2.24", "from": "1.2.18"}
    runner = Runner(tmp_path / "a")
    ran = runner.run(**given)
    assert ran.code == exits.CHANGED and runner.gh_calls() == [] and "no github-token given" in ran.log
    runner = Runner(tmp_path / "b", event_name="push")
    ran = runner.run(github_token="t0ken", **given)
    assert ran.code == exits.CHANGED and runner.gh_calls() == [] and "not a pull request" in ran.log


def test_a_comment_that_cannot_be_written_is_a_warning_not_the_verdict(tmp_path: Path) -> None:
    runner = Runner(tmp_path)
    ran = runner.run(extra_env={"FAKE_GH_FAIL": "1"}, mode="upgrade", upgrade="langgraph==1.2.24", github_token="t")
    assert ran.code == exits.SAME and len(runner.gh_calls()) == 1
    assert "::warning title=fanin::could not write the pull-request comment on acme/agents#42: HTTP 403" in ran.log


def test_the_comment_fits_githubs_limit_and_no_output_ends_its_code_block() -> None:
    output = (
        "a -> b: 1 changed\n| change | probe |\n|---|---|\n| changed | x |\n\nx: changed\n  value:\n"
        + ("    ```" + "y" * 70 + "\n") * 2000
    )
    text = action.markdown("fanin upgrade x==1", 1, output, action.COMMENT_LIMIT - 200)
    assert len(text) <= action.COMMENT_LIMIT - 200
    assert "````text\n" in text and text.rstrip().endswith("````\n\n</details>".rstrip())
    assert "(cut here; the job's log has the whole output)" in text
    with pytest.raises(FaninError, match="comment-key"):
        action.marker("two words -->")


def test_the_example_workflow_uses_this_action() -> None:
    text = (REPO_ROOT / "examples" / "ci" / "fanin-upgrade-pr.yml").read_text()
    jobs = YAML(typ="safe").load(text)["jobs"]
    uses = [s for job in jobs.values() for s in job["steps"] if "/fanin@" in s.get("uses", "")]
    assert {s["with"]["mode"] for s in uses} == {"here", "upgrade"}
    assert all(s["with"]["github-token"] == "${{ github.token }}" for s in uses)
    assert len({s["with"].get("comment-key", "fanin") for s in uses}) == len(uses)  # one comment per job
