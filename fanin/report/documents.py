"""The documents a report is made of, registered once: where each is written, which renderer makes it, which outputs
hold it and its name in the site's navigation. The outputs write, the site's pages link and the links place exactly
what this table lists, so adding a page is one entry here plus its renderer.

A renderer is named as `module:function` (data, resolved when rendered: the renderers read their own file names
from here) and called `(report)`, or `(report, framework view)` for a document per framework (`{key}` in its file).
Compare pages (compare/<a>-<b>.md and .html) are made per pair of cells, not per report: only their folder is here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# The outputs a document is written into (fanin.report.outputs)
REFERENCE = "reference"  # the committed reference/ and reports/matrix.html beside it
RUN = "run"  # reports/run/, from a local run
BUNDLE = "bundle"  # `report --for ... --out DIR`: Markdown and HTML in one directory
SITE = "site"  # the published site, and each permanent copy of it (v/<tag>/)
SITE_ROOT = "site-root"  # the published site's root only (never in a permanent copy)

REPORT_MD = "REPORT.md"
PROBES_DIR = "probes"  # one Markdown file of probe sections per framework beside REPORT.md; the site's HTML pages
CHECKLIST_MD = "CHECKLIST.md"
MATRIX_HTML = "matrix.html"
INDEX_HTML = "index.html"
CHECKLIST_HTML = "checklist.html"
COMPARISON_HTML = "comparison.html"  # the questions asked of every framework, the Python twins
NOT_FOUND_HTML = "404.html"  # GitHub Pages serves it for any path the site lacks
COMPARE_DIR = "compare"
VERSIONS_DIR = "v"  # v/<tag>/: the permanent copy of the site at one reference commit
SCHEMA_DIR = "schema"  # the committed JSON Schemas of the result sets, beside REPORT.md (the site has its own copy)
PROBES_MD = f"{PROBES_DIR}/{{key}}.md"
FRAMEWORK_HTML = f"{PROBES_DIR}/{{key}}.html"


@dataclass(frozen=True)
class Document:
    """One document of a report: its file (`{key}` = one per framework with a probe), renderer and outputs."""

    file: str
    render: str | Callable[..., str]  # "module:function", or the function itself
    outputs: tuple[str, ...]
    title: str = ""  # its name in the site's navigation ("" = not listed; per framework, the framework's name)
    committed: bool = False  # part of the reference (reference/, links relative, never a base URL)

    @property
    def per_framework(self) -> bool:
        return "{key}" in self.file

    def at(self, key: str = "") -> str:
        """Its file, for one framework when there is one per framework (`probes/langgraph.md`)."""
        return self.file.format(key=key) if self.per_framework else self.file

    def renderer(self) -> Callable[..., str]:
        if callable(self.render):
            return self.render
        module, _, name = self.render.partition(":")
        found: Callable[..., str] = getattr(importlib.import_module(module), name)
        return found


DOCUMENTS: list[Document] = [
    Document(REPORT_MD, "fanin.report.markdown:report", (REFERENCE, RUN, BUNDLE), committed=True),
    Document(PROBES_MD, "fanin.report.markdown:probe_page", (REFERENCE, RUN, BUNDLE), committed=True),
    Document(CHECKLIST_MD, "fanin.report.checklist:checklist", (REFERENCE, BUNDLE), committed=True),
    Document(MATRIX_HTML, "fanin.report.html:page", (REFERENCE, RUN, BUNDLE)),
    # the site, in the order its navigation lists them
    Document(INDEX_HTML, "fanin.report.html_site:index", (SITE,), title="fanin"),
    Document(FRAMEWORK_HTML, "fanin.report.html_site:framework_page", (SITE,), title="{name}"),
    Document(COMPARISON_HTML, "fanin.report.html_site:comparison_page", (SITE,), title="comparison"),
    Document(CHECKLIST_HTML, "fanin.report.html_site:checklist_page", (SITE,), title="checklist"),
    Document(MATRIX_HTML, "fanin.report.html_site:forward_page", (SITE,)),  # where matrix.html#<probe> goes on
    Document(NOT_FOUND_HTML, "fanin.report.html_site:not_found_page", (SITE_ROOT,)),
]


def of(output: str) -> tuple[Document, ...]:
    """The documents an output writes, in the table's order."""
    return tuple(d for d in DOCUMENTS if output in d.outputs)


def probes_md(framework: str) -> str:
    """The document holding a framework's probe sections (`probes/langgraph.md`)."""
    return PROBES_MD.format(key=framework)


def framework_html(framework: str) -> str:
    """The site's page of one framework: its matrix and its probe sections (`probes/langgraph.html`)."""
    return FRAMEWORK_HTML.format(key=framework)


def navigation(frameworks: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The site's navigation, (file, name) in the table's order: a per-framework page once per (key, name)."""
    keyed = tuple(frameworks)
    found: list[tuple[str, str]] = []
    for document in of(SITE):
        if not document.title:
            continue
        if document.per_framework:
            found.extend((document.at(key), document.title.format(name=name)) for key, name in keyed)
        else:
            found.append((document.file, document.title))
    return tuple(found)
