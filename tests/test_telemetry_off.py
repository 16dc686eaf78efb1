"""Frameworks that phone home are imported only with their telemetry off (issue 33: Haystack).

Haystack reads HAYSTACK_TELEMETRY_ENABLED once, at import, and otherwise sends usage events and writes a
user id to ~/.haystack. A cell loads suites/haystack/conftest.py before its import check; the adapter run
as a program (docs/ADAPTERS.md) imports hs_kit first. Both are checked against a stand-in `haystack` that
fails its import unless the variable is already off, so no framework is installed here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fanin.model.source import REPO_ROOT, SUITES

_STAND_IN = """
import os, sys
if os.environ.get("HAYSTACK_TELEMETRY_ENABLED") != "False":
    sys.exit("haystack imported with telemetry on")

class _Component:
    def __call__(self, cls):
        return cls
    def output_types(self, **types):
        return lambda fn: fn
    def set_input_types(self, *args, **kwargs):
        pass
    set_output_types = set_input_types

component = _Component()

class Pipeline:
    pass
"""


def _stand_in(root: Path) -> Path:
    package = root / "haystack"
    (package / "core" / "component").mkdir(parents=True)
    (package / "__init__.py").write_text(_STAND_IN)
    (package / "core" / "__init__.py").write_text("")
    (package / "core" / "component" / "__init__.py").write_text("")
    (package / "core" / "component" / "types.py").write_text("from typing import List as Variadic\n")
    return root


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HAYSTACK_TELEMETRY_ENABLED"}
    return {**env, "PYTHONPATH": os.pathsep.join([str(root), str(SUITES / "haystack"), str(SUITES), str(REPO_ROOT)])}


def test_the_haystack_adapter_run_as_a_program_turns_telemetry_off_before_haystack_imports(tmp_path: Path) -> None:
    root = _stand_in(tmp_path)
    done = subprocess.run(
        [sys.executable, str(SUITES / "haystack" / "scenario_adapter.py")],
        input='{"cmd": "stop"}\n',
        capture_output=True,
        text=True,
        env=_env(root),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_the_haystack_cells_conftest_turns_telemetry_off_before_the_import_check(tmp_path: Path) -> None:
    root = _stand_in(tmp_path)
    script = f"import runpy; runpy.run_path({str(SUITES / 'haystack' / 'conftest.py')!r}); import haystack"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=_env(root), timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_stand_in_refuses_an_import_with_telemetry_on(tmp_path: Path) -> None:
    root = _stand_in(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", "import haystack"], capture_output=True, text=True, env=_env(root), timeout=60
    )
    assert done.returncode != 0 and "telemetry on" in done.stderr


_CREWAI_STAND_IN = """
import json, os, sys
wanted = json.loads(os.environ["FANIN_T_WANTED"])
seen = {name: os.environ.get(name) for name in wanted}
if seen != wanted:
    sys.exit(f"crewai imported with {seen}")
"""


def test_the_crewai_kit_sets_the_registrys_switches_before_crewai_imports(tmp_path: Path) -> None:
    """A CrewAI cell gets its switches from matrix.toml's env (tests/test_registry_env.py); the adapter run as a
    program gets them from cw_kit, which must set the very same names and values before crewai imports."""
    import json

    from fanin.model import matrix

    wanted = matrix.load().frameworks["crewai"].env
    flow = tmp_path / "crewai" / "flow"
    flow.mkdir(parents=True)
    (tmp_path / "crewai" / "__init__.py").write_text(_CREWAI_STAND_IN)
    (flow / "__init__.py").write_text("")
    (flow / "flow.py").write_text("Flow = object\nand_ = listen = or_ = router = start = lambda *a, **k: None\n")
    env = {k: v for k, v in os.environ.items() if k not in dict(wanted)}
    env["FANIN_T_WANTED"] = json.dumps(dict(wanted))
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(SUITES / "crewai"), str(SUITES), str(REPO_ROOT)])
    done = subprocess.run([sys.executable, "-c", "import cw_kit"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert len(wanted) == 5
