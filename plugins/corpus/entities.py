"""Read views over the experienced facet: the entity view and recall.

Entities are the experienced items' tags, their tag-graph topics and their authors.

Both read *experienced* items only: what the persona read or captured, never what it only
saved for later ("what have I learned about X" must cite the persona's own experience).
"""

from __future__ import annotations

import json
import logging

import sqlite_utils

from hermes.builtins.default_candidates import like_pattern
from hermes.errors import InvalidInput
from hermes.text.authors import MAX_KEYED, author_key, parse_stored
from hermes.topics import tag_graph

MAX_TERMS = 12
log = logging.getLogger(__name__)

#: the persona's first and last contact with each item (progress, highlights, notes)
_SEEN = """
    seen AS (
        SELECT item_id, min(a) AS first_seen, max(b) AS last_seen FROM (
            SELECT item_id, first_seen AS a, last_seen AS b FROM corpus_progress WHERE user_id = :u
            UNION ALL SELECT item_id, created, created FROM corpus_highlights WHERE user_id = :u
            UNION ALL SELECT item_id, created, created FROM corpus_notes WHERE user_id = :u
        ) GROUP BY item_id
    ),
    exp AS (
        SELECT m.item_id, coalesce(i.title, '') AS title, i.url, coalesce(i.tags, '[]') AS tags,
               coalesce(i.authors, '[]') AS authors,
               coalesce(s.first_seen, m.added) AS first_seen, coalesce(s.last_seen, m.added) AS last_seen
        FROM corpus_membership m
        LEFT JOIN items i ON i.id = m.item_id
        LEFT JOIN seen s ON s.item_id = m.item_id
        WHERE m.user_id = :u AND m.facet = 'experienced'
    )
"""


def _topic_fn(db: sqlite_utils.Database):
    """``tags -> topic label or None`` from the tag graph's communities (``None`` when the
    graph cannot be built). The graph belongs to the core: this view only consumes it, and a
    graph problem never breaks the corpus view. Call it outside any transaction (the graph
    may persist itself)."""
    try:
        graph = tag_graph.get_graph(db)
    except Exception:
        log.warning("tag graph unavailable for the corpus entity view", exc_info=True)
        return None

    def topic(tags: list) -> str | None:
        community, _ = graph.assign(tags)
        return community.label if community is not None else None

    return topic


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


def entity_view(
    db: sqlite_utils.Database,
    user_id: int,
    *,
    limit: int | None = None,
    items_per_entity: int = 20,
    topics: bool = True,
) -> list[dict]:
    """Experienced items grouped by tag (``kind: "tag"``), by author (``kind: "author"``)
    and, when the tag graph is available, by its topic community (``kind: "topic"``,
    labelled by its most central tags).

    Each entity: ``{entity, kind, item_count, first_seen, last_seen, items: [{item_id,
    title, first_seen, last_seen}]}``; most items first, then most recently seen.
    """
    topic_of = _topic_fn(db) if topics else None
    rows = db.execute(
        f"WITH {_SEEN} SELECT item_id, title, tags, first_seen, last_seen, authors FROM exp", {"u": user_id}
    ).fetchall()
    groups: dict[tuple[str, str], dict] = {}

    def add(kind: str, name: str, item: dict, key: str | None = None) -> None:
        g = groups.setdefault((kind, key or _key(name)), {"entity": name, "kind": kind, "items": {}})
        g["items"].setdefault(item["item_id"], item)

    for item_id, title, tags, first, last, authors in rows:
        item = {"item_id": item_id, "title": title, "first_seen": first, "last_seen": last}
        try:
            tag_list = [t for t in json.loads(tags) if isinstance(t, str) and t.strip()]
        except (TypeError, ValueError):
            tag_list = []
        for tag in tag_list:
            add("tag", " ".join(tag.split()), item)
        topic = topic_of(tag_list) if topic_of and tag_list else None
        if topic:
            add("topic", topic, item)
        for name in parse_stored(authors)[:MAX_KEYED]:
            # One person however the feeds spell them ("L. Furtak", "Lukas J. Furtak").
            add("author", name, item, key=author_key(name))
    out = []
    for g in groups.values():
        items = sorted(g["items"].values(), key=lambda it: it["last_seen"] or "", reverse=True)
        out.append(
            {
                "entity": g["entity"],
                "kind": g["kind"],
                "item_count": len(items),
                "first_seen": min(it["first_seen"] or "" for it in items),
                "last_seen": max(it["last_seen"] or "" for it in items),
                "items": items[:items_per_entity],
            }
        )
    out.sort(key=lambda e: e["entity"].casefold())
    out.sort(key=lambda e: e["last_seen"], reverse=True)
    out.sort(key=lambda e: e["item_count"], reverse=True)
    return out[:limit] if limit is not None else out


def top_entities(db: sqlite_utils.Database, user_id: int, n: int = 5) -> list[dict]:
    """The ``n`` largest entities; a topic labelled like a tag is listed once."""
    out, seen = [], set()
    for e in entity_view(db, user_id, items_per_entity=0):
        if _key(e["entity"]) in seen:
            continue
        seen.add(_key(e["entity"]))
        out.append({"entity": e["entity"], "kind": e["kind"], "item_count": e["item_count"]})
        if len(out) == n:
            break
    return out


def recall(db: sqlite_utils.Database, user_id: int, query: str, limit: int = 10) -> list[dict]:
    """Keyword search over the persona's experienced items: title, summary, its highlights
    (text and comment) and notes. Every word must match somewhere; wildcards are literal."""
    if not query.strip():
        raise InvalidInput("query is empty; pass one or more words to look for")
    terms = list(dict.fromkeys(query.split()))
    if len(terms) > MAX_TERMS:
        raise InvalidInput(f"query has {len(terms)} words; use at most {MAX_TERMS}")
    where, params = [], {"u": user_id}
    for k, term in enumerate(terms):
        p = f"t{k}"
        params[p] = like_pattern(term)
        where.append(
            f"""(i.title LIKE :{p} ESCAPE '\\' OR i.summary LIKE :{p} ESCAPE '\\'
                 OR EXISTS (SELECT 1 FROM corpus_highlights h WHERE h.user_id = :u AND h.item_id = e.item_id
                            AND (h.text LIKE :{p} ESCAPE '\\' OR coalesce(h.note, '') LIKE :{p} ESCAPE '\\'))
                 OR EXISTS (SELECT 1 FROM corpus_notes n WHERE n.user_id = :u AND n.item_id = e.item_id
                            AND n.text LIKE :{p} ESCAPE '\\'))"""
        )
    rows = db.execute(
        f"""WITH {_SEEN}
            SELECT e.item_id, e.title, e.url, coalesce(i.summary, ''), e.first_seen, e.last_seen
            FROM exp e JOIN items i ON i.id = e.item_id
            WHERE {" AND ".join(where)}""",
        params,
    ).fetchall()
    folded = [t.casefold() for t in terms]
    hits = []
    for item_id, title, url, summary, first, last in rows:
        highlights = [
            {"highlight_id": h[0], "text": h[1], "note": h[2]}
            for h in db.execute(
                "SELECT id, text, note FROM corpus_highlights WHERE user_id = ? AND item_id = ? ORDER BY id",
                [user_id, item_id],
            )
        ]
        notes = [
            {"note_id": n[0], "text": n[1]}
            for n in db.execute(
                "SELECT id, text FROM corpus_notes WHERE user_id = ? AND item_id = ? ORDER BY id", [user_id, item_id]
            )
        ]
        score, matched_in = 0, []
        for field, text, weight in (("title", title, 3), ("summary", summary, 1)):
            n = sum(t in text.casefold() for t in folded)
            if n:
                score += weight * n
                matched_in.append(field)
        hl = [h for h in highlights if any(t in (h["text"] + " " + (h["note"] or "")).casefold() for t in folded)]
        nt = [n for n in notes if any(t in n["text"].casefold() for t in folded)]
        if hl:
            score += 2 * len(hl)
            matched_in.append("highlight")
        if nt:
            score += 2 * len(nt)
            matched_in.append("note")
        hits.append(
            {
                "item_id": item_id,
                "title": title,
                "url": url,
                "matched_in": matched_in,
                "highlights": hl[:3],
                "notes": nt[:3],
                "first_seen": first,
                "last_seen": last,
                "_score": score,
            }
        )
    hits.sort(key=lambda h: h["item_id"])
    hits.sort(key=lambda h: h["last_seen"] or "", reverse=True)
    hits.sort(key=lambda h: h["_score"], reverse=True)
    for h in hits:
        del h["_score"]
    return hits[:limit]
