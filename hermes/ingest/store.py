"""Storing normalised items and embedding the ones that lack an embedding.

Insertion and embedding are separate steps on purpose: a crash between them leaves items
without an embedding, and the next run's :func:`embed_pending` completes them.
"""

from __future__ import annotations

import json

import sqlite_utils

from ..contract import Embedder
from ..embed import to_blob
from ..records import now_iso
from ..storage.transactions import write_transaction

ITEM_FIELDS = ("guid", "url", "title", "summary", "author", "published", "content_type",
               "tags", "enclosure", "arxiv_id")


def insert_items(db: sqlite_utils.Database, feed_id: int | None, items: list[dict]) -> list[int]:
    """Insert items not seen before (by guid or arXiv id); return the new ids in order."""
    new_ids = []
    fetched = now_iso()
    with write_transaction(db):
        for item in items:
            row = {f: item.get(f) for f in ITEM_FIELDS}
            row["tags"] = json.dumps(list(item.get("tags") or []))
            row["title"] = row["title"] or ""
            row["summary"] = row["summary"] or ""
            row["content_type"] = row["content_type"] or "article"
            if row["enclosure"] is not None and not isinstance(row["enclosure"], str):
                row["enclosure"] = json.dumps(row["enclosure"])
            if row["arxiv_id"] and db.execute(
                "SELECT 1 FROM items WHERE arxiv_id = ?", [row["arxiv_id"]]
            ).fetchone():
                continue  # the same paper from another listing
            cols = ["feed_id", "fetched", *ITEM_FIELDS]
            cur = db.execute(
                f"INSERT OR IGNORE INTO items ({', '.join(cols)}) "
                f"VALUES ({', '.join('?' * len(cols))})",
                [feed_id, fetched, *(row[f] for f in ITEM_FIELDS)],
            )
            if cur.rowcount:
                new_ids.append(cur.lastrowid)
    return new_ids


def embedding_text(title: str, summary: str) -> str:
    return f"{title}. {summary}".strip(". ").strip() if summary else (title or "")


def embed_pending(
    db: sqlite_utils.Database, embedder: Embedder, *, batch_size: int = 64, progress=None
) -> int:
    """Embed every item lacking an embedding from ``embedder``; return how many."""
    done = 0
    while True:
        rows = db.execute(
            """SELECT id, title, summary FROM items
               WHERE embedding IS NULL OR embedding_model IS NOT ?
               ORDER BY id LIMIT ?""",
            [embedder.name, batch_size],
        ).fetchall()
        if not rows:
            return done
        vecs = embedder.embed([embedding_text(r[1], r[2]) for r in rows])
        store_embeddings(db, embedder.name, [r[0] for r in rows], vecs)
        done += len(rows)
        if progress:
            progress(len(rows))


def store_embeddings(db: sqlite_utils.Database, model: str, item_ids: list[int], vecs) -> None:
    """Write embeddings, each with the next ``embed_seq`` (the in-memory matrix reads only
    rows newer than the last it saw). Joins an open write transaction."""
    with write_transaction(db):
        seq = db.execute("SELECT COALESCE(max(embed_seq), 0) FROM items").fetchone()[0]
        for k, (item_id, vec) in enumerate(zip(item_ids, vecs)):
            db.execute(
                "UPDATE items SET embedding = ?, embedding_model = ?, embed_seq = ? WHERE id = ?",
                [to_blob(vec), model, seq + k + 1, item_id],
            )
