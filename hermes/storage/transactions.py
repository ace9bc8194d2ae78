"""Write transactions, and the errors SQLite raises for reasons outside hermes.

Every write goes through :func:`write_transaction` (``BEGIN IMMEDIATE`` … ``COMMIT``); a
write refused for a full disk, a long-held lock or a read-only file becomes a
:class:`DatabaseUnavailable` whose message says what to do.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import Unavailable

if TYPE_CHECKING:  # annotations only: plugin contract imports stay cheap
    import sqlite_utils

BUSY_TIMEOUT_S = 30.0
READONLY = "the database is read-only; check its permissions (hermes needs to write to it and to its directory)"


FULL_BELOW = 1024 * 1024  # bytes free under which a failed open or write is "disk full"
DISK_FULL = "the disk holding it is full; free some space and run the command again"


class DatabaseUnavailable(Unavailable, sqlite3.OperationalError):
    """SQLite refused a write for a reason outside hermes: the disk is full, another process
    held the write lock past the busy timeout, or the file is read-only. The transaction was
    rolled back, so nothing of it was written. Still a ``sqlite3.OperationalError``
    for code that tolerates such failures (a cache that is simply not persisted)."""


def disk_full(path: str | os.PathLike) -> bool:
    """Whether the file system holding ``path`` is (all but) full. SQLite says "disk I/O
    error", not "full", when it cannot even create its WAL index at 0 bytes free."""
    try:
        return shutil.disk_usage(Path(path).parent).free < FULL_BELOW
    except OSError:
        return False


def unavailable(exc: sqlite3.Error, db: sqlite_utils.Database | None = None) -> Exception:
    """``exc`` as a :class:`DatabaseUnavailable` with a message a user can act on, or ``exc``
    itself when it is not about the environment (a constraint, a bug)."""
    text = str(exc)
    where = "the database"
    if db is not None:
        try:
            where = db.execute("PRAGMA database_list").fetchone()[2] or where
        except sqlite3.Error:
            pass
    if "full" in text or ("disk I/O" in text and where != "the database" and disk_full(where)):
        why = DISK_FULL
    elif "locked" in text or "busy" in text:
        why = (
            f"another process held its write lock for longer than {BUSY_TIMEOUT_S:g} s "
            "(a long hermes ingest?); try again in a moment"
        )
    elif "readonly" in text or "read-only" in text:
        why = READONLY.removeprefix("the database is ")
        why = f"it is {why}"
    elif "disk I/O" in text:
        why = "the disk reported an I/O error; check the disk and the file"
    else:
        return exc
    return DatabaseUnavailable(
        f"{where}: could not write: {why}. The unfinished write was rolled back (SQLite: {text})"
    )


@contextmanager
def write_transaction(db: sqlite_utils.Database):
    """``BEGIN IMMEDIATE`` … ``COMMIT``: takes the write lock up front so a read-then-write
    inside cannot be invalidated by another process (no lost update, no phantom). Nested
    use joins the outer transaction."""
    conn = db.conn
    if conn.in_transaction:
        yield db
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise unavailable(exc, db) from exc
    try:
        yield db
    except BaseException as exc:
        # SQLite may already have rolled back by itself (a full disk mid-statement); a
        # second ROLLBACK would then raise and hide the real error.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError) and not isinstance(exc, DatabaseUnavailable):
            raise unavailable(exc, db) from exc
        raise
    else:
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            # A COMMIT refused for a full disk (or a lock) leaves the transaction open.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise unavailable(exc, db) from exc
