"""`fanin repro`: a probe as one standalone script that reproduces the reference's observation.

The scripts of one probe of every family (topic) of every Python framework, of every deepagents
observation (its kit defines a model class the script must carry), and of the variants that need
the backends (SQLite, PostgreSQL from the harness's services), run in their framework's newest
cell's venv (built from its lock if missing, as `fanin audit --cell` does) with no fanin importable;
what they print must be the reference's behaviour (outcome, hazard, value).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from fanin.__main__ import main
from fanin.model import catalog, exits, matrix
from fanin.model.compare import harm
from fanin.model.errors import FaninError
from fanin.model.results import HAZARDS, NOT_APPLICABLE, canonical, load, normalize_message
from fanin.model.source import REPO_ROOT
from fanin.project import audit
from fanin.report import outputs
from fanin.run import services, venvs
from fanin.versions import repro, repro_obs

MATRIX = matrix.load()
# A scenario probe's reproducer is its adapter over the protocol (docs/ADAPTERS.md), not a standalone script.
# A live-thread probe needs two releases' environments: no one-file reproducer (tested below), so not among these.
TWO_RELEASES = {p.id for p in catalog.declared() if "obs.earlier_release()" in (REPO_ROOT / p.file).read_text()}
PYTHON_PROBES = [
    p for p in catalog.declared() if p.file.endswith(".py") and "/scenario/" not in p.id and p.id not in TWO_RELEASES
]
SCENARIO_PROBES = [p for p in catalog.declared() if p.file.endswith(".py") and "/scenario/" in p.id]
# One probe of every family of every Python framework: the first its suite declares.
FAMILIES: dict[str, str] = {}
for declared in PYTHON_PROBES:
    FAMILIES.setdefault(f"{declared.framework}/{declared.id.split('/')[1]}", declared.id)
# Variants: the async mode, the storage backends the kits build (lg_persist, adk_sessions), and every
# deepagents observation (six probes, each built on da_kit's ScriptedModel).
VARIANTS = [
    "langgraph/same-key/no-reducer[async]",
    "langgraph/resume/durability-modes[sqlite]",
    "langgraph/resume/durability-modes[postgres,async]",
    "adk/session/stale-result[sqlite]",
    "adk/session/stale-result[postgres]",
    *(
        observation_id
        for declared in PYTHON_PROBES
        if declared.framework == "deepagents"
        for observation_id in declared.observation_ids()
        if observation_id not in FAMILIES.values()
    ),
]
# A test may first install its framework's newest venv (Pythons; CrewAI's is 0.6-1 GB): minutes on empty caches and a
# loaded machine. The reproducer's own run stays bounded by execute's 120 s.
pytestmark = pytest.mark.timeout(480)
ANY_VERSION = "FANIN_REPRO_ANY_VERSION"  # the documented opt-in (repro_obs.ANY_VERSION_ENV)
# PEP 723's reference regular expression for a script's metadata block.
PEP_723 = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")


def metadata(text: str) -> dict:
    block = next(m for m in PEP_723.finditer(text) if m["type"] == "script")
    content = "".join(line[2:] if line.startswith("# ") else line[1:] for line in block["content"].splitlines(True))
    return tomllib.loads(content)


class Pythons(dict[str, str]):
    """The newest cell's interpreter of each framework, its venv installed when a test first asks for it: all twelve
    at once, in the first test's setup, took more than the 120 s a test has on a machine with empty caches."""

    def __missing__(self, key: str) -> str:
        self[key] = audit.python_of(MATRIX.newest(key))
        return self[key]


@pytest.fixture(scope="module")
def pythons() -> dict[str, str]:
    return Pythons()


@pytest.fixture(scope="module")
def postgres() -> Iterator[dict[str, str]]:
    """The harness's own server (pgserver is one of its dependencies): one that cannot start fails these tests."""
    with services.postgres() as environment:
        yield environment


def execute(
    text: str, python: str, where: Path, environment: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    script = where / "repro.py"
    script.write_text(text)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", services.POSTGRES_DSN, ANY_VERSION)}
    return subprocess.run(
        [python, str(script)],
        capture_output=True,
        text=True,
        cwd=where,
        env={**clean, **(environment or {})},
        timeout=120,
    )


def printed(done: subprocess.CompletedProcess[str]) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout[done.stdout.rindex("\n{\n") + 1 :] if "\n{\n" in done.stdout else done.stdout)


def run(observation_id: str, python: str, where: Path, environment: dict[str, str] | None = None) -> dict:
    return printed(execute(repro.script(observation_id, MATRIX), python, where, environment))


def reference_behaviour(observation_id: str, cell: matrix.Cell | None = None) -> tuple:
    cell = cell or MATRIX.newest(observation_id.split("/", 1)[0])
    observation = load(cell.reference_path).observations[observation_id]
    value = None if observation.outcome == NOT_APPLICABLE else observation.value
    return observation.outcome, observation.hazard, value


def printed_behaviour(observation: dict) -> tuple:
    value = None if observation["outcome"] == NOT_APPLICABLE else observation["value"]
    return observation["outcome"], observation["hazard"], value


@pytest.mark.parametrize("probe_id", sorted(FAMILIES.values()), ids=sorted(FAMILIES))
def test_a_family_reproducer_prints_the_reference_observation(
    probe_id: str, pythons: dict[str, str], tmp_path: Path
) -> None:
    observation = run(probe_id, pythons[probe_id.split("/", 1)[0]], tmp_path)
    assert observation["id"] == probe_id
    assert printed_behaviour(observation) == reference_behaviour(probe_id)


@pytest.mark.parametrize("observation_id", VARIANTS)
def test_a_variant_reproducer_prints_the_reference_observation(
    observation_id: str, pythons: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    environment = request.getfixturevalue("postgres") if "postgres" in observation_id else None
    observation = run(observation_id, pythons[observation_id.split("/", 1)[0]], tmp_path, environment)
    assert printed_behaviour(observation) == reference_behaviour(observation_id)


@pytest.mark.parametrize("declared", PYTHON_PROBES, ids=lambda p: p.id)
def test_every_python_probe_makes_a_self_contained_script(declared: catalog.DeclaredProbe) -> None:
    cell = MATRIX.newest(declared.framework)
    text = repro.script(declared.id, MATRIX)
    tree = ast.parse(text)  # it compiles
    imported = [
        name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for name in ([node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names])
    ]
    assert not [name for name in imported if name.split(".")[0] == "fanin"]
    suite_modules = {path.stem for path in (REPO_ROOT / "suites").rglob("*.py")}
    assert not set(imported) & suite_modules, "a kit is imported rather than inlined"
    assert f"{cell.framework.display} {cell.version} on Python {cell.python}" in text
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assert declared.function in defined and "observe" in defined
    # The version is checked before anything but the standard library is imported (the framework would be).
    (check,) = [
        n.lineno for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == repro.MISMATCH
    ]
    assert f'{repro.MISMATCH} = {repro.CHECK}("{cell.framework.package}", "{cell.version}", "{cell.id}")' in text
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno < check:
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            assert all(m.split(".")[0] in sys.stdlib_module_names for m in modules), (declared.id, modules)
    # The variables the cell runs with (matrix.toml's env: CrewAI's telemetry off) are set before the framework imports.
    others = [
        node.lineno
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and any(
            m.split(".")[0] not in sys.stdlib_module_names
            for m in ([node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names])
        )
    ]
    first_other = min(others, default=len(text.splitlines()) + 1)  # some import their framework in functions only
    setting = [n for n in tree.body if isinstance(n, ast.For) and n.lineno < first_other]
    if cell.env:
        (loop,) = setting
        assert isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Attribute)
        assert ast.literal_eval(loop.iter.func.value) == cell.env
    else:
        assert not setting


def test_the_script_block_pins_the_cells_framework_and_companions_to_its_lock() -> None:
    cell = MATRIX.newest("langgraph")
    meta = metadata(repro.script("langgraph/same-key/no-reducer", MATRIX))
    locked = venvs.pins(cell.lock_path, {"python_version": cell.python})
    assert meta["requires-python"] == f"=={cell.python}.*"
    assert meta["tool"]["uv"]["exclude-newer"] == cell.exclude_newer
    pinned = dict(re.match(r"([A-Za-z0-9_.-]+)(?:\[[^]]*\])?==(.+)", spec).groups() for spec in meta["dependencies"])  # type: ignore[union-attr]
    assert pinned["langgraph"] == cell.version
    assert set(pinned) == {"langgraph", *(re.split(r"\[", c)[0] for c in cell.framework.companions)}
    assert all(locked[canonicalize_name(name)] == version for name, version in pinned.items())
    assert "psycopg[binary]==" in " ".join(meta["dependencies"])  # extras kept


def test_an_older_cell_pins_its_own_versions_and_says_so() -> None:
    older = MATRIX.of("adk")[0]
    text = repro.script("adk/output-key/same-key", MATRIX, older)
    assert f'"google-adk=={older.version}"' in text and f"--cell {older.id}" in text


def test_the_observer_stand_in_reduces_to_what_the_probe_uses() -> None:
    text = repro.script("langgraph/same-key/no-reducer", MATRIX)
    assert "def require_same_step" in text and "def framework" in text
    assert "def postgres_dsn" not in text and "def need(" not in text and "def attempt" not in text
    session = repro.script("adk/session/stale-result[postgres]", MATRIX)
    assert "def postgres_dsn" in session and "def database_name" in session


def test_the_stand_in_canonicalises_as_fanin_does() -> None:
    value = {
        "set": {"b", "a", ("x", 1)},
        "tuple": (1, 2.5, None, True),
        "text": "at 0x7f3a2b1c4d5e, id 123e4567-e89b-12d3-a456-426614174000",
        "nested": [{"k": frozenset({3, 1})}],
    }
    assert repro_obs._plain(value) == canonical(value)
    message = "  took 1.5 s\n at 0xdeadbeef  "
    assert repro_obs._message(message) == normalize_message(message)


def test_the_stand_in_ranks_harm_as_fanin_does() -> None:
    assert {h: repro_obs.harm(h) for h in HAZARDS} == {h: harm(h) for h in HAZARDS}


def test_variants_are_chosen_by_id_or_by_values() -> None:
    by_id = repro.find("langgraph/resume/durability-modes[postgres,async]")[1]
    by_values = repro.find("langgraph/resume/durability-modes", "postgres,async")[1]
    assert by_id == by_values and by_id.observation_id == "langgraph/resume/durability-modes[postgres,async]"
    assert repro.find("langgraph/resume/durability-modes", "async")[1].suffix == "async"
    for bad in (("langgraph/same-key/no-reducer", "postgres"), ("langgraph/nope/nothing", None), ("Not An Id", None)):
        with pytest.raises(FaninError):
            repro.find(*bad)


def test_the_command_writes_the_script_or_refuses_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "repro.py"
    assert main(["repro", "langgraph/same-key/no-reducer", "--variant", "async", "--out", str(out)]) == 0
    assert out.read_text() == repro.script("langgraph/same-key/no-reducer[async]", MATRIX)
    assert main(["repro", "langgraph/same-key/no-reducer", "--cell", MATRIX.newest("adk").id]) == 2
    assert main(["repro", "langgraphjs/same-key/no-reducer"]) == 2
    err = capsys.readouterr().err
    assert "is a Node probe" in err and "is a langgraph probe" in err


def test_every_python_probe_section_names_its_reproducer_command() -> None:
    files, _ = outputs.reference(MATRIX)
    sections = "\n".join(text for path, text in files.items() if path.parent.name == "probes")  # probes/<fw>.md
    for declared in PYTHON_PROBES:
        assert f"`fanin repro {declared.id}`" in sections, declared.id
    assert "fanin repro langgraphjs/" not in sections


def test_a_postponed_annotation_is_quoted_only_where_it_names_what_is_not_yet_defined() -> None:
    text = (
        "class Model(Base):\n"
        "    steps: list[Any] = []  # “é”\n"
        '    def bind(self, né: Any = "→", *, later: dict[\n'
        "        str, Later\n"
        "    ] = None) -> Model:\n"
        "        return self\n"
    )
    out = repro._quote_annotations(text, {"Any", "list", "dict", "str", "Base"})
    assert "steps: list[Any] = []  # “é”" in out and 'né: Any = "→"' in out  # defined: left as written
    assert 'later: "dict[str, Later]" = None) -> "Model":' in out
    ast.parse(out)


# Two cells of one cheap framework: every 1.5.0 observation is n/a (its GraphBuilder needs pydantic_ai), 2.68.0's are not.
OLDER, NEWER = MATRIX.cell("pydantic_graph-1.5.0"), MATRIX.cell("pydantic_graph-2.68.0")
SWAPPED = "pydantic_graph/end/first-end-wins"


def test_a_reproducer_refuses_another_version_of_its_framework_in_one_line(tmp_path: Path) -> None:
    """Issue 30: the 1.5.0 script run where 2.68.0 is installed printed 2.68.0's observation (ok, silent; the cell
    observed n/a), exit 0. It says which version runs, refuses it (exit 3), and runs it only when asked, flagged."""
    text = repro.script(SWAPPED, MATRIX, OLDER)
    assert reference_behaviour(SWAPPED, OLDER) != reference_behaviour(SWAPPED, NEWER)  # the swap would show
    newer = audit.python_of(NEWER)
    done = execute(text, newer, tmp_path)
    assert done.returncode == exits.NOT_RUN, done.stderr[-3000:]
    assert done.stdout == ""
    running, refused = done.stderr.splitlines()  # the version first, then one line
    assert running == "# running pydantic-graph 2.68.0 (this reproduces 1.5.0, cell pydantic_graph-1.5.0)"
    assert refused.startswith("error: pydantic-graph 2.68.0 is running, but this reproduces pydantic-graph 1.5.0")
    assert f"{ANY_VERSION}=1" in refused
    assert f"any version but 1.5.0 exits\n# {exits.NOT_RUN} after one line ({ANY_VERSION}=1" in text  # the header

    anyway = printed(execute(text, newer, tmp_path, {ANY_VERSION: "1"}))
    assert next(iter(anyway)) == "version_mismatch"  # first in the JSON: not the reference's version
    assert anyway["version_mismatch"] == (
        "pydantic-graph 2.68.0 is running, but this reproduces pydantic-graph 1.5.0 (cell pydantic_graph-1.5.0)"
    )
    assert printed_behaviour(anyway) == reference_behaviour(SWAPPED, NEWER)

    assert (repro_obs.WRONG_VERSION_EXIT, repro_obs.ANY_VERSION_ENV) == (exits.NOT_RUN, ANY_VERSION)

    bare = execute(text, sys.executable, tmp_path)  # the harness has no framework at all
    assert bare.returncode == exits.NOT_RUN
    assert bare.stderr.splitlines()[0] == (
        "# running no pydantic-graph (not installed) (this reproduces 1.5.0, cell pydantic_graph-1.5.0)"
    )


def test_a_reproducer_under_its_own_version_says_so_and_prints_the_reference_observation(tmp_path: Path) -> None:
    done = execute(repro.script(SWAPPED, MATRIX, OLDER), audit.python_of(OLDER), tmp_path)
    observation = printed(done)
    assert "version_mismatch" not in observation
    assert printed_behaviour(observation) == reference_behaviour(SWAPPED, OLDER)
    assert done.stderr.splitlines()[0] == (
        "# running pydantic-graph 1.5.0 (this reproduces 1.5.0, cell pydantic_graph-1.5.0)"
    )


def test_the_readmes_sample_reproducer_is_what_repro_writes_today() -> None:
    """docs/RESULTS.md's sample script is trimmed where `…` says so; every other line is a line `fanin repro` writes now
    (its probe hash included): the sample quoted a hash and a header two changes old."""
    readme = (REPO_ROOT / "docs" / "RESULTS.md").read_text(encoding="utf-8")
    sample = readme.split("$ cat repro.py\n", 1)[1].split("$ uv run repro.py\n", 1)[0].splitlines()
    written = set(repro.script("langgraph/same-key/no-reducer", MATRIX).splitlines())
    stale = [line for line in sample if line.strip() not in ("…", "# …") and line not in written]
    assert len(sample) > 40 and stale == [], f"regenerate docs/RESULTS.md's sample (fanin repro …): {stale}"


@pytest.mark.parametrize("declared", SCENARIO_PROBES[:1], ids=lambda p: p.id)
def test_a_scenario_probe_names_its_adapter_instead_of_a_script(declared: catalog.DeclaredProbe) -> None:
    with pytest.raises(repro.ReproError, match="scenario probe: its reproducer is its adapter") as raised:
        repro.script(declared.id, MATRIX)
    assert f"{declared.framework}/scenario_adapter.py" in str(raised.value)


def test_an_openai_agents_reproducer_exports_no_trace(pythons: dict[str, str], tmp_path: Path) -> None:
    """A reproducer inlines the kit's definitions, not its module statements (set_tracing_disabled): the run's own
    config keeps tracing off, so no exporter starts (the SDK's says "skipping trace export" when no key is set)."""
    done = execute(repro.script("openai_agents/context/lost-update", MATRIX), pythons["openai_agents"], tmp_path)
    observation = printed(done)
    assert printed_behaviour(observation) == reference_behaviour("openai_agents/context/lost-update")
    assert "trace" not in done.stderr.lower(), done.stderr[-2000:]


def test_a_probe_that_resumes_an_earlier_releases_store_is_refused_in_one_line_naming_upgrade() -> None:
    assert {
        "langgraph/upgrade/live-thread",
        "agent_framework/upgrade/live-checkpoint",
        "adk/upgrade/live-session",
        "openai_agents/upgrade/live-state",
        "haystack/upgrade/live-snapshot",
        "strands/upgrade/live-session",
        "crewai/upgrade/live-flow",
    } <= TWO_RELEASES
    for probe_id in TWO_RELEASES:
        with pytest.raises(repro.ReproError) as refused:
            repro.script(probe_id, MATRIX)
        message = str(refused.value)
        package = MATRIX.frameworks[probe_id.split("/")[0]].package
        assert (
            "\n" not in message
            and "has no one-file reproducer" in message
            and f"fanin upgrade -- {package}==" in message
        ), message
