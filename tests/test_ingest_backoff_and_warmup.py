"""A feed that keeps failing is retried less and less often; one failure is retried at once."""

from datetime import datetime, timedelta, timezone

from hermes.ingest.pipeline import failure_backoff, run_ingest


def test_backoff_grows_from_the_second_consecutive_failure():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert failure_backoff(1, now) is None
    delays = [datetime.fromisoformat(failure_backoff(n, now)) - now for n in range(2, 12)]
    assert delays[0] == timedelta(minutes=15)
    assert all(a <= b for a, b in zip(delays, delays[1:]))
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


def test_a_large_ingest_leaves_a_matrix_snapshot_for_the_next_process(db, db_path, monkeypatch):
    import threading

    from hermes.embed import get_embedder
    from hermes.ingest.pipeline import add_feeds, sample_feed_paths
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
