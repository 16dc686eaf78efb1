"""Run inside the environment that holds the user's graph: load it, let each framework's inspector look at it.

`python -m fanin.project.audit_inspect SUITES REGISTRY TARGET [INPUT_JSON [RESULT [SECONDS [ARGS_JSON]]]]` writes one JSON
object (to the file RESULT, else to stdout): the installed version of each registered framework and the
facts of every inspector that recognised the target (suites/<framework>/audit.py). The harness never
imports a framework; this script, like a probe, runs where the framework is.

Nothing the user's graph starts outlives it: it is the reaper of its descendants' orphans
(fanin.run.lifetime, as a cell's pytest is), and once the result is written it kills and reaps them
all, a daemon that detached itself (double fork, setsid) included, then ends at once. The result goes
to a file, never a pipe such a daemon could hold open. The dry run runs in a thread, bounded by
SECONDS: a graph that never finishes leaves its static findings, with the dry run reported as not
finished within SECONDS.

A target that cannot be loaded is not a crash: the JSON says `{"load_error": {...}}` with the
exception, its causes and the import chain (the frames in the user's own files), and the
whole traceback, for the harness to show. With an input (a dry run), Python's sockets are
refused in-process too (fanin.run.netblock), and the attempts are listed, on top of the network
namespace the harness runs this in.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect as pyinspect
import json
import os
import sys
import sysconfig
import threading
import traceback
from pathlib import Path
from typing import Any

BAD_SPEC = 2  # exit code for a malformed target: the user's input, not their code
DRY_RUN_SECONDS = 60.0  # the dry run's bound when the harness gives none (audit passes its own)


class LoadError(Exception):
    """The target's module raised while being imported, or lacks the attribute."""


def package_root(path: Path) -> tuple[Path, str]:
    """Where to put on sys.path and the dotted module name, as pytest finds them: up the `__init__.py` chain.

    `app/agents/graph.py` with `app/__init__.py` and `app/agents/__init__.py` is `app.agents.graph`,
    imported with the folder above `app/` on sys.path, so `from .nodes import x` works.
    """
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    if path.name == "__init__.py":
        parts = parts[:-1]
    return folder, ".".join(parts)


def _bad_spec(message: str) -> SystemExit:
    sys.stderr.write(f"fanin: error: {message}\n")
    return SystemExit(BAD_SPEC)


def call_arguments(raw: str | None) -> tuple[list[Any], dict[str, Any]] | None:
    """`--args`: a JSON object (keyword arguments) or array (positional) for a factory target; None: no call."""
    if raw is None:
        return None
    try:
        given = json.loads(raw)
    except ValueError as exc:
        raise _bad_spec(f"--args is not JSON ({exc})") from None
    if isinstance(given, dict):
        return [], given
    if isinstance(given, list):
        return given, {}
    raise _bad_spec("--args must be a JSON object (keyword arguments) or array (positional arguments)")


def _called(obj: Any, spec: str, arguments: tuple[list[Any], dict[str, Any]]) -> Any:
    """A factory target's graph: `obj` called with the arguments (an async factory run to its end)."""
    if not callable(obj):
        raise _bad_spec(
            f"{spec}: {type(obj).__name__} is not callable, so it cannot be a factory (drop the () or --args)"
        )
    positional, keywords = arguments
    built = obj(*positional, **keywords)
    if pyinspect.isawaitable(built):
        import asyncio

        async def wait() -> Any:
            return await built

        built = asyncio.run(wait())
    return built


def load_target(spec: str, call_with: str | None = None) -> Any:
    """`path/to/file.py:ATTR` or `package.module:ATTR`; `ATTR()` (or `call_with`, --args) calls a factory."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise _bad_spec(f"audit target {spec!r} is not FILE.py:ATTR or package.module:ATTR")
    arguments = call_arguments(call_with)
    if attr.endswith("()"):
        attr = attr[:-2]
        arguments = arguments or ([], {})
    if not attr or not all(part.isidentifier() for part in attr.split(".")):
        raise _bad_spec(f"audit target {spec!r}: {attr!r} is not an attribute name (ATTR, ATTR() or a.b)")
    if where.endswith(".py"):
        path = Path(where).resolve()
        if not path.is_file():
            raise _bad_spec(f"{where}: no such file")
        root, name = package_root(path)
        sys.path.insert(0, str(root))
        if name == path.stem:
            module_spec = importlib.util.spec_from_file_location(name, path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(name)
    else:
        module = importlib.import_module(where)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise LoadError(f"{where} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj if arguments is None else _called(obj, spec, arguments)


def _library_dirs() -> tuple[str, ...]:
    found = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    found.add(str(Path(__file__).resolve().parent.parent))  # fanin itself
    return tuple(sorted(found))


def describe(exc: BaseException) -> dict[str, Any]:
    """The exception, its causes, the frames in the user's files (the import chain), and the whole traceback."""
    libraries = _library_dirs()
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [
        f for f in frames if not f.filename.startswith(libraries) and not f.filename.startswith("<frozen importlib")
    ]
    chain = [f"{f.filename}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for f in mine[-6:]]
    if frames and (not mine or frames[-1] is not mine[-1]):
        last = frames[-1]
        chain.append(f"raised in {last.filename}:{last.lineno} in {last.name}")
    causes: list[str] = []
    seen: BaseException | None = exc.__cause__ or exc.__context__
    while seen is not None and len(causes) < 5:
        causes.append(f"{type(seen).__name__}: {str(seen).strip()}")
        seen = seen.__cause__ or seen.__context__
    message = str(exc).strip()
    hint = None
    if "attempted relative import" in message or "no known parent package" in message:
        hint = (
            "the file uses package-relative imports: give the module form (package.module:ATTR)"
            " from the folder above the package, or add the missing __init__.py"
        )
    return {
        "type": type(exc).__name__,
        "message": message,
        "causes": causes,
        "chain": chain,
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        "hint": hint,
    }


def inspector(suites: Path, key: str) -> Any | None:
    """The framework's inspector module (suites/<key>/audit.py), loaded once; None where it has none."""
    path = suites / key / "audit.py"
    if not path.is_file():
        return None
    # Helpers the inspectors share (suites/audit_reading.py); last on the path, so they never shadow the user's modules.
    if str(suites) not in sys.path:
        sys.path.append(str(suites))
    name = f"fanin_audit_{key}"
    module = sys.modules.get(name)
    if module is None:
        sys.path.insert(0, str(path.parent))
        module_spec = importlib.util.spec_from_file_location(name, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_spec.name] = module  # dataclasses and typing look their module up by name
        module_spec.loader.exec_module(module)
    return module


def _inspect_all(suites: Path, versions: dict[str, str], target: Any, given: Any) -> list[dict[str, Any]]:
    """The facts of every installed framework's inspector that recognises the target."""
    seen = []
    for key in versions:
        module = inspector(suites, key)
        if module is None:
            continue
        facts = module.inspect(target, given)
        if facts is not None:
            seen.append(facts)
    return seen


def not_finished(seconds: float) -> str:
    """The dry run's error when the graph did not end within the bound (audit's Markdown shows it)."""
    return (
        f"did not finish within {seconds:g} s (the bound: --dry-run-seconds or FANIN_AUDIT_DRY_RUN_SECONDS); "
        "it was stopped, with everything it started"
    )


def _bounded(
    suites: Path, versions: dict[str, str], target: Any, given: Any, seconds: float, early: Any = None
) -> list[dict[str, Any]]:
    """The facts with the dry run, or, when the graph does not end within `seconds`, the static ones (no input)
    with the dry run marked as not finished. The static look comes first, before any of the user's code runs;
    `early(static)` keeps it, for the harness to show should the whole audit be stopped."""
    static = _inspect_all(suites, versions, target, None)
    if early is not None:
        early(static)
    outcome: dict[str, Any] = {}

    def dry_run() -> None:
        try:
            outcome["facts"] = _inspect_all(suites, versions, target, given)
        except BaseException as exc:  # raised again in the main thread
            outcome["error"] = exc

    worker = threading.Thread(target=dry_run, name="fanin-audit-dry-run", daemon=True)
    worker.start()
    worker.join(seconds)
    if "error" in outcome:
        raise outcome["error"]
    if "facts" in outcome:
        return list(outcome["facts"])
    for facts in static:
        if "no_dry_run" not in facts:
            facts["dry_run"] = {"writes": [], "by_step": {}, "error": not_finished(seconds), "unfinished": seconds}
    return static


def main() -> None:
    suites, registry, spec = Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
    given = json.loads(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None
    result = Path(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] else None
    seconds = float(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] else DRY_RUN_SECONDS
    call_with = sys.argv[7] if len(sys.argv) > 7 and sys.argv[7] else None
    from fanin.run import lifetime

    lifetime.adopt_orphans()  # a daemon the graph detaches comes back to this process, and ends with it
    try:
        answer = _answer(suites, registry, spec, given, seconds, call_with, result)
        text = json.dumps(answer, default=str)
        if result is None:
            print(text)
        else:
            result.write_text(text + "\n", encoding="utf-8")
    finally:
        lifetime.end_children()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # a dry run still looping in its thread must not hold the interpreter's exit


def static_path(result: Path) -> Path:
    """Where the static facts go as soon as they are read (the harness shows them if the audit is stopped)."""
    return result.with_name(result.name + ".static")


def _answer(
    suites: Path,
    registry: dict[str, str],
    spec: str,
    given: Any,
    seconds: float,
    call_with: str | None = None,
    result: Path | None = None,
) -> dict[str, Any]:
    versions = {}
    for key, package in registry.items():
        try:
            versions[key] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    attempts = None
    if given is not None:
        from fanin.run import netblock

        attempts = netblock.Attempts()
        netblock.install(attempts)
    try:
        target = load_target(spec, call_with)
    except SystemExit:
        raise
    except BaseException as exc:
        return {"versions": versions, "python": python, "load_error": describe(exc)}

    def answer(seen: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "versions": versions,
            "python": python,
            "inspected": seen,
            "kind": type(target).__name__,
            "network_attempts": sorted(set(attempts.seen)) if attempts is not None else None,
        }

    def early(static: list[dict[str, Any]]) -> None:
        if result is not None:
            static_path(result).write_text(json.dumps(answer(static), default=str) + "\n", encoding="utf-8")

    if given is None:
        return answer(_inspect_all(suites, versions, target, None))
    return answer(_bounded(suites, versions, target, given, seconds, early))


if __name__ == "__main__":
    main()
