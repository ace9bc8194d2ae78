"""The database connection: one SQLite file, WAL, a busy timeout, migrations on open."""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from . import config, dbfile
from .errors import HermesError

BUSY_TIMEOUT_S = 30.0
READONLY = ("the database is read-only; check its permissions "
            "(hermes needs to write to it and to its directory)")


class DatabaseUnavailable(HermesError, sqlite3.OperationalError):
    """SQLite refused a write for a reason outside hermes: the disk is full, another process
    held the write lock past the busy timeout, or the file is read-only. The transaction was
    rolled back, so nothing of it was written. Still a ``sqlite3.OperationalError``
    for code that tolerates such failures (a cache that is simply not persisted)."""


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
    if "full" in text:
        why = "the disk holding it is full; free some space and run the command again"
    elif "locked" in text or "busy" in text:
        why = (f"another process held its write lock for longer than {BUSY_TIMEOUT_S:g} s "
               "(a long hermes ingest?); try again in a moment")
    elif "readonly" in text or "read-only" in text:
        why = READONLY.removeprefix("the database is ")
        why = f"it is {why}"
    elif "disk I/O" in text:
        why = "the disk reported an I/O error; check the disk and the file"
    else:
        return exc
    return DatabaseUnavailable(f"{where}: could not write: {why}. The unfinished write was "
                               f"rolled back (SQLite: {text})")


def file_of(db: sqlite_utils.Database) -> str:
    """The file behind a connection, for messages that must say which database was used."""
    try:
        return db.execute("PRAGMA database_list").fetchone()[2] or "an in-memory database"
    except sqlite3.Error:
        return "the database"


def connect(path: str | os.PathLike) -> sqlite_utils.Database:
    """Open (creating if needed) without migrating. Autocommit mode: write transactions
    are explicit (:func:`write_transaction`), so no statement silently opens one."""
    path = Path(path)
    if path.is_dir():
        raise HermesError(f"{path} is a directory, not a database file")
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = None
    try:
        conn = sqlite3.connect(
            str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        # Before the first write (switching to WAL rewrites the header): a non-empty file
        # that is not a hermes database is refused and left exactly as it was.
        dbfile.refuse_foreign(conn, path)
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
    except (sqlite3.DatabaseError, HermesError) as exc:
        if conn is not None:
            conn.close()
        if isinstance(exc, HermesError):
            raise
        if "readonly" in str(exc) or "read-only" in str(exc):
            raise HermesError(f"{path}: {READONLY}") from exc
        if "not a database" in str(exc):
            raise HermesError(f"{path} is not a SQLite database; hermes changes nothing in it. "
                              "Point --db (or HERMES_DB) at a hermes database, or at a new "
                              "file to start one.") from exc
        raise HermesError(f"{path}: cannot open as a SQLite database ({exc})") from exc
    if mode.lower() != "wal" and not _is_readonly(path):
        raise HermesError(f"{path}: could not switch to WAL mode (got {mode})")
    return sqlite_utils.Database(conn)


def _is_readonly(path: Path) -> bool:
    return path.exists() and not os.access(path, os.W_OK)


def get_db(path: str | os.PathLike | None = None, *, migrate: bool = True) -> sqlite_utils.Database:
    """Open the hermes database (``--db`` / ``HERMES_DB`` / default) and bring it up to date."""
    from .migrations import migrate as run_migrations

    target = config.db_path(path)
    if migrate and _is_readonly(target):
        # Every command writes sooner or later (an ingest, a click, the interests cache):
        # say so now rather than fail half-way with sqlite's "attempt to write".
        raise HermesError(f"{target}: {READONLY}")
    db = connect(target)
    if migrate:
        try:
            run_migrations(db)
            if not dbfile.is_hermes(db.conn):
                dbfile.mark(db.conn)
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc) or "read-only" in str(exc):
                raise HermesError(f"{target}: {READONLY}") from exc
            raise HermesError(f"{target}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise HermesError(f"{target}: not a hermes/SQLite database ({exc})") from exc
    return db


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
