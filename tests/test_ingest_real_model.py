"""The real embedding model end to end: ingest a sample feed with all-MiniLM-L6-v2."""

from __future__ import annotations

import numpy as np
import pytest

from hermes.embed import MiniLMEmbedder, from_blob
from hermes.ingest.pipeline import add_feeds, run_ingest, sample_feed_paths


@pytest.mark.slow
def test_ingest_a_sample_feed_with_the_real_model(db, real_embedder):
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
    texts = [
        "Entanglement of thermal states at high temperature.",
        "Sparse autoencoders find interpretable features in language models.",
    ]
    embedder = MiniLMEmbedder()
    monkeypatch.setenv("HERMES_EMBED_BF16", "0")
    fp32 = embedder.embed(texts)
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    bf16 = embedder.embed(texts)
    assert (fp32 * bf16).sum(axis=1).min() > 0.999


@pytest.mark.slow
def test_token_vectors_come_from_the_same_pass_and_name_the_topic():
    """embed_tokens gives embed's vectors plus per-token vectors whose spans index the text,
    and the keyphrase tagger finds what an abstract is about from them."""
    from hermes.builtins.default_keyphrases import keyphrases

    text = (
        "Dusty star-forming galaxies at high redshift. We observe dusty star-forming "
        "galaxies behind a lensing cluster with ALMA and measure their dust masses."
    )
    embedder = MiniLMEmbedder()
    vectors, tokens = embedder.embed_tokens([text, "  padded short text"])
    assert (vectors * embedder.embed([text, "  padded short text"])).sum(axis=1).min() > 0.999
    first = tokens[0]
    assert first.vectors.shape[1] == 384 and len(first.vectors) == len(first.spans)
    words = [text[a:b] for a, b in first.spans.tolist()]
    assert words[:3] == ["Dusty", "star", "-"]  # spans of the word pieces in the text
    assert tokens[1].spans[0].tolist() == [2, 8]  # offsets into the caller's text
    found = keyphrases(text, vectors[0], first)
    assert any("star-forming galaxy" in phrase for phrase in found), found
