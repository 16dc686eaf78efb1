"""The documents a report is made of and every link between them (relative, or permalinks with a base URL)."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote

# The documents a report is made of, by their place in a published bundle (`report --out DIR`).
REPORT_MD = "REPORT.md"


PROBES_DIR = "probes"  # one Markdown file of probe sections per framework, beside REPORT.md


def probes_md(framework: str) -> str:
    """The document holding a framework's probe sections (`probes/langgraph.md`)."""
    return f"{PROBES_DIR}/{framework}.md"


CHECKLIST_MD = "CHECKLIST.md"


MATRIX_HTML = "matrix.html"


COMPARE_DIR = "compare"


# The published site (`report --out DIR`): HTML pages only, one per framework, each at most a size budget.
INDEX_HTML = "index.html"


CHECKLIST_HTML = "checklist.html"


COMPARISON_HTML = "comparison.html"  # the questions asked of every framework, the Python twins


NOT_FOUND_HTML = "404.html"  # GitHub Pages serves it for any path the site lacks


VERSIONS_DIR = "v"  # v/<tag>/: the permanent copy of the site at one reference commit


def framework_html(framework: str) -> str:
    """The site's page of one framework: its matrix and its probe sections (`probes/langgraph.html`)."""
    return f"{PROBES_DIR}/{framework}.html"


SCHEMA_DIR = "schema"  # the committed JSON Schemas of the result sets, beside REPORT.md (the site has its own copy)

# The folders beside REPORT.md a bless writes into (with the reference's result sets): a kill while it staged
# leaves its staging files there, and the next command names them (fanin.versions.bless.recover).
COMMITTED_DIRS = ("", PROBES_DIR, SCHEMA_DIR)


@lru_cache(maxsize=65536)
def fragment(anchor: str) -> str:
    """An anchor as a URL fragment: ids keep their slashes; brackets and other signs are escaped."""
    return quote(anchor, safe="/,-_.~")


# A report links the same few documents to each other tens of thousands of times (every probe, every cell).
# relpath reads the working directory for relative places, so it is part of the key.
@lru_cache(maxsize=4096)
def _relative_in(path: str, start: str, cwd: str) -> str:
    return posixpath.relpath(path, start)


def _relative(path: str, start: str) -> str:
    return _relative_in(path, start, os.getcwd())


@dataclass(frozen=True)
class Links:
    """Every href a report holds. With a base URL each is absolute (a permalink); else relative.

    `places` says where each document is written, as a path relative to one common root, so
    relative links between documents in different directories (reference/REPORT.md,
    reports/matrix.html, reports/compare/) resolve. `repo` is the checkout's place, for links
    to a probe's source file; "" when the documents are not beside the checkout.
    """

    base_url: str = ""
    places: tuple[tuple[str, str], ...] = ()
    repo: str = ""
    site: bool = False  # the HTML is one page per framework (the published site), not one matrix.html
    cite_base: str = ""  # the base URL cite lines name (the site's permanent copy, v/<tag>); "" = base_url

    def _place(self, document: str) -> str:
        places = _as_dict(self.places)
        head, _, rest = document.partition("/")
        if document in places:
            return places[document]
        if rest and head in places:
            return f"{places[head]}/{rest}"
        return document

    def href(self, document: str, anchor: str = "", source: str = "") -> str:
        """A link from `source` (a document) to `anchor` in `document`."""
        tail = f"#{fragment(anchor)}" if anchor else ""
        if self.base_url:
            return f"{self.base_url.rstrip('/')}/{document}{tail}"
        if document == source:
            return tail or "#"
        start = posixpath.dirname(self._place(source)) or "."
        return _relative(self._place(document), start) + tail

    def probe(self, anchor: str, source: str) -> str:
        """A probe's section: in its framework's probes/<key>.md from Markdown, in the HTML page from HTML."""
        return self.href(self._probe_document(anchor, source), anchor, source)

    def _probe_document(self, anchor: str, source: str) -> str:
        framework = anchor.split("/", 1)[0] if "/" in anchor else ""
        if not source.endswith(".html"):
            return probes_md(framework) if framework else REPORT_MD
        if self.site:
            return framework_html(framework) if framework else INDEX_HTML
        return MATRIX_HTML

    def cite(self, anchor: str, source: str) -> str:
        """The URL a cite line names: the probe's section in the permanent copy when there is one."""
        if not self.cite_base:
            return self.probe(anchor, source)
        return f"{self.cite_base.rstrip('/')}/{self._probe_document(anchor, source)}#{fragment(anchor)}"

    def matrix(self, framework: str, source: str) -> str:
        """Where a framework's matrix is: its own page on the site, else matrix.html's section (the page's top)."""
        if self.site:
            return self.href(framework_html(framework) if framework else INDEX_HTML, "", source)
        return self.href(MATRIX_HTML, "", source)

    def source_file(self, path: str, lines: tuple[int, int] | None, source: str) -> str:
        """A probe's file in the checkout (GitHub line anchors); "" when the checkout is not reachable."""
        if not self.repo:
            return ""
        start = posixpath.dirname(self._place(source)) or "."
        target = _relative(posixpath.join(self.repo, path), start)
        return target + (f"#L{lines[0]}-L{lines[1]}" if lines else "")


@lru_cache(maxsize=64)
def _as_dict(places: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return dict(places)
