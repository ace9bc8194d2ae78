"""The corpus's signal writes, each through :func:`hermes.storage.signals.record_signal`.

Every function validates everything first (nothing is written for a refused call), then
writes its rows inside the signal path's ``BEGIN IMMEDIATE`` transaction, where the
corpus's ``hermes_signal_written`` observer recomputes the item's membership and logs the
changes. Each returns a dict that includes ``changes``: the membership changes this write
caused (``[{revision, kind, facet, item_id}]``, often empty).

``user`` is a persona name (or its integer id); ``source`` is ``agent`` (MCP tools),
``ui`` (the web UI) or ``bootstrap``, as for clicks.
"""

from __future__ import annotations

import sqlite_utils

from hermes.contract import Signal
from hermes.errors import InvalidInput, NotFound
from hermes.storage.clicks import CLICK_SOURCES
from hermes.storage.records import require_item, require_user
from hermes.storage.signals import record_signal

KINDS = ("progress", "open", "highlight", "note", "favorite")
MAX_TEXT = 10_000


def _write(db, signal: Signal, write) -> tuple[object, list[dict]]:
    """Write the signal; return what ``write`` did and the membership changes the corpus
    observer (:func:`hermes_corpus.hermes_signal_written`) reported back through pluggy."""
    recorded = record_signal(db, signal, write)
    return recorded.result, recorded.observed


def _source(source: str) -> str:
    if source not in CLICK_SOURCES:
        raise InvalidInput(f"invalid source {source!r}; expected one of {', '.join(CLICK_SOURCES)}")
    return source


def _text(value, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    value = value.strip()
    if not value:
        if optional:
            return None
        raise InvalidInput(f"{what} is empty; pass the text to keep")
    return value  # its length the tool's model checked


def record_progress(
    db: sqlite_utils.Database,
    user,
    item_id: int,
    fraction: float,
    *,
    new_session: bool = True,
    source: str = "agent",
) -> dict:
    """Record how much of an item was read or played (the maximum is kept).

    Crossing the heard threshold makes the item *experienced*. ``new_session`` counts one
    open of the item: the opens after the first are re-reads (they raise its strength);
    pass ``False`` for a progress update within a reading already counted.
    """
    fraction = float(fraction)  # the tool's model took a number from 0 to 1
    _source(source)
    u = require_user(db, user)
    item = require_item(db, item_id)
    signal = Signal(
        "progress",
        u["id"],
        item["id"],
        op="set",
        data={"fraction": fraction, "new_session": new_session},
        source=source,
    )

    def write(db):
        db.execute(
            """INSERT INTO corpus_progress (user_id, item_id, max_fraction, opens, first_seen, last_seen)
               VALUES (:u, :i, :f, 1, :at, :at)
               ON CONFLICT (user_id, item_id) DO UPDATE SET
                 max_fraction = max(max_fraction, excluded.max_fraction),
                 opens = max(opens + :inc, 1),
                 last_seen = excluded.last_seen""",
            {"u": u["id"], "i": item["id"], "f": fraction, "at": signal.at, "inc": 1 if new_session else 0},
        )
        return db.execute(
            "SELECT max_fraction, opens FROM corpus_progress WHERE user_id = ? AND item_id = ?",
            [u["id"], item["id"]],
        ).fetchone()

    (max_fraction, opens), changes = _write(db, signal, write)
    return {
        "user": u["name"],
        "item_id": item["id"],
        "title": item["title"],
        "fraction": fraction,
        "max_fraction": max_fraction,
        "opens": opens,
        "reopens": max(0, opens - 1),
        "changes": changes,
    }


def mark_unread(db: sqlite_utils.Database, user, item_id: int, *, source: str = "agent") -> dict:
    """Take back "read": the item's reading progress goes back to 0, so it leaves the heard
    items (a tombstone is logged). Its opens, highlights, notes and favorite stay: an item
    with a highlight or a note is still experienced."""
    _source(source)
    u = require_user(db, user)
    item = require_item(db, item_id)
    signal = Signal("progress", u["id"], item["id"], op="delete", data={"fraction": 0.0}, source=source)

    def write(db):
        return (
            db.execute(
                "UPDATE corpus_progress SET max_fraction = 0 WHERE user_id = ? AND item_id = ? AND max_fraction > 0",
                [u["id"], item["id"]],
            ).rowcount
            > 0
        )

    changed, changes = _write(db, signal, write)
    return {"user": u["name"], "item_id": item["id"], "title": item["title"], "changed": changed, "changes": changes}


def add_highlight(
    db: sqlite_utils.Database,
    user,
    item_id: int,
    text: str,
    note: str | None = None,
    *,
    source: str = "agent",
) -> dict:
    """Keep a passage of an item (with an optional comment); the item becomes experienced."""
    text = _text(text, "highlight text")
    note = _text(note, "note", optional=True)
    _source(source)
    u = require_user(db, user)
    item = require_item(db, item_id)
    signal = Signal("highlight", u["id"], item["id"], op="add", source=source)

    def write(db):
        return db.execute(
            "INSERT INTO corpus_highlights (user_id, item_id, text, note, created) VALUES (?, ?, ?, ?, ?)",
            [u["id"], item["id"], text, note, signal.at],
        ).lastrowid

    highlight_id, changes = _write(db, signal, write)
    return {
        "user": u["name"],
        "highlight_id": highlight_id,
        "item_id": item["id"],
        "title": item["title"],
        "changes": changes,
    }


def _owned(db, table: str, what: str, user: dict, row_id) -> dict:
    cols = "id, item_id, text" + (", note" if table == "corpus_highlights" else "")
    row = db.execute(f"SELECT {cols} FROM {table} WHERE id = ? AND user_id = ?", [row_id, user["id"]]).fetchone()
    if row is None:
        # Deliberately the same message whether the id is unused, already deleted or another
        # persona's: one persona's calls learn nothing about another's corpus.
        raise NotFound(
            f"persona {user['name']!r} has no {what} {row_id} (it may have been "
            f"deleted already); recall(user, query) lists {what} ids"
        )
    return {"id": row[0], "item_id": row[1], "text": row[2], "note": row[3] if len(row) > 3 else None}


def get_highlight(db: sqlite_utils.Database, user, highlight_id: int) -> dict:
    return _owned(db, "corpus_highlights", "highlight", require_user(db, user), highlight_id)


def get_note(db: sqlite_utils.Database, user, note_id: int) -> dict:
    return _owned(db, "corpus_notes", "note", require_user(db, user), note_id)


def _delete(db, table: str, what: str, user, row_id, source: str) -> dict:
    _source(source)
    u = require_user(db, user)
    row = _owned(db, table, what, u, row_id)
    signal = Signal(what, u["id"], row["item_id"], op="delete", data={"id": row["id"]}, source=source)

    def write(db):
        cur = db.execute(f"DELETE FROM {table} WHERE id = ? AND user_id = ?", [row["id"], u["id"]])
        if cur.rowcount == 0:  # another writer deleted it since we looked: refuse, roll back
            raise NotFound(f"persona {u['name']!r} has no {what} {row['id']} (already deleted)")
        return row

    deleted, changes = _write(db, signal, write)
    return {
        "user": u["name"],
        f"{what}_id": deleted["id"],
        "item_id": deleted["item_id"],
        "text": deleted["text"],
        "changes": changes,
    }


def delete_highlight(db: sqlite_utils.Database, user, highlight_id: int, *, source: str = "agent") -> dict:
    """Delete one of the persona's highlights (a tombstone is logged if the item leaves a facet)."""
    return _delete(db, "corpus_highlights", "highlight", user, highlight_id, source)


def add_note(db: sqlite_utils.Database, user, item_id: int, text: str, *, source: str = "agent") -> dict:
    """Write a note on an item; the item becomes experienced."""
    text = _text(text, "note text")
    _source(source)
    u = require_user(db, user)
    item = require_item(db, item_id)
    signal = Signal("note", u["id"], item["id"], op="add", source=source)

    def write(db):
        return db.execute(
            "INSERT INTO corpus_notes (user_id, item_id, text, created) VALUES (?, ?, ?, ?)",
            [u["id"], item["id"], text, signal.at],
        ).lastrowid

    note_id, changes = _write(db, signal, write)
    return {"user": u["name"], "note_id": note_id, "item_id": item["id"], "title": item["title"], "changes": changes}


def delete_note(db: sqlite_utils.Database, user, note_id: int, *, source: str = "agent") -> dict:
    """Delete one of the persona's notes."""
    return _delete(db, "corpus_notes", "note", user, note_id, source)


def favorite(db: sqlite_utils.Database, user, item_id: int, on: bool = True, *, source: str = "agent") -> dict:
    """Favorite (save for later) or unfavorite an item. Idempotent; never makes it experienced."""
    _source(source)
    u = require_user(db, user)
    item = require_item(db, item_id)
    signal = Signal("favorite", u["id"], item["id"], op="add" if on else "delete", source=source)

    def write(db):
        if on:
            cur = db.execute(
                "INSERT OR IGNORE INTO corpus_favorites (user_id, item_id, created) VALUES (?, ?, ?)",
                [u["id"], item["id"], signal.at],
            )
        else:
            cur = db.execute("DELETE FROM corpus_favorites WHERE user_id = ? AND item_id = ?", [u["id"], item["id"]])
        return cur.rowcount > 0

    changed, changes = _write(db, signal, write)
    return {
        "user": u["name"],
        "item_id": item["id"],
        "title": item["title"],
        "favorited": on,
        "changed": changed,
        "changes": changes,
    }
