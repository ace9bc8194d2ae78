"""A database that cannot be used gives one clear HermesError, and loses nothing."""

from __future__ import annotations

import os
import sqlite3

import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.errors import HermesError, InvalidInput
from hermes.storage import db as hermes_db
from hermes.storage.clicks import record_click
from hermes.storage.db import get_db


def _make_db(path):
    db = get_db(path)
    db.execute("INSERT INTO users (name) VALUES ('ada')")
    db.conn.close()


def _simulate_read_only(monkeypatch, path):
    """What the OS does to a read-only file (permission bits do not bind root, so tests
    that may run as root make SQLite itself open the file read-only)."""
    real_connect, real_access = sqlite3.connect, os.access
    monkeypatch.setattr(hermes_db.sqlite3, "connect", lambda p, **k: real_connect(f"file:{p}?mode=ro", uri=True, **k))
    monkeypatch.setattr(hermes_db.os, "access", lambda p, mode: False if str(p) == str(path) else real_access(p, mode))


def test_read_only_database_is_a_clear_error(tmp_path, monkeypatch):
    path = tmp_path / "ro.db"
    _make_db(path)
    _simulate_read_only(monkeypatch, path)
    with pytest.raises(HermesError, match="read-only; check its permissions"):
        get_db(path)
    monkeypatch.undo()
    assert get_db(path).execute("SELECT name FROM users").fetchall() == [("ada",)]


def test_read_only_old_database_needing_migration(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE clicks (id INTEGER PRIMARY KEY, user_id INT, item_id INT, label TEXT)")
    conn.execute("INSERT INTO clicks (user_id, item_id, label) VALUES (1, 1, 'like')")
    conn.commit()
    conn.close()
    real_connect = sqlite3.connect
    monkeypatch.setattr(hermes_db.sqlite3, "connect", lambda p, **k: real_connect(f"file:{p}?mode=ro", uri=True, **k))
    with pytest.raises(HermesError, match="read-only"):
        get_db(path)
    monkeypatch.undo()
    assert get_db(path).execute("SELECT source FROM clicks").fetchall() == [("ui",)]


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="file permissions do not restrict root; covered by the simulation above",
)
def test_read_only_file_permissions(tmp_path):
    path = tmp_path / "ro.db"
    _make_db(path)
    path.chmod(0o444)
    try:
        with pytest.raises(HermesError, match="read-only"):
            get_db(path)
    finally:
        path.chmod(0o644)


def test_non_sqlite_file_is_a_clear_error_and_untouched(tmp_path):
    path = tmp_path / "notes.db"
    content = b"These are my notes, not a database.\n" * 100
    path.write_bytes(content)
    with pytest.raises(HermesError, match="is not a SQLite database"):
        get_db(path)
    assert path.read_bytes() == content


def test_directory_instead_of_a_file(tmp_path):
    with pytest.raises(HermesError, match="is a directory"):
        get_db(tmp_path)


def test_cli_reports_a_bad_database_in_one_line(tmp_path, monkeypatch):
    path = tmp_path / "notes.db"
    path.write_bytes(b"not sqlite" * 100)
    monkeypatch.setenv("HERMES_PLUGINS", "signals,default_embedder,default_candidates,scorers")
    from hermes import plugins

    plugins.pm_cache_clear()
    result = CliRunner().invoke(build_app(), ["ingest", "--db", str(path)])
    assert result.exit_code == 1
    assert "is not a SQLite database" in result.output
    assert "Traceback" not in result.output


def test_record_click_rejects_a_bad_source_and_writes_nothing(db, add_items):
    (item,) = add_items([{"title": "x"}])
    db.execute("INSERT INTO users (name) VALUES ('ada')")
    for bad in ("webhook", "UI", "", None):
        with pytest.raises(InvalidInput, match="ui, agent, bootstrap"):
            record_click(db, 1, item, True, bad)
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 0
    for good in ("ui", "agent", "bootstrap"):
        assert record_click(db, 1, item, True, good)["source"] == good
