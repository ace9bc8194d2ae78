"""Issue 31: a window's items read in their archive's neighbourhood, and settled by Ward's own
measure of closeness (hermes.topics.window_topics.in_archive, _settle_spread)."""

from __future__ import annotations

import numpy as np

from hermes.topics import window_topics


def unit(rows):
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def archive(n=200, seed=0):
    """Two subjects along axes 0 and 1 of a 16-d space, with noise."""
    rng = np.random.default_rng(seed)
    rows = np.zeros((n, 16))
    rows[: n // 2, 0] = 1.0
    rows[n // 2 :, 1] = 1.0
    return unit(rows + 0.3 * rng.normal(size=rows.shape))


def context(vectors, rows, ids):
    return window_topics.in_archive(vectors, ids, lambda w: w @ rows.T, lambda idx: rows[idx])


def test_an_item_is_drawn_towards_its_neighbourhood_in_the_archive():
    rows = archive()
    ids = np.arange(1000, 1000 + len(rows))
    # an item halfway between the subjects, a little nearer subject 0's papers
    item = unit([0.75, 0.66] + [0.0] * 14)
    out = context({5: item}, rows, ids)[5]
    assert out @ np.eye(16)[0] > item @ np.eye(16)[0]  # pulled towards subject 0
    assert out @ np.eye(16)[1] < item @ np.eye(16)[1]


def test_the_result_does_not_depend_on_the_archive_order_and_skips_the_item_itself():
    rows = archive()
    ids = np.arange(1000, 1000 + len(rows))
    vectors = {int(ids[3]): rows[3], int(ids[150]): rows[150]}
    first = context(vectors, rows, ids)
    order = np.random.default_rng(1).permutation(len(rows))
    second = context(vectors, rows[order], ids[order])
    for k in vectors:
        assert np.allclose(first[k], second[k])
        assert not np.allclose(first[k], vectors[k])  # its neighbours, not itself alone


def test_an_item_nothing_in_the_archive_is_like_keeps_its_vector_and_a_small_archive_is_left_alone():
    rows = archive()
    rows[:, 4:] = 0.0  # the archive's papers lie in the first four dimensions
    rows = unit(rows)
    ids = np.arange(len(rows))
    stray = np.eye(16)[7]  # orthogonal to every paper of the archive: cosine 0
    out = context({999: stray}, rows, ids)[999]
    assert np.allclose(unit(out), stray)
    small = rows[:50]
    vectors = {0: small[0]}
    assert context(vectors, small, np.arange(50)) is vectors


def test_settling_keeps_a_close_pair_and_moves_an_item_to_the_topic_it_lies_closest_to():
    rows = unit(
        [
            [1, 0.05, 0],
            [1, -0.05, 0],  # a close pair
            [0, 1, 0.1],
            [0, 1, -0.1],
            [0.1, 1, 0],  # a trio
            [0.2, 1, 0],
        ]
    )  # put with the pair, lies by the trio
    related = np.ones((6, 6), dtype=bool)
    parts = window_topics._settle_spread(rows, related, [1, 1, 2, 2, 2, 1])
    assert parts[:2] == [1, 1] and parts[2:] == [2, 2, 2, 2]
    # an item is never moved into a topic holding an item it may not share one with
    related[5, 2] = related[2, 5] = False
    parts = window_topics._settle_spread(rows, related, [1, 1, 2, 2, 2, 1])
    assert parts[5] == 1
