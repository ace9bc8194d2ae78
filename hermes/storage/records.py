"""Personas, feeds and items as the rest of hermes sees them: lookups that name what exists
when they fail, persona creation, the one feed insert, item hydration, the one item delete,
and the clock every stored time is written by."""

from __future__ import annotations

import json
import mimetypes
import sqlite3
import urllib.parse
from typing import TYPE_CHECKING

from hermes.clock import now_iso  # noqa: F401 (re-exported: the clock's older home)
from hermes.errors import InvalidInput, NotFound
from hermes.facekit.faces import CREATE_PERSONA, FIND_ITEMS
from hermes.storage.clicks import feedless_clicked_only_by, feedless_unclicked
from hermes.storage.ids import keep_last_id, next_id, taken
from hermes.storage.transactions import write_transaction

if TYPE_CHECKING:  # annotations only: plugin contract imports stay cheap
    import sqlite_utils


def file_of(db: sqlite_utils.Database) -> str:
    """The file behind a connection, for messages that must say which database was used."""
    try:
        return db.execute("PRAGMA database_list").fetchone()[2] or "an in-memory database"
    except sqlite3.Error:
        return "the database"


# --- feeds ----------------------------------------------------------------------------------

#: who subscribed a feed: a person (feeds.toml, OPML, the CLI) or an agent (an MCP tool, the
#: web UI). Ingest guards an agent's feeds (private addresses refused).
SUBSCRIBERS = ("user", "agent")


def insert_feed(db: sqlite_utils.Database, url: str, title: str | None, *, subscribed_by: str = "agent") -> int | None:
    """Register a feed by URL (the one place feed rows are inserted: ``feeds.toml`` seeding,
    OPML import, ``hermes feeds add``, ``add_feed``, the demo); its id, or ``None`` when the
    URL is already subscribed. Call it inside the caller's write transaction.

    ``subscribed_by`` (:data:`SUBSCRIBERS`) defaults to ``agent``, the guarded kind: a caller
    that forgets to say a person gave the URL gets the safe behaviour."""
    if subscribed_by not in SUBSCRIBERS:
        raise ValueError(f"subscribed_by must be one of {SUBSCRIBERS}, got {subscribed_by!r}")
    cur = db.execute(
        "INSERT OR IGNORE INTO feeds (url, title, added, subscribed_by) VALUES (?, ?, ?, ?)",
        [url, title, now_iso(), subscribed_by],
    )
    return cur.lastrowid if cur.rowcount else None


def feed_row(db: sqlite_utils.Database, feed_id: int) -> dict | None:
    """``{"id", "title", "url"}`` of a subscribed feed, None when there is none."""
    row = db.execute("SELECT id, title, url FROM feeds WHERE id = ?", [feed_id]).fetchone()
    return {"id": row[0], "title": row[1], "url": row[2]} if row else None


def feeds_by_title(db: sqlite_utils.Database) -> list[dict]:
    """Every feed as ``{"id", "title"}`` (its URL when it has no title), by title."""
    return [
        {"id": r[0], "title": r[1] or r[2]}
        for r in db.execute("SELECT id, title, url FROM feeds ORDER BY lower(coalesce(title, url))")
    ]


def failing_feed_ids(db: sqlite_utils.Database) -> list[int]:
    """The feeds whose last fetch failed (``last_error`` set), by id."""
    return [r[0] for r in db.execute("SELECT id FROM feeds WHERE last_error IS NOT NULL ORDER BY id")]


def archive_size(db: sqlite_utils.Database) -> dict[str, int]:
    """``{"items", "feeds"}``: how many of each are stored; and of the items, how many came
    from a subscribed feed (``from_feeds``), were added with no feed (``added``: saved by
    reference, imported from a library) or stay from a feed since removed (``orphaned``)."""
    items, added, orphaned = db.execute(
        """SELECT count(*), count(*) FILTER (WHERE feed_id IS NULL),
                  count(*) FILTER (WHERE feed_id IS NOT NULL AND feed_id NOT IN (SELECT id FROM feeds))
           FROM items"""
    ).fetchone()
    return {
        "items": items,
        "feeds": db.execute("SELECT count(*) FROM feeds").fetchone()[0],
        "from_feeds": items - added - orphaned,
        "added": added,
        "orphaned": orphaned,
    }


# --- personas -------------------------------------------------------------------------------


def list_personas(db: sqlite_utils.Database) -> list[dict]:
    """Every persona, by name: ``id``, ``name``, ``interests``, ``created``."""
    return [
        {"id": r[0], "name": r[1], "interests": r[2], "created": r[3]}
        for r in db.execute("SELECT id, name, interests, created FROM users ORDER BY name")
    ]


def require_user(db: sqlite_utils.Database, name_or_id: str | int) -> dict:
    """The persona row, or :class:`NotFound` naming the personas that exist."""
    if isinstance(name_or_id, bool):
        raise InvalidInput("a persona is named by a string")
    col = "id" if isinstance(name_or_id, int) else "name"
    row = db.execute(f"SELECT id, name, interests FROM users WHERE {col} = ?", [name_or_id]).fetchone()
    if row is None and col == "name":
        # Names are unique regardless of case (creating "ADA" beside "ada" is refused), so
        # "bea" names "Bea": a trial's `hermes like bea 9` was told only "known: Bea".
        row = db.execute("SELECT id, name, interests FROM users WHERE lower(name) = lower(?)", [name_or_id]).fetchone()
    if row is None:
        names = [r[0] for r in db.execute("SELECT name FROM users ORDER BY name LIMIT 20")]
        hint = f"known personas: {', '.join(names)}" if names else f"no personas exist yet; {CREATE_PERSONA}"
        raise NotFound(f"unknown persona {name_or_id!r} in {file_of(db)}; {hint}")
    return {"id": row[0], "name": row[1], "interests": row[2]}


def create_user(db: sqlite_utils.Database, name: str, interests: str) -> dict:
    """Insert a persona; the caller validates the name and text.

    Ids are never reused (:mod:`hermes.storage.ids`): a deleted persona's id given to the
    next one would pass it anything still keyed by it (a cache in another process, a
    plugin's table).
    """
    with write_transaction(db):
        user_id = next_id(db, "users")
        db.execute(
            "INSERT INTO users (id, name, interests, created) VALUES (?, ?, ?, ?)",
            [user_id, name, interests, now_iso()],
        )
        taken(db, "users", user_id)
    return {"id": user_id, "name": name, "interests": interests}


# --- items ----------------------------------------------------------------------------------


def require_item(db: sqlite_utils.Database, item_id: int) -> dict:
    if isinstance(item_id, bool) or not isinstance(item_id, int):
        raise InvalidInput(f"item_id must be an integer, got {item_id!r}")
    row = db.execute("SELECT id, title, feed_id FROM items WHERE id = ?", [item_id]).fetchone()
    if row is None:
        raise NotFound(f"unknown item {item_id} in {file_of(db)}; {FIND_ITEMS}")
    return {"id": row[0], "title": row[1], "feed_id": row[2]}


def require_items(db: sqlite_utils.Database, item_ids: list[int], undone: str) -> None:
    """Refuse ``item_ids`` before a batch writes anything when any names no item: the
    refusal names every such id and says ``undone`` ("nothing was recorded")."""
    known: set[int] = set()
    for start in range(0, len(item_ids), 500):
        chunk = item_ids[start : start + 500]
        known |= {r[0] for r in db.execute(f"SELECT id FROM items WHERE id IN ({','.join('?' * len(chunk))})", chunk)}
    missing = [i for i in item_ids if i not in known]
    if missing:
        raise NotFound(f"no item with id {', '.join(map(str, missing))}; {undone}. {FIND_ITEMS.sentence()}")


ITEM_COLUMNS = (
    "id, feed_id, title, url, summary, author, published, content_type, tags, "
    "(SELECT title FROM feeds WHERE feeds.id = items.feed_id) AS source, authors, keyphrases, "
    "enclosure, dated_by"
)


def item_title(db: sqlite_utils.Database, item_id: int) -> str | None:
    """The stored title of an item (as the feed wrote it), None for an unknown item."""
    row = db.execute("SELECT title FROM items WHERE id = ?", [item_id]).fetchone()
    return row[0] if row else None


def item_url(db: sqlite_utils.Database, item_id: int) -> str | None:
    """The stored link of an item, None for an unknown item or one without a link."""
    row = db.execute("SELECT url FROM items WHERE id = ?", [item_id]).fetchone()
    return row[0] if row else None


def feed_item_ids(db: sqlite_utils.Database, feed_id: int) -> list[int]:
    """The ids of the items stored from a feed."""
    return [r[0] for r in db.execute("SELECT id FROM items WHERE feed_id = ?", [feed_id])]


def is_media(enclosure) -> bool:
    """Whether an enclosure is an episode's media file: audio or video by its type, else by
    its file name's extension (a feed may give no type). A newsletter's cover image is not:
    it is neither linked as the episode nor stands in for a missing link."""
    if not isinstance(enclosure, dict) or not enclosure.get("url"):
        return False
    kind = str(enclosure.get("type") or "").strip().lower()
    if not kind:
        kind = mimetypes.guess_type(urllib.parse.urlsplit(str(enclosure["url"])).path)[0] or ""
    return kind.startswith(("audio/", "video/"))


def date_source(published: str | None, dated_by: str | None) -> str | None:
    """``"feed"`` (the feed's date, or its URL's), ``"first seen"`` (an undated entry of a
    later fetch, dated by when hermes first saw it: an estimate), ``"year only"`` /
    ``"month only"`` (an imported library entry dated no more precisely, stored as the
    period's first day) or ``None`` (no date)."""
    if not published:
        return None
    return dated_by or "feed"


def item_rows(db: sqlite_utils.Database, item_ids) -> dict[int, dict]:
    """Items by id, as dicts with their feed's title as ``source`` and ``tags``, ``authors``
    and ``keyphrases`` (the tags that are keyphrases) parsed, ``enclosure`` (a podcast's
    media file: ``url``, ``type``, ``length`` in bytes or ``None``) or ``None``; ``published``
    is ``None`` for an item whose date is unknown, and ``date_source`` says where a date
    comes from (:func:`date_source`)."""
    ids = [int(i) for i in item_ids]
    if not ids:
        return {}
    out = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in db.execute(f"SELECT {ITEM_COLUMNS} FROM items WHERE id IN ({marks})", chunk):
            d = dict(
                zip(
                    (
                        "id",
                        "feed_id",
                        "title",
                        "url",
                        "summary",
                        "author",
                        "published",
                        "content_type",
                        "tags",
                        "source",
                        "authors",
                        "keyphrases",
                        "enclosure",
                        "dated_by",
                    ),
                    row,
                    strict=True,
                )
            )
            d["tags"] = json.loads(d["tags"] or "[]")
            d["authors"] = json.loads(d["authors"] or "[]")
            d["keyphrases"] = json.loads(d["keyphrases"] or "[]")
            d["enclosure"] = json.loads(d["enclosure"]) if d["enclosure"] else None
            d["date_source"] = date_source(d["published"], d.pop("dated_by"))
            out[d["id"]] = d
    return out


# --- deleting items -------------------------------------------------------------------------

#: per-persona rows that are derived from an item, not a reference a person or a persona made:
#: they go with the item (an explanation cites the item; it is recomputed on request)
DERIVED = ("explanations",)
#: ``meta`` key counting item deletions: a process's embedding matrix (:mod:`hermes.ranking.matrix`)
#: reloads when it changed, so a deleted item's row leaves it
REMOVED_KEY = "items.removed"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def item_tables(db: sqlite_utils.Database) -> list[tuple[str, str, str | None]]:
    """``(table, item column, persona column or None)`` of every table with rows about items:
    an ``item_id`` column or a foreign key to ``items`` — tables plugins add included, found
    generically. A table with a persona column (``user_id``, or a foreign key to ``users``)
    holds references a persona made (clicks, corpus rows); one without holds the item's own
    data (tag proposals, a saved paper's DOI), which goes with the item."""
    found = []
    tables = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()
    for table, sql in tables:
        if table == "items" or (sql or "").upper().startswith("CREATE VIRTUAL TABLE"):
            continue  # the full-text index follows items through its triggers
        try:
            cols = [r[1] for r in db.execute(f"PRAGMA table_info({_quoted(table)})")]
            fks = db.execute(f"PRAGMA foreign_key_list({_quoted(table)})").fetchall()
        except sqlite3.DatabaseError:  # a virtual table whose module is not loaded
            continue
        by_fk = {fk[2]: fk[3] for fk in fks}  # (id, seq, table, from, to, ...)
        item_col = by_fk.get("items") or ("item_id" if "item_id" in cols else None)
        if item_col:
            found.append((table, item_col, by_fk.get("users") or ("user_id" if "user_id" in cols else None)))
    return found


def unreferenced_items(
    db: sqlite_utils.Database,
    item_ids,
    *,
    leaving_user: int | None = None,
    leaving: tuple[str, ...] = (),
    ignoring: tuple[str, ...] = (),
) -> list[int]:
    """Those of ``item_ids`` that no feed brought (``feed_id`` NULL: a library entry stored
    as an item, a saved paper) and that no row of any persona refers to — a click of any
    source or persona, a corpus row (saved, read, highlighted, in its change log) — other than
    persona ``leaving_user``'s rows in the tables ``leaving`` (about to be deleted: a
    preview counts what a deletion will find) and any row of the tables ``ignoring``.
    Cached explanations do not count (:data:`DERIVED`)."""
    wanted = {int(i) for i in item_ids}
    if not wanted:
        return []
    # one query per table, over every item without a feed (an index range; few in any
    # archive: the saved papers and the libraries' entries), whatever the number asked about
    feedless = "SELECT id FROM items WHERE feed_id IS NULL"
    keep = wanted & {r[0] for r in db.execute(feedless)}
    for table, item_col, user_col in item_tables(db):
        if not keep:
            break
        if user_col is None or table in (*DERIVED, *ignoring):
            continue
        sql = f"SELECT DISTINCT {_quoted(item_col)} FROM {_quoted(table)} WHERE {_quoted(item_col)} IN ({feedless})"
        args: list = []
        if leaving_user is not None and table in leaving:
            sql += f" AND {_quoted(user_col)} IS NOT ?"
            args.append(leaving_user)
        keep -= {r[0] for r in db.execute(sql, args)}
    return sorted(keep)


def import_only_items(db: sqlite_utils.Database) -> list[int]:
    """The items a library import stored that only its likes hold, or nothing holds any
    more: no feed brought them, every click on them is a ``bootstrap`` one or none is left
    (the like taken back), and no other row of any persona (a corpus row) refers to them.
    They teach the importing persona; no feed lists them as unread. The ones nothing holds
    are deleted by the next reset that takes bootstrap clicks back, or a persona's delete
    (``hermes_persona.personas.imported_items``)."""
    if db.execute("SELECT 1 FROM items WHERE feed_id IS NULL LIMIT 1").fetchone() is None:
        return []  # the usual archive: one indexed look
    held = feedless_clicked_only_by(db, "bootstrap") + feedless_unclicked(db)
    return unreferenced_items(db, held, ignoring=("clicks",)) if held else []


def delete_items(db: sqlite_utils.Database, item_ids) -> int:
    """The one way items leave the archive: delete those of ``item_ids`` that
    :func:`unreferenced_items` finds (no feed, nothing of any persona refers to them; the
    others stay), with their own rows in every table about items (:func:`item_tables`), their
    cached explanations, their embedding and full-text entry (the index's triggers), and
    the ranking matrix's row (:data:`REMOVED_KEY`). Returns how many were deleted."""
    with write_transaction(db):
        gone = unreferenced_items(db, item_ids)
        if not gone:
            return 0
        keep_last_id(db, "items")  # the newest item's id is not freed for the next one
        owned = [(t, i) for t, i, u in item_tables(db) if u is None or t in DERIVED]
        for start in range(0, len(gone), 500):
            chunk = gone[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for table, item_col in owned:
                db.execute(f"DELETE FROM {_quoted(table)} WHERE {_quoted(item_col)} IN ({marks})", chunk)
            db.execute(f"DELETE FROM items WHERE id IN ({marks})", chunk)
        db.execute(
            "INSERT INTO meta (key, value) VALUES (?, '1') "
            "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            [REMOVED_KEY],
        )
    return len(gone)
