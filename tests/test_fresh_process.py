"""A fresh process's first feed, from the matrix snapshot and the stored score columns, is
the page a warm process shows, bit for bit (issue 36: what the first call no longer
recomputes or reads must not change a ranked id, a score or a level)."""

from __future__ import annotations

import mmap
import threading

import numpy as np
import pytest
from archive_support import random_archive

from hermes.builtins import score_cache, scorers
from hermes.contract import CandidateQuery
from hermes.ranking import column_store, lexical, matrix_loader, matrix_store, quantized
from hermes.ranking import matrix as matrix_mod
from hermes.ranking.matrix import Matrix
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools

WORDS = (
    "galaxy star quasar lensing neutrino boson lattice spin graphene magnet protein "
    "enzyme genome neuron cortex synapse comet orbit plasma photon meson gluon pion"
).split()


@pytest.fixture
def on_disk(monkeypatch):
    """Every archive writes its snapshot and its columns, at once (tests are small)."""
    monkeypatch.setattr(matrix_store, "MIN_ROWS", 1)
    monkeypatch.setattr(matrix_store, "MAP_BYTES", 1)  # small arrays mapped too, as at scale
    monkeypatch.setattr(column_store, "MIN_ROWS", 1)
    real = column_store.save_later

    def save_now(matrix, kind, key, column, slot=None):
        real(matrix, kind, key, column, slot)
        column_store.flush()

    monkeypatch.setattr(column_store, "save_later", save_now)


def fresh_process() -> None:
    """What a new process starts with: no matrix, no scores, no fits in memory."""
    matrix_mod.clear_cache()
    score_cache.clear()
    lexical.clear_cache()
    with score_cache._LOCK:
        scorers._FITS.clear()


def page(db, user) -> tuple:
    r = rank(db, user, CandidateQuery(since_days=None), limit=None, bar_first=True)
    listed = call_tool(db, collect_tools()["list_feed"], {"user": user["name"], "limit": 10, "since_days": None})
    return (
        r.item_ids.tolist(),
        [float(s).hex() for s in r.scores],
        r.levels.tolist(),
        r.level_counts,
        [(i["id"], i["score"], i["match"]) for i in listed["items"]],
    )


def mapped(array: np.ndarray) -> bool:
    while array is not None:
        if isinstance(array, mmap.mmap):
            return True
        array = getattr(array, "base", None) if not isinstance(array, memoryview) else array.obj
    return False


@pytest.mark.parametrize("storage", ["float32", "int8"])
def test_a_fresh_process_first_page_equals_the_warm_page(db, add_items, on_disk, monkeypatch, storage):
    monkeypatch.setenv("HERMES_MATRIX", storage)
    ids = random_archive(add_items, WORDS, n=240, seed=3, length=7)
    user = create_user(db, "ann", "galaxy quasar lensing, protein enzyme genome")
    for k, item in enumerate(ids[:12]):
        record_click(db, user["id"], item, k % 3 != 2, "ui")
    fresh_process()
    page(db, user)  # the first process: reads SQLite, writes the snapshot and the columns
    for thread in threading.enumerate():
        if thread.name == "hermes-matrix-snapshot":
            thread.join()
    warm = page(db, user)
    fresh_process()
    reads, computed = [], []
    real_refresh, real_product, real_read = matrix_loader.refresh, Matrix.product, quantized.ExactRows.read
    monkeypatch.setattr(matrix_loader, "refresh", lambda *a: reads.append("sqlite") or real_refresh(*a))
    monkeypatch.setattr(Matrix, "product", lambda self, w: computed.append("product") or real_product(self, w))
    checked, real_confirmed = [], matrix_mod._confirmed
    monkeypatch.setattr(matrix_mod, "_confirmed", lambda m: checked.append(m) or real_confirmed(m))
    if storage == "int8":
        monkeypatch.setattr(quantized.ExactRows, "read", lambda self, i: reads.append(len(i)) or real_read(self, i))
    assert page(db, user) == warm
    assert computed == []  # every column was read, none computed
    # ranked on the snapshot while its check ran, then checked once: it stood
    matrix = matrix_mod.get_matrix(db, *_model())
    assert checked == [matrix] and not matrix.rejected and matrix.pending is None
    # from the snapshot: its large arrays mapped, the persona-free summaries restored
    assert "sqlite" not in reads and mapped(matrix.ids) and mapped(matrix.key_cols)
    assert {"reference_sample", ("ids_hash", len(matrix))} <= set(matrix._derived)
    # int8: exact rows only for the short list's re-score and the clicked items, not the sample
    assert all(n < 240 for n in reads if isinstance(n, int))


def _model():
    from hermes.embed import get_embedder

    e = get_embedder()
    return e.name, e.dimension


def test_a_ranking_started_on_a_stale_snapshot_ranks_again_on_the_database(db, add_items, on_disk, monkeypatch):
    """The first ranking of a process runs on its snapshot while the check against the
    database scans; an item deleted behind hermes's back (no deletion counted) fails the
    check, and the ranking is made again from the rows the database holds."""
    ids = random_archive(add_items, WORDS, n=60, seed=4, length=7)
    user = create_user(db, "ann", "galaxy quasar lensing")
    fresh_process()
    page(db, user)
    for thread in threading.enumerate():
        if thread.name == "hermes-matrix-snapshot":
            thread.join()
    db.execute("DELETE FROM items WHERE id = ?", [ids[-2]])
    fresh_process()
    reads = []
    real_refresh = matrix_loader.refresh
    monkeypatch.setattr(matrix_loader, "refresh", lambda *a: reads.append("sqlite") or real_refresh(*a))
    checked, real_confirmed = [], matrix_mod._confirmed
    monkeypatch.setattr(matrix_mod, "_confirmed", lambda m: checked.append(len(m)) or real_confirmed(m))
    ranked = rank(db, user, CandidateQuery(since_days=None), limit=None)
    # ranked once on the snapshot's 60 rows, checked, then on the database's 59
    assert checked == [len(ids)] and reads == ["sqlite"] and ids[-2] not in ranked.item_ids.tolist()
    assert len(ranked.item_ids) == len(ids) - 1
    fresh_process()
    monkeypatch.setattr(matrix_store, "MIN_ROWS", 10**9)  # no snapshot written or read
    for path in matrix_store.snapshot_path(matrix_mod.db_file(db), _model()[0], "float32").parent.glob("*.arrays"):
        path.unlink()
    again = rank(db, user, CandidateQuery(since_days=None), limit=None)
    assert again.item_ids.tolist() == ranked.item_ids.tolist() and np.array_equal(again.scores, ranked.scores)
