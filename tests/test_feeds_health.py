"""A fetch that failed reads as a try that failed, not as a fetch: ``feeds.last_fetched`` is
stamped by every try (hermes.ingest.pipeline), so `hermes feeds list` and the web feeds page
say "last tried …, failed" for it. And removing a feed says only what the archive keeps."""

from __future__ import annotations

from feeds_cli_support import ok_json, run
from feeds_support import SAMPLE_ENTRIES, rss
from web_support import client, token


def _failed_once(tmp_path, db_path):
    """A local feed that was fetched once, then went missing and failed its next try."""
    path = tmp_path / "gone.xml"
    path.write_bytes(rss("Gone soon", SAMPLE_ENTRIES))
    assert run("feeds", "add", path, "--db", db_path).exit_code == 0
    assert run("ingest", "--db", db_path).exit_code == 0
    path.unlink()
    run("ingest", "--db", db_path)  # fails for that feed
    [feed] = ok_json("feeds", "list", "--db", db_path)["feeds"]
    assert feed["last_error"] and feed["last_fetched"]
    return feed


def test_feeds_list_says_a_failed_try_is_a_try_not_a_fetch(tmp_path, db_path):
    feed = _failed_once(tmp_path, db_path)
    when = feed["last_fetched"][:16].replace("T", " ")
    listed = run("feeds", "list", "--db", db_path).output
    assert f"last tried {when}, failed: {feed['last_error'][:40]}" in listed
    assert "last fetched" not in listed and "error x" not in listed
    run("ingest", "--db", db_path)
    assert "(2 times in a row)" in run("feeds", "list", "--db", db_path).output


def test_feeds_list_says_last_fetched_for_a_fetch_that_worked(tmp_path, db_path):
    path = tmp_path / "fine.xml"
    path.write_bytes(rss("Fine", SAMPLE_ENTRIES))
    assert run("feeds", "add", path, "--db", db_path).exit_code == 0
    assert run("ingest", "--db", db_path).exit_code == 0
    listed = run("feeds", "list", "--db", db_path).output
    assert "last fetched " in listed and "last tried" not in listed and " · ok" in listed


def test_the_web_feeds_page_says_tried_and_failed(tmp_path, db_path):
    _failed_once(tmp_path, db_path)
    with client(db_path) as web:
        page = web.get("/feeds").text
    assert "<th>Last fetch</th>" in page
    assert '<span class="error-text">tried <time' in page and "</time>, failed</span>" in page


def test_the_web_says_nothing_of_items_when_removing_a_feed_never_fetched(tmp_path, db_path):
    path = tmp_path / "new.xml"
    path.write_bytes(rss("New", SAMPLE_ENTRIES))
    assert run("feeds", "add", path, "--db", db_path).exit_code == 0
    with client(db_path) as web:
        confirm = web.get("/feeds/1/remove").text
        assert "It will no longer be fetched.</p>" in confirm and "0 item" not in confirm
        answer = web.post(
            "/feeds/1/remove", data={"csrf_token": token(web, "/feeds"), "confirm": "yes"}, follow_redirects=True
        )
    assert "Removed “New”." in answer.text and "kept" not in answer.text


def test_the_web_names_the_items_kept_without_ratings_it_never_had(tmp_path, db_path):
    path = tmp_path / "read.xml"
    path.write_bytes(rss("Read", SAMPLE_ENTRIES))
    assert run("feeds", "add", path, "--db", db_path).exit_code == 0
    assert run("ingest", "--db", db_path).exit_code == 0
    with client(db_path) as web:
        confirm = web.get("/feeds/1/remove").text
        assert (
            "Its 3 items stay in the archive (searchable, in your corpus, left out of your feed and digest); adding"
            in confirm
        )
        answer = web.post(
            "/feeds/1/remove", data={"csrf_token": token(web, "/feeds"), "confirm": "yes"}, follow_redirects=True
        )
    assert "Removed “Read”: its 3 items are kept." in answer.text
