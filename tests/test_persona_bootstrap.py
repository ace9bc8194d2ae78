"""bootstrap_persona and click provenance (seed 000: each write path records its source)."""

from __future__ import annotations

import pytest
from hermes_persona.bootstrap import bootstrap_persona
from test_persona_support import archive, make_persona, snapshot, tool  # noqa: F401

from hermes.contract import CandidateQuery
from hermes.errors import InvalidInput, NotFound
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import require_user


def clicks(db, user_id) -> list[tuple]:
    return db.execute("SELECT item_id, label, source FROM clicks WHERE user_id = ? ORDER BY id", [user_id]).fetchall()


def test_bootstrap_likes_the_closest_and_dislikes_the_farthest(db, archive):
    alice = make_persona(db, "alice", "graph neural networks message passing on molecular graphs")
    order = [int(i) for i in rank(db, alice, CandidateQuery(since_days=None, exclude_clicked=False)).item_ids]
    done = bootstrap_persona(db, "alice", n_like=2, n_dislike=3)
    liked = [i["id"] for i in done["liked"]]
    disliked = [i["id"] for i in done["disliked"]]
    assert liked == order[:2] and liked[0] == archive[0]  # the 400-day-old paper counts too
    assert disliked == order[::-1][:3]
    assert not set(liked) & set(disliked)
    stored = clicks(db, alice["id"])
    assert [(i, l) for i, l, _ in stored] == [(i, "like") for i in liked] + [(i, "dislike") for i in disliked]
    assert {s for _, _, s in stored} == {"bootstrap"}
    assert done["liked"][0]["title"] == "Graph neural networks for molecules"


def test_bootstrap_changes_what_profile_status_reports(db, archive, split_bar):
    make_persona(db, "alice", "graph neural networks")
    result = tool(db, "bootstrap_persona", name="alice")
    assert result["ok"], result["message"]
    # 8 items in the archive: 2 share a word with the interests, 6 none (5 asked for)
    assert len(result["liked"]) == 2 and len(result["disliked"]) == 5
    assert "(2 of 5 likes: only strong or good matches are liked" in result["message"]
    status = tool(db, "profile_status", user="alice")
    assert status["clicks"] == 7 and status["clicks_by_source"]["bootstrap"] == 7
    assert status["classifier_active"] is True


def test_bootstrap_on_an_unknown_name_raises_a_clear_error(db, archive):
    make_persona(db, "alice")
    with pytest.raises(NotFound, match=r"unknown persona 'nobody' in .*; known personas: alice"):
        bootstrap_persona(db, "nobody")
    result = tool(db, "bootstrap_persona", name="nobody")
    assert result["ok"] is False and result["liked"] == [] and result["disliked"] == []


def test_bootstrap_refuses_a_persona_that_already_has_feedback(db, archive):
    alice = make_persona(db)
    record_click(db, alice["id"], archive[3], True, "ui")
    before = snapshot(db)
    result = tool(db, "bootstrap_persona", name="alice")
    assert result["ok"] is False and "already has 1 click" in result["message"]
    assert "reset_feedback" in result["message"]
    assert snapshot(db) == before


def test_bootstrap_likes_nothing_it_cannot_call_a_match(db, archive, split_bar):
    """The trial's "bio" persona over an archive without its topics: five made-up likes
    later shown as "you liked it". Now refused, nothing written, and the way out said."""
    make_persona(db, "chef", "knitting crochet yarn")
    result = tool(db, "bootstrap_persona", name="chef")
    assert result["ok"] is False and result["liked"] == result["disliked"] == []
    assert "no item in the archive is a strong or good match for the interests of 'chef'" in result["message"]
    assert "none of 8 items matches them at all" in result["message"]
    assert "add_feed" in result["message"] and "n_like=0 only dislikes" in result["message"]
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 0
    result = tool(db, "bootstrap_persona", name="chef", n_like=0, n_dislike=3)  # dislikes alone
    assert result["ok"] and result["liked"] == [] and len(result["disliked"]) == 3
    assert "from its interests: disliked the 3 items farthest" in result["message"]
    assert "liked the 0" not in result["message"]


def test_bootstrap_only_dislikes_items_with_no_match(db, archive, split_bar):
    make_persona(db, "alice", "graph neural networks")
    done = bootstrap_persona(db, "alice", n_like=1, n_dislike=50)
    assert len(done["disliked"]) == 6  # not the 2 items sharing words with the interests
    assert archive[5] not in [i["id"] for i in done["disliked"]]


def test_bootstrap_on_an_empty_archive(db):
    make_persona(db)
    with pytest.raises(InvalidInput, match="the next `hermes ingest`"):
        bootstrap_persona(db, "alice")


def test_bootstrap_on_a_tiny_archive_never_likes_and_dislikes_one_item(db, add_items, split_bar):
    add_items([{"title": "graphs"}, {"title": "cooking"}, {"title": "graphs in theory"}])
    make_persona(db, "alice", "graphs")
    done = bootstrap_persona(db, "alice", n_like=2, n_dislike=5)
    assert len(done["liked"]) == 2 and len(done["disliked"]) == 1
    assert db["clicks"].count == 3


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        ({"n_like": -1}, "from 0 to 50, got -1"),
        ({"n_dislike": 51}, "from 0 to 50, got 51"),
        ({"n_like": "5"}, "n_like must be a whole number"),
        ({"n_like": True}, "got true"),
        ({"n_like": 0, "n_dislike": 0}, "nothing to do"),
        ({"name": 1}, "name must be a non-empty string"),
    ],
)
def test_bootstrap_refuses_bad_counts_without_writing(db, archive, arguments, fragment):
    make_persona(db)
    before = snapshot(db)
    result = tool(db, "bootstrap_persona", **{"name": "alice", **arguments})
    assert result["ok"] is False and fragment in result["message"], result["message"]
    assert snapshot(db) == before


# --- provenance -----------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["web", "", "UI", None, "bootstrap "])
def test_record_click_rejects_an_invalid_source(db, archive, source):
    alice = make_persona(db)
    with pytest.raises(InvalidInput, match="invalid click source"):
        record_click(db, alice["id"], archive[0], True, source)
    assert clicks(db, alice["id"]) == []


@pytest.mark.parametrize("source", ["ui", "agent", "bootstrap"])
def test_each_source_is_stored_as_given(db, archive, source):
    alice = make_persona(db)
    record_click(db, alice["id"], archive[0], False, source)
    assert clicks(db, alice["id"]) == [(archive[0], "dislike", source)]
    assert require_user(db, "alice")["id"] == alice["id"]


@pytest.mark.slow
def test_bootstrap_with_the_real_model_follows_meaning_not_shared_words(db, add_items, monkeypatch):
    from hermes import plugins
    from hermes.embed import get_embedder
    from hermes.onnx_embed.choice import DefaultEmbedder

    monkeypatch.delenv("HERMES_EMBEDDER")
    plugins.pm_cache_clear()
    assert isinstance(get_embedder(), DefaultEmbedder)  # the real model, either path
    ids = add_items(
        [
            {"title": "Sourdough starter troubleshooting", "summary": "Flour, water, wild yeast and patience."},
            {"title": "Quantum error correction thresholds", "summary": "Surface codes under circuit-level noise."},
            {"title": "Tax law changes for small businesses", "summary": "Deductions and filing deadlines."},
            {"title": "Kernel scheduling latency in Linux", "summary": "Measuring wakeup delays of threads."},
        ]
    )
    make_persona(db, "baker", "homemade bread and baking recipes")  # no word in common with item 0
    done = bootstrap_persona(db, "baker", n_like=1, n_dislike=1)
    assert [i["id"] for i in done["liked"]] == [ids[0]]
    assert done["disliked"][0]["id"] != ids[0]


def test_a_second_bootstrap_finds_its_work_done(db, archive, split_bar):
    """Marked idempotent: a client retrying after a time-out must not read a failure."""
    make_persona(db, "alice", "graph neural networks")
    assert tool(db, "bootstrap_persona", name="alice")["ok"]
    before = snapshot(db)
    again = tool(db, "bootstrap_persona", name="alice")
    assert again["ok"] is True and again["already_warmed"] is True
    assert again["liked"] == [] and again["disliked"] == []
    assert "already warmed" in again["message"] and "nothing changed" in again["message"]
    assert snapshot(db) == before


def test_a_bootstrap_after_a_click_of_its_own_is_still_refused(db, archive, split_bar):
    alice = make_persona(db, "alice", "graph neural networks")
    assert tool(db, "bootstrap_persona", name="alice")["ok"]
    record_click(db, alice["id"], archive[7], True, "ui")
    again = tool(db, "bootstrap_persona", name="alice")
    assert again["ok"] is False and "bootstrap only warms" in again["message"]
