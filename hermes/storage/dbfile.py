"""Knowing a hermes database when we see one, and refusing to touch anything else.

A hermes database carries ``PRAGMA application_id = 0x48524D53`` ("HRMS") and
``PRAGMA user_version = FORMAT``. :func:`refuse_foreign` runs when a file is opened, before
anything is written: an empty file or a hermes database (marked, or an older unmarked one
whose every table is a hermes table) passes and is marked after its migrations; any other
non-empty SQLite file is refused with a description of what it seems to be, so a mistyped
``--db`` never adds twenty tables to someone's Zotero library.
"""

from __future__ import annotations

import sqlite3

import sqlite_utils

from ..errors import HermesError
from .migrations import migrate

APPLICATION_ID = 0x48524D53  # "HRMS"
FORMAT = 1

#: Registered SQLite application ids (sqlite.org's magic.txt) a user might point --db at.
KNOWN_IDS = {
    0x0F055111: "a Fossil repository",
    0x0F055112: "a Fossil checkout database",
    0x0F055113: "a Fossil global configuration database",
    0x47504B47: "a GeoPackage file",
    0x47503130: "a GeoPackage 1.0 file",
    0x47503131: "a GeoPackage 1.1 file",
    0x4D504258: "an MBTiles tile set",
}
#: Tables that give well-known SQLite files away (all must be present).
KNOWN_TABLES = (
    ({"itemData", "creators", "collections"}, "a Zotero library (zotero.sqlite)"),
    ({"moz_places"}, "a Firefox history database (places.sqlite)"),
    ({"moz_cookies"}, "a Firefox cookie store"),
    ({"urls", "visits"}, "a Chrome/Chromium history database"),
    ({"cookies", "meta"}, "a Chrome/Chromium cookie store"),
    ({"books", "authors", "books_authors_link"}, "a Calibre library (metadata.db)"),
    ({"notes", "cards", "col"}, "an Anki collection"),
    ({"django_migrations"}, "a Django project's database"),
    ({"alembic_version"}, "a database managed by Alembic (SQLAlchemy)"),
    ({"schema_migrations", "ar_internal_metadata"}, "a Ruby on Rails database"),
)


class ForeignDatabase(HermesError):
    """The file is a SQLite database of another application: hermes leaves it alone."""


def user_tables(conn: sqlite3.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]


def hermes_tables() -> frozenset[str]:
    """Every table a hermes database can hold: the migrations of the core and of the loaded
    plugins, run on an in-memory database (only for an unmarked file: rare, and cheap)."""
    scratch = sqlite_utils.Database(sqlite3.connect(":memory:", isolation_level=None))
    migrate(scratch)
    return frozenset(user_tables(scratch.conn))


def describe(app_id: int, tables: list[str]) -> str:
    """What a non-hermes SQLite file seems to be, for the refusal message."""
    have = set(tables)
    what = KNOWN_IDS.get(app_id) or next((name for needed, name in KNOWN_TABLES if needed <= have), None)
    shown = ", ".join(tables[:6]) + (f", … ({len(tables)} tables)" if len(tables) > 6 else "")
    if what:
        return f"{what} (tables: {shown})"
    marker = f"application_id {app_id:#010x}, " if app_id else ""
    return f"a SQLite database of another application ({marker}tables: {shown})"


def is_hermes(conn: sqlite3.Connection) -> bool:
    return conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def refuse_foreign(conn: sqlite3.Connection, path) -> None:
    """Raise :class:`ForeignDatabase` for a non-empty database that is not hermes's: not
    marked, and holding a table no hermes migration creates. An empty file and a hermes
    database from before the mark pass (:func:`mark` then marks them)."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if app_id == APPLICATION_ID:
        return
    tables = user_tables(conn)
    if not tables or (app_id == 0 and ("_migrations" in tables or set(tables) <= hermes_tables())):
        return
    raise ForeignDatabase(
        f"{path} is {describe(app_id, tables)}, not a hermes database; hermes changes nothing "
        "in it. Point --db (or HERMES_DB) at a hermes database, or at a new file to start one."
    )


def mark(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {FORMAT}")
