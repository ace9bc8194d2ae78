"""Explanations: contents, ranking within the normal pool, the cache the digest reads."""

from __future__ import annotations

import json

import pytest

from hermes.errors import InvalidInput
from hermes.ranking.explain import cached_explanation, explain
from hermes.ranking.rank import blend_weight, rank_items
from hermes.records import create_user
from hermes.storage.signals import record_click


@pytest.fixture
def persona(db, add_items):
    ids = add_items([
        {"title": "quantum error correction with surface codes", "tags": ["quant-ph"]},
        {"title": "fault tolerant quantum error correction thresholds", "tags": ["quant-ph", "cs.IT"]},
        {"title": "entanglement distillation protocols", "tags": ["quant-ph"]},
        {"title": "galaxy rotation curves and dark matter", "tags": ["astro-ph"]},
        {"title": "sourdough bread baking", "tags": ["food"]},
        {"title": "decoherence of superconducting qubits", "tags": ["quant-ph"], "days_ago": 30},
    ])
    user = create_user(db, "ann", "quantum error correction, entanglement")
    return user, ids


def test_explanation_with_no_clicks(db, persona):
    user, _ = persona
    top = rank_items(db, user, limit=1)[0]
    e = explain(db, user, top["id"])
    # a pool this small falls back from the recent window to every unread item
    assert e["rank"] == 1 and e["out_of"] == 6 and e["pool"] == "all unread items"
    assert e["item_id"] == top["id"]
    same_pool = rank_items(db, user, limit=1, since_days=None)[0]
    assert same_pool["id"] == top["id"] and e["score"] == pytest.approx(same_pool["score"], abs=1e-3)
    assert e["blend_weight"] == 0.0 and e["n_clicks"] == 0
    assert e["classifier_active"] is False and e["classifier_reason"] == "no clicks yet"
    assert e["components"]["profile"]["contribution"] > 0
    assert e["components"]["profile"]["closest_interest"] in ("quantum error correction", "entanglement")
    assert e["nearest_liked"] == [] and e["matched_tags"] == []
    assert e["reason"].startswith("Ranks 1 of 6: it matches your interest")
    assert "no clicks yet" in e["reason"]


def test_explanation_after_clicks(db, persona):
    user, ids = persona
    record_click(db, user["id"], ids[0], True, "ui")
    record_click(db, user["id"], ids[2], True, "agent")
    record_click(db, user["id"], ids[4], False, "ui")
    e = explain(db, user, ids[1])
    assert e["n_clicks"] == 3 and e["blend_weight"] == pytest.approx(blend_weight(3))
    assert e["classifier_active"] is True and "2 likes and 1 dislike" in e["classifier_reason"]
    assert set(e["components"]) >= {"profile", "preference", "affinity", "classifier"}
    for comp in e["components"].values():
        assert {"role", "active", "share", "raw", "contribution"} <= set(comp)
    tags = {t["label"]: t for t in e["matched_tags"]}
    assert tags["quant-ph"]["likes"] == 2 and tags["quant-ph"]["score"] == pytest.approx(0.5)
    assert "cs.it" not in tags  # never clicked: no statistics to show
    nearest = e["nearest_liked"]
    assert [n["id"] for n in nearest][:1] == [ids[0]] and {n["id"] for n in nearest} == {ids[0], ids[2]}
    assert nearest[0]["title"].startswith("quantum error") and 0 < nearest[0]["similarity"] <= 1
    assert e["reason"].startswith(f"Ranks {e['rank']} of {e['out_of']}")
    assert "after 3 clicks" in e["reason"]
    json.dumps(e)  # JSON-safe throughout


def test_a_clicked_or_old_item_is_ranked_within_the_normal_pool(db, persona, monkeypatch):
    import hermes.ranking.explain

    monkeypatch.setattr(hermes.ranking.explain, "MIN_POOL", 2)
    user, ids = persona
    record_click(db, user["id"], ids[3], False, "ui")
    e = explain(db, user, ids[3])
    assert e["out_of"] == 5 and e["pool"] == "unread items of the last 7 days"
    old = explain(db, user, ids[5])  # 30 days old: ranked among the four recent unread
    assert old["out_of"] == 5 and 1 <= old["rank"] <= 5


def test_explanations_are_stored_once_and_read_without_generating(db, persona):
    user, ids = persona
    assert cached_explanation(db, user["id"], ids[0]) is None
    assert db.execute("SELECT count(*) FROM explanations").fetchone()[0] == 0
    first = explain(db, user, ids[0])
    assert cached_explanation(db, user["id"], ids[0]) == first
    record_click(db, user["id"], ids[1], True, "ui")
    second = explain(db, user, ids[0])
    assert db.execute("SELECT count(*) FROM explanations").fetchone()[0] == 1
    assert cached_explanation(db, user["id"], ids[0]) == second != first
    assert cached_explanation(db, user["id"], ids[1]) is None


def test_an_item_without_an_embedding_cannot_be_explained(db, persona):
    user, _ = persona
    db.execute("INSERT INTO items (guid, title) VALUES ('raw', 'not embedded yet')")
    raw = db.execute("SELECT id FROM items WHERE guid = 'raw'").fetchone()[0]
    with pytest.raises(InvalidInput, match="no embedding yet"):
        explain(db, user, raw)
    assert cached_explanation(db, user["id"], raw) is None
