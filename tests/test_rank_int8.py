"""The large-archive storage: an int8 matrix, every component scored on it, the short list
re-scored exactly; chosen by size or by ``[ranking] matrix``; never a float32 full matrix."""

from __future__ import annotations

import numpy as np
import pytest
from archive_support import random_archive

from hermes import config
from hermes.builtins import score_cache, scorers
from hermes.contract import CandidateQuery
from hermes.embed import get_embedder
from hermes.errors import HermesError
from hermes.ranking import matrix as matrix_mod
from hermes.ranking import matrix_loader, matrix_store, quantized
from hermes.ranking import rank as rank_mod
from hermes.ranking.matrix import get_matrix
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools

WORDS = (
    "galaxy star quasar lensing neutrino boson lattice spin graphene magnet protein "
    "enzyme genome neuron cortex synapse comet orbit plasma photon meson gluon pion "
    "kaon muon tau lepton quark higgs axion"
).split()


def archive(add_items, n=300, seed=5):
    return random_archive(add_items, WORDS, n=n, seed=seed, length=7)


def fresh(monkeypatch, storage: str):
    """A new process's state with ``HERMES_MATRIX=storage``."""
    monkeypatch.setenv("HERMES_MATRIX", storage)
    matrix_mod.clear_cache()
    score_cache.clear()
    with score_cache._LOCK:
        scorers._FITS.clear()


def load(db):
    e = get_embedder()
    return get_matrix(db, e.name, e.dimension)


def test_int8_top_k_after_the_rescore_equals_float32(db, add_items, monkeypatch):
    ids = archive(add_items)
    user = create_user(db, "ann", "galaxy quasar lensing, neutrino boson muon")
    rng = np.random.default_rng(11)
    for k, item_id in enumerate(rng.choice(ids, size=14, replace=False).tolist()):
        record_click(db, user["id"], int(item_id), k % 3 != 2, "ui")  # likes and dislikes
    # a short list far smaller than the candidates: most rows keep their int8 scores
    monkeypatch.setattr(rank_mod, "RESCORE", 40)
    query = CandidateQuery(since_days=None)
    fresh(monkeypatch, "float32")
    exact = rank(db, user, query, limit=20)
    assert load(db).storage == "float32"
    fresh(monkeypatch, "int8")
    rescored = rank(db, user, query, limit=20)
    assert load(db).storage == "int8"
    assert {"classifier", "affinity", "preference", "profile"} <= set(rescored.components)
    assert all(c.active for c in rescored.components.values())
    assert rescored.item_ids.tolist() == exact.item_ids.tolist()
    # the short list's raw scores are the float32 ones (same vectors, same products); the
    # profile's mix of z-scores moves a little (its mean and spread over every candidate)
    for name in ("affinity", "classifier", "preference"):
        np.testing.assert_allclose(rescored.raw[name], exact.raw[name], rtol=0, atol=1e-5)
    semantic = [r.components["profile"].detail["semantic"][r.order] for r in (rescored, exact)]
    np.testing.assert_allclose(*semantic, rtol=0, atol=1e-6)
    assert rescored.levels.tolist() == exact.levels.tolist()


def test_without_the_rescore_int8_scores_are_approximate(db, add_items, monkeypatch):
    """The re-score is what makes the short list exact: the codes alone are off."""
    archive(add_items, n=120)
    user = create_user(db, "ann", "galaxy quasar lensing, neutrino boson muon")
    query = CandidateQuery(since_days=None)
    fresh(monkeypatch, "float32")
    exact = rank(db, user, query, limit=None)
    fresh(monkeypatch, "int8")
    monkeypatch.setattr(rank_mod, "RESCORE", 0)  # short list: 2 × limit = none
    approx = rank(db, user, query, limit=None)
    by_id = dict(zip(exact.item_ids.tolist(), exact.components["profile"].detail["semantic"][exact.order]))
    got = dict(zip(approx.item_ids.tolist(), approx.components["profile"].detail["semantic"][approx.order]))
    error = max(abs(by_id[i] - got[i]) for i in by_id)
    assert 0 < error < 0.02


def test_storage_is_chosen_by_size_and_by_the_setting(db, add_items, monkeypatch, hermes_home):
    archive(add_items, n=30)
    monkeypatch.delenv("HERMES_MATRIX", raising=False)
    matrix_mod.clear_cache()
    assert config.settings().matrix_storage == "auto"
    assert load(db).storage == "float32"  # 30 items: below the threshold
    monkeypatch.setattr(matrix_loader, "INT8_FROM_ROWS", 30)
    matrix_mod.clear_cache()
    assert load(db).storage == "int8"
    # config.toml overrides the size rule; the environment overrides config.toml
    (hermes_home / "config.toml").write_text('[ranking]\nmatrix = "float32"\n')
    assert load(db).storage == "float32"  # a running process follows the change
    monkeypatch.setenv("HERMES_MATRIX", "int8")
    assert load(db).storage == "int8"


@pytest.mark.parametrize("where", ["env", "toml"])
def test_a_bad_storage_setting_is_a_clear_error(db, add_items, monkeypatch, hermes_home, where):
    archive(add_items, n=5)
    create_user(db, "ann", "galaxy")
    if where == "env":
        monkeypatch.setenv("HERMES_MATRIX", "int4")
        named = "HERMES_MATRIX"
    else:
        monkeypatch.delenv("HERMES_MATRIX", raising=False)
        (hermes_home / "config.toml").write_text("[ranking]\nmatrix = 8\n")
        named = "[ranking] matrix"
    with pytest.raises(HermesError, match=r'expected "auto", "float32" or "int8"') as caught:
        _ = config.settings().matrix_storage
    assert named in str(caught.value)
    result = call_tool(db, collect_tools()["list_feed"], {"user": "ann"})
    assert not result["ok"] and named in result["message"]


def test_int8_load_never_holds_a_float32_matrix(db, add_items, monkeypatch):
    ids = archive(add_items, n=90)
    monkeypatch.setattr(matrix_loader, "CHUNK", 16)  # read 16 rows of SQLite at a time
    seen = []
    real_absorb = matrix_mod.Matrix.absorb

    def absorb(self, ids_, vecs, *args, **kwargs):
        seen.append(vecs.shape[0])
        return real_absorb(self, ids_, vecs, *args, **kwargs)

    monkeypatch.setattr(matrix_mod.Matrix, "absorb", absorb)
    fresh(monkeypatch, "int8")
    m = load(db)
    assert len(m) == len(ids) and max(seen) <= 16  # float32 one chunk at a time
    assert m._vectors.size == 0  # no float32 buffer at all
    codes_t, scales = m._int8.arrays()
    assert codes_t.dtype == np.int8 and codes_t.shape == (m.dimension, len(ids))
    assert scales.dtype == np.float32 and m.nbytes == codes_t.nbytes + scales.nbytes
    with pytest.raises(TypeError, match="int8"):
        _ = m.vectors
    # exact rows come back from the database, not from the codes
    # (an item whose codes do not hold its row exactly: the hash embedder's sparse rows
    # often quantise without error, so one that does not is looked for)
    rows = m.lookup(np.array(ids))
    approx = [r for r in rows if not np.allclose(m._int8.dequantise([r])[0], m.exact_rows([r])[0], atol=0, rtol=0)]
    assert approx, "every row quantised exactly: nothing shows where exact rows come from"
    row = int(approx[0])
    item_id = ids[list(rows).index(row)]
    stored = np.frombuffer(
        db.execute("SELECT embedding FROM items WHERE id = ?", [item_id]).fetchone()[0], dtype=np.float32
    )
    assert np.array_equal(m.exact_rows([row])[0], stored)
    assert not np.array_equal(m._int8.dequantise([row])[0], stored)


def test_int8_snapshot_holds_codes_and_a_refresh_appends(db, add_items, monkeypatch):
    monkeypatch.setattr(matrix_store, "MIN_ROWS", 1)
    written = []
    monkeypatch.setattr(
        matrix_store.threading,
        "Thread",
        lambda target, args=(), name=None, daemon=None: type("T", (), {"start": lambda self: target(*args)})(),
    )
    real_write = matrix_store._write
    monkeypatch.setattr(
        matrix_store, "_write", lambda path, arrays, held=None: (real_write(path, arrays, held), written.append(path))
    )
    archive(add_items, n=60)
    fresh(monkeypatch, "int8")
    first = load(db)
    assert len(written) == 1
    arrays = matrix_store.read_arrays(written[0])
    assert "vectors" not in arrays and arrays["codes_t"].dtype == np.int8
    assert written[0] != matrix_store.snapshot_path(matrix_mod.db_file(db), first.model)
    fresh(monkeypatch, "int8")
    second = load(db)
    assert second is not first and second.storage == "int8"
    assert np.array_equal(second._int8.arrays()[0], first._int8.arrays()[0])
    w = np.random.default_rng(0).normal(size=(3, second.dimension)).astype(np.float32)
    assert np.array_equal(second.product(w), first.product(w))
    # rows embedded later go to a segment of their own, merged when it grows
    more = add_items([{"title": f"comet orbit {i}", "summary": "plasma photon"} for i in range(5)])
    third = load(db)
    assert third is second and len(third) == 65
    rows = third.lookup(np.array(more))
    exact = third.exact_rows(rows)
    np.testing.assert_allclose(third.product(exact)[np.arange(5), rows], 1.0, atol=0.02)


def test_quantise_round_trip_error_is_small():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(50, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    codes, scales = quantized.quantise(vectors)
    assert codes.dtype == np.int8 and np.abs(codes).max() == quantized.CODE_RANGE
    rows = quantized.Int8Rows.from_arrays(np.ascontiguousarray(codes.T), scales, vectors.sum(axis=0))
    np.testing.assert_allclose(rows.dequantise(np.arange(50)), vectors, atol=float(scales.max()))
    product = rows.product(vectors[:4])
    np.testing.assert_allclose(product, vectors[:4] @ vectors.T, atol=5e-3)


class _Forgetful(dict):
    """A scratch that keeps nothing: the second pass computes every candidate again."""

    def __setitem__(self, key, value):
        pass


@pytest.mark.parametrize("limit", [20, None])
def test_the_second_pass_reusing_the_first_pass_equals_computing_it_all_again(db, add_items, monkeypatch, limit):
    ids = archive(add_items)
    user = create_user(db, "ann", "galaxy quasar lensing, neutrino boson muon")
    for k, item_id in enumerate(ids[:12]):
        record_click(db, user["id"], item_id, k % 3 != 2, "ui")
    monkeypatch.setattr(rank_mod, "RESCORE", 40)
    query = CandidateQuery(since_days=None)

    def ranked(scratch_type):
        fresh(monkeypatch, "int8")
        real = rank_mod.ScoringContext
        monkeypatch.setattr(rank_mod, "ScoringContext", lambda **kw: real(**kw, scratch=scratch_type()))
        r = rank(db, user, query, limit=limit, bar_first=True)
        monkeypatch.setattr(rank_mod, "ScoringContext", real)
        return r

    reused, again = ranked(dict), ranked(_Forgetful)
    assert reused.item_ids.tolist() == again.item_ids.tolist()
    assert reused.scores.tolist() == again.scores.tolist()
    assert reused.levels.tolist() == again.levels.tolist()
    for name in again.raw:  # every ranked item's figures, not only the short list's
        assert reused.raw[name].tolist() == again.raw[name].tolist(), name
        assert reused.contributions[name].tolist() == again.contributions[name].tolist(), name
    for name, comp in again.components.items():
        for kind, values in comp.evidence.items():
            assert np.array_equal(reused.components[name].evidence[kind], values), (name, kind)
