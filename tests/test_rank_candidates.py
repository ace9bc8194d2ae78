"""Candidates and the matrix: recency, exclude-clicked, filters, incremental refresh, the
no-copy candidate view, and the persisted interests vector."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

from hermes.contract import CandidateQuery
from hermes.embed import HashEmbedder, get_embedder, to_blob
from hermes.hookspecs import hookimpl
from hermes.ranking import matrix as matrix_mod
from hermes.ranking.interests import interests_key, interests_vectors
from hermes.ranking.matrix import CandidateVectors, get_matrix
from hermes.ranking.rank import rank, rank_items
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user


def ids_of(rows):
    return [r["id"] for r in rows]


def test_defaults_are_recent_and_unclicked_and_the_archive_opens_on_request(db, add_items):
    new, old, clicked = add_items(
        [
            {"title": "fresh paper", "days_ago": 1},
            {"title": "old paper", "days_ago": 40},
            {"title": "clicked paper", "days_ago": 2},
        ]
    )
    user = create_user(db, "ann", "paper")
    record_click(db, user["id"], clicked, True, "ui")
    assert set(ids_of(rank_items(db, user))) == {new}
    assert set(ids_of(rank_items(db, user, since_days=None))) == {new, old}
    assert set(ids_of(rank_items(db, user, exclude_clicked=False))) == {new, clicked}
    assert set(ids_of(rank_items(db, user, since_days=None, exclude_clicked=False))) == {new, old, clicked}
    assert set(ids_of(rank_items(db, user, since_days=60, item_ids=[old, clicked]))) == {old}


def test_search_filters_text_tag_and_type(db, add_items):
    a, b, c = add_items(
        [
            {"title": "Graphene transport", "tags": ["Cond-Mat"], "content_type": "paper"},
            {"title": "graph theory 100%", "tags": ["math"], "content_type": "article"},
            {"title": "podcast on graphs", "tags": ["math"], "content_type": "podcast"},
        ]
    )
    user = create_user(db, "ann", "graphs")
    # a word and its inflections, not the longer words it begins (core:m018_items_fts_words)
    assert set(ids_of(rank_items(db, user, text="graph"))) == {b, c}
    assert set(ids_of(rank_items(db, user, text="100%"))) == {b}  # LIKE wildcards escaped
    assert set(ids_of(rank_items(db, user, tag="cond-mat"))) == {a}
    assert set(ids_of(rank_items(db, user, tag=" MATH "))) == {b, c}
    assert set(ids_of(rank_items(db, user, content_type="podcast"))) == {c}
    assert ids_of(rank_items(db, user, tag="nope")) == []


def test_whole_words_come_from_the_index_other_words_match_literally(db, add_items):
    a, b, c, d = add_items(
        [
            {"title": "Graphene transport", "summary": "X-ray study of CAFÉ samples"},
            {"title": "graph theory 100%", "summary": "subgraph counting"},
            {"title": "podcast on graphs"},
            {"title": "x ray tube"},
        ]
    )
    user = create_user(db, "ann", "")
    # the word and its inflections, any case; not a longer word it begins ("graphene"): a
    # prefix swamps a search (a trial's "witness" found every "with")
    assert set(ids_of(rank_items(db, user, text="GRAPH"))) == {b, c}
    assert set(ids_of(rank_items(db, user, text="graphs"))) == {b, c}
    assert set(ids_of(rank_items(db, user, text="graphene"))) == {a}
    assert set(ids_of(rank_items(db, user, text="cafe"))) == {a}  # diacritics folded
    assert set(ids_of(rank_items(db, user, text="x-ray"))) == {a}  # literal: not "x ray"
    assert set(ids_of(rank_items(db, user, text="graph 100%"))) == {b}  # both kinds at once
    assert ids_of(rank_items(db, user, text="raph")) == []  # whole words match at word starts
    assert ids_of(rank_items(db, user, text='graph"')) == []  # no FTS syntax reaches the index
    db.execute("DROP TABLE items_fts_words")  # a SQLite without FTS5: every word is a LIKE
    db.execute("DROP TABLE items_fts")
    assert set(ids_of(rank_items(db, user, text="graph"))) == {a, b, c}
    assert set(ids_of(rank_items(db, user, text="raph"))) == {a, b, c}


def test_included_items_join_the_pool_whatever_the_filters(db, add_items):
    new, old = add_items([{"title": "new", "days_ago": 1}, {"title": "old", "days_ago": 90}])
    user = create_user(db, "ann", "x")
    record_click(db, user["id"], old, False, "ui")
    ranking = rank(db, user, CandidateQuery(include_ids=(old,)))
    assert set(ranking.item_ids.tolist()) == {new, old}


def test_the_matrix_refreshes_incrementally(db, add_items):
    first = add_items([{"title": "alpha"}, {"title": "beta"}])
    user = create_user(db, "ann", "gamma")
    rank_items(db, user)
    embedder = get_embedder()
    m = get_matrix(db, embedder.name, embedder.dimension)
    seq = m.seq
    [third] = add_items([{"title": "gamma", "tags": ["new-tag"]}])
    assert ids_of(rank_items(db, user))[0] == third
    assert get_matrix(db, embedder.name, embedder.dimension) is m  # same object, grown
    assert m.seq > seq and m.ids.tolist() == [*first, third]
    assert "tag:new-tag" in m.key_index
    # a re-embedded item is replaced in place, not appended
    db.execute(
        "UPDATE items SET embedding = ?, embed_seq = ? WHERE id = ?",
        [to_blob(embedder.embed(["delta"])[0]), m.seq + 1, first[0]],
    )
    get_matrix(db, embedder.name, embedder.dimension)
    assert len(m) == 3 and np.allclose(m.vector(first[0]), embedder.embed(["delta"])[0])


def test_a_deleted_item_is_skipped(db, add_items):
    a, b = add_items([{"title": "a"}, {"title": "b"}])
    user = create_user(db, "ann", "a")
    rank_items(db, user)
    db.execute("DELETE FROM items WHERE id = ?", [a])
    assert [r["id"] for r in rank_items(db, user)] == [b]
    assert [r["rank"] for r in rank_items(db, user)] == [1]


def test_candidate_vectors_behave_like_the_rows_they_stand_for():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((50, 8)).astype(np.float32)
    rows = np.array([3, 1, 40, 7])
    dense = base[rows]
    for few in (rows, np.arange(2, 49)):  # gathered first, or multiplied in full then picked
        view, ref = CandidateVectors(base, few), base[few]
        q = rng.standard_normal((8, 3)).astype(np.float32)
        assert np.allclose(view @ q, ref @ q) and np.allclose(view @ q[:, 0], ref @ q[:, 0])
        assert np.allclose(np.matmul(view, q), ref @ q)
        assert len(view) == len(few) and view.shape == ref.shape
    view = CandidateVectors(base, rows)
    assert np.array_equal(np.asarray(view), dense) and np.array_equal(view[1], dense[1])
    assert np.array_equal(view.T, dense.T) and np.allclose(view.mean(axis=0), dense.mean(axis=0))
    assert np.allclose(view * 2, dense * 2) and np.allclose(np.dot(view, np.ones(8)), dense.sum(1))


class CountingEmbedder(HashEmbedder):
    def __init__(self):
        self.texts = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)


def provide(pm, embedder):
    class Provider:
        @hookimpl
        def hermes_embedder(self):
            return embedder

    pm.register(Provider(), name=f"embedder-{id(embedder)}")
    pm.embedder = None


def test_the_interests_vector_is_persisted_and_re_embedded_only_when_the_text_changes(pm, db, add_items):
    first = CountingEmbedder()
    provide(pm, first)
    add_items([{"title": "galaxy surveys"}, {"title": "quantum codes"}])
    first.texts.clear()
    user = create_user(db, "ann", "galaxy surveys, quantum codes")
    rank_items(db, user)
    assert first.texts == ["galaxy surveys, quantum codes", "galaxy surveys", "quantum codes"]
    key = db.execute("SELECT interests_key FROM users WHERE id = ?", [user["id"]]).fetchone()[0]
    assert key == interests_key(first.name, user["interests"])

    # a fresh matrix and a fresh embedder (as in a new process) reuse the stored vectors
    matrix_mod.clear_cache()
    second = CountingEmbedder()
    provide(pm, second)
    rank_items(db, user)
    assert second.texts == []
    assert interests_vectors(db, user, second).shape == (3, second.dimension)

    # changed text: a new key, embedded once
    db.execute("UPDATE users SET interests = 'stellar spectra' WHERE id = ?", [user["id"]])
    user = {**user, "interests": "stellar spectra"}
    rank_items(db, user)
    rank_items(db, user)
    assert second.texts == ["stellar spectra"]
    new_key = db.execute("SELECT interests_key FROM users WHERE id = ?", [user["id"]]).fetchone()[0]
    assert new_key != key


FRESH = textwrap.dedent("""
    import sys, json
    from hermes.storage.db import get_db
    from hermes.ranking.rank import rank_items
    from hermes.storage.records import require_user
    db = get_db(sys.argv[1])
    items = rank_items(db, require_user(db, "ann"), limit=3, since_days=None)
    print(json.dumps({"ids": [i["id"] for i in items],
                      "torch": "torch" in sys.modules,
                      "st": "sentence_transformers" in sys.modules,
                      "sklearn": "sklearn" in sys.modules,
                      "numpy.ma": "numpy.ma" in sys.modules}))
""")


def test_a_fresh_process_ranks_without_importing_the_model(pm, db, db_path, add_items):
    """Items and the persona's vectors stored under the real model's name: a new process
    with the default (MiniLM) embedder must rank without importing torch — nor numpy.ma,
    which np.unique / np.isin import on first use (12-17 ms of the first ranking)."""
    import json

    from hermes.embed import MiniLMEmbedder

    class Stand(HashEmbedder):  # vectors filed under MiniLM's name, made without torch
        name = MiniLMEmbedder.name

    provide(pm, Stand())
    ids = add_items([{"title": "galaxy surveys"}, {"title": "quantum codes"}, {"title": "bread"}])
    user = create_user(db, "ann", "galaxy surveys, quantum codes")
    record_click(db, user["id"], ids[0], True, "ui")
    record_click(db, user["id"], ids[2], False, "ui")
    expected = [r["id"] for r in rank_items(db, user, limit=3, since_days=None)]
    env = {k: v for k, v in os.environ.items() if k != "HERMES_EMBEDDER"}
    out = subprocess.run(
        [sys.executable, "-c", FRESH, str(db_path)], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result == {"ids": expected, "torch": False, "st": False, "sklearn": False, "numpy.ma": False}
