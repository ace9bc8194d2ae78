"""Score columns a process stores for the next one (:mod:`hermes.ranking.column_store`)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from hermes.builtins import scorers
from hermes.contract import CandidateQuery
from hermes.embed import get_embedder
from hermes.ingest.store import store_embeddings
from hermes.ranking import column_store, lexical
from hermes.ranking import matrix as matrix_mod
from hermes.ranking.matrix import Matrix
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user

TOPICS = (
    "galaxy dust survey",
    "protein folding model",
    "graph neural network",
    "quantum error correction",
    "river flood forecast",
)


@pytest.fixture
def stored(monkeypatch):
    """Every archive uses the disk (tests are small); writes finish before the test reads."""
    monkeypatch.setattr(column_store, "MIN_ROWS", 1)
    real = column_store.save_later

    def save_now(matrix, kind, key, column, slot=None):
        real(matrix, kind, key, column, slot)
        column_store.flush()

    monkeypatch.setattr(column_store, "save_later", save_now)


@pytest.fixture
def persona(db, add_items):
    ids = add_items(
        [
            {
                "title": f"{TOPICS[i % 5]} {i}",
                "summary": f"notes on {TOPICS[i % 5]}",
                "tags": [TOPICS[i % 5].split()[0]],
            }
            for i in range(40)
        ]
    )
    user = create_user(db, "ann", "galaxy dust, graph neural network")
    for item, like in ((ids[0], True), (ids[2], True), (ids[1], False)):
        record_click(db, user["id"], item, like, "ui")
    return user, ids


def fresh_process() -> None:
    """What a new process starts with: no matrix, no in-memory scores."""
    matrix_mod.clear_cache()
    lexical.clear_cache()


def ranked(db, user):
    r = rank(db, user, CandidateQuery(since_days=None), limit=None)
    return r.item_ids.tolist(), r.scores.tolist(), r.levels.tolist()


def files(db_path) -> list:
    return sorted((db_path.parent / f"{db_path.name}-matrix" / "columns").glob("*.npy"))


def forbid_computing(monkeypatch) -> list:
    """Record every full-matrix computation the stored columns should have spared."""
    computed = []
    real_product, real_bm25, real_all = Matrix.product, lexical._bm25, scorers._behaviour_all
    monkeypatch.setattr(Matrix, "product", lambda self, w: computed.append("product") or real_product(self, w))
    monkeypatch.setattr(lexical, "_bm25", lambda *a: computed.append("bm25") or real_bm25(*a))
    monkeypatch.setattr(scorers, "_behaviour_all", lambda *a: computed.append("behaviour") or real_all(*a))
    return computed


def test_a_fresh_process_reads_the_columns_the_last_one_computed(db, db_path, persona, stored, monkeypatch):
    user, _ = persona
    first = ranked(db, user)
    assert len(files(db_path)) == 4  # profile, BM25, behaviour, preference
    fresh_process()
    computed = forbid_computing(monkeypatch)
    assert ranked(db, user) == first
    assert computed == []


def test_a_new_click_or_text_computes_afresh_and_ranks_as_without_the_store(db, db_path, persona, stored, monkeypatch):
    user, ids = persona
    ranked(db, user)
    record_click(db, user["id"], ids[4], True, "ui")
    fresh_process()
    computed = forbid_computing(monkeypatch)
    after_click = ranked(db, user)
    assert "behaviour" in computed and "bm25" not in computed  # the text did not change
    fresh_process()
    monkeypatch.setattr(column_store, "MIN_ROWS", 10**9)  # no store at all
    assert ranked(db, user) == after_click


def add_an_item(db, ids, add_items):
    add_items([{"title": "galaxy dust survey extra", "summary": "more galaxy dust"}])


def re_embed_an_item(db, ids, add_items):
    # the same rows, one of them with a new vector (a newer embedding sequence)
    store_embeddings(db, get_embedder().name, [ids[5]], get_embedder().embed(["galaxy dust survey"]))


@pytest.mark.parametrize("change", [add_an_item, re_embed_an_item])
def test_new_contents_change_the_layout_so_old_columns_are_not_read(
    db, db_path, persona, stored, add_items, monkeypatch, change
):
    user, ids = persona
    ranked(db, user)
    change(db, ids, add_items)
    fresh_process()
    computed = forbid_computing(monkeypatch)
    with_store = ranked(db, user)
    assert {"bm25", "behaviour"} <= set(computed)
    fresh_process()
    monkeypatch.setattr(column_store, "MIN_ROWS", 10**9)
    assert ranked(db, user) == with_store


def test_an_unreadable_column_is_ignored(db, db_path, persona, stored):
    user, _ = persona
    first = ranked(db, user)
    for path in files(db_path):
        path.write_bytes(b"not a numpy file")
    fresh_process()
    assert ranked(db, user) == first


def test_each_kind_keeps_only_its_most_recently_used_files(db, db_path, persona, stored, monkeypatch):
    monkeypatch.setattr(column_store, "MAX_FILES", 2)
    user, ids = persona
    ranked(db, user)
    for item in ids[5:9]:  # four clicks: four behaviour and preference columns each
        record_click(db, user["id"], item, True, "ui")
        ranked(db, user)
    kinds = [path.name.partition("-")[0] for path in files(db_path)]
    # the profile and BM25 columns outlive the clicks' churn
    assert sorted(kinds) == ["behaviour", "behaviour", "bm25", "preference", "preference", "profile"]


def test_a_small_archive_writes_nothing(db, db_path, persona):
    user, _ = persona
    ranked(db, user)
    column_store.flush()
    assert files(db_path) == []


def test_an_in_memory_matrix_never_uses_the_disk():
    matrix = Matrix("m", 4)
    assert column_store.path_of(matrix, "profile", ("anything",)) is None
    assert column_store.load(matrix, "profile", ("anything",)) is None
    column_store.save_later(matrix, "profile", ("anything",), np.zeros(0))  # nothing to do, no error


def hand_matrix(tmp_path, n=3):
    matrix = Matrix("m", 4)
    matrix.db_path = str(tmp_path / "x.db")
    matrix.absorb(
        np.arange(1, n + 1), np.ones((n, 4), np.float32), np.zeros(n), np.zeros(0), np.zeros(0), [], fresh=True
    )
    return matrix


def test_a_newer_column_for_the_same_slot_replaces_one_not_yet_written(tmp_path, monkeypatch):
    monkeypatch.setattr(column_store, "MIN_ROWS", 1)
    monkeypatch.setattr(column_store, "DELAY", 60.0)  # nothing written until flushed
    matrix = hand_matrix(tmp_path)
    column_store.save_later(matrix, "behaviour", ("clicks", 1), np.zeros(3), slot="ann")
    column_store.save_later(matrix, "behaviour", ("clicks", 2), np.ones(3), slot="ann")
    column_store.save_later(matrix, "behaviour", ("clicks", 1), np.full(3, 7.0), slot="bob")
    assert list(column_store.folder(matrix).glob("*.npy")) == []  # off the ranking's path
    column_store.flush()
    assert column_store.load(matrix, "behaviour", ("clicks", 1)).tolist() == [7.0] * 3  # bob's
    assert column_store.load(matrix, "behaviour", ("clicks", 2)).tolist() == [1.0] * 3


def test_a_process_that_exits_before_the_delay_still_writes_its_columns(tmp_path, monkeypatch):
    script = f"""
import numpy as np
from hermes.ranking import column_store
from hermes.ranking.matrix import Matrix
column_store.MIN_ROWS = 1
column_store.DELAY = 60.0
matrix = Matrix("m", 4)
matrix.db_path = {str(tmp_path / "x.db")!r}
matrix.absorb(np.arange(1, 4), np.ones((3, 4), np.float32), np.zeros(3), np.zeros(0),
              np.zeros(0), [], fresh=True)
column_store.save_later(matrix, "profile", ("text",), np.arange(3.0))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    monkeypatch.setattr(column_store, "MIN_ROWS", 1)
    assert column_store.load(hand_matrix(tmp_path), "profile", ("text",)).tolist() == [0, 1, 2]
