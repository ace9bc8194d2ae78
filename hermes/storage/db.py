"""Opening the database: one SQLite file, WAL, a busy timeout, migrations on open."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import sqlite_utils

from .. import config
from ..errors import HermesError, Unavailable
from . import dbfile
from .migrations import migrate as run_migrations
from .transactions import BUSY_TIMEOUT_S, DISK_FULL, READONLY, disk_full


def connect(path: str | os.PathLike) -> sqlite_utils.Database:
    """Open (creating if needed) without migrating. Autocommit mode: write transactions
    are explicit (:func:`hermes.storage.transactions.write_transaction`), so no statement silently opens one.

    A new database file is created readable by its owner only (0600, and SQLite gives its
    ``-wal`` / ``-shm`` files the same mode), in a directory created 0700: it holds notes,
    highlights and clicks.
    """
    path = Path(path)
    if path.is_dir():
        raise HermesError(f"{path} is a directory, not a database file")
    try:
        if str(path) != ":memory:":
            config.private_dir(path.parent)
        _create_private(path)
    except OSError as exc:
        if disk_full(path):
            raise Unavailable(f"{path}: cannot create the database: {DISK_FULL}") from exc
        raise HermesError(f"{path}: cannot create the database ({exc.strerror or exc})") from exc
    conn = None
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
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
            raise HermesError(
                f"{path} is not a SQLite database; hermes changes nothing in it. "
                "Point --db (or HERMES_DB) at a hermes database, or at a new "
                "file to start one."
            ) from exc
        if isinstance(exc, sqlite3.OperationalError) and disk_full(path):
            raise Unavailable(f"{path}: cannot open: {DISK_FULL} (SQLite: {exc})") from exc
        raise HermesError(f"{path}: cannot open as a SQLite database ({exc})") from exc
    if mode.lower() != "wal" and not _is_readonly(path):
        raise HermesError(f"{path}: could not switch to WAL mode (got {mode})")
    return sqlite_utils.Database(conn)


def _create_private(path: Path) -> None:
    if path.exists() or str(path) == ":memory:":
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:  # another process created it first
        pass


def _is_readonly(path: Path) -> bool:
    return path.exists() and not os.access(path, os.W_OK)


def get_db(path: str | os.PathLike | None = None, *, migrate: bool = True) -> sqlite_utils.Database:
    """Open the hermes database (``--db`` / ``HERMES_DB`` / default) and bring it up to date."""
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
