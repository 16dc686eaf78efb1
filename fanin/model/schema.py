"""JSON Schemas of fanin's data, made from the model's own definitions, for tools that are not fanin.

Like a compatibility-data package, the published site carries its data (data/index.json, every
result set, the bisect findings) and a schema for each, so another tool can read them without
fanin. The schemas are built here from the same constants the model validates with (hazards,
outcomes, id patterns), rendered into reference/schema/, and a test keeps the committed files
equal to what this module makes and validates every committed file against them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fanin.model import results, scenarios
from fanin.model.results import (
    FIXED_OUTCOMES,
    HAZARDS,
    OBSERVATION_ID,
    PROBE_ID,
    RAISES,
    SCHEMA_VERSION,
    ResultFileError,
    ResultSet,
)

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://fanin.invalid/schema/"  # an identifier, not a place: the files travel with the data
FILES = {
    "result-set": "result-set.schema.json",
    "bisect": "bisect.schema.json",
    "index": "index.schema.json",
    "scenario": "scenario.schema.json",
    "adapter-protocol": "adapter-protocol.schema.json",
}

_OUTCOME = {
    "anyOf": [
        {"enum": sorted(FIXED_OUTCOMES)},
        {"type": "string", "pattern": "^" + RAISES.replace(":", ":") + r"[A-Za-z_][A-Za-z0-9_.]*$"},
    ]
}
_HAZARD = {"enum": list(HAZARDS)}
_VERSION = {"type": "string", "minLength": 1}
TURN_NAME = r"^([0-9]+\.)?" + scenarios.SLUG.pattern[1:]  # an order's entry: a branch, or `<run>.<branch>` (together)


def _observation() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["outcome", "value", "label", "detail", "hazard"],
        "properties": {
            "outcome": _OUTCOME,
            "value": {"description": "canonical JSON of what happened; compared exactly"},
            "label": {"type": "string", "description": "the short text of a matrix cell (wording)"},
            "detail": {"type": "string", "description": "one line beside it (wording)"},
            "hazard": _HAZARD,
        },
        "additionalProperties": False,
    }


def _probe() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["title", "claim", "source_hash"],
        "properties": {
            "title": {"type": "string"},
            "claim": {
                "type": "object",
                "required": ["text", "source"],
                "properties": {
                    "text": {"type": "string"},
                    "source": {"type": "string"},
                    "expect": {"type": ["object", "null"]},
                },
            },
            "sources": {"type": "array", "items": {"type": "string"}},
            "file": {"type": "string"},
            "function": {"type": "string"},
            "source_hash": {"type": "string", "pattern": "^[0-9a-f]{6,64}$"},
            "dimensions": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
            "repetition": {"type": "boolean"},
        },
    }


def result_set() -> dict[str, Any]:
    return {
        "$schema": DRAFT,
        "$id": BASE + FILES["result-set"],
        "title": "fanin result set: every observation of one cell, and the environment it was made in",
        "type": "object",
        "required": ["schema", "cell", "framework", "version", "environment", "probes", "observations"],
        "properties": {
            "schema": {"const": SCHEMA_VERSION},
            "cell": {"type": "string", "minLength": 1},
            "framework": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9_-]*$"},
            "version": _VERSION,
            "environment": {
                "type": "object",
                "description": "the packages installed, the lock and its hash, Python, network isolation, servers, date",
                "properties": {"packages": {"type": "object", "additionalProperties": {"type": "string"}}},
            },
            "probes": {
                "type": "object",
                "propertyNames": {"pattern": PROBE_ID.pattern},
                "additionalProperties": _probe(),
            },
            "observations": {
                "type": "object",
                "propertyNames": {
                    "pattern": OBSERVATION_ID.pattern.replace("(?P<probe>", "(").replace("(?P<variant>", "(")
                },
                "additionalProperties": _observation(),
            },
        },
    }


def bisect() -> dict[str, Any]:
    step = {
        "type": "object",
        "required": ["good", "bad", "first_changed", "observed"],
        "properties": {
            "good": _VERSION,
            "bad": _VERSION,
            "first_changed": {"type": ["string", "null"]},
            "observed": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string"},
                        "outcome": _OUTCOME,
                        # the framework's own dependencies as that run installed them (a companion may be the cause)
                        "packages": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                },
            },
            "skipped_yanked": {"type": "array", "items": _VERSION},
            # a companion bisect: good, bad and first_changed are releases of `companion`, the framework held at `at`
            "companion": {"type": "string"},
            "at": _VERSION,
            "with": {"type": "object", "additionalProperties": _VERSION},
            # a live-thread probe: the release whose interpreter wrote the store in every step (the good end);
            # first_changed null: with that one writer both ends resume alike, the reference's change is the writer's
            "writer": _VERSION,
        },
    }
    return {
        "$schema": DRAFT,
        "$id": BASE + FILES["bisect"],
        "title": "fanin bisect findings: for each observation id, the first release where it changed",
        "type": "object",
        "propertyNames": {"pattern": OBSERVATION_ID.pattern.replace("(?P<probe>", "(").replace("(?P<variant>", "(")},
        "additionalProperties": {"type": "array", "items": step},
    }


def index() -> dict[str, Any]:
    cell = {
        "type": "object",
        "required": ["id", "framework", "version", "python", "resolution", "results"],
        "properties": {
            "id": {"type": "string"},
            "framework": {"type": "string"},
            "version": _VERSION,
            "python": {"type": "string"},
            "resolution": {"enum": ["as-released", "current"]},
            "results": {"type": "string", "description": "the result set's path, relative to this file"},
        },
    }
    probe = {
        "type": "object",
        "required": ["id", "framework", "title", "source_hash"],
        "properties": {
            "id": {"type": "string", "pattern": PROBE_ID.pattern},
            "framework": {"type": "string"},
            "title": {"type": "string"},
            "source_hash": {"type": "string"},
            "file": {"type": "string"},
            "claim": {"type": "string"},
            "source": {"type": "string"},
        },
    }
    return {
        "$schema": DRAFT,
        "$id": BASE + FILES["index"],
        "title": "fanin data index: the frameworks, cells and probes of a published reference",
        "type": "object",
        "required": ["schema", "date", "frameworks", "cells", "probes", "bisect", "schemas"],
        "properties": {
            "schema": {"const": SCHEMA_VERSION},
            "date": {"type": "string"},
            "frameworks": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "required": ["package", "display"],
                    "properties": {"package": {"type": "string"}, "display": {"type": "string"}},
                },
            },
            "cells": {"type": "array", "items": cell},
            "probes": {"type": "array", "items": probe},
            "bisect": {"type": "string"},
            "schemas": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }


def _step() -> dict[str, Any]:
    write = {
        "type": "object",
        "required": ["key"],
        "properties": {"key": {"type": "string"}, "value": {}, "add": {"type": "integer"}},
        "oneOf": [{"required": ["value"]}, {"required": ["add"]}],
        "additionalProperties": False,
    }
    one = {
        "read": {"type": "string", "description": "read a [state] key (write.add writes it plus add)"},
        "write": write,
        "raise": {"type": "string", "minLength": 1, "description": "raise an error with this message"},
        "return": {"description": "the value the branch hands to the join"},
    }
    return {
        "oneOf": [
            {"const": scenarios.TURN, "description": "wait here for this branch's turn in the forced order"},
            {"const": scenarios.THEN, "description": "the steps after it run in the branch's next node, in sequence"},
            {
                "const": scenarios.ESCALATE,
                "description": "the branch's last step: ask the framework to stop the whole run",
            },
            {
                "const": scenarios.PAUSE,
                "description": "ask for human input the framework's way: the run stops there (resume answers it)",
            },
            {
                "const": scenarios.STALL,
                "description": "the branch's last step, after its turn: hand the turn on, then wait on a gate nobody opens",
            },
            *(
                {"type": "object", "required": [kind], "properties": {kind: body}, "additionalProperties": False}
                for kind, body in one.items()
            ),
            {
                "type": "object",
                "required": ["raise", "once"],
                "properties": {"raise": one["raise"], "once": {"const": True}},
                "additionalProperties": False,
                "description": "raise the first time the branch reaches this step only (it succeeds when re-run)",
            },
        ]
    }


def scenario() -> dict[str, Any]:
    """A scenario file (scenarios/*.toml, read as JSON); fanin.model.scenarios.validate checks the same and more."""
    slug = {"type": "string", "pattern": scenarios.SLUG.pattern}
    tests = {
        "type": "object",
        "minProperties": 1,
        "propertyNames": {"enum": list(scenarios.TESTS)},
    }
    rule = {
        "type": "object",
        "required": ["hazard", "label", "when"],
        "properties": {
            "hazard": {"enum": [h for h in HAZARDS if h != "n/a"]},
            "label": {"type": "string", "minLength": 1, "maxLength": 40},
            "when": {"type": "object", "minProperties": 1, "additionalProperties": tests},
        },
        "additionalProperties": False,
    }
    return {
        "$schema": DRAFT,
        "$id": BASE + FILES["scenario"],
        "title": "fanin scenario: a framework-neutral fan-in case, its forced orders and how the legend grades it",
        "type": "object",
        "required": ["id", "question", "source", "state", "orders", "observe", "branches", "join", "grade"],
        "properties": {
            "id": slug,
            "runs": {"enum": list(range(2, scenarios.RUNS_LIMIT + 1))},
            "thread": {"enum": ["same"], "description": "with runs: every run on one stored thread or session"},
            "together": {
                "enum": [True],
                "description": "with runs and thread: the runs at once, each through its own store object on one store",
            },
            "resume": {"const": True, "description": "the stopped run (paused or failed) resumed once from the store"},
            "same_as": {"type": "array", "items": {"type": "string", "pattern": scenarios.PROBE_ID.pattern}},
            "question": {"type": "string", "minLength": 1},
            "source": {"type": "string", "pattern": "^https://"},
            "state": {
                "type": "object",
                "minProperties": 1,
                "propertyNames": {"pattern": scenarios.KEY.pattern},
                "additionalProperties": {"type": ["string", "integer", "boolean"]},
            },
            "orders": {
                "type": "array",
                "minItems": 2,
                # a branch's name, or (together) `<run>.<branch>`
                "items": {"type": "array", "items": {"type": "string", "pattern": TURN_NAME}},
            },
            "observe": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "string",
                    "pattern": r"^(raises|raises\.from|returned|join\.saw|join\.runs|final\.[a-z][a-z0-9_]*"
                    r"|branch\.[a-z0-9-]+|ran\.[a-z0-9-]+|read\.[a-z0-9-]+\.[a-z][a-z0-9_]*)$",
                },
            },
            "branches": {
                "type": "array",
                "minItems": 2,
                "items": {
                    "type": "object",
                    "required": ["name", "do"],
                    "properties": {
                        "name": slug,
                        "do": {"type": "array", "minItems": 1, "items": _step()},
                        "selected": {
                            "type": "boolean",
                            "description": "false: the conditional fan-out never starts it",
                        },
                    },
                    "additionalProperties": False,
                },
            },
            "join": {
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"enum": list(scenarios.JOINS)}},
                "additionalProperties": False,
            },
            "grade": {"type": "array", "minItems": 1, "items": rule},
        },
        "additionalProperties": False,
    }


def adapter_protocol() -> dict[str, Any]:
    """Every message of the adapter protocol (docs/ADAPTERS.md), one JSON object a line each way."""
    primitive = {"enum": list(scenarios.PRIMITIVES)}
    return {
        "$schema": DRAFT,
        "$id": BASE + FILES["adapter-protocol"],
        "title": "fanin adapter protocol: the harness's commands and an adapter's answers",
        "$defs": {
            "start": {
                "type": "object",
                "required": ["cmd", "protocol"],
                "properties": {"cmd": {"const": "start"}, "protocol": {"const": scenarios.PROTOCOL}},
                "additionalProperties": False,
            },
            "run": {
                "type": "object",
                "required": ["cmd", "scenario", "order"],
                "properties": {
                    "cmd": {"const": "run"},
                    "scenario": {"type": "object", "description": f"the scenario as {FILES['scenario']} describes it"},
                    "order": {"type": "array", "items": {"type": "string"}},
                },
                "additionalProperties": False,
            },
            "stop": {
                "type": "object",
                "required": ["cmd"],
                "properties": {"cmd": {"const": "stop"}},
                "additionalProperties": False,
            },
            "capabilities": {
                "type": "object",
                "required": ["framework", "version", "protocol", "language", "supports"],
                "properties": {
                    "framework": {"type": "string", "minLength": 1},
                    "version": {"type": "string", "minLength": 1},
                    "protocol": {"const": scenarios.PROTOCOL},
                    "language": {"enum": list(scenarios.LANGUAGES)},
                    "supports": {"type": "array", "items": primitive},
                    "cannot": {
                        "type": "object",
                        "propertyNames": primitive,
                        "additionalProperties": {"type": "string"},
                    },
                },
                "additionalProperties": False,
            },
            "answer": {
                "type": "object",
                "properties": {
                    "observed": {
                        "type": "object",
                        "description": "exactly the scenario's observe fields",
                        "properties": {"raises": {"type": ["string", "null"]}},
                        "required": ["raises"],
                    },
                    "not_applicable": {"type": "string", "minLength": 1},
                    "vacuous": {"type": "string", "minLength": 1},
                    "error": {"type": "string", "minLength": 1},
                    "detail": {"type": "string"},
                    "took_s": {"type": "number"},
                },
                "oneOf": [{"required": [answer]} for answer in ("observed", "not_applicable", "vacuous", "error")],
                "additionalProperties": False,
            },
        },
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in ("start", "run", "stop", "capabilities", "answer")],
    }


def all_schemas() -> dict[str, dict[str, Any]]:
    """File name -> schema, as reference/schema/ holds them."""
    return {
        FILES["result-set"]: result_set(),
        FILES["bisect"]: bisect(),
        FILES["index"]: index(),
        FILES["scenario"]: scenario(),
        FILES["adapter-protocol"]: adapter_protocol(),
    }


# --- validation -------------------------------------------------------------
# fanin checks its own data against these schemas (a reference before its cell runs, everything
# `report --out` publishes) without a JSON Schema library: jsonschema is only a test dependency, and
# the schemas above use a handful of keywords, all of which this validator knows. tests/test_schema.py
# holds it to jsonschema's verdicts and fails if a schema gains a keyword it does not know.
ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$defs"})  # $defs: what a local $ref names
KEYWORDS = frozenset(
    {"type", "required", "properties", "additionalProperties", "propertyNames", "items", "pattern", "minLength"}
    | {"enum", "const", "anyOf", "oneOf", "minProperties", "minItems", "maxLength", "$ref"}
)
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),
    "number": (int, float),
}


Found = tuple[list[str], str] | None  # (the path, innermost key first, built only on the way out; what is wrong)
Checker = Callable[[Any], Found]


def problem(instance: Any, node: dict[str, Any] | str) -> str | None:
    """The first way `instance` breaks a schema (a node, or a FILES key): `at PATH: what`; None when it follows it.

    The first only: fanin's data is used whole or refused in one line.
    """
    checker = _checker(node) if isinstance(node, str) else _compile(node, node)
    found = checker(instance) if checker is not None else None
    return None if found is None else f"at /{'/'.join(reversed(found[0]))}: {found[1]}"


def _compile(node: dict[str, Any], root: dict[str, Any] | None = None) -> Checker | None:
    """The schema as one function (None: anything goes), so a result set's 60,000 nodes cost no dict lookups.
    `root` is the whole schema, which a local `$ref` (`#/$defs/NAME`) is read from."""
    root = node if root is None else root
    unknown = set(node) - KEYWORDS - ANNOTATIONS
    if unknown:
        raise ValueError(f"fanin.model.schema cannot check the keyword(s) {', '.join(sorted(unknown))}")
    checks: list[Checker] = []
    if "$ref" in node:
        target: Any = root
        for part in str(node["$ref"]).removeprefix("#/").split("/"):
            target = target[part]
        referred = _compile(target, root)
        if referred is not None:
            checks.append(referred)
    if "type" in node:
        names = [node["type"]] if isinstance(node["type"], str) else list(node["type"])
        wanted = tuple(t for name in names for t in _TYPES[name])
        exact = "integer" not in names and "number" not in names and "boolean" not in names

        def typed(instance: Any) -> Found:
            if isinstance(instance, wanted) and (exact or not isinstance(instance, bool) or "boolean" in names):
                return None
            return [], f"{instance!r:.60} is not of type {' or '.join(names)}"

        checks.append(typed)
    if "const" in node:
        const = node["const"]
        checks.append(lambda instance: None if instance == const else ([], f"{instance!r:.60} is not {const!r}"))
    if "enum" in node:
        enum = node["enum"]
        checks.append(lambda instance: None if instance in enum else ([], f"{instance!r:.60} is not one of {enum}"))
    if "oneOf" in node:
        alternatives = [_compile(sub, root) for sub in node["oneOf"]]

        def one_of(instance: Any) -> Found:
            matched = sum(1 for form in alternatives if form is None or form(instance) is None)
            return None if matched == 1 else ([], f"{instance!r:.60} matches {matched} of the forms, not exactly one")

        checks.append(one_of)
    if "minItems" in node:
        least = node["minItems"]
        checks.append(
            lambda instance: (
                None
                if not isinstance(instance, list) or len(instance) >= least
                else ([], f"{instance!r:.60} has fewer than {least} items")
            )
        )
    if "minProperties" in node:
        fewest = node["minProperties"]
        checks.append(
            lambda instance: (
                None
                if not isinstance(instance, dict) or len(instance) >= fewest
                else ([], f"{instance!r:.60} has fewer than {fewest} properties")
            )
        )
    if "anyOf" in node:
        forms = [_compile(sub, root) for sub in node["anyOf"]]

        def any_of(instance: Any) -> Found:
            if any(form is None or form(instance) is None for form in forms):
                return None
            return [], f"{instance!r:.60} matches none of the allowed forms"

        checks.append(any_of)
    if "minLength" in node or "maxLength" in node or "pattern" in node:
        shortest, pattern = node.get("minLength", 0), re.compile(node.get("pattern", ""))
        longest = node.get("maxLength")

        def text(instance: Any) -> Found:
            if not isinstance(instance, str):
                return None
            if len(instance) < shortest:
                return [], f"{instance!r:.60} is shorter than {shortest}"
            if longest is not None and len(instance) > longest:
                return [], f"{instance!r:.60} is longer than {longest}"
            if not pattern.search(instance):
                return [], f"{instance!r:.60} does not match {pattern.pattern!r}"
            return None

        checks.append(text)
    if "items" in node:
        item = _compile(node["items"], root)
        if item is not None:
            checks.append(functools.partial(_items, item))
    if {"required", "properties", "additionalProperties", "propertyNames"} & set(node):
        checks.append(functools.partial(_object, *_object_parts(node, root)))
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    return functools.partial(_all, tuple(checks))


def _all(checks: tuple[Checker, ...], instance: Any) -> Found:
    for one in checks:
        found = one(instance)
        if found is not None:
            return found
    return None


def _items(item: Checker, instance: Any) -> Found:
    if isinstance(instance, list):
        for index, value in enumerate(instance):
            found = item(value)
            if found is not None:
                found[0].append(str(index))
                return found
    return None


def _object_parts(
    node: dict[str, Any], root: dict[str, Any]
) -> tuple[tuple[str, ...], dict[str, Checker | None], Checker | None, bool, Checker | None]:
    extra = node.get("additionalProperties", True)
    names = node.get("propertyNames")
    return (
        tuple(node.get("required", ())),
        {key: _compile(sub, root) for key, sub in node.get("properties", {}).items()},
        _compile(extra, root) if isinstance(extra, dict) else None,
        extra is False,
        _compile(names, root) if names is not None else None,
    )


def _object(
    required: tuple[str, ...],
    properties: dict[str, Checker | None],
    extra: Checker | None,
    closed: bool,
    names: Checker | None,
    instance: Any,
) -> Found:
    if not isinstance(instance, dict):
        return None
    for key in required:
        if key not in instance:
            return [], f"{key!r} is a required property"
    for key, value in instance.items():
        if names is not None:
            wrong = names(key)
            if wrong is not None:
                return [key], f"the property name {wrong[1]}"
        if key in properties:
            sub = properties[key]
        elif closed:
            return [], f"{key!r} is not an allowed property"
        else:
            sub = extra
        if sub is not None:
            found = sub(value)
            if found is not None:
                found[0].append(key)
                return found
    return None


@functools.cache
def _checker(name: str) -> Checker | None:
    return _compile(all_schemas()[FILES[name]])  # once per process


def check(instance: Any, name: str, origin: str) -> None:
    """`instance` follows the schema `name` (a FILES key), or one line naming `origin` and the first problem."""
    first = problem(instance, name)
    if first is not None:
        raise ResultFileError(f"{origin}: does not follow {FILES[name]} ({first})")


def load(path: Path, expect_cell: str | None = None) -> ResultSet:
    """A result set that parses, is within the size limits, follows its schema and reads as the model's."""
    return results.load(path, expect_cell, check=lambda data, origin: check(data, "result-set", origin))
