"""The feed of behaviour changes as Atom (RFC 4287) and JSON Feed 1.1: the digest's entries, formatted.

feed.atom and feed.json at the bundle's root hold every framework; feeds/<key>.atom and .json one each.
An entry is one change between adjacent versions, in the digest's order (newest first, worst first within
a date), its id stable (the observation id and the two cells), its link the pair's compare page. Every
date is a result set's, never the clock's: the same reference renders the same bytes. Renders, never decides.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from fanin.report import documents
from fanin.report.view import FeedEntry, Report


def _attr(value: str) -> str:
    """An XML attribute value, quoted (xml.sax.saxutils would import urllib.request: no network client here)."""
    return '"' + escape(value) + '"'


TITLE = "fanin: behaviour changes at fan-in, version by version"
VALUE_LINES = 5  # the value paths an entry lists; the compare page has them all


def _moment(date: str) -> str:
    """A result set's date (2026-12-01) as RFC 3339 (2026-12-01T00:00:00Z)."""
    return f"{date or '1970-01-01'}T00:00:00Z"


def title(entry: FeedEntry) -> str:
    """`LangGraph 1.2.18 → 1.2.24: langgraph/send/x regression (loud → silent)`."""
    step, page = entry.step, entry.page
    said = f"{entry.name} {page.a.label} → {page.b.label}: {step.observation_id} {step.label}"
    before = step.before.hazard if step.before else "no observation"
    after = step.after.hazard if step.after else "no observation"
    return said + (f" ({before} → {after})" if before != after else "")


def text(entry: FeedEntry) -> str:
    """The entry's body: the step as the report says it, the two observations, the first value paths that moved."""
    step = entry.step
    lines = [step.text]
    for word, observation in (("before", step.before), ("after", step.after)):
        lines.append(f"{word}: " + (f"[{observation.hazard}] {observation.detail}" if observation else "—"))
    lines += [f"{path}: {before} → {after}" for path, before, after in step.values[:VALUE_LINES]]
    if len(step.values) > VALUE_LINES:
        lines.append(f"… {len(step.values) - VALUE_LINES} more value paths on the compare page")
    return "\n".join(lines)


def _link(rep: Report, entry: FeedEntry, source: str) -> str:
    return rep.links.href(documents.compare_file(entry.page.name, ".html"), entry.step.observation_id, source)


def _updated(entries: Sequence[FeedEntry]) -> str:
    return _moment(max((e.date for e in entries), default=""))


def atom(rep: Report, entries: Sequence[FeedEntry], source: str, name: str, feed_id: str) -> str:
    """An Atom feed; `source` is where it is written (its links are relative to it, or permalinks)."""
    base = rep.links.base_url
    out = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom">',
        f"  <id>{escape(feed_id)}</id>",
        f"  <title>{escape(TITLE if not name else f'{TITLE}: {name}')}</title>",
        f"  <updated>{_updated(entries)}</updated>",
        "  <author><name>fanin</name></author>",
        f'  <link rel="alternate" type="text/html" href={_attr(rep.links.href(documents.MATRIX_HTML, "", source))}/>',
    ]
    if base:
        out.append(f'  <link rel="self" href={_attr(f"{base}/{source}")}/>')
    for entry in entries:
        out += [
            "  <entry>",
            f"    <id>{escape(entry.id)}</id>",
            f"    <title>{escape(title(entry))}</title>",
            f"    <updated>{_moment(entry.date)}</updated>",
            f'    <link rel="alternate" type="text/html" href={_attr(_link(rep, entry, source))}/>',
            f"    <category term={_attr(entry.step.label)}/>",
            f"    <category term={_attr(entry.framework)}/>",
            f'    <content type="text">{escape(text(entry))}</content>',
            "  </entry>",
        ]
    out.append("</feed>")
    return "\n".join(out) + "\n"


def json_feed(rep: Report, entries: Sequence[FeedEntry], source: str, name: str) -> str:
    """A JSON Feed 1.1; item URLs only with a base URL (the format wants them absolute)."""
    base = rep.links.base_url
    feed: dict[str, object] = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": TITLE if not name else f"{TITLE}: {name}",
    }
    if base:
        feed["home_page_url"] = rep.links.href(documents.MATRIX_HTML, "", source)
        feed["feed_url"] = f"{base}/{source}"
    feed["description"] = "One item per behaviour change between adjacent versions, newest first, worst first."
    feed["authors"] = [{"name": "fanin"}]
    feed["language"] = "en"
    items = []
    for entry in entries:
        item: dict[str, object] = {"id": entry.id}
        if base:
            item["url"] = _link(rep, entry, source)
        item.update(
            {
                "title": title(entry),
                "content_text": text(entry),
                "date_published": _moment(entry.date),
                "tags": [entry.step.label, entry.framework],
            }
        )
        items.append(item)
    feed["items"] = items
    return json.dumps(feed, indent=1, ensure_ascii=False) + "\n"
