"""A probe's hash covers everything it runs, and nothing it does not."""

from pathlib import Path

from fanin.model.source import probe_source, probe_source_hash

MODULE = """
from kit import helper

LIMIT = 3


@probe("langgraph/x/one", title="t", claim=C)
def test_one(obs):
    obs.record(helper(LIMIT), label="l", detail="d", hazard="safe")


@probe("langgraph/x/two", title="t", claim=C)
def test_two(obs):
    obs.record(2, label="l", detail="d", hazard="safe")
"""


def suite(tmp_path: Path) -> Path:
    (tmp_path / "kit.py").write_text("def helper(n):\n    return n\n")
    path = tmp_path / "test_x.py"
    path.write_text(MODULE)
    return path


def test_the_reproducer_is_the_decorated_function(tmp_path: Path) -> None:
    text = probe_source(MODULE, "test_one")
    assert text.startswith('@probe("langgraph/x/one"') and "helper(LIMIT)" in text and "test_two" not in text


def test_editing_a_kit_or_a_module_constant_changes_the_hash(tmp_path: Path) -> None:
    path = suite(tmp_path)
    before = probe_source_hash(path, "test_one")
    (tmp_path / "kit.py").write_text("def helper(n):\n    return n + 1\n")
    after_kit = probe_source_hash(path, "test_one")
    path.write_text(MODULE.replace("LIMIT = 3", "LIMIT = 4"))
    after_constant = probe_source_hash(path, "test_one")
    assert len({before, after_kit, after_constant}) == 3


def test_editing_another_probe_leaves_the_hash_alone(tmp_path: Path) -> None:
    path = suite(tmp_path)
    before = probe_source_hash(path, "test_one")
    path.write_text(MODULE.replace("obs.record(2,", "obs.record(22,"))
    assert probe_source_hash(path, "test_one") == before
    assert probe_source_hash(path, "test_two") != before


def test_appending_a_probe_or_blank_lines_changes_no_other_hash(tmp_path: Path) -> None:
    path = suite(tmp_path)
    before = {name: probe_source_hash(path, name) for name in ("test_one", "test_two")}
    appended = MODULE.replace("\n\n@probe", "\n\n\n\n@probe") + (
        '\n\n@probe("langgraph/x/three", title="t", claim=C)\ndef test_three(obs):\n    obs.record(3, label="l", detail="d", hazard="safe")\n'
    )
    path.write_text(appended.replace("from kit import helper", "from kit import helper, other"))
    (tmp_path / "kit.py").write_text("def helper(n):\n    return n\n\n\ndef other():\n    return 0\n")
    assert {name: probe_source_hash(path, name) for name in ("test_one", "test_two")} == before


def test_the_hash_follows_kit_code_transitively_and_only_what_is_used(tmp_path: Path) -> None:
    path = suite(tmp_path)
    (tmp_path / "kit.py").write_text(
        "from gates import Gate\n\n\ndef helper(n):\n    return Gate(n)\n\n\ndef unused():\n    return 1\n"
    )
    (tmp_path / "gates.py").write_text("class Gate:\n    def __init__(self, n):\n        self.n = n\n")
    first = probe_source_hash(path, "test_one")
    (tmp_path / "kit.py").write_text((tmp_path / "kit.py").read_text().replace("return 1", "return 2"))
    assert probe_source_hash(path, "test_one") == first  # an unused kit function
    (tmp_path / "gates.py").write_text("class Gate:\n    def __init__(self, n):\n        self.n = n + 1\n")
    assert probe_source_hash(path, "test_one") != first  # a class the kit function uses


def test_the_hash_follows_a_kit_import_inside_the_probe_function(tmp_path: Path) -> None:
    path = tmp_path / "test_x.py"
    path.write_text(
        MODULE.replace("    obs.record(2,", "    from kit import helper as local\n    obs.record(local(2),")
    )
    (tmp_path / "kit.py").write_text("def helper(n):\n    return n\n")
    first = probe_source_hash(path, "test_two")
    (tmp_path / "kit.py").write_text("def helper(n):\n    return n + 1\n")
    assert probe_source_hash(path, "test_two") != first  # the kit function it imports where it runs


def test_what_runs_inside_a_cell_imports_on_python_310() -> None:
    """The plugin's own modules load in every cell's interpreter; Python 3.10 cells are in the matrix."""
    import subprocess

    from fanin.model.source import REPO_ROOT
    from fanin.run import pythons

    python = pythons.find("3.10")
    assert python, "Python 3.10 is part of the matrix; install it (pyenv) to run the 3.10 cells"
    code = (
        "import fanin.model.results, fanin.run.journal, fanin.model.compare, fanin.run.environment, fanin.model.source, fanin.model.staging, "
        "fanin.run.netblock, fanin.probe; fanin.run.environment.collect(None)"
    )
    done = subprocess.run(
        [python, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(REPO_ROOT)}
    )
    assert done.returncode == 0, done.stderr
