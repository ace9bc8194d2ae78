"""Per-key like / dislike statistics (tags, content types, sources, authors) for a persona.

An item's keys are ``tag:<normalised tag>`` for the feed's own categories,
``topic:<keyphrase>`` for tags a tagger plugin added (``items.keyphrases``),
``type:<content type>``, ``source:<feed id>`` and ``author:<surname, initial>``
(:func:`hermes.text.authors.author_key`, for the first :data:`hermes.text.authors.MAX_KEYED`
authors) — written only by the ``*_key`` functions here and taken apart only by
:func:`split_key`. :func:`key_stats` is what the persona tools show
and what the ``preference`` scorer (:mod:`hermes.builtins.scorers`) ranks with.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING

from hermes.text.authors import MAX_KEYED, author_key, parse_stored
from hermes.text.tags import normalize_tag, parse_tags

from ..storage.clicks import user_clicks

if TYPE_CHECKING:  # annotations only: registering the plugins loads no sqlite-utils (issue 36)
    import sqlite_utils

#: Laplace-style prior: one click moves a key's score to ±1/3, not ±1.
PRIOR = 2.0
#: key families, by the prefix of their key strings
FAMILIES = ("tag:", "type:", "source:", "author:", "topic:")
#: the families that say where an item comes from. A podcast's show is one feed, one
#: author and one content type: one click on an episode rated all three, and an MCP trial's
#: single podcast like counted three times over (raw preference +1.33, every podcast above
#: every paper). See :func:`shared_evidence`.
ORIGIN = ("type:", "source:", "author:")


def tag_key(tag) -> str:
    """``tag:<tag>`` normalised (:func:`hermes.text.tags.normalize_tag`), or ``""`` for a blank or
    non-text tag."""
    key = normalize_tag(tag)
    return f"tag:{key}" if key else ""


def topic_key(tag) -> str:
    """``topic:<keyphrase>`` normalised like a tag, or ``""``."""
    key = normalize_tag(tag)
    return f"topic:{key}" if key else ""


def type_key(content_type: str) -> str:
    return f"type:{content_type}"


def source_key(feed_id: int) -> str:
    return f"source:{feed_id}"


def split_key(key: str) -> tuple[str, str]:
    """``("tag", "galaxies")`` for ``"tag:galaxies"``: the family and the value."""
    family, _, value = key.partition(":")
    return family, value


def author_keys(names: list[str]) -> list[str]:
    """``author:<key>`` of the first :data:`~hermes.text.authors.MAX_KEYED` authors."""
    keys = (author_key(n) for n in (names or [])[:MAX_KEYED] if isinstance(n, str))
    return [f"author:{k}" for k in dict.fromkeys(keys) if k]


def item_keys(
    tags: list[str],
    content_type: str | None,
    feed_id: int | None,
    authors: list[str] | None = None,
    keyphrases: list[str] | None = None,
) -> list[str]:
    """The item's keys; those of its ``tags`` that are ``keyphrases`` become ``topic:`` keys."""
    derived = {normalize_tag(k) for k in keyphrases or []}
    keys = [
        k for k in dict.fromkeys(topic_key(t) if normalize_tag(t) in derived else tag_key(t) for t in tags or []) if k
    ]
    if content_type:
        keys.append(type_key(content_type))
    if feed_id is not None:
        keys.append(source_key(feed_id))
    keys.extend(author_keys(authors or []))
    return keys


def key_stats(db: sqlite_utils.Database, user_id: int) -> dict[str, dict]:
    """``{key: {"likes", "dislikes", "score"}}`` with score = (l − d) / (l + d + PRIOR)."""
    clicks = user_clicks(db, user_id)
    return stats_of(clicks, keys_of_items(db, [item_id for item_id, _ in clicks]))


def keys_of_items(db: sqlite_utils.Database, item_ids) -> dict[int, list[str]]:
    """Each existing item's keys (:func:`item_keys`), by id."""
    rows = db.execute(
        """SELECT id, tags, content_type, feed_id, authors, keyphrases FROM items
           WHERE id IN (SELECT value FROM json_each(?))""",
        [json.dumps(sorted({int(i) for i in item_ids}))],
    )
    return {
        item_id: item_keys(parse_tags(tags), ctype, feed_id, parse_stored(authors), parse_tags(keyphrases))
        for item_id, tags, ctype, feed_id, authors, keyphrases in rows
    }


def stats_of(clicks, keys: dict[int, list[str]]) -> dict[str, dict]:
    """:func:`key_stats` of ``clicks`` (``(item id, liked)`` pairs) from each clicked
    item's ``keys`` (an item missing there, deleted, counts for nothing)."""
    stats: dict[str, dict] = defaultdict(lambda: {"likes": 0, "dislikes": 0})
    for item_id, liked in clicks:
        for key in keys.get(item_id, ()):
            stats[key]["likes" if liked else "dislikes"] += 1
    for s in stats.values():
        s["score"] = key_score(s["likes"], s["dislikes"])
    return dict(stats)


def key_score(likes, dislikes):
    """(l − d) / (l + d + PRIOR): smoothed towards 0 so one click is a hint, not a verdict."""
    return (likes - dislikes) / (likes + dislikes + PRIOR)


def shared_evidence(clicks, keys: dict[int, list[str]]) -> list[list[str]]:
    """Groups of keys that exactly the same clicks rated (each key of a group was on the
    same clicked items), which the ``preference`` scorer counts once, on the group's key
    fewest items carry:

    - :data:`ORIGIN` keys of two or more families (a show's feed, author and content type);
    - feed categories only dislikes rated: a disliked polymer paper listed under
      cond-mat.soft, mtrl-sci and stat-mech says nothing against the other stat-mech
      papers (a one-field trial's quantum-criticality paper fell from rank 43 to 142 on
      such cross-lists). A liked paper's categories all count: on the benchmark that
      generalisation is worth it (``benchmarks/results/ranking.md``, "Clicks counted once")."""
    rated: dict[str, list] = defaultdict(list)
    for item_id, liked in clicks:
        for key in keys.get(item_id, ()):
            if key.startswith((*ORIGIN, "tag:")):
                rated[key].append((item_id, liked))
    together: dict[tuple, list[str]] = defaultdict(list)
    for key, evidence in rated.items():
        together[tuple(evidence)].append(key)
    groups = []
    for evidence, group in together.items():
        origin = {split_key(k)[0] for k in group if k.startswith(ORIGIN)}
        tags = [k for k in group if k.startswith("tag:")]
        if len(origin) > 1:
            groups.append([k for k in group if k.startswith(ORIGIN)])
        if len(tags) > 1 and not any(liked for _, liked in evidence):
            groups.append(tags)
    return groups
