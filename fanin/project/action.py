"""The GitHub Action's steps (action.yml at the repository root): run the gate, say it in the job summary and one PR comment.

`python -m fanin.project.action run|summary|comment --dir DIR`, each step of the composite action in turn:

- `run`: `fanin probe --here` (mode here) or `fanin upgrade SPEC [--from A]` per spec (mode upgrade), with
  the interpreter the action was given, its output shown and kept in DIR/run.json; fanin's exit code
  (the highest of the specs') goes to the step's outputs, never changed: the classifier decides.
- `summary`: that output as Markdown (fanin's tables are GitHub tables already; each change's
  before/after folded in a <details>) appended to $GITHUB_STEP_SUMMARY, and DIR/comment.md.
- `comment`: on a pull_request event with a token, that body in one comment, found again by a hidden
  marker and updated in place (`gh api`); a comment that cannot be written is a warning, not a failure.

It formats what fanin printed and decides nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from fanin.model import exits
from fanin.model.errors import FaninError

RUN_FILE = "run.json"
COMMENT_FILE = "comment.md"
PR_EVENTS = ("pull_request", "pull_request_target")
COMMENT_LIMIT = 65_536  # GitHub refuses a longer comment body
SUMMARY_LIMIT = 1_000_000  # a step's summary is at most 1 MiB
KEY = re.compile(r"[A-Za-z0-9._-]{1,64}")


def marker(key: str) -> str:
    """The hidden line that finds this job's comment again."""
    if not KEY.fullmatch(key):
        raise FaninError(f"comment-key {key!r} is not 1 to 64 letters, digits, '.', '_' or '-'")
    return f"<!-- fanin-action:{key} -->"


def commands(python: str, mode: str, upgrade: str, base: str, upgrade_python: str, out: Path) -> list[list[str]]:
    """The fanin command lines the inputs ask for; one line of bad input otherwise."""
    specs = upgrade.split()
    if mode == "here":
        if specs or base or upgrade_python:
            raise FaninError(
                "upgrade, from and upgrade-python go with mode: upgrade (mode here probes what is installed)"
            )
        return [[python, "-m", "fanin", "probe", "--here", "--out", str(out / "here")]]
    if mode != "upgrade":
        raise FaninError(f"mode is here or upgrade, not {mode!r}")
    if not specs:
        raise FaninError("mode upgrade needs upgrade: FRAMEWORK==VERSION (e.g. langgraph==1.2.24)")
    if base and len(specs) > 1:
        raise FaninError(f"from names one version, so it goes with one spec, not {len(specs)}: {' '.join(specs)}")
    options = [*(["--from", base] if base else []), *(["--python", upgrade_python] if upgrade_python else [])]
    return [[python, "-m", "fanin", "upgrade", spec, *options] for spec in specs]


def _said(command: Sequence[str]) -> str:
    """The command as a reader would type it: `fanin upgrade langgraph==1.2.24 --from 1.2.18` (no --out DIR)."""
    words = list(command[3:])
    if "--out" in words:
        del words[words.index("--out") : words.index("--out") + 2]
    return " ".join(["fanin", *words])


def _tee(command: list[str]) -> tuple[int, str]:
    """Run one command, its output shown as it comes and kept."""
    kept: list[str] = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            kept.append(line)
    return process.returncode, "".join(kept)


def _outputs(values: dict[str, str]) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.writelines(f"{name}={value}\n" for name, value in values.items())


def run(directory: Path, python: str, mode: str, upgrade: str, base: str, upgrade_python: str) -> int:
    directory = directory.absolute()
    directory.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, object]] = []
    try:
        planned = commands(python, mode, upgrade, base, upgrade_python, directory)
    except FaninError as exc:
        line = f"fanin: error: {exc}"
        print(line)
        runs.append({"command": f"fanin (mode {mode})", "code": exits.BAD_INPUT, "output": line + "\n"})
    else:
        for command in planned:
            print(f"$ {_said(command)}", flush=True)
            code, output = _tee(command)
            runs.append({"command": _said(command), "code": code, "output": output})
    code = max(int(str(r["code"])) for r in runs)
    (directory / RUN_FILE).write_text(json.dumps({"mode": mode, "code": code, "runs": runs}, indent=1) + "\n")
    _outputs({"exit-code": str(code), "results-dir": str(directory)})
    return code


MEANINGS = {
    exits.SAME: "same behaviour as the reference",
    exits.CHANGED: "a behaviour changed",
    exits.BAD_INPUT: "bad input",
    exits.NOT_RUN: "could not run",
    exits.INTERRUPTED: "interrupted",
}


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _fence(text: str) -> str:
    """A fence longer than any run of backticks in the text, so nothing in it ends the block."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def markdown(command: str, code: int, output: str, limit: int) -> str:
    """One run's section: the verdict, fanin's lines and tables, each change's before/after folded."""
    shown: list[str] = []
    details: list[str] = []
    for block in re.split(r"\n\s*\n", output.strip("\n")):
        lines = block.splitlines()
        if not lines:
            continue
        if any(line[:1].isspace() for line in lines[1:]):
            details.append(block)
            continue
        for table, run in itertools.groupby(lines, key=lambda line: line.startswith("|")):
            # a table stands apart from the text around it; each text line is its own line (two spaces: a break)
            shown += [_escaped(line) if table else f"{_escaped(line)}  " for line in run] + [""]
    head = [f"### `{command}`: {MEANINGS.get(code, 'exit')} (exit {code})", "", *shown]
    text = "\n".join(head).rstrip("\n") + "\n"
    if details:
        body = "\n\n".join(details)
        room = limit - len(text) - 200
        if len(body) > room:
            body = body[: max(room, 0)] + "\n… (cut here; the job's log has the whole output)"
        fence = _fence(body)
        text += (
            f"\n<details><summary>Before and after of each change ({len(details)})</summary>\n\n"
            f"{fence}text\n{body}\n{fence}\n\n</details>\n"
        )
    return text


def _read_run(directory: Path) -> dict[str, object]:
    path = directory / RUN_FILE
    if not path.is_file():
        raise FaninError(f"no {RUN_FILE} in {directory}: the run step did not finish")
    found: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return found


def body(directory: Path, limit: int) -> str:
    said = _read_run(directory)
    runs = [r for r in said["runs"] if isinstance(r, dict)]  # type: ignore[attr-defined]
    share = limit // max(len(runs), 1)
    return "\n".join(markdown(str(r["command"]), int(r["code"]), str(r["output"]), share) for r in runs)


def summary(directory: Path) -> int:
    text = body(directory, SUMMARY_LIMIT)
    (directory / COMMENT_FILE).write_text(body(directory, COMMENT_LIMIT - 200), encoding="utf-8")
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    else:
        print(text)
    return exits.SAME


def _gh(args: list[str], payload: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["gh", "api", *args],
        input=json.dumps(payload) if payload is not None else None,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(said[-1] if said else f"gh exited {done.returncode}")
    return done.stdout


def _pages(text: str) -> list[dict[str, object]]:
    """`gh api --paginate` prints one JSON array per page, one after another."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        page, at = decoder.raw_decode(text, at)
        found += [c for c in page if isinstance(c, dict)]
    return found


def comment(directory: Path, key: str) -> int:
    hidden = marker(key)
    if not os.environ.get("GH_TOKEN"):
        print("fanin: no github-token given: no pull-request comment (the job summary has the table)")
        return exits.SAME
    event_name = os.environ.get("GITHUB_EVENT_NAME", "")
    if event_name not in PR_EVENTS:
        print(f"fanin: a {event_name or 'non-PR'} event, not a pull request: no comment")
        return exits.SAME
    event = json.loads(Path(os.environ["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
    number = int(event["pull_request"]["number"])
    repo = os.environ.get("GITHUB_REPOSITORY") or str(event["repository"]["full_name"])
    text = f"{hidden}\n{(directory / COMMENT_FILE).read_text(encoding='utf-8')}"
    try:
        existing = _pages(_gh(["--paginate", f"repos/{repo}/issues/{number}/comments?per_page=100"]))
        ours = sorted(int(str(c["id"])) for c in existing if hidden in str(c.get("body", "")))
        if ours:
            _gh(["--method", "PATCH", f"repos/{repo}/issues/comments/{ours[0]}", "--input", "-"], {"body": text})
            print(f"fanin: updated the pull-request comment {ours[0]} on {repo}#{number}")
        else:
            _gh(["--method", "POST", f"repos/{repo}/issues/{number}/comments", "--input", "-"], {"body": text})
            print(f"fanin: commented on {repo}#{number}")
    except (RuntimeError, ValueError, KeyError) as exc:
        print(f"::warning title=fanin::could not write the pull-request comment on {repo}#{number}: {exc}")
    return exits.SAME


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fanin.project.action", description=__doc__)
    sub = parser.add_subparsers(dest="step", required=True)
    go = sub.add_parser("run")
    go.add_argument("--mode", default="here")
    go.add_argument("--upgrade", default="")
    go.add_argument("--from", dest="base", default="")
    go.add_argument("--upgrade-python", default="")
    go.add_argument("--python", default=os.environ.get("FANIN_PYTHON") or sys.executable)
    for name in ("run", "summary", "comment"):
        (go if name == "run" else sub.add_parser(name)).add_argument("--dir", type=Path, required=True)
    sub.choices["comment"].add_argument("--key", default="fanin")
    args = parser.parse_args(argv)
    try:
        if args.step == "run":
            run(args.dir, args.python, args.mode, args.upgrade, args.base, args.upgrade_python)
            return exits.SAME  # fanin's own code is the step's output, passed on by the last step
        if args.step == "summary":
            return summary(args.dir)
        return comment(args.dir, args.key)
    except FaninError as exc:
        sys.stderr.write(f"fanin: error: {exc}\n")
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
