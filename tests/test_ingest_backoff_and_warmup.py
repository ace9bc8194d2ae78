"""A feed that keeps failing is retried less and less often; one failure is retried at once."""

from datetime import UTC, datetime, timedelta
from itertools import pairwise

from hermes.ingest.pipeline import add_feeds, failure_backoff, run_ingest


def test_backoff_grows_from_the_second_consecutive_failure():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert failure_backoff(1, now) is None
    delays = [datetime.fromisoformat(failure_backoff(n, now)) - now for n in range(2, 12)]
    assert delays[0] == timedelta(minutes=15)
    assert all(a <= b for a, b in pairwise(delays))
    assert delays[-1] == timedelta(days=1)


def test_a_repeatedly_failing_feed_is_skipped_until_due(db, tmp_path):
    missing = tmp_path / "gone.xml"
    db.execute("INSERT INTO feeds (url, title) VALUES (?, 'gone')", [str(missing)])
    first = run_ingest(db)
    assert first[0]["status"] == "failed"
    assert db.execute("SELECT retry_after FROM feeds").fetchone()[0] is None  # retried next run
    second = run_ingest(db)
    assert second[0]["status"] == "failed"
    assert db.execute("SELECT retry_after, error_count FROM feeds").fetchone()[0] is not None
    third = run_ingest(db)
    assert third[0]["status"] == "skipped" and "wait until" in third[0]["error"]
    # the failure count and reason stay on the feed for `hermes feeds list`
    assert db.execute("SELECT error_count FROM feeds").fetchone()[0] == 2


def test_a_feed_the_person_names_is_fetched_through_its_back_off(db, tmp_path):
    """A trial's server recovered, but `hermes ingest --feed 6` still said "wait until …"
    (up to a day), with no way to ask for it now."""
    feed = tmp_path / "flaky.xml"
    add_feeds(db, [(str(feed), "flaky")])  # the person's: a local file may be fetched
    run_ingest(db)
    run_ingest(db)  # two failures in a row: backed off
    skipped = run_ingest(db)[0]
    assert skipped["status"] == "skipped"
    assert "`hermes ingest --feed 1` fetches it now" in skipped["error"]
    feed.write_text(
        '<?xml version="1.0"?><rss version="2.0"><channel><title>F</title>'
        "<item><title>Back</title><link>https://e.org/1</link></item></channel></rss>"
    )
    assert run_ingest(db)[0]["status"] == "skipped"  # a run of every feed still waits
    named = run_ingest(db, feed_ids=[1])[0]
    assert named["status"] == "new" and named["new"] == 1, named["error"]
    assert db.execute("SELECT retry_after, error_count FROM feeds").fetchone() == (None, 0)


def test_a_pause_the_server_asked_for_is_kept_even_for_a_named_feed(db):
    db.execute(
        "INSERT INTO feeds (url, title, retry_after, last_error, error_count) VALUES "
        "('https://e.org/f', 'f', '2999-01-01T00:00:00+00:00', "
        "'HTTP 429; the server asked for a pause until 2999-01-01', 1)"
    )
    assert run_ingest(db, feed_ids=[1])[0]["status"] == "skipped"


def test_a_page_that_is_no_feed_backs_off_like_a_dead_one(db, tmp_path):
    """It failed on every run: `--watch` printed an error every minute."""
    page = tmp_path / "page.xml"
    page.write_text("<!DOCTYPE html><html><head><title>Just a page</title></head><body>x</body></html>")
    add_feeds(db, [(str(page), "page")])
    assert run_ingest(db)[0]["status"] == "failed"
    second = run_ingest(db)[0]
    assert second["status"] == "failed" and "retrying after" in second["error"]
    assert run_ingest(db)[0]["status"] == "skipped"


def test_a_large_ingest_leaves_a_matrix_snapshot_for_the_next_process(db, db_path, monkeypatch):
    import threading

    from hermes.embed import get_embedder
    from hermes.ingest.pipeline import sample_feed_paths
    from hermes.ranking import matrix_store

    monkeypatch.setattr(matrix_store, "MIN_ROWS", 10)
    add_feeds(db, [(str(sample_feed_paths()[0]), None)])
    summary = run_ingest(db)
    assert summary.embedded >= 10
    for thread in threading.enumerate():
        if thread.name == "hermes-matrix-snapshot":
            thread.join()
    path = matrix_store.snapshot_path(str(db_path), get_embedder().name)
    assert path is not None and path.exists()
