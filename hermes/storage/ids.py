"""Ids that are never handed out twice, for the tables whose ids people and agents quote.

``users.id``, ``items.id`` and ``clicks.id`` are plain rowids, and SQLite gives the highest
row's id, once that row is deleted, to the next row inserted: a note or script keyed on
"item 311" then names another paper, a deleted persona's id passes to the next persona (and
whatever is still keyed by it), an undone "click 42" is "click 42" again for another item.
The highest id ever assigned is kept in ``meta`` (``<table>.last_id``) and a new row goes
above it. Call these inside the write transaction that inserts or deletes the rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils

#: the tables whose ids are kept from reuse (the one place their names are spelt for it)
TABLES = ("users", "items", "clicks")


def next_id(db: sqlite_utils.Database, table: str) -> int:
    """An id for a new row of ``table`` that no row of it ever had. Once rows are in with
    this id and the ones after it, :func:`taken` records the last of them (an insert that
    may be ignored, as an entry already stored is, spends no id)."""
    if table not in TABLES:
        raise ValueError(f"no id mark for table {table!r}")
    last = db.execute("SELECT value FROM meta WHERE key = ?", [f"{table}.last_id"]).fetchone()
    highest = db.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
    return max(int(last[0]) if last else 0, highest) + 1


def taken(db: sqlite_utils.Database, table: str, last: int) -> None:
    """Record ``last`` as the highest id ``table`` has assigned."""
    if table not in TABLES:
        raise ValueError(f"no id mark for table {table!r}")
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [f"{table}.last_id", str(last)],
    )


def keep_last_id(db: sqlite_utils.Database, table: str) -> None:
    """Record ``table``'s highest id before rows are deleted: a database made before the
    mark was kept (or whose newest row came in another way) has none yet, and deleting its
    newest row would free that id for the next one."""
    taken(db, table, next_id(db, table) - 1)
