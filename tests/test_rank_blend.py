"""Blending: the n/(n+5) weight, calibration, shares, deterministic ties, plugin boosts."""

from __future__ import annotations

import numpy as np
import pytest

from hermes.contract import Component
from hermes.hookspecs import hookimpl
from hermes.ranking.rank import blend, blend_weight, calibrate, rank_items, top_order
from hermes.storage.records import create_user, item_rows


def test_blend_weight_values():
    assert blend_weight(0) == 0.0
    assert blend_weight(5) == pytest.approx(0.5)
    assert blend_weight(30) == pytest.approx(30 / 35)
    assert blend_weight(30) > 0.85
    weights = [blend_weight(n) for n in range(50)]
    assert weights == sorted(weights)


def test_calibrate_standardises_and_zeroes_constants():
    z = calibrate(np.array([1.0, 2.0, 3.0, 10.0]))
    assert z.mean() == pytest.approx(0.0) and z.std() == pytest.approx(1.0)
    assert not calibrate(np.full(5, 0.7)).any()
    assert calibrate(np.zeros(0)).size == 0


@pytest.mark.parametrize("n", [2, 7, 1001, 100_003])
def test_calibrate_gives_the_bits_of_the_textbook_z_score(n):
    rng = np.random.default_rng(n)
    for dtype in (np.float32, np.float64):
        scores = (rng.standard_normal(n) * 3.7 + 1.3).astype(dtype)
        wide = scores.astype(np.float64)
        assert np.array_equal(calibrate(scores), (wide - wide.mean()) / wide.std())


def test_constant_components_take_no_share():
    informative = Component("a", "behaviour", np.array([0.0, 1.0, 2.0]))
    constant = Component("b", "behaviour", np.array([0.5, 0.5, 0.5]))
    profile = Component("p", "profile", np.array([2.0, 1.0, 0.0]))
    total, contributions, w, shares = blend([profile, informative, constant], 5, 3)
    assert w == pytest.approx(0.5)
    assert shares == {"p": 0.5, "a": 0.5, "b": 0.0}
    assert not contributions["b"].any()
    assert np.allclose(total, contributions["p"] + contributions["a"])


def test_behaviour_only_takes_everything_and_nothing_means_zero():
    comp = Component("a", "behaviour", np.array([0.0, 1.0]))
    assert blend([comp], 1, 2)[2] == 1.0
    total, _, w, _ = blend([], 3, 2)
    assert w == 0.0 and not total.any()


def test_ties_break_on_the_lower_id_even_at_the_cut():
    ids = np.array([9, 3, 7, 1, 5])
    total = np.array([1.0, 2.0, 1.0, 1.0, 0.0])
    assert ids[top_order(ids, total, None)].tolist() == [3, 1, 7, 9, 5]
    assert ids[top_order(ids, total, 2)].tolist() == [3, 1]
    assert ids[top_order(ids, total, 3)].tolist() == [3, 1, 7]


def _lifted_top_order(ids, total, limit, first=None):
    """The order top_order gave before it rounded only near the cut: every score rounded,
    the ``first`` group lifted above the others by more than any spread."""
    rounded = np.round(total, 12)
    if first is not None:
        rounded = rounded + np.where(first, 2.0 * float(np.ptp(rounded)) + 1.0, 0.0)
    pool = np.arange(len(ids))
    if limit is not None and limit < len(ids):
        kth = np.partition(rounded, len(ids) - limit)[len(ids) - limit]
        pool = np.flatnonzero(rounded >= kth)
    order = pool[np.lexsort((ids[pool], -rounded[pool]))]
    return order if limit is None else order[:limit]


@pytest.mark.parametrize("seed", range(40))
def test_top_order_equals_rounding_every_score(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    ids = rng.permutation(n * 3)[:n].astype(np.int64)
    # coarse values make exact ties; tiny offsets make scores equal only once rounded
    total = rng.integers(0, 6, size=n) / 7.0 + rng.choice([0.0, 1e-14, 3e-13, 2e-12], size=n)
    first = rng.random(n) < rng.choice([0.0, 0.3, 1.0])
    for limit in (None, 1, 5, 20, n, n + 3):
        for group in (None, first):
            got = top_order(ids, total, limit, first=group)
            assert got.tolist() == _lifted_top_order(ids, total, limit, group).tolist()


@pytest.mark.parametrize("seed", range(6))
def test_top_order_from_a_sampled_threshold_equals_rounding_every_score(seed):
    """Above rank.POOL_DIRECT scores the k-th best is looked for above a threshold read from
    an even sample: the same order as partitioning every score, ties and groups included."""
    rng = np.random.default_rng(seed)
    n = 30_000
    ids = rng.permutation(n * 2)[:n].astype(np.int64)
    total = rng.integers(0, 40, size=n) / 7.0 + rng.choice([0.0, 1e-14, 3e-13, 2e-12], size=n)
    if seed % 2:
        total = rng.normal(size=n)
    first = rng.random(n) < 0.3
    for limit in (1, 20, 100, 1000):
        for group in (None, first):
            got = top_order(ids, total, limit, first=group)
            assert got.tolist() == _lifted_top_order(ids, total, limit, group).tolist()


def test_top_order_when_the_sample_misleads_it():
    """A threshold read from the sample that too few scores reach (the sampled rows hold the
    best scores), and one with scores tied once rounded just below it, off the sample."""
    n, limit = 100_000, 1000
    stride = n // max(2048, 8 * limit)
    ids = np.arange(1, n + 1, dtype=np.int64)
    high = np.zeros(n)
    high[::stride] = 1.0 + np.arange(len(high[::stride])) * 1e-6
    assert top_order(ids, high, limit).tolist() == _lifted_top_order(ids, high, limit).tolist()
    tied = np.zeros(n)
    tied[::50] = 1.0  # 2,000 scores of 1.0, the sample's among them
    tied[1::50][:300] = 1.0 - 3e-13  # equal to 1.0 once rounded, never sampled
    tied[7::50][:500] = 1.0 + 4e-12
    for limit in (600, 1000):
        got = top_order(ids, tied, limit)
        assert got.tolist() == _lifted_top_order(ids, tied, limit).tolist()


def test_identical_items_rank_by_id_every_time(db, add_items):
    ids = add_items([{"title": "same words here"} for _ in range(6)])
    user = create_user(db, "ann", "same words")
    runs = {tuple(r["id"] for r in rank_items(db, user, limit=4)) for _ in range(3)}
    assert runs == {tuple(sorted(ids)[:4])}


def test_a_third_party_boost_scorer_changes_the_order(pm, db, add_items):
    ids = add_items(
        [
            {"title": "quantum error correction codes", "tags": ["quant-ph"]},
            {"title": "surface codes for quantum error correction", "tags": ["quant-ph"]},
            {"title": "galaxy rotation curves", "tags": ["astro-ph"]},
        ]
    )
    user = create_user(db, "ann", "quantum error correction")
    before = [r["id"] for r in rank_items(db, user, limit=3)]
    assert before[-1] == ids[2]

    class RoleBoost:
        """A plugin that pushes astronomy up for everyone, on the blended scale."""

        @hookimpl
        def hermes_score(self, db, user, item_ids, vectors, context):
            tags = {i: r["tags"] for i, r in item_rows(db, item_ids).items()}
            boost = np.array([1.0 if "astro-ph" in tags[int(i)] else 0.0 for i in item_ids])
            return Component("astro_boost", "boost", boost, weight=3.0)

    pm.register(RoleBoost(), name="role_boost")
    after = rank_items(db, user, limit=3)
    assert after[0]["id"] == ids[2]
    assert before != [r["id"] for r in after]


def test_a_scorer_returning_the_wrong_length_is_left_out(pm, db, add_items, caplog):
    add_items([{"title": "a"}, {"title": "b"}])
    user = create_user(db, "ann", "a")

    class Broken:
        @hookimpl
        def hermes_score(self, db, user, item_ids, vectors, context):
            return Component("broken", "boost", np.zeros(len(item_ids) + 1))

    pm.register(Broken(), name="broken")
    assert len(rank_items(db, user, limit=2)) == 2
    assert "plugin 'broken' returned a malformed component" in caplog.text
