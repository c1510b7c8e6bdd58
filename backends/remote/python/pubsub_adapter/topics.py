"""Topic helpers mirroring backends/topic.go, for adapters that need them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .adapter import Mode
from .errors import InvalidTopic

CLASSES = ("flow", "request", "response", "notify")
DEFAULT_TOPICSPACE = "tg"


@dataclass(frozen=True)
class Topic:
    cls: str
    space: str
    name: str

    def __str__(self) -> str:
        return f"{self.cls}:{self.space}:{self.name}"

    @property
    def durable(self) -> bool:
        return self.cls == "flow"


_PART = re.compile(r"^[A-Za-z0-9._-]+$")
_NAME = re.compile(r"^[A-Za-z0-9._:-]+$")


def parse_topic(s: str) -> Topic:
    """Parse and validate a contract topic string like backends.ParseTopic;
    raises InvalidTopic saying what is wrong."""
    if s == "":
        raise InvalidTopic('empty topic string (want "class:topicspace:topic")')
    parts = s.split(":", 2)
    if len(parts) == 1:
        t = Topic("flow", DEFAULT_TOPICSPACE, s)
    elif len(parts) == 2:
        raise InvalidTopic(f'{s!r} has two parts; want "topic" or "class:topicspace:topic"')
    else:
        t = Topic(parts[0], parts[1], parts[2])
    if t.cls not in CLASSES:
        raise InvalidTopic(f"{s!r} has unknown class {t.cls!r} (want one of flow, request, response, notify)")
    if not t.space:
        raise InvalidTopic(f"{s!r} has an empty topicspace")
    if not t.name:
        raise InvalidTopic(f"{s!r} has an empty topic")
    if not _PART.match(t.space):
        raise InvalidTopic(f"{s!r}: a character is not allowed in the topicspace (letters, digits, '-', '_', '.')")
    if not _NAME.match(t.name):
        raise InvalidTopic(f"{s!r}: a character is not allowed in the topic (letters, digits, '-', '_', '.')")
    for what, part in (("topicspace", t.space), ("topic", t.name)):
        if part in (".", ".."):
            raise InvalidTopic(f"{s!r}: {what} {part!r} is reserved")
    if len(f"{t.cls}.{t.space}.{t.name}".replace(":", ".")) > 249:
        raise InvalidTopic(f"{s!r} is too long as a broker name (at most 249)")
    return t


def default_mode(cls: str) -> Mode:
    """The class's subscription mode: flow and request SHARED, response and notify UNIQUE."""
    return Mode.UNIQUE if cls in ("response", "notify") else Mode.SHARED


def default_retention(cls: str) -> float:
    """The class's default retention in seconds: 7 days for flow, 5 minutes otherwise."""
    return 7 * 24 * 3600.0 if cls == "flow" else 300.0
