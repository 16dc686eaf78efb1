"""The documents a report is made of and every link between them (relative, or permalinks with a base URL)."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote

from fanin.report.documents import INDEX_HTML, MATRIX_HTML, PROBES_DIR, REPORT_MD, SCHEMA_DIR, framework_html, probes_md

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

    def place(self, document: str) -> str:
        """Where a document is written (its path in `places`), else its own name."""
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
        start = posixpath.dirname(self.place(source)) or "."
        return _relative(self.place(document), start) + tail

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
        start = posixpath.dirname(self.place(source)) or "."
        target = _relative(posixpath.join(self.repo, path), start)
        return target + (f"#L{lines[0]}-L{lines[1]}" if lines else "")


@lru_cache(maxsize=64)
def _as_dict(places: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return dict(places)
