"""Run inside the environment that holds the user's graph: load it, let each framework's inspector look at it.

`python -m fanin.project.audit_inspect SUITES REGISTRY TARGET [INPUT_JSON]` prints one JSON object: the installed
version of each registered framework and the facts of every inspector that recognised the
target (suites/<framework>/audit.py). The harness never imports a framework; this script,
like a probe, runs where the framework is.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any


def load_target(spec: str) -> Any:
    """`path/to/file.py:ATTR` or `package.module:ATTR`."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise SystemExit(f"fanin: error: audit target {spec!r} is not FILE.py:ATTR or package.module:ATTR")
    if where.endswith(".py"):
        path = Path(where).resolve()
        if not path.is_file():
            raise SystemExit(f"fanin: error: {where}: no such file")
        sys.path.insert(0, str(path.parent))
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise SystemExit(f"fanin: error: {where} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def main() -> None:
    suites, registry, spec = Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
    given = json.loads(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None
    versions = {}
    for key, package in registry.items():
        try:
            versions[key] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    target = load_target(spec)
    seen = []
    for key in versions:
        inspector = suites / key / "audit.py"
        if not inspector.is_file():
            continue
        sys.path.insert(0, str(inspector.parent))
        module_spec = importlib.util.spec_from_file_location(f"fanin_audit_{key}", inspector)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        facts = module.inspect(target, given)
        if facts is not None:
            seen.append(facts)
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    print(
        json.dumps(
            {"versions": versions, "python": python, "inspected": seen, "kind": type(target).__name__}, default=str
        )
    )


if __name__ == "__main__":
    main()
