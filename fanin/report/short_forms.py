"""The short forms as the registry's documents (fanin.report.documents): badges, trend charts and feeds.

Each function here is what one registered entry names: its instances, from the digest (which decides them),
or its renderer, which hands them to `svg` or `feed` (which format them). Nothing here decides or formats.
"""

from __future__ import annotations

from fanin.report import digest, documents, feed, svg
from fanin.report.view import Badge, FrameworkView, Report, Trend


def badges(rep: Report) -> list[tuple[str, Badge]]:
    """badges/<key>.svg per framework (its newest version), then badges/<cell>.svg per cell."""
    return [(b.name, b) for b in digest.badges(rep)]


def badge(rep: Report, b: Badge) -> str:
    return svg.badge(b)


def trends(rep: Report) -> list[tuple[str, Trend]]:
    return [(t.key, t) for t in digest.trends(rep)]


def trend(rep: Report, t: Trend) -> str:
    return svg.trend(t)


def frameworks(rep: Report) -> list[tuple[str, FrameworkView]]:
    """The frameworks with a feed of their own (feeds/<key>.atom and .json): every one with a column."""
    return [(v.key, v) for v in rep.frameworks_with_columns]


def atom(rep: Report, view: FrameworkView | None = None) -> str:
    """feed.atom (every framework), or feeds/<key>.atom (one)."""
    key = view.key if view else ""
    source = documents.framework_feed(key, "atom") if view else documents.FEED_ATOM
    entries = digest.feed(rep, key or None)
    return feed.atom(rep, entries, source, view.name if view else "", "urn:fanin:feed" + (f":{key}" if key else ""))


def json_feed(rep: Report, view: FrameworkView | None = None) -> str:
    """feed.json (every framework), or feeds/<key>.json (one)."""
    source = documents.framework_feed(view.key, "json") if view else documents.FEED_JSON
    return feed.json_feed(rep, digest.feed(rep, view.key if view else None), source, view.name if view else "")
