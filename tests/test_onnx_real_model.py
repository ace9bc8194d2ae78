"""The ONNX Runtime path against sentence-transformers with the real all-MiniLM-L6-v2: the
same vectors on every text of the bundled sample feeds, the same rankings, and a fresh
process that ranks after an interests change without importing torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from hermes.embed import HashEmbedder, MiniLMEmbedder, to_blob
from hermes.ingest.pipeline import add_feeds, run_ingest, sample_feed_paths
from hermes.ingest.store import embedding_text
from hermes.onnx_embed import artifact
from hermes.onnx_embed.choice import DefaultEmbedder
from hermes.onnx_embed.runtime import OnnxMiniLMEmbedder
from hermes.ranking.rank import rank_items
from hermes.storage.clicks import record_click
from hermes.storage.db import get_db
from hermes.storage.records import create_user

pytestmark = pytest.mark.slow

PERSONAS = {
    "qi": "quantum error correction and entanglement; decoherence of superconducting qubits",
    "cm": "strongly correlated electrons, superconductivity and magnetism in thin films",
    "cx": "random walks, graph algorithms and information theory; channel capacity",
    "bio": "enzyme kinetics, molecular motors and synchronization in biological networks",
}


class Capture(HashEmbedder):
    """Filed under the real model's name; remembers every text ingest asks it to embed."""

    name = MiniLMEmbedder.name

    def __init__(self):
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)


def ingest_samples(path, embedder):
    db = get_db(path)
    add_feeds(db, [(str(p), None) for p in sample_feed_paths()])
    run_ingest(db, embedder=embedder)
    return db


@pytest.fixture(scope="module")
def vectors(tmp_path_factory, model_cache):
    """Every sample-feed text as ingest embeds it, through both paths (fp32 reference)."""
    capture = Capture()
    ingest_samples(tmp_path_factory.mktemp("capture") / "c.db", capture).conn.close()
    texts = capture.texts
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HERMES_MODEL_CACHE", str(model_cache))
        mp.setenv("HERMES_EMBED_BF16", "0")
        onnx = OnnxMiniLMEmbedder(model_path=artifact.prepare(announce=False)).embed(texts)
        reference = MiniLMEmbedder().embed(texts)
    return texts, reference, onnx


def test_onnx_and_sentence_transformers_agree_on_every_sample_text(vectors):
    texts, reference, onnx = vectors
    assert len(texts) == 300
    cosine = np.sum(reference * onnx, axis=1)
    worst = int(np.argmin(cosine))
    assert cosine[worst] >= 0.9999, (cosine[worst], texts[worst][:80])
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1, atol=1e-5)


def test_onnx_and_sentence_transformers_rank_the_same_top_10(vectors, tmp_path, pm, monkeypatch):
    """hermes.rank over the sample feeds, once with each path's item and interests vectors
    (one database, copied, so item ids and the classifier's sampled negatives match): the
    same ten items in the same order for every persona, before and after clicks."""
    texts, reference, onnx = vectors
    monkeypatch.setenv("HERMES_EMBED_BF16", "0")
    ingest_samples(tmp_path / "items.db", Capture()).conn.close()
    tops = {}
    for backend, vecs in (("torch", reference), ("onnx", onnx)):
        pm.embedder = DefaultEmbedder(backend)  # what get_embedder() hands rank()
        path = tmp_path / f"{backend}.db"
        shutil.copy(tmp_path / "items.db", path)
        db = get_db(path)
        by_text = dict(zip(texts, vecs))
        for item_id, title, summary in db.execute("SELECT id, title, summary FROM items").fetchall():
            db.execute(
                "UPDATE items SET embedding = ? WHERE id = ?",
                [to_blob(by_text[embedding_text(title, summary)]), item_id],
            )
        for name, interests in PERSONAS.items():
            user = create_user(db, name, interests)
            first = [r["id"] for r in rank_items(db, user, limit=10, since_days=None)]
            record_click(db, user["id"], first[0], True, "ui")
            record_click(db, user["id"], first[-1], False, "ui")
            after = [r["id"] for r in rank_items(db, user, limit=10, since_days=None)]
            tops[backend, name] = (first, after)
        db.conn.close()
    for name in PERSONAS:
        assert tops["onnx", name] == tops["torch", name], name


FRESH = textwrap.dedent("""
    import json, sys, time
    start = time.perf_counter()
    from hermes.ranking.rank import rank_items
    from hermes.storage.records import require_user
    from hermes.storage.db import get_db
    db = get_db(sys.argv[1])
    db.execute("UPDATE users SET interests = ? WHERE name = 'ann'", [sys.argv[2]])
    items = rank_items(db, require_user(db, "ann"), limit=3, since_days=None)
    print(json.dumps({"ids": [i["id"] for i in items], "seconds": time.perf_counter() - start,
                      "heavy": sorted(m for m in ("torch", "sentence_transformers", "transformers", "sklearn",
                                                   "scipy", "networkx", "starlette", "jinja2")
                                      if m in sys.modules)}))
""")


def test_a_fresh_process_ranks_after_an_interests_change_without_torch(db, db_path, model_cache):
    """The cold path: new interests text, fresh process, default settings — the text is
    embedded by ONNX Runtime (tokenizers + onnxruntime), torch is never imported."""
    artifact.prepare(announce=False)
    ingest_samples(db_path, Capture()).conn.close()  # items filed under MiniLM's name
    create_user(db, "ann", "bread")
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_EMBEDDER", "HERMES_EMBED_BACKEND")}
    out = subprocess.run(
        [sys.executable, "-c", FRESH, str(db_path), "quantum error correction"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["heavy"] == [] and len(result["ids"]) == 3
    vec = db.execute("SELECT interests_vec FROM users WHERE name = 'ann'").fetchone()[0]
    assert vec is not None and len(vec) == 4 * 384  # embedded and stored by the child
