"""`fanin repro PROBE_ID`: one probe as a standalone script, for a design review or an upstream bug report.

The script holds the probe function as it is in the suite, every module-level definition it runs
(found by `fanin.model.source.reached`, the walk of the hash, through the kits), and a stand-in for
fanin's `obs` reduced to what the probe uses (`fanin.versions.repro_obs`); it imports no fanin.
The definitions are inlined flat, each file's under a heading, and a kit the probe imports as a
module (`import lg_modes`, `lg_modes.invoke(...)`) becomes a namespace of the names read on it, so the
probe's text runs unchanged; a name two files bind differently is refused rather than guessed. A PEP 723 block pins the cell's
framework and companions to its lock and resolves the rest as of the cell's date, so `uv run
repro.py` runs it; it prints the observation as JSON (outcome, value, label, detail, hazard), and
its header says what the reference observed in that cell. Before it imports the framework it says which
version is installed and refuses another (`check_framework_version`, exit 3): run with python in some other
environment, it would print that version's observation as if it were the cell's.
"""

from __future__ import annotations

import ast
import builtins
import json
import sys
import textwrap
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from packaging.requirements import Requirement

from fanin.model import catalog, scenarios
from fanin.model.errors import FaninError
from fanin.model.matrix import MATRIX_FILE, Cell, Matrix
from fanin.model.names import canonicalize_name
from fanin.model.results import OBSERVATION_ID, Claim, ProbeInfo, ResultFileError, ResultSet, Variant, load
from fanin.model.source import REPO_ROOT, Definition, is_import, parse_file, reached, shown, support_module
from fanin.model.suggest import LIST_PROBES, did_you_mean
from fanin.run.venvs import pins

STAND_IN = Path(__file__).with_name("repro_obs.py")
# What the probe files import from fanin; the stand-in defines each of them (Observer trimmed).
FANIN_NAMES = ("Claim", "Observer", "harm", "probe")
IMPORTED = Path("<an import line>")  # imports bind names too: the same line from two files is one binding
ALWAYS = ("__init__", "record")  # the runner reads `obs.observation`, which `record` sets
CHECK = "check_framework_version"  # the stand-in's check, run before the framework is imported
MISMATCH = "VERSION_MISMATCH"  # what it returns, handed to `observe` for the JSON


class ReproError(FaninError):
    """The probe cannot be written out standalone (an unknown id or variant, a name bound twice)."""


@lru_cache(maxsize=1)
def _declared() -> tuple[catalog.DeclaredProbe, ...]:
    return tuple(catalog.declared())


@lru_cache(maxsize=8)
def _reference_set(path: Path, stamp: int, cell_id: str) -> ResultSet:
    return load(path, expect_cell=cell_id)


def find(probe_id: str, variant: str | None = None) -> tuple[catalog.DeclaredProbe, Variant]:
    """The declared probe and the variant: `id[postgres,async]`, or `id` with `variant="postgres,async"`."""
    match = OBSERVATION_ID.match(probe_id)
    if not match:
        raise ReproError(f"{probe_id!r} is not a probe id (framework/topic/case, optionally [variant])")
    if match["variant"] and variant:
        raise ReproError(f"{probe_id} names its variant already; leave out --variant {variant}")
    found = next((p for p in _declared() if p.id == match["probe"]), None)
    if found is None:
        known = [p.id for p in _declared()]
        raise ReproError(f"no probe {match['probe']!r} in suites/{did_you_mean(match['probe'], known, LIST_PROBES)}")
    if not found.file.endswith(".py"):
        raise ReproError(f"{found.id} is a Node probe: its reproducer is {found.file} with the suite's kit.mjs")
    if scenarios.scenario_id(found.id) is not None:
        adapter = Path(found.file).with_name("scenario_adapter.py")
        raise ReproError(
            f"{found.id} is a scenario probe: its reproducer is its adapter, run over the protocol"
            f" (docs/ADAPTERS.md): PYTHONPATH=suites:. python {adapter} with scenarios/{scenarios.scenario_id(found.id)}.toml"
        )
    info = ProbeInfo(found.id, "", Claim("", ""), dimensions=found.dimensions)
    wanted = set(filter(None, (match["variant"] or variant or "").split(",")))
    for candidate in info.variants():
        values = {value for _, value in candidate.values}
        if wanted <= values and set(candidate.suffix.split(",")) - {""} <= wanted:
            return found, candidate
    raise ReproError(
        f"{found.id} has no variant {','.join(sorted(wanted))}; it has {', '.join(info.observation_ids())}"
    )


def _marker_environment(cell: Cell) -> dict[str, str]:
    return {
        "python_version": cell.python,
        "python_full_version": f"{cell.python}.0",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "platform_machine": "x86_64",
    }


def requirements(cell: Cell) -> list[str]:
    """The framework and its companions, each pinned to the version in the cell's lock (extras kept)."""
    locked = pins(cell.lock_path, _marker_environment(cell))
    pinned = []
    for spec in (cell.framework.package, *cell.framework.companions):
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        if name not in locked:
            raise ReproError(f"{shown(cell.lock_path)} has no {requirement.name}; relock the cell")
        extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
        pinned.append(f"{requirement.name}{extras}=={locked[name]}")
    return pinned


def _inline_kit_imports(text: str, where: Path) -> str:
    """`from gates import ThreadTurns` inside a function: the definition is inlined above, so the line is a `pass`."""
    lines = text.splitlines()
    for node in ast.walk(ast.parse(textwrap.dedent(text))):
        if isinstance(node, ast.ImportFrom) and node.col_offset and node.module and support_module(node.module, where):
            first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
            indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
            said = " ".join(line.strip() for line in lines[first : last + 1])
            lines[first : last + 1] = [f"{indent}pass  # {said}: inlined above"] + [""] * (last - first)
    return "\n".join(line for line in lines) + "\n"


def _postponed(where: Path) -> bool:
    return "from __future__ import annotations" in parse_file(where).lines


def _quote_annotations(text: str, bound: set[str]) -> str:
    """`text`'s annotations that name something not yet `bound` where the script defines it, quoted as
    PEP 563 would: code from a file with `from __future__ import annotations`, inlined into a script
    without it, evaluates its annotations at definition, and `-> ScriptedModel` inside class
    ScriptedModel (or a name defined further down) would raise NameError. The others stay as written."""
    tree = ast.parse(text)  # a module-level statement, never indented
    annotations: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
    unbound = [a for a in annotations if {n.id for n in ast.walk(a) if isinstance(n, ast.Name)} - bound]
    lines = [line.encode("utf-8") for line in text.split("\n")]  # ast's columns count UTF-8 bytes
    for a in sorted(unbound, key=lambda a: (a.lineno, a.col_offset), reverse=True):
        first, last = a.lineno - 1, (a.end_lineno or a.lineno) - 1
        said = ast.unparse(a)
        quoted = f'"{said}"' if '"' not in said and "\\" not in said else repr(said)
        lines[first : last + 1] = [
            lines[first][: a.col_offset] + quoted.encode() + lines[last][a.end_col_offset or 0 :]
        ]
    return "\n".join(line.decode("utf-8") for line in lines)


def _bound(where: Path, definition: Definition) -> list[str]:
    return [name for name, d in parse_file(where).bindings.items() if d is definition]


def _segment(where: Path, definition: Definition) -> str:
    first, last = definition.span
    return "\n".join(parse_file(where).lines[first - 1 : last]) + "\n"


def _observer(used: set[str]) -> str:
    """The stand-in's Observer with only the methods and properties the probe reaches (and theirs)."""
    tree = ast.parse(STAND_IN.read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Observer")
    members = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    keep = set(ALWAYS) | (used & set(members))
    pending = list(keep)
    while pending:
        for child in ast.walk(members[pending.pop()]):
            if (
                isinstance(child, ast.Attribute)
                and isinstance(child.value, ast.Name)
                and child.value.id == "self"
                and child.attr in members
                and child.attr not in keep
            ):
                keep.add(child.attr)
                pending.append(child.attr)
    lines = parse_file(STAND_IN).lines
    first_member = min(min([n.lineno, *(d.lineno for d in n.decorator_list)]) for n in members.values())
    parts = ["\n".join(lines[cls.lineno - 1 : first_member - 1]).rstrip() + "\n"]
    for name, node in members.items():
        if name in keep:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            parts.append("\n".join(lines[first - 1 : node.end_lineno or node.lineno]) + "\n")
    return "\n".join(parts)


def _stand_in_constant(name: str) -> object:
    """A constant of the stand-in (the check's exit code, its opt-in variable), for the header: one definition."""
    statement = ast.parse(parse_file(STAND_IN).bindings[name].text).body[0]
    assert isinstance(statement, ast.Assign)
    return ast.literal_eval(statement.value)


def _version_check(imports: dict[str, None], owner: dict[str, tuple[Path, str]], cell: Cell) -> list[str]:
    """The check and what it reads of the stand-in (its imports go to `imports`), then its call."""
    check = parse_file(STAND_IN).function(CHECK)
    reached_by, _ = reached(STAND_IN, check)
    texts: list[tuple[Definition, str]] = []
    for _, definition in reached_by:
        if is_import(definition):
            imports.setdefault(definition.text.strip(), None)
        else:
            texts.append((definition, _segment(STAND_IN, definition)))
    for name in [CHECK, MISMATCH, *(n for d, _ in texts for n in _bound(STAND_IN, d))]:
        if name in owner:
            raise ReproError(f"{name} is bound in {shown(owner[name][0])} and by the stand-in's version check")
    distribution = Requirement(cell.framework.package).name
    call = f"{MISMATCH} = {CHECK}({json.dumps(distribution)}, {json.dumps(cell.version)}, {json.dumps(cell.id)})"
    return [
        f"# --- which {distribution} runs, checked before it is imported ({shown(STAND_IN)}) ---",
        "",
        *_statements([*(text for _, text in sorted(texts, key=lambda item: item[0].span)), check]),
        call,
    ]


def _environment(cell: Cell, imports: dict[str, None]) -> list[str]:
    """The variables the cell's probes run with (matrix.toml's `env`), set before the framework is imported.

    Without them a pasted reproducer is not the cell's run: CrewAI's telemetry, for one, exports spans to its
    servers at exit (and waits 10 s on a machine that cannot reach them). A variable the user set wins."""
    if not cell.env:
        return []
    imports.setdefault("import os", None)
    pairs = "".join(f"    {json.dumps(name)}: {json.dumps(value)},\n" for name, value in sorted(cell.env.items()))
    return [
        f"# --- what cell {cell.id} runs with ({shown(MATRIX_FILE)}'s env), before {cell.framework.display} imports ---",
        "",
        "for _name, _value in {",
        *pairs.rstrip("\n").split("\n"),
        "}.items():",
        "    os.environ.setdefault(_name, _value)",
        "",
        "",
    ]


def _reference(cell: Cell, observation_id: str) -> list[str]:
    try:
        result_set = _reference_set(cell.reference_path, cell.reference_path.stat().st_mtime_ns, cell.id)
    except (ResultFileError, OSError):
        return [f"# The reference holds no result set for {cell.id}."]
    observation = result_set.observations.get(observation_id)
    if observation is None:
        return [f"# {shown(cell.reference_path)} holds no observation {observation_id}."]
    said = (
        f"Observed in the reference ({shown(cell.reference_path)}): outcome {observation.outcome},"
        f" hazard {observation.hazard}: {observation.detail}"
    )
    return [f"# {line}" for line in textwrap.wrap(said, 98)]


def script(probe_id: str, matrix: Matrix, cell: Cell | None = None, variant: str | None = None) -> str:
    """The standalone reproducer of one observation, in `cell` (default: its framework's newest)."""
    declared, chosen = find(probe_id, variant)
    cell = cell or matrix.newest(declared.framework)
    if cell.framework.key != declared.framework:
        raise ReproError(f"{declared.id} is a {declared.framework} probe; {cell.id} is a {cell.framework.key} cell")
    path = REPO_ROOT / declared.file
    probe_file = parse_file(path)
    function = probe_file.function(declared.function)
    definitions, aliases = reached(path, function)
    function = _inline_kit_imports(function, path)
    future = _postponed(path)  # the script's own `from __future__ import annotations`, as the probe file's

    imports: dict[str, None] = {}
    sections: dict[Path, list[tuple[Definition, str]]] = {}
    owner: dict[str, tuple[Path, str]] = {}  # name -> (file, text) that binds it, to refuse a clash
    fanin_names: set[str] = set()
    obs_used = _obs_attributes(function)
    if "earlier_release" in obs_used:
        raise ReproError(
            f"{declared.id} resumes a store an earlier release wrote, so it needs two releases' environments and has"
            f" no one-file reproducer: `fanin upgrade -- {cell.framework.package}==<new> --from <old>` runs it"
        )

    def bind(name: str, where: Path, text: str) -> None:
        if owner.setdefault(name, (where, text)) != (where, text):
            other = shown(owner[name][0])
            raise ReproError(f"{name} is bound both in {other} and in {shown(where)}: cannot inline them side by side")

    for where, definition in definitions:
        if is_import(definition):
            module = definition.imports[0][0] if definition.imports else ""
            if module.split(".")[0] == "fanin":
                fanin_names.update(_bound(where, definition))
            else:
                imports.setdefault(definition.text.strip(), None)
                for name in _bound(where, definition):
                    bind(name, IMPORTED, definition.text.strip())
            continue
        text = _inline_kit_imports(_segment(where, definition), where)
        obs_used |= _obs_attributes(text)
        for name in _bound(where, definition):
            bind(name, where, text)
        sections.setdefault(where, []).append((definition, text))
    namespaces: dict[Path, list[str]] = {}  # after a kit's definitions: `lg_modes = SimpleNamespace(...)`
    for (_, alias), (kit, attributes) in sorted(aliases.items(), key=lambda item: item[0][1]):
        line = f"{alias} = SimpleNamespace({', '.join(f'{name}={name}' for name in sorted(attributes))})"
        bind(alias, kit, line)
        if line not in namespaces.setdefault(kit, []):
            namespaces[kit].append(line)
    if namespaces:
        imports.setdefault("from types import SimpleNamespace", None)
    bind(declared.function, path, function)

    # The stand-in: what the probe file takes from fanin (Observer trimmed to what is used), and the runner.
    observer = _observer(obs_used)
    observe = parse_file(STAND_IN).function("observe")
    wanted = "\n".join(sorted(fanin_names - {"Observer"}))
    stand_in, _ = reached(STAND_IN, f"{wanted}\n{observer}\n{observe}")
    helpers: list[tuple[Definition, str]] = []
    for _, definition in stand_in:
        if is_import(definition):
            imports.setdefault(definition.text.strip(), None)
            continue
        if "Observer" in _bound(STAND_IN, definition):
            continue
        helpers.append((definition, _segment(STAND_IN, definition)))
        for name in _bound(STAND_IN, definition):
            if name in owner:
                raise ReproError(f"{name} is bound in {shown(owner[name][0])} and by the stand-in for obs")
    version_check = _version_check(imports, owner, cell)
    environment = _environment(cell, imports)
    distribution = Requirement(cell.framework.package).name
    opt_in, exit_code = _stand_in_constant("ANY_VERSION_ENV"), _stand_in_constant("WRONG_VERSION_EXIT")

    values = dict(chosen.values)
    arguments = "".join(f", {name}={json.dumps(value)}" for name, value in values.items())
    python = cell.python
    option = "" if cell == matrix.newest(declared.framework) else f" --cell {cell.id}"
    out = [
        "# /// script",
        f'# requires-python = "=={python}.*"',
        "# dependencies = [",
        *(f'#     "{requirement}",' for requirement in requirements(cell)),
        "# ]",
        "# [tool.uv]",
        f'# exclude-newer = "{cell.exclude_newer}"',
        "# ///",
        f"# {chosen.observation_id}: a standalone reproducer of this fanin probe, written by",
        f"# `fanin repro {chosen.observation_id}{option}` from {declared.file} (probe hash {declared.source_hash}).",
        f"# {cell.framework.display} {cell.version} on Python {python} (cell {cell.id}): the framework and its",
        f"# companions as locked in {shown(cell.lock_path)}, the rest as of {cell.exclude_newer}.",
        "# Run it with `uv run <this file>` (or with python where those are installed);",
        "# it prints the observation as JSON.",
        f"# It says first (on stderr) which {distribution} is installed; any version but {cell.version} exits",
        f"# {exit_code} after one line ({opt_in}=1 runs it anyway, flagged in the JSON as version_mismatch).",
        *_reference(cell, chosen.observation_id),
        "",
    ]
    if future:
        out += ["from __future__ import annotations", ""]
    standard, others = _import_block(imports)  # the framework's imports after the check: never under another version
    out += [*standard, "", "", *version_check, "", ""] if standard else [*version_check, "", ""]
    out += environment
    out += [*others, "", ""] if others else []
    out += [f"# --- fanin's `obs`, reduced to what this probe uses ({shown(STAND_IN)}) ---", ""]
    out += _statements(text for _, text in sorted(helpers, key=lambda item: item[0].span))
    out += [observer.rstrip(), "", "", observe.rstrip(), "", ""]
    # What is bound when a definition runs: builtins, the imports and the stand-in above, the definitions before it.
    bound = set(dir(builtins)) | {name for name, (where, _) in owner.items() if where == IMPORTED}
    bound |= {name for definition, _ in helpers for name in _bound(STAND_IN, definition)} | {"Observer", "observe"}
    for where in sorted(sections, key=lambda p: (p == path, p.parent != REPO_ROOT / "suites", str(p))):
        out += [f"# --- {shown(where)} ---", ""]
        texts = []
        for definition, text in sorted(sections[where], key=lambda item: item[0].span):
            texts.append(_quote_annotations(text, bound) if _postponed(where) and not future else text)
            bound.update(_bound(where, definition))
        out += _statements(texts)
        bound.update(alias for (_, alias), (kit, _) in aliases.items() if kit == where)
        if where in namespaces:
            out += [f"# `import {where.stem}` as the code below uses it", *namespaces[where], "", ""]
    if path not in sections:
        out += [f"# --- {shown(path)} ---", ""]
    out += [function.rstrip(), "", ""]
    out += [
        'if __name__ == "__main__":',
        f"    observe({declared.function}, Observer({json.dumps(chosen.observation_id)}{arguments}), {MISMATCH})",
    ]
    return "\n".join(out) + "\n"


def _statements(texts: Iterable[str]) -> list[str]:
    """Module-level statements as PEP 8 spaces them: two blank lines around a def or class, none between constants."""
    out: list[str] = []
    simple_before = False
    for text in texts:
        simple = not text.lstrip().startswith(("def ", "async def ", "class ", "@"))
        if out and simple and simple_before:
            out = out[:-2]
        out += [text.rstrip(), "", ""]
        simple_before = simple
    return out


def _obs_attributes(text: str) -> set[str]:
    """The `obs.<name>` a piece of code reads (the kits take the observer as `obs` too)."""
    tree = ast.parse(text)
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "obs"
    }


def _import_block(lines: dict[str, None]) -> tuple[list[str], list[str]]:
    """One-name import lines merged per module: `import x` lines first, then `from x import a, b`, alphabetical;
    the standard library's, then the others' (after the version check: they import the framework)."""
    plain: set[str] = set()
    names: dict[str, list[str]] = {}
    for line in lines:
        node = ast.parse(line).body[0]
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                shown_as = f"{alias.name} as {alias.asname}" if alias.asname else alias.name
                if shown_as not in names.setdefault(node.module or "", []):
                    names[node.module or ""].append(shown_as)
        else:
            plain.add(line)
    lines_of = [(line.split()[1], line) for line in sorted(plain)]
    lines_of += [(module, f"from {module} import {', '.join(sorted(names[module]))}") for module in sorted(names)]
    standard = [line for module, line in lines_of if module.split(".")[0] in sys.stdlib_module_names]
    others = [line for module, line in lines_of if module.split(".")[0] not in sys.stdlib_module_names]
    return standard, others
