"""`python -m fanin`: diff exit codes, report rendering, bless, and one clear line for every mistake."""

import json
import re
from pathlib import Path

import pytest

import fanin.__main__ as cli
from fanin.model import catalog, matrix
from fanin.model.errors import FaninError
from fanin.model.results import Claim, Observation, ProbeInfo, ResultSet, load, save
from fanin.report import outputs
from fanin.versions import pypi, upgrade

MATRIX = matrix.load()
PID = "langgraph/same-key/no-reducer"
REAL_REFERENCE = matrix.REFERENCE_RESULTS


def result_set(cell: str, observation: Observation) -> ResultSet:
    """A run of a real cell: the environment (packages, lock hash) of its committed reference, one observation."""
    today = next(p for p in catalog.declared() if p.id == PID)
    info = ProbeInfo(
        PID, "title", Claim("claim", "https://example.org"), (), today.file, today.function, today.source_hash
    )
    version = cell.split("-", 1)[1]
    environment = load(REAL_REFERENCE / f"{cell}.json").environment
    return ResultSet(cell, "langgraph", version, environment, {PID: info}, {PID: observation})


LOUD = Observation(
    "raises:InvalidUpdateError",
    {"exception": "InvalidUpdateError"},
    "InvalidUpdateError",
    "raises InvalidUpdateError",
    "loud",
)
SILENT = Observation("ok", {"final": "B"}, "last write wins: B", "no error; last write wins: B", "silent")


def write(tmp_path: Path, cell: str, observation: Observation) -> str:
    path = tmp_path / f"{cell}.json"
    save(result_set(cell, observation), path)
    return str(path)


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("fanin: error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_diff_same_behaviour_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = write(tmp_path, "langgraph-1.2.9", LOUD), write(tmp_path, "langgraph-1.2.18", LOUD)
    assert cli.main(["diff", a, b]) == 0
    assert "no change in 1 probes" in capsys.readouterr().out


def test_diff_breaking_change_exits_1_with_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = write(tmp_path, "langgraph-1.2.9", LOUD), write(tmp_path, "langgraph-1.2.18", SILENT)
    assert cli.main(["diff", a, b]) == 1
    out = capsys.readouterr().out
    assert "| regression | langgraph/same-key/no-reducer" in out  # loud -> silent: the hazard got worse
    assert "[loud] raises InvalidUpdateError" in out and "[silent] no error; last write wins: B" in out
    assert "value.final" in out


def test_diff_detail_only_change_is_wording_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reworded = Observation(LOUD.outcome, LOUD.value, LOUD.label, "raises InvalidUpdateError: new wording", LOUD.hazard)
    a, b = write(tmp_path, "langgraph-1.2.9", LOUD), write(tmp_path, "langgraph-1.2.18", reworded)
    assert cli.main(["diff", a, b]) == 0
    assert "| wording" in capsys.readouterr().out


def test_diff_a_run_against_the_reference_by_cell_id(tmp_path: Path) -> None:
    newest = MATRIX.newest("langgraph")
    run = tmp_path / f"{newest.id}.json"
    run.write_text(newest.reference_path.read_text())
    assert cli.main(["diff", newest.id, str(run)]) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diff", "langgraph-1.2.18", "langgraph-1.2.18"], "names 'langgraph-1.2.18' twice"),
        (["diff", "langgraph-1.2.18", "reference/results/langgraph-1.2.18.json"], "twice"),
        (["diff", "langgraph-1.2.24", "langgraph-1.2.9"], "wrong order: langgraph-1.2.24 is newer"),
        (["diff", "langgraph-1.2.18"], "diff takes two result sets"),
        (["diff", "langgraph-9.9.9", "langgraph-1.2.18"], "no cell 'langgraph-9.9.9'"),
        (["diff", "adk-2.13.0", "langgraph-1.2.18"], "cannot diff a adk result set with a langgraph one"),
        (["bless", "nope-1.0"], "no cell 'nope-1.0'"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(args) == 2
    assert message in one_line_error(capsys)


def test_corrupt_result_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "langgraph-1.2.18.json"
    bad.write_text('{"schema": 2, "cell": "langgraph-1.2.18", "obs')
    assert cli.main(["diff", "langgraph-1.2.9", str(bad)]) == 2
    assert "not valid JSON" in one_line_error(capsys)


def test_argument_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["frobnicate"])
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fanin: error: ") and "\n" not in err


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the reference and the local results at a temporary tree."""
    monkeypatch.setattr(matrix, "REFERENCE_RESULTS", tmp_path / "reference")
    monkeypatch.setattr(matrix, "RUN_RESULTS", tmp_path / "run")
    monkeypatch.setattr(matrix, "REPORTS", tmp_path / "reports")
    monkeypatch.setattr(matrix, "REFERENCE_REPORT", tmp_path / "REPORT.md")
    monkeypatch.setattr(matrix, "REFERENCE_CHECKLIST", tmp_path / "CHECKLIST.md")
    return tmp_path


def test_report_is_deterministic_and_survives_a_corrupt_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "langgraph-1.2.9", LOUD)
    write(tmp_path, "langgraph-1.2.18", SILENT)
    (tmp_path / "langgraph-1.2.24.json").write_text("{trunc")
    first, unreadable = outputs.local_run(MATRIX, source=tmp_path)
    again, _ = outputs.local_run(MATRIX, source=tmp_path)
    assert unreadable == 1 and first == again
    text = next(t for p, t in first.items() if p.suffix == ".md")
    assert "1.2.9" in text and "1.2.18" in text
    assert "not run: unreadable result set" in text and "not run: no result set" in text
    assert "not valid JSON" in capsys.readouterr().err


def test_a_report_that_cannot_read_a_result_set_writes_nothing(
    sandbox: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    targets = {name: sandbox / name for name in ("REPORT.md", "CHECKLIST.md")}
    for path in targets.values():
        path.write_text("before\n")
    (sandbox / "reference").mkdir()
    write(sandbox / "reference", "langgraph-1.2.9", LOUD)
    (sandbox / "reference" / "langgraph-1.2.24.json").write_text('{"schema": 2, "cell": ')
    assert cli.main(["report"]) == 2
    assert "nothing was written" in capsys.readouterr().err.splitlines()[-1]
    assert all(path.read_text() == "before\n" for path in targets.values())


def test_bless_promotes_whole_runs_only(sandbox: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(sandbox / "run", "langgraph-1.2.18", SILENT)  # one probe: a partial run
    assert cli.main(["bless", "langgraph-1.2.18"]) == 2
    assert "lacks" in one_line_error(capsys) and not (sandbox / "reference").exists()
    assert cli.main(["bless", "langgraph-1.2.18", "--force"]) == 0
    assert (sandbox / "reference" / "langgraph-1.2.18.json").exists()


def test_bless_checks_every_cell_before_writing_any(
    sandbox: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog, "declared", lambda: [catalog.DeclaredProbe(PID, "f.py", "test_f", "abcdef")])
    broken = Observation("probe-error", {"error": "KeyError"}, "probe-error", "probe-error: KeyError", "n/a")
    write(sandbox / "run", "langgraph-1.2.9", SILENT)
    write(sandbox / "run", "langgraph-1.2.18", broken)
    assert cli.main(["bless", "langgraph-1.2.9", "langgraph-1.2.18", "--force"]) == 0  # --force takes both
    (sandbox / "reference" / "langgraph-1.2.9.json").unlink()
    assert cli.main(["bless", "langgraph-1.2.9", "langgraph-1.2.18"]) == 2
    assert "probe errors" in one_line_error(capsys)
    assert not (sandbox / "reference" / "langgraph-1.2.9.json").exists()  # the good cell was not written either


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "takes one argument"),
        (["langgraph==1", "adk==2"], "takes one argument"),
        (["langgraph[x]>=1.2"], "malformed spec"),
        (["langgraph"], "malformed spec"),
    ],
)
def test_upgrade_spec_errors(args: list[str], message: str) -> None:
    with pytest.raises(FaninError, match=message):
        upgrade.plan(args, MATRIX)


RELEASES = [
    pypi.Release("1.2.23", "2026-11-19T00:00:00Z", False),
    pypi.Release("1.2.24", "2026-11-20T00:00:00Z", False),
    pypi.Release("1.2.25", "2026-11-25T00:00:00Z", True),
]


def test_upgrade_takes_a_range_and_says_what_it_means(monkeypatch: pytest.MonkeyPatch) -> None:
    """`upgrade -- 'langgraph~=1.2.0'`: the newest installable release matching it (never the yanked 1.2.25)."""
    monkeypatch.setattr(pypi, "releases", lambda package, timeout=20.0, prereleases=False: RELEASES)
    plan = upgrade.plan(["langgraph~=1.2.0"], MATRIX)
    assert plan.cell.version == "1.2.24"
    assert plan.said == "langgraph~=1.2.0 means langgraph 1.2.24, the newest release on PyPI matching it"
    assert upgrade.plan(["langgraph==1.2.*", "--from", "1.2.23"], MATRIX).base.cell.version == "1.2.23"


def test_upgrade_resolves_against_pypi(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pypi, "releases", lambda package, timeout=20.0, prereleases=False: RELEASES)
    plan = upgrade.plan(["langgraph==latest"], MATRIX)
    assert plan.cell.version == "1.2.24" and plan.cell.resolution == "current"
    assert plan.baseline == MATRIX.newest("langgraph")
    assert upgrade.plan(["google-adk==1.2.23"], MATRIX).baseline == MATRIX.newest("adk")
    with pytest.raises(FaninError, match="was yanked"):
        upgrade.plan(["langgraph==1.2.25"], MATRIX)
    with pytest.raises(FaninError, match=r"has no release 9\.9\.9 on PyPI \(newest is 1\.2\.24\)"):
        upgrade.plan(["langgraph==9.9.9"], MATRIX)
    with pytest.raises(FaninError, match="unknown framework 'autogen'"):
        upgrade.plan(["autogen==1.0"], MATRIX)


def test_unreachable_registry_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pypi, "INDEX", "http://127.0.0.1:9/pypi")
    with pytest.raises(pypi.RegistryError, match="cannot reach PyPI to look up langgraph"):
        pypi.resolve("langgraph", "latest")


def test_bless_refuses_a_run_that_is_not_what_its_name_says(sandbox: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Identity, lock, drift, a dirty work tree, edited probe code, a failed last run: each refused, one line, nothing written."""
    cases = []
    other = result_set("langgraph-1.2.18", SILENT)
    other.cell = "langgraph-1.2.9"  # a 1.2.18 run copied under the 1.2.9 name
    cases.append((other, "holds cell 'langgraph-1.2.9', but its name says 'langgraph-1.2.18'"))
    drifted = result_set("langgraph-1.2.18", SILENT)
    drifted.environment = {
        **drifted.environment,
        "packages": {**drifted.environment["packages"], "langchain-core": "0.0.1"},
    }
    cases.append((drifted, "the run's packages differ from reference/locks/langgraph-1.2.18.txt: langchain-core 0.0.1"))
    relocked = result_set("langgraph-1.2.18", SILENT)
    relocked.environment = {**relocked.environment, "lock_sha256": "0" * 64}
    cases.append((relocked, "was made from another lock"))
    upgraded = result_set("langgraph-1.2.18", SILENT)
    upgraded.version = "1.2.20"
    cases.append((upgraded, "holds langgraph 1.2.20, but langgraph-1.2.18 is langgraph 1.2.18"))
    edited = result_set("langgraph-1.2.18", SILENT)
    edited.probes[PID] = ProbeInfo(PID, "t", Claim("c", "s"), (), "f.py", "f", "000000")
    cases.append((edited, "probe code changed since the run"))
    dirty = result_set("langgraph-1.2.18", SILENT)
    dirty.environment = {**dirty.environment, "suite_commit": "0123456789ab+dirty"}
    cases.append(
        (dirty, "its run was made from a work tree with uncommitted changes (suite_commit 0123456789ab+dirty)")
    )
    for run, message in cases:
        save(run, sandbox / "run" / "langgraph-1.2.18.json")
        assert cli.main(["bless", "langgraph-1.2.18", "--force"]) == 2
        assert message in one_line_error(capsys), message
        assert not (sandbox / "reference").exists()
    save(result_set("langgraph-1.2.18", SILENT), sandbox / "run" / "langgraph-1.2.18.json")
    (sandbox / "run" / "langgraph-1.2.18.error").write_text("interrupted by SIGTERM (previous result set kept)\n")
    assert cli.main(["bless", "langgraph-1.2.18", "--force"]) == 2
    assert "its last run did not finish (interrupted by SIGTERM" in one_line_error(capsys)


def test_bless_is_all_or_nothing_when_the_disk_fills_half_way(
    sandbox: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fanin.model import staging

    location = _declared_location()
    monkeypatch.setattr(catalog, "declared", lambda: [catalog.DeclaredProbe(PID, *location)])
    for cell in ("langgraph-1.2.9", "langgraph-1.2.18"):
        write(sandbox / "run", cell, SILENT)
        write(sandbox / "reference", cell, LOUD)
    before = {p.name: p.read_bytes() for p in (sandbox / "reference").iterdir()}
    real_stage, staged = staging._stage, []

    def stage_then_fill(path: Path, text: str) -> Path:
        if staged:
            raise OSError(28, "No space left on device", str(path))
        staged.append(path)
        return real_stage(path, text)

    monkeypatch.setattr(staging, "_stage", stage_then_fill)
    assert cli.main(["bless", "langgraph-1.2.9", "langgraph-1.2.18"]) == 3
    assert "No space left on device" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (sandbox / "reference").iterdir()} == before  # no temp file left either


def _declared_location() -> tuple[str, str, str]:
    today = next(p for p in catalog.declared() if p.id == PID)
    return today.file, today.function, today.source_hash


def test_written_files_have_normal_permissions(tmp_path: Path) -> None:
    import os

    from fanin.model.staging import write_all

    old = os.umask(0o022)
    try:
        write_all({tmp_path / "a.md": "a", tmp_path / "sub" / "b.json": "b"})
    finally:
        os.umask(old)
    assert {oct(p.stat().st_mode & 0o777) for p in (tmp_path / "a.md", tmp_path / "sub" / "b.json")} == {"0o644"}


def test_the_version_is_pyprojects() -> None:
    import tomllib

    import fanin
    from fanin.model.source import REPO_ROOT

    declared = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert fanin.__version__ == declared


def test_a_bless_killed_between_its_moves_is_completed_by_the_next_command(
    sandbox: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21 case 7: kill -9 after the first of bless's file moves; the next fanin command finishes the bless."""
    import os

    from fanin.model import staging

    location = _declared_location()
    monkeypatch.setattr(catalog, "declared", lambda: [catalog.DeclaredProbe(PID, *location)])
    for cell in ("langgraph-1.2.9", "langgraph-1.2.18"):
        write(sandbox / "run", cell, SILENT)
        write(sandbox / "reference", cell, LOUD)
    real_replace, moved = os.replace, []

    def replace_then_die(source: object, target: object) -> None:
        real_replace(source, target)  # type: ignore[arg-type]
        moved.append(target)
        if str(target).endswith(".json") and "reference" in str(target):
            os._exit(9)  # as kill -9 would: no rollback, no clean-up

    pid = os.fork()
    if pid == 0:  # the bless, in a child that dies half way through its moves
        monkeypatch.setattr(staging.os, "replace", replace_then_die)
        try:
            cli.main(["bless", "langgraph-1.2.9", "langgraph-1.2.18"])
        finally:
            os._exit(1)  # never reached if the kill happened
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    reference = [load(sandbox / "reference" / f"{c}.json") for c in ("langgraph-1.2.9", "langgraph-1.2.18")]
    assert [r.observations[PID].hazard for r in reference] == ["silent", "loud"]  # half blessed
    assert (sandbox / ".fanin-staging.json").exists()
    capsys.readouterr()

    assert cli.main(["cells"]) == 0  # any command: the bless is completed before anything reads the reference
    err = capsys.readouterr().err
    done = re.search(r"completed an interrupted write of (\d+) file\(s\) \((\d+) were left to move\)", err)
    assert done and int(done.group(2)) == int(done.group(1)) - 1, err  # all but the one moved before the kill
    reference = [load(sandbox / "reference" / f"{c}.json") for c in ("langgraph-1.2.9", "langgraph-1.2.18")]
    assert [r.observations[PID].hazard for r in reference] == ["silent", "silent"]
    assert (sandbox / "REPORT.md").exists() and (sandbox / "CHECKLIST.md").exists()
    left = [p.name for d in (sandbox, sandbox / "reference") for p in d.iterdir() if p.name.startswith(".")]
    assert left == []


def test_stray_staging_files_in_the_reference_are_reported(sandbox: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sandbox / "reference").mkdir()
    (sandbox / "reference" / ".langgraph-1.2.9.json.abc.tmp").write_text("half")
    assert cli.main(["cells"]) == 0
    assert "stray staging file(s) from an interrupted write" in capsys.readouterr().err


def test_a_reference_that_cannot_be_read_stops_its_cell_before_anything_runs(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30 §3: a corrupt reference (not JSON; JSON off its schema) was found only after the cell's venv and
    pytest ran. Now it is one line before either starts (exit 3, its marker says why); the other cells still run."""

    from fanin.model import markers
    from fanin.run import all_cells, node_cell

    monkeypatch.setattr(all_cells, "REPORTS", sandbox / "reports")
    reference = sandbox / "reference"
    reference.mkdir()
    broken, off_schema, fine = "langgraph-1.2.9", "adkjs-0.3.0", "langgraph-1.2.18"
    (reference / f"{broken}.json").write_text('{"schema": 2, "cell": "langgraph-1.2.9", "obs')
    body = json.loads((REAL_REFERENCE / f"{off_schema}.json").read_text())
    body["version"] = 3  # parses, and the model would read it: only the schema says a version is a string
    (reference / f"{off_schema}.json").write_text(json.dumps(body))
    (reference / f"{fine}.json").write_text((REAL_REFERENCE / f"{fine}.json").read_text())
    started: list[str] = []

    def stand_in(name: str, *args: object, **kwargs: object) -> object:
        started.append(name)
        raise FaninError("stand-in: nothing is installed in this test")

    monkeypatch.setattr(all_cells.venvs, "ensure", stand_in)
    monkeypatch.setattr(node_cell, "run_cell", lambda run, log: started.append(run.cell_id))
    assert cli.main(["probe", broken, off_schema, fine]) == 3
    out = capsys.readouterr().out
    assert started == [fine]  # the rest of the matrix ran (here: reached its install)
    for cell, why in ((broken, "not valid JSON"), (off_schema, "does not follow result-set.schema.json")):
        line = next(line for line in out.splitlines() if line.startswith(f"fanin: {cell}: "))
        assert f"NOT RUN: unusable reference: {reference / cell}.json: {why}" in line, line
        assert why in (markers.reason(sandbox / "reports" / "results" / f"{cell}.json") or "")
    assert "at /version: 3 is not of type string" in out


def test_an_oversized_result_set_is_refused_unread_naming_the_file_the_limit_and_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30 §3: a 200 MB set cost `report` 2.1 GB and a 200 MB page. The stated limit (16 MB a set, docs/
    ARCHITECTURE.md "Limits", ~40x the largest reference set) is checked before the file is read."""
    from fanin.model import results

    largest = max(p.stat().st_size for p in REAL_REFERENCE.glob("*.json"))
    assert largest * 20 < results.RESULT_SET_LIMIT  # well above the real data (measured: 0.42 MB)
    big = tmp_path / "langgraph-1.2.18.json"
    with big.open("w") as handle:  # a valid set, padded past the limit: only its size is wrong
        handle.write((REAL_REFERENCE / "langgraph-1.2.18.json").read_text().rstrip("\n"))
        handle.write(" " * (results.RESULT_SET_LIMIT + 1) + "\n")
    size = big.stat().st_size
    assert cli.main(["diff", "langgraph-1.2.9", str(big)]) == 2
    err = one_line_error(capsys)
    assert f"{big}: {size:,} bytes, over the limit of 16,000,000 bytes for one result set; refused unread" in err


def test_an_oversized_observation_is_refused_naming_it(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An observation over 1 MB of JSON (the largest real one is 18 KB) is refused wherever its set is read: here
    by `report`, which writes nothing."""
    from fanin.model import results

    reference = sandbox / "reference"
    reference.mkdir()
    write(reference, "langgraph-1.2.9", LOUD)
    huge = Observation("ok", {"final": "x" * results.OBSERVATION_LIMIT}, "huge", "a value of a million", "safe")
    write(reference, "langgraph-1.2.18", huge)
    out = sandbox.parent / "site"  # the sandbox's reference is its top directory: --out is never inside it
    assert cli.main(["report", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[-1].endswith("1 result set(s) cannot be read (listed above); nothing was written")
    length = len(json.dumps(huge.to_json()).encode())
    assert err[0] == (
        f"fanin: error: {reference / 'langgraph-1.2.18.json'}: observation {PID} is {length:,} bytes of JSON, over"
        " the limit of 1,000,000 bytes for one observation; record less in the probe"
    )
    assert not out.exists()


def test_every_directory_a_bless_stages_into_is_checked_for_strays(
    sandbox: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30 case 4: a bless killed while staging (before its journal) left staging files in probes/ and
    schema/ beside REPORT.md, which the next command never named. Every one it leaves is now counted by folder."""
    import os

    from fanin.model import staging

    location = _declared_location()
    monkeypatch.setattr(catalog, "declared", lambda: [catalog.DeclaredProbe(PID, *location)])
    for cell in ("langgraph-1.2.9", "langgraph-1.2.18"):
        write(sandbox / "run", cell, SILENT)
        write(sandbox / "reference", cell, LOUD)

    def die(journal: object, entries: object) -> None:
        os._exit(9)  # as kill -9 would, with every file staged and no journal yet

    pid = os.fork()
    if pid == 0:
        monkeypatch.setattr(staging, "_write_journal", die)
        try:
            cli.main(["bless", "langgraph-1.2.9", "langgraph-1.2.18"])
        finally:
            os._exit(1)  # never reached if the kill happened
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    left: dict[Path, int] = {}
    for stray in sandbox.rglob(".*.tmp"):
        left[stray.parent] = left.get(stray.parent, 0) + 1
    assert {sandbox / "probes", sandbox / "schema", sandbox / "reference", sandbox} <= set(left)
    capsys.readouterr()
    assert cli.main(["cells"]) == 0
    err = capsys.readouterr().err
    for directory, count in left.items():
        assert f"{count} in {directory} (" in err, err


def test_probes_lists_and_searches_the_catalogue_by_topic(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["probes", "--topic", "send", "empty"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("send — Send and map-reduce: ") and out[1].startswith("  langgraph/send/empty  [")
    assert all("empty" in line for line in out[1:]) and len(out) >= 3
    assert cli.main(["probes", "--topic", "jion"]) == 2
    assert "no topic 'jion' in reference/topics.toml; did you mean join?" in one_line_error(capsys)
    assert cli.main(["probes", "--json", "--framework", "google-adk", "--topic", "escalate"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {e["framework"] for e in listed} == {"adk"} and {e["at"] for e in listed} == {MATRIX.newest("adk").id}


def test_blessing_a_change_shows_each_rows_mitigation(sandbox: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31 §2: bless's table, like upgrade's, says each changed row's mitigation or why there is none."""
    write(sandbox / "reference", "langgraph-1.2.18", LOUD)
    write(sandbox / "run", "langgraph-1.2.18", SILENT)
    assert cli.main(["bless", "langgraph-1.2.18", "--force"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert table[0].split("|")[1:-1][-1].strip() == "mitigation", table[0]
    assert PID in table[2] and "no proven mitigation" in table[2], table[2]
