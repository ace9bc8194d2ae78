"""Faults: ``kill -9`` of ``hermes ingest``, a full disk, a read-only database and a lock held
past the busy timeout. Each gives one clear error, writes nothing half-way, and the next run
completes. (The 20-trial kill run and a real full tmpfs are scripts in benchmarks/hardening.)
"""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.errors import HermesError
from hermes.ingest.pipeline import add_feeds, run_ingest
from hermes.storage import db as hermes_db
from hermes.tools import call_tool, collect_tools

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "hardening"))

import common
import kill_ingest

N_FEEDS, PER_FEED = 6, 40


@pytest.fixture
def feeds(tmp_path):
    """Six local feeds (with cross-listed papers); returns ``(urls, distinct item count)``."""
    bodies, distinct = common.make_feeds(N_FEEDS, PER_FEED)
    urls = []
    for n, body in enumerate(bodies):
        path = tmp_path / f"feed{n}.xml"
        path.write_bytes(body)
        urls.append(str(path))
    return urls, distinct


def entries_per_feed(url: str) -> int:
    return Path(url).read_bytes().count(b"<item>")


def assert_each_feed_all_or_nothing(db, urls):
    """A feed's items and its validators commit together: never a part of a feed."""
    for url in urls:
        feed_id, etag = db.execute("SELECT id, etag FROM feeds WHERE url = ?", [url]).fetchone()
        stored = db.execute("SELECT count(*) FROM items WHERE feed_id = ?", [feed_id]).fetchone()[0]
        if etag is None:
            assert stored == 0, (url, stored)
        else:
            # Cross-listed papers are stored under the feed that came first.
            assert 0 < stored <= entries_per_feed(url), (url, stored)


def assert_complete(path, distinct):
    inv = common.invariants(path)
    assert inv == {
        "integrity": "ok",
        "items": distinct,
        "dup_guid": 0,
        "dup_arxiv": 0,
        "unembedded": 0,
        "feeds_failing": 0,
        "fts": "ok",
    }, inv


# --- kill -9 --------------------------------------------------------------------------------


def test_kill_9_of_hermes_ingest_three_trials():
    rows = kill_ingest.run(trials=3, n_feeds=8, items=40, seed=3, out=lambda _msg: None)
    assert len(rows) == 3
    for row in rows:
        assert row["ok"], row


# --- disk full ------------------------------------------------------------------------------


def test_disk_full_during_ingest_is_one_clear_error_and_nothing_half_written(db, db_path, feeds):
    urls, distinct = feeds
    add_feeds(db, [(u, None) for u in urls])
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages + 40}")  # room for a feed or two, not six
    with pytest.raises(HermesError, match="disk holding it is full") as err:
        run_ingest(db)
    assert "rolled back" in str(err.value) and "\n" not in str(err.value)
    assert not db.conn.in_transaction
    assert common.integrity(db_path) == "ok"
    assert_each_feed_all_or_nothing(db, urls)
    stored = db.execute("SELECT count(*) FROM items").fetchone()[0]
    assert stored < distinct
    db.execute("PRAGMA max_page_count = 1073741823")  # space freed
    run_ingest(db)
    assert_complete(db_path, distinct)


def test_disk_full_in_the_cli_is_one_line_without_traceback(db_path, feeds, monkeypatch):
    urls, distinct = feeds
    db = hermes_db.get_db(db_path)
    add_feeds(db, [(u, None) for u in urls])
    db.conn.close()
    real_connect = hermes_db.connect

    def tiny_disk(path):
        database = real_connect(path)
        pages = database.execute("PRAGMA page_count").fetchone()[0]
        database.execute(f"PRAGMA max_page_count = {pages + 40}")
        return database

    monkeypatch.setattr(hermes_db, "connect", tiny_disk)
    result = CliRunner().invoke(build_app(), ["ingest", "--db", str(db_path)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # typer.Exit, not a crash
    err = result.stderr if hasattr(result, "stderr") else result.output
    assert "error:" in err and "full" in err and "Traceback" not in result.output
    # Space freed. (Not monkeypatch.undo(): that would also drop conftest's environment.)
    monkeypatch.setattr(hermes_db, "connect", real_connect)
    result = CliRunner().invoke(build_app(), ["ingest", "--db", str(db_path), "--json"])
    assert result.exit_code == 0, result.output
    assert_complete(db_path, distinct)


def test_disk_full_on_a_tool_write_is_ok_false_and_writes_nothing(db, add_items):
    from hermes.storage.records import create_user

    ids = add_items([{"title": "one"}, {"title": "two"}])
    create_user(db, "ann", "anything")
    db.execute("PRAGMA max_page_count = %d" % db.execute("PRAGMA page_count").fetchone()[0])
    tools = collect_tools()
    before = db.execute("SELECT count(*) FROM clicks").fetchone()[0]
    # A big highlight needs new pages; a click may fit in existing ones, so use both.
    for name, args in [
        ("add_highlight", {"user": "ann", "item_id": ids[0], "text": "x" * 9000}),
        ("add_note", {"user": "ann", "item_id": ids[1], "text": "y" * 9000}),
    ]:
        result = call_tool(db, tools[name], args)
        assert result["ok"] is False and "full" in result["message"], result
        assert "unexpectedly" not in result["message"]
    assert db.execute("SELECT count(*) FROM corpus_highlights").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM corpus_notes").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM corpus_log").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == before


# --- read-only ------------------------------------------------------------------------------


def test_database_turning_read_only_mid_run(db, db_path, feeds):
    """The file was writable when opened, then refuses writes (a remount, a permission
    change): ingest stops with one clear line, and a tool call is a clean ok:false."""
    urls, distinct = feeds
    add_feeds(db, [(u, None) for u in urls])
    db.execute("PRAGMA query_only = ON")  # every write now fails as SQLITE_READONLY would
    with pytest.raises(HermesError, match="read-only"):
        run_ingest(db)
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == 0
    result = call_tool(db, collect_tools()["create_persona"], {"name": "ann", "interests": "x"})
    assert result["ok"] is False and "read-only" in result["message"], result
    db.execute("PRAGMA query_only = OFF")
    run_ingest(db)
    assert_complete(db_path, distinct)


# --- locked ---------------------------------------------------------------------------------


@pytest.fixture
def short_timeout(monkeypatch):
    monkeypatch.setattr(hermes_db, "BUSY_TIMEOUT_S", 0.2)


@pytest.fixture
def locker(db_path):
    """Another process's connection holding the write lock (released by the test)."""

    class Locker:
        def __init__(self):
            self.conn = sqlite3.connect(str(db_path), isolation_level=None, check_same_thread=False)

        def hold(self):
            self.conn.execute("BEGIN EXCLUSIVE")

        def release(self):
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")

    lock = Locker()
    yield lock
    lock.release()
    lock.conn.close()


def test_lock_held_past_the_busy_timeout_stops_ingest_cleanly(db, db_path, feeds, short_timeout, locker):
    urls, distinct = feeds
    add_feeds(db, [(u, None) for u in urls])
    db.conn.close()
    db = hermes_db.get_db(db_path)  # a connection with the short timeout
    locker.hold()
    with pytest.raises(HermesError, match="held its write lock") as err:
        run_ingest(db)
    assert "locked" in str(err.value)
    locker.release()
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == 0
    run_ingest(db)
    db.conn.close()
    assert_complete(db_path, distinct)


def test_locked_database_in_tools_and_cli_is_a_clear_refusal(db, db_path, add_items, short_timeout, locker):
    from hermes.storage.records import create_user

    ids = add_items([{"title": "one"}])
    create_user(db, "ann", "anything")
    db.conn.close()
    db = hermes_db.get_db(db_path)
    locker.hold()
    tools = collect_tools()
    for name, args in [
        ("record_feedback", {"user": "ann", "item_id": ids[0], "liked": True}),
        ("favorite", {"user": "ann", "item_id": ids[0]}),
        ("create_persona", {"name": "bob", "interests": "bread"}),
    ]:
        result = call_tool(db, tools[name], args)
        assert result["ok"] is False and "try again" in result["message"], result
        assert set(tools[name].empty) <= set(result)
    result = CliRunner().invoke(build_app(), ["persona", "create", "carl", "--interests", "x", "--db", str(db_path)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    locker.release()
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM users").fetchone()[0] == 1
    # Once the lock is gone the same call works.
    assert call_tool(db, tools["record_feedback"], {"user": "ann", "item_id": ids[0], "liked": True})["ok"] is True


def test_a_lock_released_within_the_timeout_is_waited_for(db, db_path, add_items, monkeypatch, locker):
    """The normal case: a writer waits (busy timeout) instead of failing."""
    from hermes.storage.records import create_user

    monkeypatch.setattr(hermes_db, "BUSY_TIMEOUT_S", 5.0)
    ids = add_items([{"title": "one"}])
    create_user(db, "ann", "anything")
    db.conn.close()
    db = hermes_db.get_db(db_path)
    locker.hold()
    timer = threading.Timer(0.3, locker.release)
    timer.start()
    result = call_tool(db, collect_tools()["record_feedback"], {"user": "ann", "item_id": ids[0], "liked": True})
    timer.join()
    assert result["ok"] is True, result
    assert json.loads(json.dumps(result))["click"]["label"] == "like"
