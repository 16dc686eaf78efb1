"""The documents a report is made of, registered once: where each is written, which renderer makes it, which outputs
hold it and its name in the site's navigation. The outputs write, the site's pages link and the links place exactly
what this table lists, so adding a page is one entry here plus its renderer.

A renderer is named as `module:function` (data, resolved when rendered: the renderers read their own file names
from here) and called `(report)`, or `(report, framework view)` for a document per framework (`{key}` in its file),
or `(report, instance)` for a document whose instances its `each` names (a badge per framework and per cell).
Compare pages are made per pair of cells, not per report: their folder and their file names are here
(`compare_file`), the pairs are the builder's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

# The outputs a document is written into (fanin.report.outputs)
REFERENCE = "reference"  # the committed reference/ and reports/matrix.html beside it
RUN = "run"  # reports/run/, from a local run
BUNDLE = "bundle"  # `report --for ... --out DIR`: Markdown and HTML in one directory
SITE = "site"  # the published site, and each permanent copy of it (v/<tag>/)
SITE_ROOT = "site-root"  # the published site's root only (never in a permanent copy)
SHORT = "short"  # the short forms: in every bundle and at the site's root (the latest's alone), linked as a bundle

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
VIEWER_HTML = "viewer.html"  # a user's `probe --here` result set beside the reference, in the browser
BADGES_DIR = "badges"
TREND_DIR = "trend"
FEEDS_DIR = "feeds"
FEED_ATOM = "feed.atom"  # every framework's behaviour changes; feeds/<key>.atom one framework's
FEED_JSON = "feed.json"
BADGE_SVG = f"{BADGES_DIR}/{{key}}.svg"  # per framework (its newest version) and per cell
TREND_SVG = f"{TREND_DIR}/{{key}}.svg"
FRAMEWORK_ATOM = f"{FEEDS_DIR}/{{key}}.atom"
FRAMEWORK_JSON = f"{FEEDS_DIR}/{{key}}.json"
COMPARE_PAGE = "compare-{a}-{b}"  # compare/<this>.md and .html: two cells' page


@dataclass(frozen=True)
class Document:
    """One document of a report: its file (`{key}` = one per framework with a probe), renderer and outputs."""

    file: str
    render: str | Callable[..., str]  # "module:function", or the function itself
    outputs: tuple[str, ...]
    title: str = ""  # its name in the site's navigation ("" = not listed; per framework, the framework's name)
    committed: bool = False  # part of the reference (reference/, links relative, never a base URL)
    each: str = ""  # "module:function": its instances `(key, argument)` from the report; "" = one per framework

    @staticmethod
    def _resolve(named: str) -> Callable[..., Any]:
        module, _, name = named.partition(":")
        found: Callable[..., Any] = getattr(importlib.import_module(module), name)
        return found

    @property
    def per_framework(self) -> bool:
        return "{key}" in self.file

    def at(self, key: str = "") -> str:
        """Its file, for one framework when there is one per framework (`probes/langgraph.md`)."""
        return self.file.format(key=key) if self.per_framework else self.file

    def renderer(self) -> Callable[..., str]:
        if callable(self.render):
            return self.render
        found: Callable[..., str] = self._resolve(self.render)
        return found

    def instances(self, report: Any) -> list[tuple[str, tuple[Any, ...]]]:
        """Each file this document is written as, with what its renderer is given after the report."""
        if self.each:
            return [(self.at(key), (argument,)) for key, argument in self._resolve(self.each)(report)]
        if self.per_framework:
            return [(self.at(view.key), (view,)) for view in report.frameworks if view.probes]
        return [(self.file, ())]


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
    Document(VIEWER_HTML, "fanin.report.viewer:page", (BUNDLE, SITE_ROOT)),  # home: the site's index, else matrix.html
    Document(NOT_FOUND_HTML, "fanin.report.html_site:not_found_page", (SITE_ROOT,)),
    # the short forms: the digest decides them (fanin.report.short_forms), svg and feed format them
    Document(BADGE_SVG, "fanin.report.short_forms:badge", (SHORT,), each="fanin.report.short_forms:badges"),
    Document(TREND_SVG, "fanin.report.short_forms:trend", (SHORT,), each="fanin.report.short_forms:trends"),
    Document(FEED_ATOM, "fanin.report.short_forms:atom", (SHORT,)),
    Document(FEED_JSON, "fanin.report.short_forms:json_feed", (SHORT,)),
    Document(FRAMEWORK_ATOM, "fanin.report.short_forms:atom", (SHORT,), each="fanin.report.short_forms:frameworks"),
    Document(
        FRAMEWORK_JSON, "fanin.report.short_forms:json_feed", (SHORT,), each="fanin.report.short_forms:frameworks"
    ),
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


def compare_page(a: str, b: str) -> str:
    """The name of two cells' compare page (`compare-adk-1.0.0-adk-1.5.0`), without folder or suffix."""
    return COMPARE_PAGE.format(a=a, b=b)


def compare_file(name: str, suffix: str) -> str:
    """A compare page's document (`compare/compare-adk-1.0.0-adk-1.5.0.html`)."""
    return f"{COMPARE_DIR}/{name}{suffix}"


def framework_feed(key: str, ext: str) -> str:
    """The document of one framework's feed (`feeds/langgraph.atom`)."""
    return (FRAMEWORK_ATOM if ext == "atom" else FRAMEWORK_JSON).format(key=key)


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
