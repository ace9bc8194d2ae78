"""Per-key like / dislike statistics (tags, content types, sources) for a persona.

An item's keys are ``tag:<normalised tag>``, ``type:<content type>`` and
``source:<feed id>`` — written only by the ``*_key`` functions here and taken apart only
by :func:`split_key`. :func:`key_stats` is what the persona tools show and what the
``preference`` scorer (:mod:`hermes.builtins.scorers`) ranks with.
"""

from __future__ import annotations

from collections import defaultdict

import sqlite_utils

from ..tags import normalize_tag, parse_tags

#: Laplace-style prior: one click moves a key's score to ±1/3, not ±1.
PRIOR = 2.0
#: key families, by the prefix of their key strings
FAMILIES = ("tag:", "type:", "source:")


def tag_key(tag) -> str:
    """``tag:<tag>`` normalised (:func:`hermes.tags.normalize_tag`), or ``""`` for a blank or
    non-text tag."""
    key = normalize_tag(tag)
    return f"tag:{key}" if key else ""


def type_key(content_type: str) -> str:
    return f"type:{content_type}"


def source_key(feed_id: int) -> str:
    return f"source:{feed_id}"


def split_key(key: str) -> tuple[str, str]:
    """``("tag", "galaxies")`` for ``"tag:galaxies"``: the family and the value."""
    family, _, value = key.partition(":")
    return family, value


def item_keys(tags: list[str], content_type: str | None, feed_id: int | None) -> list[str]:
    keys = [k for k in dict.fromkeys(tag_key(t) for t in tags or []) if k]
    if content_type:
        keys.append(type_key(content_type))
    if feed_id is not None:
        keys.append(source_key(feed_id))
    return keys


def key_stats(db: sqlite_utils.Database, user_id: int) -> dict[str, dict]:
    """``{key: {"likes", "dislikes", "score"}}`` with score = (l − d) / (l + d + PRIOR)."""
    stats: dict[str, dict] = defaultdict(lambda: {"likes": 0, "dislikes": 0})
    rows = db.execute(
        """SELECT c.label, i.tags, i.content_type, i.feed_id
           FROM clicks c JOIN items i ON i.id = c.item_id WHERE c.user_id = ?""",
        [user_id],
    )
    for label, tags, ctype, feed_id in rows:
        for key in item_keys(parse_tags(tags), ctype, feed_id):
            stats[key]["likes" if label == "like" else "dislikes"] += 1
    for s in stats.values():
        s["score"] = key_score(s["likes"], s["dislikes"])
    return dict(stats)


def key_score(likes, dislikes):
    """(l − d) / (l + d + PRIOR): smoothed towards 0 so one click is a hint, not a verdict."""
    return (likes - dislikes) / (likes + dislikes + PRIOR)

