"""The real embedding model end to end: ingest a sample feed with all-MiniLM-L6-v2."""

from __future__ import annotations

import numpy as np
import pytest

from hermes.embed import MiniLMEmbedder, from_blob, get_embedder
from hermes.ingest.pipeline import add_feeds, run_ingest, sample_feed_paths
from hermes.onnx_embed.choice import DefaultEmbedder


@pytest.mark.slow
def test_ingest_a_sample_feed_with_the_real_model(db, pm, monkeypatch):
    monkeypatch.delenv("HERMES_EMBEDDER", raising=False)
    if hasattr(pm, "_hermes_embedder"):
        del pm._hermes_embedder  # the hash embedder may be cached from an earlier test
    embedder = get_embedder()
    assert isinstance(embedder, DefaultEmbedder)

    blog = next(p for p in sample_feed_paths() if "blog" in p.name)
    add_feeds(db, [(str(blog), None)])
    summary = run_ingest(db)  # no embedder passed: the default the user gets
    assert summary[0]["status"] == "new" and summary.embedded == summary[0]["new"] == 7

    rows = db.execute("SELECT title, embedding, embedding_model FROM items ORDER BY id").fetchall()
    assert {r[2] for r in rows} == {MiniLMEmbedder.name}
    vecs = {r[0]: from_blob(r[1]) for r in rows}
    assert all(v.shape == (384,) and abs(np.linalg.norm(v) - 1) < 1e-4 for v in vecs.values())
    # Semantics, not hashing: the two quantum-computing posts are nearer each other than
    # either is to the post about referee reports.
    qec = vecs["A gentle look at quantum error correction"]
    deco = vecs["Decoherence times, measured badly and then well"]
    referee = vecs["What a referee report should say"]
    assert qec @ deco > qec @ referee and qec @ deco > deco @ referee

    again = run_ingest(db)
    assert again[0]["status"] == "unchanged" and again.embedded == 0


@pytest.mark.slow
def test_bf16_autocast_matches_fp32(monkeypatch):
    """The bf16 fast path (on by default where the CPU has native bf16) gives the same
    vectors as fp32 to within rounding."""
    texts = ["Entanglement of thermal states at high temperature.",
             "Sparse autoencoders find interpretable features in language models."]
    embedder = MiniLMEmbedder()
    monkeypatch.setenv("HERMES_EMBED_BF16", "0")
    fp32 = embedder.embed(texts)
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    bf16 = embedder.embed(texts)
    assert (fp32 * bf16).sum(axis=1).min() > 0.999
