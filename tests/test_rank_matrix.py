"""The matrix snapshot a fresh process starts from, and the per-row score cache."""

from __future__ import annotations

import numpy as np
import pytest

from hermes.builtins import score_cache
from hermes.contract import CandidateQuery
from hermes.embed import get_embedder
from hermes.ranking import matrix as matrix_mod
from hermes.ranking import matrix_loader, matrix_store
from hermes.ranking.matrix import get_matrix
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user


@pytest.fixture
def snapshots(monkeypatch):
    monkeypatch.setattr(matrix_store, "MIN_ROWS", 1)
    written = []
    real = matrix_store._write

    def write_now(path, arrays, held=None):  # synchronous in tests
        real(path, arrays, held)
        written.append(path)

    monkeypatch.setattr(
        matrix_store.threading,
        "Thread",
        lambda target, args=(), name=None, daemon=None: type("T", (), {"start": lambda self: target(*args)})(),
    )
    monkeypatch.setattr(matrix_store, "_write", write_now)
    return written


def load(db):
    e = get_embedder()
    return get_matrix(db, e.name, e.dimension)


def test_a_fresh_process_starts_from_the_snapshot(db, add_items, snapshots, monkeypatch):
    add_items([{"title": "alpha", "tags": ["A", "b"]}, {"title": "beta", "content_type": "paper"}])
    first = load(db)
    assert len(snapshots) == 1 and snapshots[0].exists()
    matrix_mod.clear_cache()
    reads = []
    real_refresh = matrix_loader.refresh
    monkeypatch.setattr(matrix_loader, "refresh", lambda *a: reads.append(1) or real_refresh(*a))
    second = load(db)
    assert reads == [] and second is not first
    assert second.ids.tolist() == first.ids.tolist() and np.array_equal(second.vectors, first.vectors)
    assert second.key_index == first.key_index and second.seq == first.seq
    assert np.array_equal(second.has_key("tag:a"), first.has_key("tag:a"))
    # newer items are read from SQLite on top of the snapshot
    [new] = add_items([{"title": "gamma"}])
    assert load(db).ids.tolist()[-1] == new and reads == [1]


def test_the_snapshot_carries_the_persona_free_summaries_bit_for_bit(db, add_items, snapshots):
    ids = add_items([{"title": f"item {i}", "tags": [f"t{i % 3}", "x"], "content_type": "paper"} for i in range(9)])
    user = create_user(db, "ann", "item words")
    record_click(db, user["id"], ids[0], True, "ui")
    record_click(db, user["id"], ids[1], False, "ui")
    first = load(db)
    before = rank(db, user, CandidateQuery())
    matrix_mod.clear_cache()
    score_cache.clear()
    second = load(db)
    # restored, not recomputed: the summaries are there before any ranking asks for them
    assert set(second._derived) == {
        "mean",
        "mean_column",
        "entry_share",
        ("pairs", len(second.key_index)),
        "reference_sample",
        ("ids_hash", len(ids)),
    }
    assert np.array_equal(second.mean_vector(), first.mean_vector())
    assert second.layout() == first.layout()
    for a, b in zip(second._derived["reference_sample"], first._derived["reference_sample"]):
        assert np.array_equal(a, b) and a.dtype == b.dtype
    assert np.array_equal(second.mean_column(), first.mean_column())
    assert np.array_equal(second.entry_share(), first.entry_share())
    for a, b in zip(second.pairs_by_column(), first.pairs_by_column()):
        assert np.array_equal(a, b)
    after = rank(db, user, CandidateQuery())
    assert after.item_ids.tolist() == before.item_ids.tolist()
    assert np.array_equal(after.scores, before.scores)
    # a new item drops them: they describe the snapshot's contents only
    summaries = second._derived
    add_items([{"title": "gamma", "tags": ["t1"]}])
    grown = load(db)
    assert grown._derived is not summaries and len(summaries["mean_column"]) == len(ids)
    assert len(grown.mean_column()) == len(ids) + 1


def test_a_snapshot_without_the_summaries_still_loads(db, add_items, snapshots, monkeypatch):
    ids = add_items([{"title": "alpha", "tags": ["a"]}, {"title": "beta"}])
    monkeypatch.setattr(
        matrix_store, "_write", lambda path, arrays, held=None: (snapshots.append(path), real_write(path, arrays))
    )
    load(db)
    matrix_mod.clear_cache()
    reads = []
    real_refresh = matrix_loader.refresh
    monkeypatch.setattr(matrix_loader, "refresh", lambda *a: reads.append(1) or real_refresh(*a))
    matrix = load(db)
    assert reads == [] and matrix.ids.tolist() == ids and matrix._derived == {}
    assert len(matrix.mean_column()) == 2


real_write = matrix_store._write


def test_a_stale_snapshot_is_ignored(db, add_items, snapshots):
    ids = add_items([{"title": "alpha"}, {"title": "beta"}])
    load(db)
    matrix_mod.clear_cache()
    db.execute("DELETE FROM items WHERE id = ?", [ids[0]])
    assert load(db).ids.tolist() == [ids[1]]  # the fingerprint no longer matches


def test_an_unreadable_snapshot_is_ignored(db, add_items, snapshots):
    ids = add_items([{"title": "alpha"}])
    load(db)
    whole = snapshots[0].read_bytes()
    for broken in (b"not a snapshot", whole[: len(whole) // 2]):  # garbage, cut short
        snapshots[0].write_bytes(broken)
        matrix_mod.clear_cache()
        assert load(db).ids.tolist() == ids


def test_a_snapshot_in_the_previous_format_is_removed_when_a_new_one_is_written(db, add_items, snapshots):
    add_items([{"title": "alpha"}])
    load(db)
    old = snapshots[0].parent / "0123456789abcdef.npz"
    old.write_bytes(b"an .npz of version 4")
    matrix_mod.clear_cache()
    add_items([{"title": "beta"}])
    load(db)
    assert snapshots[-1].exists() and not old.exists()


def test_cached_feed_scores_equal_direct_scores_and_follow_new_clicks(db, add_items):
    ids = add_items([{"title": f"graph item {i} words {i % 3}"} for i in range(12)])
    user = create_user(db, "ann", "graph words, item 2")
    record_click(db, user["id"], ids[0], True, "ui")
    record_click(db, user["id"], ids[1], False, "ui")
    feed = rank(db, user, CandidateQuery())  # most of the matrix: computed per row, cached
    narrow = rank(db, user, CandidateQuery(item_ids=tuple(ids[2:4])))  # scored directly
    for name in ("affinity", "classifier"):
        full = dict(zip(feed.item_ids.tolist(), feed.raw[name]))
        for item_id, value in zip(narrow.item_ids.tolist(), narrow.raw[name]):
            assert full[item_id] == pytest.approx(value, abs=1e-5)
    semantic = dict(zip(feed.item_ids[np.argsort(feed.order)].tolist(), feed.components["profile"].detail["semantic"]))
    for item_id, value in zip(
        narrow.item_ids[np.argsort(narrow.order)].tolist(), narrow.components["profile"].detail["semantic"]
    ):
        assert semantic[item_id] == pytest.approx(value, abs=1e-5)
    before = dict(zip(feed.item_ids.tolist(), feed.raw["affinity"]))
    record_click(db, user["id"], ids[5], True, "ui")
    after = rank(db, user, CandidateQuery())
    assert dict(zip(after.item_ids.tolist(), after.raw["affinity"])) != before


def test_the_per_row_score_cache_keeps_to_its_byte_budget(db, add_items, monkeypatch):
    ids = add_items([{"title": f"graph item {i}"} for i in range(12)])
    user = create_user(db, "ann", "graph words")
    score_cache.clear()
    rank(db, user, CandidateQuery())
    one_ranking = sum(v.nbytes for v in score_cache._SCORES.values())
    monkeypatch.setattr(score_cache, "MAX_SCORE_BYTES", 2 * one_ranking)
    for item_id in ids[:4]:  # each click makes new entries (behaviour, preference)
        record_click(db, user["id"], item_id, True, "ui")
        ranked = rank(db, user, CandidateQuery())
        assert sum(v.nbytes for v in score_cache._SCORES.values()) <= 2 * one_ranking
    # what was dropped is recomputed: the same ranking as with nothing cached
    score_cache.clear()
    assert rank(db, user, CandidateQuery()).item_ids.tolist() == ranked.item_ids.tolist()


def test_the_blas_libraries_are_found_once_and_limited_to_one_thread(monkeypatch):
    """threadpoolctl scans every shared library of the process to find BLAS (0.6 ms a time,
    twice per ranking after a click): hermes.ranking.threads scans once."""
    from threadpoolctl import threadpool_info

    from hermes.ranking import logistic, threads

    made = []
    real = threads.ThreadpoolController
    monkeypatch.setattr(threads, "ThreadpoolController", lambda: made.append(1) or real())
    monkeypatch.setattr(threads, "_CONTROLLER", None)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 8)), np.array([0, 1] * 10)
    for _ in range(3):
        logistic.fit(X, y)
    with threads.one_blas_thread():
        inside = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert made == [1]
    assert inside and set(inside) == {1}


def test_a_ten_thousand_item_archive_starts_from_a_snapshot():
    """Issue 36: at 10,000 rows the snapshot was read in a tenth of the CPU time of SQLite's
    rows (benchmarks/results/cli.md), so a load of that size writes one."""
    assert matrix_store.MIN_ROWS <= 10_000
