"""The published site's data: an index, every result set and the bisect findings, each with its JSON Schema.

`report --out DIR` writes DIR/data/ beside the pages, so a published reference is data other
tools can consume without fanin (the way a compatibility-data package is): data/index.json
names the frameworks, cells and probes (ids, hashes, titles) and points at each cell's result
set under data/results/ and at data/bisect.json; data/schema/ holds the schemas they follow.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fanin.model import identity, schema
from fanin.model import matrix as paths
from fanin.model.matrix import Matrix
from fanin.model.results import SCHEMA_VERSION, ResultSet
from fanin.model.source import shown
from fanin.report import read

DATA = "data"


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def index(matrix: Matrix, sets: list[ResultSet]) -> dict[str, Any]:
    """The index of a reference: frameworks, the cells that have a result set, and each probe once."""
    cells = {c.id: c for c in matrix.cells}
    probes: dict[str, dict[str, Any]] = {}
    for rs in sets:
        for pid, info in rs.probes.items():
            probes.setdefault(
                pid,
                {
                    "id": pid,
                    "framework": rs.framework,
                    "title": info.title,
                    "source_hash": info.source_hash,
                    "file": info.file,
                    "claim": info.claim.text,
                    "source": info.claim.source,
                },
            )
    return {
        "schema": SCHEMA_VERSION,
        "date": max((str(rs.environment.get("date", "")) for rs in sets), default=""),
        "frameworks": {k: {"package": fw.package, "display": fw.display} for k, fw in matrix.frameworks.items()},
        "cells": [
            {
                "id": rs.cell,
                "framework": rs.framework,
                "version": rs.version,
                "python": cells[rs.cell].python if rs.cell in cells else "",
                "resolution": cells[rs.cell].resolution if rs.cell in cells else "current",
                "results": f"results/{rs.cell}.json",
            }
            for rs in sets
        ],
        "probes": [probes[pid] for pid in sorted(probes)],
        "bisect": "bisect.json",
        "schemas": {name: f"schema/{file}" for name, file in schema.FILES.items()},
    }


def files(matrix: Matrix, out: Path, source: Path | None = None) -> dict[Path, str]:
    """DIR/data/…: what `report --out DIR` publishes beside the pages, every file checked before any is written.

    Each result set must follow its schema and be what its name says (the cell, and the matrix
    cell's framework and version: fanin.model.identity); the bisect findings and the index must
    follow theirs. Anything else is one line naming the file and what is wrong, and nothing is
    published: a site's data is read by tools that trust the schema it ships.
    """
    source = source or paths.REFERENCE_RESULTS
    cells = {c.id: c for c in matrix.cells}
    sets: list[ResultSet] = []
    written: dict[Path, str] = {}
    for path in sorted(source.glob("*.json")):
        rs = schema.load(path, expect_cell=path.stem)
        if path.stem in cells:
            identity.check(rs, cells[path.stem], shown(path))
        sets.append(rs)
        written[out / DATA / "results" / path.name] = path.read_text(encoding="utf-8")
    bisect = paths.REFERENCE_RESULTS.parent / "bisect.json"
    findings = read.bisect_findings(bisect) if bisect.is_file() else {}
    schema.check(findings, "bisect", shown(bisect))
    written[out / DATA / "bisect.json"] = bisect.read_text(encoding="utf-8") if bisect.is_file() else "{}\n"
    published = index(matrix, sets)
    schema.check(published, "index", shown(out / DATA / "index.json"))
    written[out / DATA / "index.json"] = _dumps(published)
    written.update(schemas(out / DATA / "schema"))
    return written


def schemas(directory: Path) -> dict[Path, str]:
    """The JSON Schemas as files in `directory` (reference/schema/, or a published data/schema/)."""
    return {directory / name: _dumps(body) for name, body in schema.all_schemas().items()}
