"""Tags from ``hermes_item_tags`` plugins: proposed per item, kept where they recur.

A plugin (the built-in keyphrase tagger, a taxonomy …) proposes tags for an item right after
the model embedded it. Every proposal is stored in ``item_tag_proposals``; an item's
*keyphrases* are its best proposals (at most :data:`MAX_PER_ITEM`) that at least
:data:`MIN_ITEMS` items were given. A tag on a single item links nothing in the topic graph
and teaches the ranking nothing, and requiring recurrence drops most of a tagger's noise.

Because the kept set is a function of all proposals, the order items arrive in does not
matter: when a new item makes a phrase recur, the earlier items that proposed it get it
too, in the same transaction. ``items.tags`` holds the feed's categories followed by the
keyphrases; ``items.keyphrases`` says which tags are keyphrases (``NULL``: not tagged yet).
Items whose tags change get a new ``embed_seq``, so the ranking matrix and the tag graph
re-read them.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import sqlite_utils

from ..embed import embeds_tokens, from_blob
from ..plugins import get_plugin_manager
from ..storage.transactions import write_transaction
from .parse import normalise_tags
from .text import embedding_text

#: keyphrases kept per item
MAX_PER_ITEM = 6
#: a proposed tag is kept once this many items were given it
MIN_ITEMS = 2
BATCH = 32
_REBUILD_NEXT, _REBUILD_END = "tags.rebuild_next", "tags.rebuild_end"


def _hook():
    hook = get_plugin_manager().hook.hermes_item_tags
    return hook if hook.get_hookimpls() else None


def taggers_active() -> bool:
    """Whether any plugin implements ``hermes_item_tags``."""
    return _hook() is not None


def propose(items: list[dict], vectors, tokens) -> dict[int, dict[str, float]]:
    """Every plugin's proposals per item id, normalised; a tag equal to one of the item's
    own categories is left out (the category wins)."""
    hook = _hook()
    out: dict[int, dict[str, float]] = {}
    for k, item in enumerate(items):
        found: dict[str, float] = {}
        if hook is not None:
            vector = None if vectors is None else vectors[k]
            token = None if tokens is None else tokens[k]
            for answer in hook(item=item, vector=vector, tokens=token):
                scored = answer.items() if isinstance(answer, dict) else ((t, 1.0) for t in answer or [])
                for tag, score in scored:
                    for norm in normalise_tags([tag]):
                        found[norm] = max(found.get(norm, -np.inf), float(score))
        categories = {t.lower() for t in item.get("tags") or [] if isinstance(t, str)}
        out[int(item["id"])] = {t: s for t, s in found.items() if t not in categories}
    return out


def embed_for_tags(embedder, texts: list[str], *, tag: bool = True):
    """``(vectors, tokens)`` of ``texts``: the token vectors come from the same model pass
    when tagging is on and the embedder offers them (:func:`hermes.embed.embeds_tokens`),
    else ``tokens`` is ``None``."""
    if tag and taggers_active() and embeds_tokens(embedder):
        return embedder.embed_tokens(texts)
    return embedder.embed(texts), None


def _recurring(db, tags) -> set[str]:
    tags = list(tags)
    found: set[str] = set()
    for start in range(0, len(tags), 500):
        chunk = tags[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(
            r[0]
            for r in db.execute(
                f"SELECT tag FROM item_tag_proposals WHERE tag IN ({marks}) GROUP BY tag HAVING count(*) >= ?",
                [*chunk, MIN_ITEMS],
            )
        )
    return found


def _ids_in(db, sql: str, values: list) -> list[int]:
    out: list[int] = []
    for start in range(0, len(values), 500):
        chunk = values[start : start + 500]
        out.extend(r[0] for r in db.execute(sql.format(marks=",".join("?" * len(chunk))), chunk))
    return out


def apply_proposals(
    db: sqlite_utils.Database, proposals: dict[int, dict[str, float]], fresh: set[int] = frozenset()
) -> None:
    """Store ``proposals`` (replacing those items' earlier ones) and recompute the
    keyphrases of every item whose kept set may have changed. Call inside the caller's
    write transaction; ``fresh`` items were just given an ``embed_seq`` by the caller."""
    if not proposals:
        return
    ids = list(proposals)
    old = _ids_in(db, "SELECT DISTINCT tag FROM item_tag_proposals WHERE item_id IN ({marks})", ids)
    touched = set(old) | {t for tags in proposals.values() for t in tags}
    before = _recurring(db, touched)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        db.execute(f"DELETE FROM item_tag_proposals WHERE item_id IN ({','.join('?' * len(chunk))})", chunk)
    db.conn.executemany(
        "INSERT INTO item_tag_proposals (item_id, tag, score) VALUES (?, ?, ?)",
        [(i, t, s) for i, tags in proposals.items() for t, s in tags.items()],
    )
    after = _recurring(db, touched)
    changed = sorted(before ^ after)
    others = _ids_in(db, "SELECT DISTINCT item_id FROM item_tag_proposals WHERE tag IN ({marks})", changed)
    refresh(db, sorted(set(ids) | set(others)), fresh=fresh)


def refresh(db: sqlite_utils.Database, item_ids: list[int], fresh: set[int] = frozenset()) -> None:
    """Recompute the kept keyphrases of ``item_ids`` from the stored proposals."""
    if not item_ids:
        return
    proposals: dict[int, list[tuple[float, str]]] = {i: [] for i in item_ids}
    rows = []
    for start in range(0, len(item_ids), 500):
        chunk = item_ids[start : start + 500]
        rows += db.execute(
            f"""SELECT p.item_id, p.tag, p.score FROM item_tag_proposals p
                WHERE p.item_id IN ({",".join("?" * len(chunk))}) AND EXISTS (
                    SELECT 1 FROM item_tag_proposals q WHERE q.tag = p.tag AND q.item_id != p.item_id)""",
            chunk,
        ).fetchall()
    for item_id, tag, score in rows:
        proposals[item_id].append((-score, tag))
    seq = db.execute("SELECT COALESCE(max(embed_seq), 0) FROM items").fetchone()[0]
    for item_id in item_ids:
        kept = [tag for _, tag in sorted(proposals[item_id])[:MAX_PER_ITEM]]
        row = db.execute("SELECT tags, keyphrases, embedding IS NOT NULL FROM items WHERE id = ?", [item_id]).fetchone()
        if row is None:
            continue
        tags, old_kept, embedded = json.loads(row[0] or "[]"), json.loads(row[1] or "[]"), row[2]
        own = [t for t in tags if t not in old_kept]
        new_tags = own + [t for t in kept if t not in own]
        if row[1] is not None and new_tags == tags and kept == old_kept:
            continue
        changes = {"tags": json.dumps(new_tags, ensure_ascii=False), "keyphrases": json.dumps(kept, ensure_ascii=False)}
        if embedded and item_id not in fresh and new_tags != tags:
            seq += 1
            changes["embed_seq"] = seq  # the matrix and the tag graph re-read this item
        assignments = ", ".join(f"{k} = ?" for k in changes)
        db.execute(f"UPDATE items SET {assignments} WHERE id = ?", [*changes.values(), item_id])


ITEM_SQL = "SELECT id, title, summary, url, tags, authors, content_type, feed_id, embedding, keyphrases FROM items"


def item_dict(row) -> dict:
    """What a tagger sees of an item; ``tags`` are the item's own categories (its earlier
    keyphrases left out, so re-tagging does not mistake them for categories)."""
    keyphrases = set(json.loads(row[9] or "[]"))
    return {
        "id": row[0],
        "title": row[1] or "",
        "summary": row[2] or "",
        "url": row[3],
        "tags": [t for t in json.loads(row[4] or "[]") if t not in keyphrases],
        "authors": json.loads(row[5] or "[]"),
        "content_type": row[6],
        "feed_id": row[7],
    }


def start_rebuild(db: sqlite_utils.Database) -> bool:
    """Schedule every item for tagging again (resumable). False when a rebuild is already
    under way: it is resumed, not restarted, so a rebuild always runs to one end."""
    with write_transaction(db):
        if db.execute("SELECT 1 FROM meta WHERE key = ?", [_REBUILD_NEXT]).fetchone():
            return False
        end = db.execute("SELECT COALESCE(max(id), 0) FROM items").fetchone()[0]
        db.execute("INSERT INTO meta (key, value) VALUES (?, '0'), (?, ?)", [_REBUILD_NEXT, _REBUILD_END, str(end)])
    return True


def _rebuild_state(db) -> tuple[int, int] | None:
    rows = dict(db.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", [_REBUILD_NEXT, _REBUILD_END]).fetchall())
    if _REBUILD_NEXT not in rows:
        return None
    return int(rows[_REBUILD_NEXT]), int(rows.get(_REBUILD_END) or 0)


def pending_count(db: sqlite_utils.Database, model: str) -> int:
    """Items waiting to be tagged: never tagged, or not yet reached by a rebuild."""
    untagged = db.execute(
        "SELECT count(*) FROM items WHERE keyphrases IS NULL AND embedding IS NOT NULL AND embedding_model = ?", [model]
    ).fetchone()[0]
    state = _rebuild_state(db)
    if state:
        untagged += db.execute(
            "SELECT count(*) FROM items WHERE id >= ? AND id <= ? AND keyphrases IS NOT NULL AND embedding_model = ?",
            [state[0], state[1], model],
        ).fetchone()[0]
    return untagged


def tag_pending(
    db: sqlite_utils.Database, embedder, *, progress: Callable[[int, int], None] | None = None, batch_size: int = BATCH
) -> int:
    """Tag every item waiting for it (see :func:`pending_count`), in committed batches, so an
    interrupted run loses at most one batch and the next run continues. Returns how many."""
    if not taggers_active():
        return 0
    total = pending_count(db, embedder.name)
    done = 0
    while True:
        state = _rebuild_state(db)
        rows = db.execute(
            f"{ITEM_SQL} WHERE keyphrases IS NULL AND embedding IS NOT NULL "
            "AND embedding_model = ? ORDER BY id LIMIT ?",
            [embedder.name, batch_size],
        ).fetchall()
        cursor = None
        if not rows and state:
            rows = db.execute(
                f"{ITEM_SQL} WHERE id >= ? AND id <= ? AND embedding_model = ? ORDER BY id LIMIT ?",
                [state[0], state[1], embedder.name, batch_size],
            ).fetchall()
            cursor = rows[-1][0] + 1 if rows else None
        if not rows:
            if state:
                with write_transaction(db):
                    db.execute("DELETE FROM meta WHERE key IN (?, ?)", [_REBUILD_NEXT, _REBUILD_END])
            return done
        items = [item_dict(r) for r in rows]
        proposals = propose_for(embedder, items, [r[8] for r in rows])
        with write_transaction(db):
            apply_proposals(db, proposals)
            if cursor is not None:
                db.execute("UPDATE meta SET value = ? WHERE key = ?", [str(cursor), _REBUILD_NEXT])
        done += len(rows)
        if progress:
            progress(done, max(total, done))


def propose_for(embedder, items: list[dict], blobs=None) -> dict[int, dict[str, float]]:
    """Run the model over ``items`` for their token vectors (when the embedder offers
    them; otherwise the stored embeddings are used) and collect the proposals."""
    texts = [embedding_text(i["title"], i["summary"]) for i in items]
    if embeds_tokens(embedder):
        vectors, tokens = embedder.embed_tokens(texts)
    elif blobs is not None and all(blobs):
        vectors, tokens = np.stack([from_blob(b) for b in blobs]), None
    else:
        vectors, tokens = embedder.embed(texts), None
    return propose(items, vectors, tokens)


def keyphrase_counts(db: sqlite_utils.Database) -> dict:
    """How far tagging got: items with keyphrases, distinct keyphrases, items not tagged."""
    with_kp = db.execute("SELECT count(*) FROM items WHERE keyphrases IS NOT NULL AND keyphrases != '[]'").fetchone()[0]
    distinct = db.execute(
        "SELECT count(DISTINCT j.value) FROM items, json_each(items.keyphrases) j WHERE items.keyphrases IS NOT NULL"
    ).fetchone()[0]
    untagged = db.execute("SELECT count(*) FROM items WHERE keyphrases IS NULL").fetchone()[0]
    return {"items_with_keyphrases": with_kp, "distinct_keyphrases": distinct, "untagged": untagged}


__all__ = [
    "MAX_PER_ITEM",
    "MIN_ITEMS",
    "apply_proposals",
    "embed_for_tags",
    "keyphrase_counts",
    "pending_count",
    "propose",
    "propose_for",
    "refresh",
    "start_rebuild",
    "tag_pending",
    "taggers_active",
]
