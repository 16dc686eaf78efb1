"""The topic registry (reference/topics.toml): the middle part of every probe id, with its title and question.

One definition that the report's headings, `fanin probes` and the reference checks read (as python/typing's
conformance suite keeps its test_groups.toml), so a topic is named once however many frameworks probe it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fanin.model.errors import FaninError
from fanin.model.matrix import TOPICS

_FIELDS = {"title", "about"}


class TopicsError(FaninError):
    """reference/topics.toml is malformed (one line, exit 2)."""


@dataclass(frozen=True)
class Topic:
    id: str
    title: str
    about: str


@cache
def load(path: Path = TOPICS) -> dict[str, Topic]:
    """Every registered topic by id, in the file's order."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TopicsError(f"{path.name}: {exc}") from None
    topics = {}
    for key, table in data.items():
        if (
            not isinstance(table, dict)
            or set(table) != _FIELDS
            or not all(isinstance(v, str) and v for v in table.values())
        ):
            raise TopicsError(f"{path.name} [{key}]: needs exactly a non-empty title and about")
        topics[key] = Topic(key, table["title"], table["about"])
    return topics


def get(topic: str) -> Topic | None:
    """The registered topic, or None (a probe under an unregistered topic: the reference check says so)."""
    return load().get(topic)
