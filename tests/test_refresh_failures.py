"""A background refresh that fails (issue 33, case 3): its child cannot be shadowed by the
folder the server starts in, a failure backs off, and every face says refreshing fails and
why within one refresh.

Started from a folder holding a ``hermes/`` directory (a checkout's parent, a home with
``~/hermes``), ``hermes web``'s refresh child imported that directory instead of the package
and failed with an ImportError, about once a second, while the feed page said "Refreshed
13 min ago · next now" and ``list_feeds`` "0 failing on their last fetch"."""

from __future__ import annotations

import sqlite3
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from feeds_cli_support import run
from process_support import child_env, free_port, running_hermes
from web_support import client

from hermes.ingest.pipeline import add_feeds
from hermes.ingest.refresher import Refresher, refresh_state
from hermes.tools import call_tool, collect_tools

SHADOW = "cannot import name '__version__' from 'hermes' (/home/ada/hermes/__init__.py)"
FEED = (
    '<?xml version="1.0"?><rss version="2.0"><channel><title>Local</title>'
    "<link>https://example.org/</link><item><title>Fresh item</title><guid>urn:fresh</guid>"
    "<link>https://example.org/fresh</link></item></channel></rss>"
)


def shadowing_folder(tmp_path: Path) -> Path:
    """A folder holding a ``hermes/`` directory that is not the package."""
    folder = tmp_path / "home-with-clone"
    (folder / "hermes").mkdir(parents=True)
    (folder / "hermes" / "__init__.py").write_text("# somebody's clone, or anything named hermes\n")
    (folder / "hermes" / "cli.py").write_text("from . import __version__\n")
    return folder


def test_hermes_web_started_from_a_folder_holding_hermes_refreshes(tmp_path):
    folder = shadowing_folder(tmp_path)
    feed = tmp_path / "feed.xml"
    feed.write_text(FEED)
    database = tmp_path / "x.db"
    from hermes.storage.db import get_db

    db = get_db(database)
    add_feeds(db, [(str(feed), None)])
    db.conn.close()
    port = free_port()
    env = child_env(tmp_path / "home", HERMES_INGEST_EVERY="1h")
    with running_hermes(["web", "--db", str(database), "--port", str(port)], port, env, cwd=folder):
        deadline = time.monotonic() + 90
        while not _fetched(database):
            assert time.monotonic() < deadline, run("feeds", "list", "--db", database).output
            time.sleep(0.2)
    listed = run("feeds", "list", "--db", database)
    assert "Refreshing fails" not in listed.output and "ok" in listed.output, listed.output


def _fetched(database: Path) -> bool:
    with sqlite3.connect(database) as conn:
        return conn.execute("SELECT count(*) FROM items").fetchone()[0] > 0


def failing(code: str):
    return lambda database, every, due: [sys.executable, "-c", code]


@pytest.fixture
def broken(db_path, db):
    """A refresher whose child fails as the shadowed import did, run one turn at a time."""
    add_feeds(db, [("https://example.org/feed.xml", None)])
    refresher = Refresher(db_path, 3600, start_delay=3600, command=failing(f"raise ImportError({SHADOW!r})"))
    return refresher


def test_a_failed_refresh_backs_off_doubling(broken):
    before = datetime.now(UTC)
    broken._run(due=True)
    assert broken.failures == 1 and "ImportError" in broken.last_error
    first = broken._when_due()  # the feed is overdue, yet the next try waits
    assert first >= before + timedelta(seconds=broken.first_retry - 1)
    broken._run(due=True)
    assert broken._when_due() >= before + timedelta(seconds=2 * broken.first_retry - 1)
    assert broken.failures == 2
    broken.command = failing(
        "import json; print(json.dumps({'ok': False, 'feeds_by_status': {'failed': 1}})); raise SystemExit(1)"
    )  # a feed failed: no backoff
    broken._run(due=True)
    assert broken.failures == 0 and broken.retry_at is None and broken.last_error is None


def test_every_face_says_the_refresh_fails_and_why(broken, db, db_path):
    broken._run(due=True)
    broken._run(due=True)
    # MCP's list_feeds, in this process (the refresher is not started: its state is the file)
    answer = call_tool(db, collect_tools()["list_feeds"], {})
    assert "Refreshing fails (2 times in a row): " in answer["message"], answer["message"]
    assert "ImportError" in answer["message"] and "next try" in answer["message"]
    assert answer["refresh"]["failing"]["failures"] == 2
    # the CLI, as another process would read it
    listed = run("feeds", "list", "--db", db_path)
    assert "Refreshing fails" in listed.output and "__version__" in listed.output, listed.output
    # the web UI: the feed page (no "Refreshed … ago" for a failed run) and the Feeds page
    from hermes.storage.records import create_user

    create_user(db, "ada", "anything at all")
    with client(db_path) as web:
        for path in ("/feed?user=ada", "/feeds", "/api/refresh"):
            page = web.get(path)
            assert page.status_code == 200 and "Refreshing fails" in page.text, path
        assert "Refreshed <time" not in web.get("/feed?user=ada").text
    state = refresh_state(db)
    assert state["failing"]["message"].startswith("the last refresh exited with status 1")
