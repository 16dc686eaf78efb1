"""The harness↔cell contract (fanin.model.contract) is spelled once: no other module writes a variable's name."""

from __future__ import annotations

import ast
from pathlib import Path

from fanin.model import contract
from fanin.model.source import REPO_ROOT

# A reproducer is a standalone script for a user's machine: it cannot import fanin, so it spells its variable.
STANDALONE = {"fanin/versions/repro_obs.py"}


def _spelled(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in contract.VARIABLES
    ]


def test_every_contract_variable_is_spelled_only_in_the_contract() -> None:
    sources = [*REPO_ROOT.joinpath("fanin").rglob("*.py"), *REPO_ROOT.joinpath("suites").rglob("*.py")]
    sources += [REPO_ROOT / "noxfile.py", *REPO_ROOT.joinpath(".ci").glob("*.py")]
    elsewhere = {
        rel: names
        for path in sources
        if (rel := path.relative_to(REPO_ROOT).as_posix()) not in STANDALONE | {"fanin/model/contract.py"}
        and (names := _spelled(path))
    }
    assert elsewhere == {}, f"spell these through fanin.model.contract: {elsewhere}"


def test_the_contract_names_each_variable_once() -> None:
    assert len(set(contract.VARIABLES)) == len(contract.VARIABLES)
    assert all(name.startswith("FANIN_") for name in contract.VARIABLES)
