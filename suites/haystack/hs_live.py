"""A live pipeline run across releases: one interpreter stops it at a break point mid-fan-out and saves the
snapshot to a JSON file, another resumes it from that file.

The writer runs as `python hs_live.py write FOLDER` with an earlier release's interpreter (the contract's
EARLIER_PYTHON), or with the probe's own for the same-release control; it prints one JSON line. The pipeline is
`start` -> fan-out to `a` and `b` -> fan-in to `join` (one Variadic input, the framework's fan-in of same-typed
values). Sync `Pipeline.run` runs ready components one at a time, ties broken by name, so `a` runs before `b`: a
`Breakpoint` on `b` (visit 0, `snapshot_file_path=FOLDER`) raises BreakpointException after `a` has run, and the
snapshot it saves holds a's output among the join's inputs. Saving the file needs HAYSTACK_PIPELINE_SNAPSHOT_SAVE_ENABLED
on in the releases that read it (off by default there): the writer sets it, as the docs say to. The resumer builds
the same pipeline (same component names and connections) anew, reads the file with `load_pipeline_snapshot` and runs
`Pipeline.run(data={}, pipeline_snapshot=...)`, the documented resume. Both sides count their own component runs.
The order is the framework's own (by name), not a gate: the writer reports what ran before the break, and the probe
calls a run where a had not run first vacuous.

Plain data only: the writer's side imports nothing of fanin's (hs_kit is the suite's, framework only: it turns
telemetry off before haystack imports). A release without break points or snapshots says why (`cannot`), read from
the package, instead of writing.
"""

import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List

import hs_kit  # noqa: F401 (telemetry off before haystack imports)
from haystack import Pipeline, component
from haystack.core.component.types import Variadic

A_OUTPUT = "a: done"
B_OUTPUT = "b: done"
SAVE = "HAYSTACK_PIPELINE_SNAPSHOT_SAVE_ENABLED"  # the file is saved only where this is on (off by default)
NAMES = ("start", "a", "b", "join")


def cannot() -> dict[str, str]:
    """Why this release cannot stop a run at a break point and resume it from a saved snapshot, read from the
    package (empty: it can)."""
    taken = [name for name in inspect.signature(Pipeline.run).parameters if name != "self"]
    found: dict[str, str] = {}
    if "break_point" not in taken or "pipeline_snapshot" not in taken:
        found["run"] = (
            f"Pipeline.run takes only ({', '.join(taken)}): no break point to stop a run at a component, no"
            " pipeline snapshot to resume a stopped run from"
        )
    else:
        try:
            from haystack.core.pipeline import breakpoint as saved
        except ImportError as exc:
            found["load"] = f"no module haystack.core.pipeline.breakpoint ({type(exc).__name__}): no snapshot file to load"
        else:
            if not hasattr(saved, "load_pipeline_snapshot"):
                found["load"] = "haystack.core.pipeline.breakpoint has no load_pipeline_snapshot: no snapshot file to load"
    return found


def _counts() -> dict[str, int]:
    return dict.fromkeys(NAMES, 0)


@component
class Start:
    """The fan-out point: the run's input handed to both branches."""

    def __init__(self, runs: dict[str, int]) -> None:
        self.runs = runs

    @component.output_types(out=str)
    def run(self, text: str) -> Dict[str, Any]:
        self.runs["start"] += 1
        return {"out": text}


@component
class Branch:
    """`a` or `b`: outputs `<name>: done`."""

    def __init__(self, name: str, runs: dict[str, int]) -> None:
        self.name, self.runs = name, runs

    @component.output_types(out=str)
    def run(self, text: str) -> Dict[str, Any]:
        self.runs[self.name] += 1
        return {"out": f"{self.name}: done"}


@component
class Join:
    """The fan-in: one Variadic input both branches feed; `joined` keeps what it received, one entry a run."""

    def __init__(self, runs: dict[str, int], joined: list[list[str]]) -> None:
        self.runs, self.joined = runs, joined

    @component.output_types(joined=List[str])
    def run(self, outs: Variadic[str]) -> Dict[str, Any]:
        self.runs["join"] += 1
        got = list(outs)
        self.joined.append(got)
        return {"joined": got}


def build(runs: dict[str, int], joined: list[list[str]]) -> Any:
    """The pipeline both sides build: start -> a, b -> join."""
    pipeline = Pipeline()
    pipeline.add_component("start", Start(runs))
    pipeline.add_component("a", Branch("a", runs))
    pipeline.add_component("b", Branch("b", runs))
    pipeline.add_component("join", Join(runs, joined))
    for branch in ("a", "b"):
        pipeline.connect("start.out", f"{branch}.text")
        pipeline.connect(f"{branch}.out", "join.outs")
    return pipeline


def _held(path: Path) -> dict[str, Any]:
    """What the saved file holds for the resume, read as plain JSON: its inputs' format (3.x marks its own
    "internal", with each input's sender; earlier files have no mark and one value per socket), the join's stored
    input (where a's output waits) and the visit counts. No timestamp: the control's would differ."""
    state = json.loads(path.read_text())["pipeline_state"]
    join = (state.get("inputs", {}).get("serialized_data", {}) or {}).get("join")
    return {
        "inputs_format": state.get("inputs_format"),
        "join_input": join,
        "component_visits": state.get("component_visits"),
        "holds_a": A_OUTPUT in json.dumps(join),
    }


def write(folder: str) -> dict[str, Any]:
    """Run until the break point on `b` stops it after `a`; the saved file and what ran, as plain data."""
    found = cannot()
    if found:
        return {"haystack": _version(), "cannot": found}
    os.environ[SAVE] = "true"
    from haystack.core.errors import BreakpointException
    from haystack.dataclasses.breakpoints import Breakpoint

    runs = _counts()
    joined: list[list[str]] = []
    pipeline = build(runs, joined)
    raised = None
    try:
        pipeline.run(
            {"start": {"text": "go"}},
            break_point=Breakpoint(component_name="b", visit_count=0, snapshot_file_path=folder),
        )
    except BreakpointException:
        raised = "BreakpointException"
    except Exception as exc:  # noqa: BLE001 - what the framework did: the probe reads it
        raised = f"{type(exc).__name__}: {exc}"
    files = sorted(Path(folder).glob("*.json"))
    return {
        "haystack": _version(),
        "cannot": {},
        "raises": raised,
        "runs": runs,
        "joined": joined,
        "files": len(files),
        "snapshot": str(files[0]) if len(files) == 1 else None,
        "held": _held(files[0]) if len(files) == 1 else None,
    }


def resume(path: str) -> dict[str, Any]:
    """Read the snapshot file and resume the run on a pipeline built anew: what ran here, what the join received,
    the run's outputs. The file's path is left out of an error's text (the two sides' folders differ)."""
    from haystack.core.pipeline.breakpoint import load_pipeline_snapshot

    runs = _counts()
    joined: list[list[str]] = []
    read = raised = snapshot = outputs = None
    try:  # a release that cannot read the file says so here: that is its answer, not a defect
        snapshot = load_pipeline_snapshot(path)
    except Exception as exc:  # noqa: BLE001 - what the framework did: the probe grades it
        read = f"{type(exc).__name__}: {exc}".replace(path, "<snapshot>")
    if snapshot is not None:
        try:
            outputs = build(runs, joined).run(data={}, pipeline_snapshot=snapshot)
        except Exception as exc:  # noqa: BLE001
            raised = f"{type(exc).__name__}: {exc}".replace(path, "<snapshot>")
    return {
        "read_raises": read,
        "raises": raised,
        "runs_on_resume": runs,
        "joined": joined,
        "outputs": outputs,
    }


def _version() -> str:
    from importlib.metadata import version

    return version("haystack-ai")


if __name__ == "__main__":
    command, store = sys.argv[1:3]
    if command != "write":
        raise SystemExit(f"hs_live.py: unknown command {command!r}")
    print(json.dumps(write(store)))
