"""Faceted membership, the per-persona revision counter and the change log.

- ``experienced`` = heard (max reading fraction >= the threshold) ∪ captured (a highlight
  or a note). ``saved`` = favorited − experienced. A favorite alone never makes an item
  experienced: it means "read later", not "learned".
- Every membership change bumps the persona's revision by exactly one and appends one log
  row ``{revision, kind: added|removed, facet, item_id}``. :func:`sync_item` runs inside
  the signal write's ``BEGIN IMMEDIATE`` transaction (from ``hermes_signal_written``), so
  the diff is taken against the committed state under the write lock: two processes
  writing at once cannot both see the old membership, which is what would produce a
  phantom tombstone, a re-add or a duplicated revision.
- The log is bounded (``[corpus] log_retention`` rows per persona). Trimming records the
  newest dropped revision in ``corpus_revision.trimmed_through``, so the log always holds
  exactly the revisions ``(trimmed_through, revision]`` and a consumer whose cursor is
  older learns that it missed changes (``truncated``).
"""

from __future__ import annotations

import sqlite_utils

from hermes.arguments import refuse
from hermes.errors import InvalidInput
from hermes.storage.records import now_iso
from hermes.storage.transactions import write_transaction

from .settings import corpus_settings

FACETS = ("experienced", "saved")


def check_facet(facet: str) -> str:
    if facet not in FACETS:
        raise InvalidInput(
            f"unknown facet {facet!r}; use 'experienced' (read or captured) or 'saved' (favorited, not yet read)"
        )
    return facet


def item_state(db: sqlite_utils.Database, user_id: int, item_id: int) -> dict:
    """The raw signals of one persona on one item."""
    row = db.execute(
        """SELECT
             (SELECT max_fraction FROM corpus_progress WHERE user_id = :u AND item_id = :i),
             (SELECT opens FROM corpus_progress WHERE user_id = :u AND item_id = :i),
             (SELECT count(*) FROM corpus_highlights WHERE user_id = :u AND item_id = :i),
             (SELECT count(*) FROM corpus_notes WHERE user_id = :u AND item_id = :i),
             EXISTS (SELECT 1 FROM corpus_favorites WHERE user_id = :u AND item_id = :i)""",
        {"u": user_id, "i": item_id},
    ).fetchone()
    return {
        "max_fraction": row[0] or 0.0,
        "opens": row[1] or 0,
        "highlights": row[2],
        "notes": row[3],
        "favorited": bool(row[4]),
    }


def facets_for(state: dict, threshold: float) -> set[str]:
    """The facet rule, in one place."""
    heard = state["max_fraction"] >= threshold
    captured = state["highlights"] + state["notes"] > 0
    if heard or captured:
        return {"experienced"}
    if state["favorited"]:
        return {"saved"}
    return set()


def _bump(db: sqlite_utils.Database, user_id: int) -> int:
    db.execute("INSERT OR IGNORE INTO corpus_revision (user_id) VALUES (?)", [user_id])
    db.execute("UPDATE corpus_revision SET revision = revision + 1 WHERE user_id = ?", [user_id])
    return db.execute("SELECT revision FROM corpus_revision WHERE user_id = ?", [user_id]).fetchone()[0]


def _trim(db: sqlite_utils.Database, user_id: int, revision: int, retention: int) -> None:
    cutoff = revision - retention
    if cutoff <= 0:
        return
    db.execute("DELETE FROM corpus_log WHERE user_id = ? AND revision <= ?", [user_id, cutoff])
    db.execute(
        "UPDATE corpus_revision SET trimmed_through = max(trimmed_through, ?) WHERE user_id = ?",
        [cutoff, user_id],
    )


def sync_item(db: sqlite_utils.Database, user_id: int, item_id: int, at: str | None = None) -> list[dict]:
    """Recompute one item's membership for one persona, apply and log the difference.

    Must run inside a write transaction (the signal path's ``BEGIN IMMEDIATE``); returns
    the changes made (possibly none).
    """
    if not db.conn.in_transaction:
        raise RuntimeError("sync_item must run inside the signal write transaction")
    cfg = corpus_settings()
    at = at or now_iso()
    want = facets_for(item_state(db, user_id, item_id), cfg.heard_threshold)
    have = {
        r[0]
        for r in db.execute("SELECT facet FROM corpus_membership WHERE user_id = ? AND item_id = ?", [user_id, item_id])
    }
    # Removals first: an item moving saved -> experienced reads as a tombstone then an add.
    todo = [("removed", f) for f in sorted(have - want)] + [("added", f) for f in sorted(want - have)]
    changes = []
    revision = 0
    for kind, facet in todo:
        revision = _bump(db, user_id)
        db.execute(
            "INSERT INTO corpus_log (user_id, revision, kind, facet, item_id, at) VALUES (?, ?, ?, ?, ?, ?)",
            [user_id, revision, kind, facet, item_id, at],
        )
        if kind == "added":
            db.execute(
                "INSERT INTO corpus_membership (user_id, item_id, facet, revision, added) VALUES (?, ?, ?, ?, ?)",
                [user_id, item_id, facet, revision, at],
            )
        else:
            db.execute(
                "DELETE FROM corpus_membership WHERE user_id = ? AND item_id = ? AND facet = ?",
                [user_id, item_id, facet],
            )
        changes.append({"revision": revision, "kind": kind, "facet": facet, "item_id": item_id})
    if changes:
        _trim(db, user_id, revision, cfg.log_retention)
    return changes


def touched_items(db: sqlite_utils.Database, user_id: int) -> list[int]:
    """Every item a persona has a corpus signal or membership on."""
    return [
        r[0]
        for r in db.execute(
            """SELECT item_id FROM corpus_progress WHERE user_id = :u
           UNION SELECT item_id FROM corpus_highlights WHERE user_id = :u
           UNION SELECT item_id FROM corpus_notes WHERE user_id = :u
           UNION SELECT item_id FROM corpus_favorites WHERE user_id = :u
           UNION SELECT item_id FROM corpus_membership WHERE user_id = :u
           ORDER BY 1""",
            {"u": user_id},
        )
    ]


def reconcile(db: sqlite_utils.Database, user_id: int) -> list[dict]:
    """Recompute every item of a persona (after ``heard_threshold`` changed in the config),
    logging each difference like a signal write would. Idempotent."""
    changes = []
    with write_transaction(db):
        for item_id in touched_items(db, user_id):
            changes += sync_item(db, user_id, item_id)
    return changes


# --- reads -------------------------------------------------------------------------------


def revision_state(db: sqlite_utils.Database, user_id: int) -> tuple[int, int]:
    """``(revision, trimmed_through)``; ``(0, 0)`` for a persona with no corpus yet."""
    row = db.execute("SELECT revision, trimmed_through FROM corpus_revision WHERE user_id = ?", [user_id]).fetchone()
    return (row[0], row[1]) if row else (0, 0)


def facet_counts(db: sqlite_utils.Database, user_id: int) -> dict[str, int]:
    counts = dict.fromkeys(FACETS, 0)
    for facet, n in db.execute(
        "SELECT facet, count(*) FROM corpus_membership WHERE user_id = ? GROUP BY facet", [user_id]
    ):
        counts[facet] = n
    return counts


def facet_entries(db: sqlite_utils.Database, user_id: int, facet: str) -> list[tuple[int, str]]:
    """``(item_id, added)`` for the items in a facet, most recently added first (the stable
    API other plugins use, e.g. the digest's "saved, not read yet")."""
    check_facet(facet)
    return [
        (r[0], r[1])
        for r in db.execute(
            """SELECT item_id, added FROM corpus_membership
           WHERE user_id = ? AND facet = ? ORDER BY revision DESC, item_id""",
            [user_id, facet],
        )
    ]


def facet_item_ids(db: sqlite_utils.Database, user_id: int, facet: str) -> list[int]:
    """Item ids in a facet, most recently added first (the stable API other plugins use)."""
    return [item_id for item_id, _ in facet_entries(db, user_id, facet)]


def changes_since(db: sqlite_utils.Database, user_id: int, since: int, limit: int | None = None) -> dict:
    """The log after revision ``since``: ``{changes, revision, truncated, has_more, next_since}``.

    ``truncated`` is true when revisions after ``since`` were trimmed from the log (the
    consumer must re-read the whole facet lists); the retained changes are still returned.
    """
    if isinstance(since, bool) or not isinstance(since, int):
        raise InvalidInput(f"since must be a whole number (a revision), got {since!r}")
    # One read transaction: the revision and the rows come from the same snapshot.
    with _read_snapshot(db):
        revision, trimmed = revision_state(db, user_id)
        if since < 0:
            raise InvalidInput(f"since must be >= 0 (0 = from the beginning), got {since}")
        if since > revision:
            raise refuse(
                "since",
                f"is beyond the current revision {revision}; pass a revision you received earlier, or 0 for everything",
                got=since,
                given=True,
            )
        sql = (
            "SELECT revision, kind, facet, item_id FROM corpus_log WHERE user_id = ? AND revision > ? ORDER BY revision"
        )
        params: list = [user_id, since]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = db.execute(sql, params).fetchall()
    changes = [{"revision": r[0], "kind": r[1], "facet": r[2], "item_id": r[3]} for r in rows]
    last = changes[-1]["revision"] if changes else revision
    has_more = bool(changes) and last < revision
    return {
        "changes": changes,
        "revision": revision,
        "truncated": since < trimmed,
        "has_more": has_more,
        "next_since": last if has_more else revision,
    }


class _read_snapshot:
    """A deferred read transaction (joins an open one): one consistent WAL snapshot."""

    def __init__(self, db):
        self.conn = db.conn
        self.mine = False

    def __enter__(self):
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.mine = True
        return self

    def __exit__(self, *exc):
        if self.mine:
            self.conn.execute("COMMIT")
        return False
