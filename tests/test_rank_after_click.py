"""After a click the feed updates what the click changed — one pass over the matrix — and
ranks exactly as a recomputation from scratch would."""

from __future__ import annotations

import numpy as np
from archive_support import random_archive

from hermes.builtins import score_cache, scorers
from hermes.contract import CandidateQuery
from hermes.ranking import matrix as matrix_mod
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user

WORDS = ("galaxy star quasar lensing neutrino boson lattice spin graphene magnet "
         "protein enzyme genome neuron cortex synapse").split()


def archive(add_items, n=240, seed=3):
    return random_archive(add_items, WORDS, n=n, seed=seed, length=6)


def from_scratch(db, user, query, limit):
    score_cache.clear()
    with score_cache._LOCK:
        scorers._FITS.clear()
    return rank(db, user, query, limit=limit)


def test_top_100_after_each_click_equals_a_recomputation(db, add_items, monkeypatch):
    ids = archive(add_items)
    user = create_user(db, "ann", "galaxy quasar lensing, neutrino boson")
    query = CandidateQuery(since_days=None)
    rng = np.random.default_rng(7)
    passes = []
    real_product = matrix_mod.Matrix.product

    def counting_product(self, weights):
        passes.append(np.atleast_2d(weights).shape[0])
        return real_product(self, weights)

    monkeypatch.setattr(matrix_mod.Matrix, "product", counting_product)
    clicked = rng.choice(ids, size=40, replace=False).tolist()
    for step, item_id in enumerate(clicked):
        # likes past the recent-likes window (16) so old likes drop out of it; dislikes too
        liked = step % 4 != 3
        record_click(db, user["id"], int(item_id), liked, "ui")
        passes.clear()
        after_click = rank(db, user, query, limit=100)
        if step >= 2:  # the persona's caches exist: one pass, with at most the new like
            assert len(passes) == 1 and passes[0] <= 2, (step, passes)
        again = from_scratch(db, user, query, limit=100)
        assert after_click.item_ids.tolist() == again.item_ids.tolist(), step
        # the same numbers up to float32 rounding of products computed in other batches
        for name, atol in (("affinity", 1e-6), ("classifier", 1e-5), ("preference", 1e-12)):
            np.testing.assert_allclose(after_click.raw[name], again.raw[name], rtol=0, atol=atol)


def test_affinity_is_the_mean_of_the_k_closest_likes(db, add_items):
    ids = archive(add_items, n=120)
    user = create_user(db, "ann", "")
    for item_id in ids[:20]:
        record_click(db, user["id"], item_id, True, "ui")
    ranking = rank(db, user, CandidateQuery(since_days=None, exclude_clicked=False))
    m = matrix_mod.get_matrix(db, *_model(db))
    liked = scorers.recent_likes([(i, True) for i in ids[:20]], m)
    sims = m.vectors @ np.stack([m.vector(i) - m.mean_vector() for i in liked], axis=1)
    k = scorers.AFFINITY_K
    expected = np.sort(sims, axis=1)[:, -k:].mean(axis=1)
    rows = m.rows_of(ranking.item_ids)
    np.testing.assert_allclose(ranking.raw["affinity"], expected[rows], rtol=0, atol=1e-6)


def test_a_like_dropping_out_of_the_window_updates_only_what_it_held():
    rng = np.random.default_rng(0)
    columns = {i: rng.normal(size=500).astype(np.float32) for i in range(20)}

    class Fake:
        token, seq = -1, 0

        def __len__(self):
            return 500

    score_cache.clear()
    for i, column in columns.items():
        score_cache._put(score_cache._COLUMNS, (score_cache.matrix_key(Fake()), i), column, 99)
    first = score_cache.top_k_mean(Fake(), list(range(16)), columns, 3)
    moved = score_cache.top_k_mean(Fake(), list(range(1, 17)), columns, 3)  # one in, one out
    expected = np.sort(np.stack([columns[i] for i in range(1, 17)]), axis=0)[-3:]
    assert np.array_equal(moved, score_cache.mean_of_top_k([columns[i] for i in range(1, 17)], 3))
    np.testing.assert_allclose(moved, expected.mean(axis=0), rtol=1e-6)
    assert not np.array_equal(first, moved)


def _model(db):
    from hermes.embed import get_embedder

    embedder = get_embedder()
    return embedder.name, embedder.dimension


def test_kept_key_statistics_follow_every_click_relabel_and_deletion(db, add_items):
    from hermes.embed import get_embedder
    from hermes.ranking.preferences import key_stats
    from hermes.storage.clicks import remove_click, user_clicks

    ids = add_items([{"title": f"item {i}", "tags": [f"t{i % 4}", "shared"],
                      "authors": [f"Ann Author{i % 3}"], "content_type": "paper"}
                     for i in range(12)])
    user = create_user(db, "ann", "items")
    e = get_embedder()

    def kept():
        matrix = matrix_mod.get_matrix(db, e.name, e.dimension)
        return score_cache.stats(db, matrix, user["id"], user_clicks(db, user["id"]))

    steps = [(ids[0], True), (ids[1], False), (ids[5], True), (ids[0], False), (ids[9], True)]
    for item, like in steps:
        record_click(db, user["id"], item, like, "ui")
        assert kept() == key_stats(db, user["id"])
    remove_click(db, user["id"], ids[5], "ui")
    assert kept() == key_stats(db, user["id"])
    db.execute("DELETE FROM items WHERE id = ?", [ids[9]])  # a clicked item gone
    assert kept() == key_stats(db, user["id"])
