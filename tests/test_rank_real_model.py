"""The ranking with the real all-MiniLM-L6-v2 on real arXiv abstracts (a small slice of the
benchmark corpus): the written interests find the right papers, clicks keep them on top."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes.ingest.store import embed_pending, insert_items
from hermes.ranking.explain import explain
from hermes.ranking.rank import rank_items
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arxiv-2000" / "arxiv_2000_topics.jsonl"


@pytest.mark.slow
@pytest.mark.skipif(
    not DATA.exists(), reason="needs ../shared/data/arxiv-2000 (benchmark data, not shipped with hermes)"
)
def test_real_model_ranking_on_arxiv_abstracts(db, real_embedder):
    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    picked = (
        [r for r in rows if r["topic"] == "quant-ph"][:12]
        + [r for r in rows if r["topic"] == "astro-ph"][:12]
        + [r for r in rows if r["topic"] == "math"][:12]
    )
    db.execute("INSERT INTO feeds (url, title) VALUES ('arxiv', 'arXiv')")
    ids = insert_items(
        db,
        1,
        [
            {
                "guid": r["arxiv_id"],
                "title": r["title"],
                "summary": r["abstract"],
                "published": "2007-04-02T00:00:00+00:00",
            }
            for r in picked
        ],
    )
    embed_pending(db, real_embedder, batch_size=36)
    topic = {i: r["topic"] for i, r in zip(ids, picked)}
    user = create_user(db, "qi", "entanglement and quantum information, quantum computing, decoherence of qubits")
    top = rank_items(db, user, limit=8, since_days=None)
    assert sum(topic[r["id"]] == "quant-ph" for r in top) >= 7

    record_click(db, user["id"], top[0]["id"], True, "ui")
    astro = next(i for i in ids if topic[i] == "astro-ph")
    record_click(db, user["id"], astro, False, "ui")
    top = rank_items(db, user, limit=8, since_days=None)
    assert sum(topic[r["id"]] == "quant-ph" for r in top) >= 7
    why = explain(db, user, top[0]["id"], since_days=None)
    assert why["classifier_active"] and why["nearest_liked"] and why["rank"] == 1
    assert why["match"] in ("strong", "good") and why["reason"].startswith(("Strong", "Good"))
