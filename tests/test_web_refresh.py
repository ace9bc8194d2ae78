"""Fresh without cron: ``hermes web`` with a short refresh interval, a loopback feed that
gains an item, and the item appears in the persona's feed without anyone running ingest."""

from __future__ import annotations

import email.utils
import time
from datetime import UTC, datetime

import httpx
from ingest_server import FeedServer, rss
from process_support import child_env, free_port, running_hermes

from hermes.ingest.pipeline import add_feeds
from hermes.storage.db import get_db
from hermes.storage.records import create_user


def _feed(titles):
    # Dated: an item without a date in a feed's first fetch is "date unknown", in no window.
    now = email.utils.format_datetime(datetime.now(UTC))
    return rss(
        [
            {
                "title": t,
                "link": f"https://e.org/{k}",
                "guid": f"g{k}",
                "pubDate": now,
                "description": "sparse autoencoders and interpretability",
            }
            for k, t in enumerate(titles)
        ],
        title="Loopback feed",
    )


def _wait_for(get, predicate, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while True:
        page = get()
        if predicate(page):
            return page
        assert time.monotonic() < deadline, f"gave up waiting; last page:\n{page[-2000:]}"
        time.sleep(0.5)


def test_hermes_web_refreshes_a_feed_that_gains_an_item(tmp_path):
    home, db_path = tmp_path / "home", tmp_path / "hermes.db"
    db = get_db(db_path)
    create_user(db, "ada", "sparse autoencoders, interpretability")
    with FeedServer() as server:
        url = server.add("/feed.xml", body=_feed(["First post on interpretability"]), etag='"v1"')
        add_feeds(db, [(url, None)])
        db.conn.close()
        port = free_port()
        env = child_env(home, HERMES_INGEST_EVERY="2s")
        with running_hermes(["web", "--db", str(db_path), "--port", str(port)], port, env):

            def page():
                return httpx.get(f"http://127.0.0.1:{port}/feed?user=ada", timeout=10).text

            _wait_for(page, lambda text: "First post on interpretability" in text)
            server.add(
                "/feed.xml", body=_feed(["First post on interpretability", "Second post, arrived later"]), etag='"v2"'
            )
            text = _wait_for(page, lambda text: "Second post, arrived later" in text)
            assert "Refreshed" in text
            status = httpx.get(f"http://127.0.0.1:{port}/api/refresh", timeout=10).json()
            assert status["background"] is True and status["every"] == 2
        assert server.hits("/feed.xml") >= 2


def test_no_refresh_means_no_fetch(tmp_path):
    home, db_path = tmp_path / "home", tmp_path / "hermes.db"
    db = get_db(db_path)
    create_user(db, "ada", "anything")
    with FeedServer() as server:
        add_feeds(db, [(server.add("/feed.xml", body=_feed(["Never fetched"])), None)])
        db.conn.close()
        port = free_port()
        env = child_env(home, HERMES_INGEST_EVERY="1s")
        with running_hermes(["web", "--db", str(db_path), "--port", str(port), "--no-refresh"], port, env):
            status = httpx.get(f"http://127.0.0.1:{port}/api/refresh", timeout=10).json()
            assert status["background"] is False
            time.sleep(4)  # well past the start delay and two intervals
        assert server.hits("/feed.xml") == 0
