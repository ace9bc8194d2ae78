"""A failing feed is seen outside the Feeds page: the refresh line of the feed page (and the
JSON its script polls) says how many feeds failed and links to the Feeds page, whose row
says what happens next and what the person can do."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from web_support import client, seed

from hermes.ingest.pipeline import run_ingest


@pytest.fixture
def web(db_path, db, add_items, no_bar):
    seed(db, add_items)
    with client(db_path) as c:
        yield c


def _gone_feed(db, tmp_path, title="Gone feed") -> int:
    """A person's feed whose file is not there: every fetch of it fails (no network)."""
    db.execute(
        "INSERT INTO feeds (url, title) VALUES (?, ?)", [str(tmp_path / f"{title.replace(' ', '-')}.xml"), title]
    )
    return db.execute("SELECT id FROM feeds WHERE title = ?", [title]).fetchone()[0]


def _line(text: str) -> str:
    found = re.search(
        r'<a class="refresh-failures error-text" href="([^"]*)" '
        r"data-refresh-failures( hidden)?>([^<]*)</a>",
        text,
    )
    assert found, "no failures link"
    return f"{found.group(1)}|{'hidden' if found.group(2) else 'shown'}|{found.group(3)}"


def test_the_refresh_line_says_how_many_feeds_failed_and_links_to_them(web, db, tmp_path):
    assert _line(web.get("/feed?user=ada").text) == "/feeds|hidden|"  # nothing failed yet
    assert web.get("/api/refresh").json()["failures"]["failed"] == 0
    feed_id = _gone_feed(db, tmp_path)
    summary = run_ingest(db, feed_ids=[feed_id])
    assert [s["status"] for s in summary] == ["failed"]  # "1 failed" in the server's log

    said = f"/feeds#feed-{feed_id}|shown|1 feed failed: see why on the Feeds page"
    assert _line(web.get("/feed?user=ada").text) == said
    assert _line(web.get("/feeds").text) == said
    state = web.get("/api/refresh").json()  # what the page's script writes after a refresh
    assert state["failures"] == {
        "failed": 1,
        "failing": 1,
        "url": f"/feeds#feed-{feed_id}",
        "words": "1 feed failed: see why on the Feeds page",
    }
    assert state["last"]["new_items"] == 0
    script = web.get("/static/hermes.js").text
    assert "state.failures" in script and "[data-refresh-failures]" in script


def test_feeds_failing_from_before_are_counted_with_the_ones_this_refresh_tried(web, db, tmp_path):
    """A feed backing off is skipped by a refresh, not tried: still failing, and said so."""
    _gone_feed(db, tmp_path, "Old failure")
    db.execute(
        "UPDATE feeds SET last_error = 'HTTP 500', error_count = 3, retry_after = ? WHERE title = 'Old failure'",
        [(datetime.now(UTC) + timedelta(days=1)).isoformat(timespec="seconds")],
    )
    assert _line(web.get("/feed?user=ada").text).endswith("|shown|1 feed failing: see why on the Feeds page")
    other = _gone_feed(db, tmp_path, "New failure")
    run_ingest(db, feed_ids=[other])
    assert _line(web.get("/feed?user=ada").text).endswith(
        "|shown|1 feed failed, 2 failing in all: see why on the Feeds page"
    )


def _row(text: str, feed_id: int) -> str:
    row = re.search(rf'<tr id="feed-{feed_id}" class="failing">(.*?)</tr>', text, re.S).group(1)
    return html.unescape(re.sub(r"\s+", " ", row))


@pytest.mark.parametrize(
    "error, count, retry_in, step",
    [
        # once: the next run tries it again (most failures are transient); this server has no
        # background refresh
        ("HTTP 500", 1, None, "Refresh now tries it again."),
        # again and again: backing off, which Refresh now respects; --feed does not wait
        (
            "HTTP 500",
            3,
            timedelta(hours=5),
            "It failed 3 times in a row, so it is tried less often: next try in 4h (Refresh now skips "
            "it until then). To fetch it now, run <code>hermes ingest --feed {id}</code> in a terminal.",
        ),
        # the server's own pause holds even for --feed
        (
            "HTTP 429; the server asked for a pause",
            1,
            timedelta(hours=5),
            "The server asked for a pause: next try in 4h.",
        ),
        # a missing file or page: no retry brings it back
        (
            "file not found: /tmp/gone.xml",
            1,
            None,
            "Trying again will not help while it is missing: put it back, or remove the feed (Remove…).",
        ),
        (
            "HTTP 404 Not Found",
            3,
            timedelta(hours=5),
            "Trying again will not help while it is missing: put it back, or remove the feed (Remove…).",
        ),
        (
            "did not fetch 'http://10.0.0.1/rss': refused: private address",
            1,
            None,
            "An agent subscribed this private address; to let hermes fetch it, run "
            "<code>hermes feeds trust {id}</code> in a terminal.",
        ),
    ],
)
def test_a_failing_feed_row_names_the_next_step(web, db, tmp_path, error, count, retry_in, step):
    feed_id = _gone_feed(db, tmp_path)
    retry = (datetime.now(UTC) + retry_in).isoformat(timespec="seconds") if retry_in else None
    db.execute(
        "UPDATE feeds SET last_error = ?, error_count = ?, retry_after = ? WHERE id = ?", [error, count, retry, feed_id]
    )
    row = _row(web.get("/feeds").text, feed_id)
    assert error in row
    # "in 4h" from a retry 5 h ahead: the page is rendered within the hour, whatever the clock
    assert f'<span class="next-step">{step.format(id=feed_id)}' in row, row


def test_with_a_background_refresh_the_row_says_the_next_one_tries_again(db_path, web, db, tmp_path):
    import sys

    from hermes.ingest.refresher import Refresher

    feed_id = _gone_feed(db, tmp_path)
    db.execute(
        "UPDATE feeds SET last_error = 'HTTP 500', error_count = 1, last_fetched = ? WHERE id = ?",
        [datetime.now(UTC).isoformat(timespec="seconds"), feed_id],
    )
    refresher = Refresher(
        db_path, 3600, start_delay=3600, command=lambda *a, **k: [sys.executable, "-c", "pass"]
    ).start()
    try:
        row = _row(web.get("/feeds").text, feed_id)
    finally:
        refresher.stop()
    # tried just now and failed once: due again an interval after that try
    step = re.search(r'<span class="next-step">([^<]*)</span>', row).group(1)
    assert step.startswith("The next refresh tries it again (in "), step
    assert step.endswith("), or press Refresh now."), step
