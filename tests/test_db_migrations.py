"""The migration ledger, and seed 000's first migration: clicks gain ``source``."""

from __future__ import annotations

import sqlite3

import sqlite_utils

from hermes.storage.db import get_db
from hermes.storage.migrations import CORE, migrate

# The clicks table as it was before click provenance existed (seed 000), with the tables
# an old database had beside it.
OLD_SCHEMA = """
CREATE TABLE feeds (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE, title TEXT, etag TEXT,
    last_modified TEXT, last_fetched TEXT, last_error TEXT, error_count INTEGER NOT NULL DEFAULT 0);
CREATE TABLE items (id INTEGER PRIMARY KEY, feed_id INTEGER, guid TEXT NOT NULL UNIQUE, url TEXT,
    title TEXT NOT NULL DEFAULT '', summary TEXT NOT NULL DEFAULT '', published TEXT);
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, interests TEXT NOT NULL DEFAULT '');
CREATE TABLE clicks (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, item_id INTEGER NOT NULL,
    label TEXT NOT NULL, created TEXT);
"""


def make_old_db(path, n_clicks=25):
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA)
    conn.execute("INSERT INTO feeds (url, title) VALUES ('https://e.org/rss', 'E')")
    conn.execute("INSERT INTO users (name, interests) VALUES ('ada', 'graphs')")
    for k in range(n_clicks):
        conn.execute("INSERT INTO items (feed_id, guid, title) VALUES (1, ?, ?)", [f"g{k}", f"t{k}"])
        conn.execute(
            "INSERT INTO clicks (user_id, item_id, label, created) VALUES (1, ?, ?, ?)",
            [k + 1, "like" if k % 3 else "dislike", f"2024-01-{k % 28 + 1:02d}"],
        )
    conn.commit()
    before = conn.execute("SELECT id, user_id, item_id, label, created FROM clicks ORDER BY id").fetchall()
    conn.close()
    return before


def test_old_clicks_gain_source_ui_and_nothing_is_lost(tmp_path):
    path = tmp_path / "old.db"
    before = make_old_db(path)
    db = get_db(path)
    cols = db["clicks"].columns_dict
    assert "source" in cols
    info = {r[1]: r for r in db.execute("PRAGMA table_info(clicks)").fetchall()}
    assert info["source"][3] == 1 and info["source"][4] == "'ui'"  # NOT NULL DEFAULT 'ui'
    after = db.execute("SELECT id, user_id, item_id, label, created FROM clicks ORDER BY id").fetchall()
    assert after == before
    assert {r[0] for r in db.execute("SELECT source FROM clicks")} == {"ui"}
    # The other old tables kept their rows and gained the columns later code expects.
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == 25
    assert "retry_after" in db["feeds"].columns_dict and "interests_vec" in db["users"].columns_dict
    db.conn.close()


def test_second_open_is_a_no_op(tmp_path):
    path = tmp_path / "old.db"
    make_old_db(path)
    db = get_db(path)
    ledger = db.execute("SELECT name, applied FROM _migrations ORDER BY name").fetchall()
    schema = db.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    assert migrate(db) == []
    db.conn.close()
    db = get_db(path)
    assert db.execute("SELECT name, applied FROM _migrations ORDER BY name").fetchall() == ledger
    assert db.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == schema
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 25
    db.conn.close()


def test_ledger_records_every_migration_by_name_in_order(db):
    names = [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY rowid")]
    core = [m.name for m in CORE]
    assert names[: len(core)] == core
    assert core[:2] == ["core:m001_initial", "core:m002_clicks_source"]
    assert all(":" in n for n in names)  # owner-prefixed: plugins cannot collide with the core


def test_every_core_migration_is_idempotent():
    # Databases made before the ledger existed may already have what a migration adds.
    db = sqlite_utils.Database(memory=True)
    for m in CORE:
        m.apply(db)
    schema = db.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    for m in CORE:
        m.apply(db)
    assert db.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == schema


def test_new_clicks_without_a_source_read_ui(db):
    db.execute("INSERT INTO users (name) VALUES ('bo')")
    db.execute("INSERT INTO clicks (user_id, item_id, label) VALUES (1, 1, 'like')")
    assert db.execute("SELECT source FROM clicks").fetchone()[0] == "ui"


def test_feeds_table_has_the_ingest_columns(db):
    cols = db["feeds"].columns_dict
    for col in (
        "url",
        "etag",
        "last_modified",
        "last_fetched",
        "last_error",
        "error_count",
        "retry_after",
        "last_warning",
    ):
        assert col in cols
