"""The ``profile`` component does not depend on the clicks: a ranking of the same candidates
with the same interests serves the one an earlier ranking computed (float32 storage), with
the same bits as computing it again (issue 36, benchmarks/results/click.md)."""

from __future__ import annotations

import numpy as np
from archive_support import random_archive

from hermes.builtins import score_cache, scorers
from hermes.contract import CandidateQuery
from hermes.ranking import matrix as matrix_mod
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user

WORDS = "galaxy star quasar lensing neutrino boson lattice spin graphene magnet protein enzyme genome neuron".split()


def cold(db, user, query, limit=50):
    """The ranking with nothing kept from an earlier one."""
    score_cache.clear()
    with score_cache._LOCK:
        scorers._FITS.clear()
    return rank(db, user, query, limit=limit)


def assert_same(a, b):
    assert a.item_ids.tolist() == b.item_ids.tolist()
    assert a.scores.tobytes() == b.scores.tobytes()
    assert a.levels.tolist() == b.levels.tolist() and a.level_counts == b.level_counts
    for name in a.contributions:
        assert a.contributions[name].tobytes() == b.contributions[name].tobytes(), name
    pa, pb = a.components["profile"], b.components["profile"]
    assert np.asarray(pa.scores).tobytes() == np.asarray(pb.scores).tobytes()
    for part in ("detail", "evidence", "reference"):
        for key, value in getattr(pa, part).items():
            if isinstance(value, np.ndarray):
                assert value.tobytes() == getattr(pb, part)[key].tobytes(), (part, key)


def test_a_repeated_ranking_serves_the_profile_it_computed_with_the_same_bits(db, add_items, monkeypatch):
    monkeypatch.setenv("HERMES_MATRIX", "float32")
    matrix_mod.clear_cache()
    ids = random_archive(add_items, WORDS, n=200, seed=4, length=6)
    user = create_user(db, "ann", "galaxy quasar lensing, neutrino boson")
    query = CandidateQuery(since_days=None, exclude_clicked=False)
    for step, item_id in enumerate(ids[:6]):
        record_click(db, user["id"], int(item_id), step % 3 != 2, "ui")
    first = cold(db, user, query)
    record_click(db, user["id"], int(ids[10]), True, "ui")
    after_click = rank(db, user, query, limit=50)
    # the same candidates and interests: the same component, not computed again
    assert after_click.components["profile"] is first.components["profile"]
    score_cache.settle()
    assert_same(after_click, rank(db, user, query, limit=50))
    # computed afresh, the profile has the same bits; so has the ranking once the click's
    # exact columns are the ones served
    again = cold(db, user, query)
    assert again.components["profile"] is not first.components["profile"]
    assert_same(rank(db, user, query, limit=50), again)
    pa, pb = first.components["profile"], again.components["profile"]
    assert np.asarray(pa.scores).tobytes() == np.asarray(pb.scores).tobytes()


def test_other_candidates_or_another_text_compute_the_profile_again(db, add_items, monkeypatch):
    monkeypatch.setenv("HERMES_MATRIX", "float32")
    matrix_mod.clear_cache()
    random_archive(add_items, WORDS, n=200, seed=5, length=6)
    user = create_user(db, "bea", "graphene magnet lattice")
    query = CandidateQuery(since_days=None)  # clicked items leave the candidates
    first = cold(db, user, query)
    record_click(db, user["id"], int(first.item_ids[0]), True, "ui")
    after_click = rank(db, user, query, limit=50)
    assert after_click.components["profile"] is not first.components["profile"]
    assert_same(after_click, cold(db, user, query))
    db.execute("UPDATE users SET interests = ? WHERE id = ?", ["protein enzyme genome", user["id"]])
    changed = {**user, "interests": "protein enzyme genome"}
    other = rank(db, changed, query, limit=50)
    assert other.components["profile"] is not after_click.components["profile"]
    assert_same(other, cold(db, changed, query))
    assert other.item_ids.tolist() != after_click.item_ids.tolist()


def test_int8_storage_keeps_no_profile(db, add_items, monkeypatch):
    """Its second pass writes exact scores into the first pass's columns: nothing kept."""
    monkeypatch.setenv("HERMES_MATRIX", "int8")
    matrix_mod.clear_cache()
    random_archive(add_items, WORDS, n=120, seed=6, length=6)
    user = create_user(db, "cy", "neutrino boson")
    cold(db, user, CandidateQuery(since_days=None))
    assert not [k for k in score_cache._UNCHANGED if k[0] == "profile"]
