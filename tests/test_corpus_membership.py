"""Seed 002's unit and integration list: facets, revision counter, change log, isolation."""

from __future__ import annotations

import pytest
from hermes_corpus import membership
from hermes_corpus import signals as cs
from hermes_corpus import tools as ct

from hermes.storage.db import get_db


@pytest.fixture
def world(db, add_items):
    db.execute("INSERT INTO users (name, interests) VALUES ('alice', 'galaxies'), ('bob', 'proteins')")
    ids = add_items(
        [
            {
                "title": "Galaxy evolution at high redshift",
                "summary": "Stellar populations and dust.",
                "tags": ["astro-ph.GA", "galaxies"],
            },
            {
                "title": "Protein folding with transformers",
                "summary": "Structure prediction.",
                "tags": ["q-bio", "proteins"],
            },
            {
                "title": "Dark matter halos",
                "summary": "N-body simulations of halos.",
                "tags": ["astro-ph.CO", "galaxies"],
            },
            {"title": "A 100% literal_title", "summary": "Wildcards in text.", "tags": []},
        ]
    )
    return {"db": db, "items": ids}


def facet(db, user, item_id):
    uid = db.execute("SELECT id FROM users WHERE name = ?", [user]).fetchone()[0]
    rows = db.execute(
        "SELECT facet FROM corpus_membership WHERE user_id = ? AND item_id = ?", [uid, item_id]
    ).fetchall()
    assert len(rows) <= 1  # the facets are disjoint
    return rows[0][0] if rows else None


def revision(db, user):
    return ct.corpus(db, user)["revision"]


def items_in(db, user, which):
    result = ct.corpus_items(db, user, which, 500)
    assert result["ok"], result
    return {i["item_id"] for i in result["items"]}


# --- facet rules ---------------------------------------------------------------------------


def test_favorite_alone_is_saved_never_experienced(world):
    """Regression pin (seed 002 §1.1): a favorited, never-read item is saved-for-later and
    stays out of experienced and out of recall."""
    db, (a, *_rest) = world["db"], world["items"]
    cs.favorite(db, "alice", a)
    assert facet(db, "alice", a) == "saved"
    assert items_in(db, "alice", "experienced") == set()
    assert items_in(db, "alice", "saved") == {a}
    assert ct.recall(db, "alice", "galaxy")["items"] == []
    assert ct.corpus_ranked(db, "alice")["items"] == []
    summary = ct.corpus(db, "alice")
    assert (summary["experienced_count"], summary["saved_count"]) == (0, 1)
    assert summary["top_entities"] == []  # entities come from experienced items only


def test_experienced_is_heard_union_captured(world):
    db, (a, b, c, d) = world["db"], world["items"]
    cs.record_progress(db, "alice", a, 0.3)  # heard (threshold inclusive)
    cs.add_highlight(db, "alice", b, "transformers fold proteins")  # captured
    cs.add_note(db, "alice", c, "halos are lumpy")  # captured
    cs.record_progress(db, "alice", d, 0.29)  # not heard
    assert items_in(db, "alice", "experienced") == {a, b, c}
    assert facet(db, "alice", d) is None


def test_saved_is_favorited_minus_experienced(world):
    db, (a, b, *_rest) = world["db"], world["items"]
    cs.favorite(db, "alice", a)
    cs.favorite(db, "alice", b)
    cs.add_highlight(db, "alice", b, "a passage")
    assert items_in(db, "alice", "saved") == {a}
    assert items_in(db, "alice", "experienced") == {b}
    # Deleting the only capture brings the favorite back to saved.
    hid = db.execute("SELECT id FROM corpus_highlights").fetchone()[0]
    cs.delete_highlight(db, "alice", hid)
    assert items_in(db, "alice", "saved") == {a, b}
    assert items_in(db, "alice", "experienced") == set()


def test_recall_frozen_semantics_capture_not_favorite(world):
    """Recall returns what was read or captured and is unchanged by favoriting; favorites
    only add to saved."""
    db, (a, b, c, _d) = world["db"], world["items"]
    cs.record_progress(db, "alice", a, 1.0)
    cs.add_note(db, "alice", c, "halos and galaxies")
    before = [i["item_id"] for i in ct.recall(db, "alice", "galax")["items"]]
    cs.favorite(db, "alice", b)
    cs.favorite(db, "alice", a)
    after = [i["item_id"] for i in ct.recall(db, "alice", "galax")["items"]]
    assert sorted(before) == sorted(after) == sorted([a, c])


# --- revision counter and change log --------------------------------------------------------


def test_revision_bumps_once_per_membership_change(world):
    db, (a, b, *_rest) = world["db"], world["items"]
    assert revision(db, "alice") == 0
    r = cs.favorite(db, "alice", a)
    assert [c["revision"] for c in r["changes"]] == [1]
    assert revision(db, "alice") == 1
    r = cs.add_highlight(db, "alice", b, "x")
    assert r["changes"] == [{"revision": 2, "kind": "added", "facet": "experienced", "item_id": b}]
    # A second capture on an experienced item changes no membership: no bump.
    r = cs.add_note(db, "alice", b, "y")
    assert r["changes"] == [] and revision(db, "alice") == 2
    # Re-favoriting is idempotent.
    assert cs.favorite(db, "alice", a)["changes"] == [] and revision(db, "alice") == 2
    r = cs.favorite(db, "alice", a, on=False)
    assert r["changes"] == [{"revision": 3, "kind": "removed", "facet": "saved", "item_id": a}]
    assert revision(db, "alice") == 3


def test_delete_writes_a_tombstone(world):
    db, (a, *_rest) = world["db"], world["items"]
    hid = cs.add_highlight(db, "alice", a, "kept passage")["highlight_id"]
    nid = cs.add_note(db, "alice", a, "kept note")["note_id"]
    cs.delete_highlight(db, "alice", hid)
    assert facet(db, "alice", a) == "experienced"  # the note still captures it
    r = cs.delete_note(db, "alice", nid)
    assert r["changes"] == [{"revision": 2, "kind": "removed", "facet": "experienced", "item_id": a}]
    changes = ct.corpus_changes(db, "alice", 1)
    assert changes["changes"] == r["changes"] and changes["revision"] == 2


def test_threshold_crossing_flips_facet_and_bumps_revision(world):
    db, (a, *_rest) = world["db"], world["items"]
    cs.favorite(db, "alice", a)
    assert cs.record_progress(db, "alice", a, 0.1)["changes"] == []
    assert cs.record_progress(db, "alice", a, 0.25, new_session=False)["changes"] == []
    assert facet(db, "alice", a) == "saved" and revision(db, "alice") == 1
    r = cs.record_progress(db, "alice", a, 0.31, new_session=False)
    assert [(c["kind"], c["facet"]) for c in r["changes"]] == [("removed", "saved"), ("added", "experienced")]
    assert facet(db, "alice", a) == "experienced" and revision(db, "alice") == 3
    # Reading less later does not un-hear it (the maximum is kept).
    assert cs.record_progress(db, "alice", a, 0.05)["changes"] == []
    assert facet(db, "alice", a) == "experienced"


def test_changes_since_returns_adds_and_removes(world):
    db, (a, b, c, _d) = world["db"], world["items"]
    cs.favorite(db, "alice", a)  # r1 +saved a
    hid = cs.add_highlight(db, "alice", b, "p")["highlight_id"]  # r2 +exp b
    cs.record_progress(db, "alice", c, 0.9)  # r3 +exp c
    mark = revision(db, "alice")
    cs.delete_highlight(db, "alice", hid)  # r4 -exp b
    cs.record_progress(db, "alice", a, 0.5)  # r5 -saved a, r6 +exp a
    r = ct.corpus_changes(db, "alice", mark)
    assert r["ok"] and r["revision"] == 6 and r["truncated"] is False and r["has_more"] is False
    assert [(c_["revision"], c_["kind"], c_["facet"], c_["item_id"]) for c_ in r["changes"]] == [
        (4, "removed", "experienced", b),
        (5, "removed", "saved", a),
        (6, "added", "experienced", a),
    ]
    assert ct.corpus_changes(db, "alice", 6)["changes"] == []
    # Paging: limit and next_since walk the whole log.
    page = ct.corpus_changes(db, "alice", 0, 4)
    assert [x["revision"] for x in page["changes"]] == [1, 2, 3, 4] and page["has_more"]
    rest = ct.corpus_changes(db, "alice", page["next_since"], 4)
    assert [x["revision"] for x in rest["changes"]] == [5, 6] and not rest["has_more"]


def test_replaying_the_log_reproduces_membership(world):
    db, ids = world["db"], world["items"]
    for k, item in enumerate(ids):
        cs.favorite(db, "alice", item)
        if k % 2:
            cs.record_progress(db, "alice", item, 0.8)
    cs.favorite(db, "alice", ids[0], on=False)
    state: dict[tuple[str, int], None] = {}
    for ch in ct.corpus_changes(db, "alice", 0, 1000)["changes"]:
        key = (ch["facet"], ch["item_id"])
        if ch["kind"] == "added":
            assert key not in state
            state[key] = None
        else:
            assert key in state
            del state[key]
    uid = db.execute("SELECT id FROM users WHERE name = 'alice'").fetchone()[0]
    stored = {(f, i) for f, i in db.execute("SELECT facet, item_id FROM corpus_membership WHERE user_id = ?", [uid])}
    assert set(state) == stored


def test_log_retention_trims_and_reports_truncation(tmp_path, db_path, add_items, db):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text("[corpus]\nlog_retention = 5\n")
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    ids = add_items([{"title": f"item {k}"} for k in range(4)])
    for item in ids:  # r1..r4 +saved
        cs.favorite(db, "alice", item)
    for item in ids:  # r5..r8 -saved
        cs.favorite(db, "alice", item, on=False)
    uid = db.execute("SELECT id FROM users WHERE name = 'alice'").fetchone()[0]
    assert membership.revision_state(db, uid) == (8, 3)
    kept = [r[0] for r in db.execute("SELECT revision FROM corpus_log ORDER BY revision")]
    assert kept == [4, 5, 6, 7, 8]
    assert ct.corpus_changes(db, "alice", 0)["truncated"] is True  # since=0 on a trimmed log
    assert ct.corpus_changes(db, "alice", 2)["truncated"] is True
    full = ct.corpus_changes(db, "alice", 3)
    assert full["truncated"] is False and [c["revision"] for c in full["changes"]] == [4, 5, 6, 7, 8]
    assert "trimmed" in ct.corpus_changes(db, "alice", 0)["message"]
    # Retention survives a re-open; a persona whose log was never trimmed is not truncated.
    db.execute("INSERT INTO users (name) VALUES ('bob')")
    cs.favorite(db, "bob", ids[0])
    assert ct.corpus_changes(db, "bob", 0)["truncated"] is False


def test_bad_config_is_a_clear_error(tmp_path, db, add_items):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items([{"title": "x"}])
    (home / "config.toml").write_text("[corpus]\nlog_retention = 0\n")
    r = ct.favorite(db, "alice", item)
    assert r["ok"] is False and "log_retention" in r["message"]
    assert db.execute("SELECT count(*) FROM corpus_favorites").fetchone()[0] == 0  # rolled back
    (home / "config.toml").write_text("[corpus]\nheard_treshold = 0.5\n")
    r = ct.favorite(db, "alice", item)
    assert r["ok"] is False and "heard_treshold" in r["message"]


def test_threshold_is_configurable_and_reconcile_applies_it(tmp_path, db, add_items):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    a, b = add_items([{"title": "a"}, {"title": "b"}])
    (home / "config.toml").write_text("[corpus]\nheard_threshold = 0.6\n")
    cs.record_progress(db, "alice", a, 0.5)
    assert items_in(db, "alice", "experienced") == set()
    cs.record_progress(db, "alice", b, 0.6)
    assert items_in(db, "alice", "experienced") == {b}
    (home / "config.toml").write_text("[corpus]\nheard_threshold = 0.4\n")
    uid = db.execute("SELECT id FROM users WHERE name = 'alice'").fetchone()[0]
    changes = membership.reconcile(db, uid)
    assert [(c["kind"], c["item_id"]) for c in changes] == [("added", a)]
    assert membership.reconcile(db, uid) == []  # idempotent
    assert items_in(db, "alice", "experienced") == {a, b}


# --- isolation, persona lifecycle ------------------------------------------------------------


def test_personas_are_isolated(world):
    db, (a, b, c, _d) = world["db"], world["items"]
    cs.add_highlight(db, "bob", a, "galaxy passage bob kept")
    cs.record_progress(db, "bob", b, 1.0)
    cs.favorite(db, "bob", c)
    alice = ct.corpus(db, "alice")
    assert (alice["revision"], alice["experienced_count"], alice["saved_count"]) == (0, 0, 0)
    assert ct.recall(db, "alice", "galaxy")["items"] == []
    assert ct.corpus_changes(db, "alice", 0)["changes"] == []
    assert ct.corpus_entities(db, "alice")["entities"] == []
    cs.add_note(db, "alice", a, "my own galaxy note")
    hits = ct.recall(db, "alice", "galaxy")["items"]
    assert [h["item_id"] for h in hits] == [a]
    assert hits[0]["highlights"] == []  # bob's highlight on the same item is not alice's
    assert ct.corpus(db, "alice")["revision"] == 1 and ct.corpus(db, "bob")["revision"] == 3
    # Bob cannot delete Alice's note (and learns nothing about it).
    nid = db.execute("SELECT id FROM corpus_notes").fetchone()[0]
    r = ct.delete_note(db, "bob", nid, True)
    assert r["ok"] is False and "has no note" in r["message"]


def test_deleting_a_persona_removes_its_corpus(world):
    db, (a, *_rest) = world["db"], world["items"]
    cs.add_highlight(db, "alice", a, "x")
    cs.add_highlight(db, "bob", a, "y")
    db.execute("DELETE FROM users WHERE name = 'alice'")
    for table in ("corpus_highlights", "corpus_membership", "corpus_log", "corpus_revision"):
        owners = {r[0] for r in db.execute(f"SELECT user_id FROM {table}")}
        assert len(owners) == 1, table


def test_clicks_do_not_touch_the_corpus(world):
    from hermes.storage.clicks import record_click

    db, (a, *_rest) = world["db"], world["items"]
    uid = db.execute("SELECT id FROM users WHERE name = 'alice'").fetchone()[0]
    record_click(db, uid, a, True, "agent")
    assert ct.corpus(db, "alice")["revision"] == 0


# --- views ----------------------------------------------------------------------------------


def test_entity_view_and_first_last_seen(world):
    db, (a, b, c, _d) = world["db"], world["items"]
    cs.record_progress(db, "alice", a, 0.9)
    cs.add_highlight(db, "alice", c, "halo passage")
    cs.favorite(db, "alice", b)  # saved only: its tags are not entities
    r = ct.corpus_entities(db, "alice")
    tags = {e["entity"]: e for e in r["entities"] if e["kind"] == "tag"}
    assert set(tags) == {"galaxies", "astro-ph.GA", "astro-ph.CO"}
    g = tags["galaxies"]
    assert g["item_count"] == 2 and {i["item_id"] for i in g["items"]} == {a, c}
    assert g["first_seen"] <= g["last_seen"]
    top = ct.corpus(db, "alice")["top_entities"]
    assert top[0]["entity"] == "galaxies" and top[0]["item_count"] == 2


def test_recall_escapes_wildcards_and_searches_captures(world):
    db, (a, b, c, d) = world["db"], world["items"]
    for item in (a, b, c, d):
        cs.record_progress(db, "alice", item, 1.0)
    assert [h["item_id"] for h in ct.recall(db, "alice", "100%")["items"]] == [d]
    assert [h["item_id"] for h in ct.recall(db, "alice", "literal_title")["items"]] == [d]
    # A bare wildcard matches only text that contains it literally.
    assert [h["item_id"] for h in ct.recall(db, "alice", "%")["items"]] == [d]
    assert [h["item_id"] for h in ct.recall(db, "alice", "_")["items"]] == [d]
    cs.add_highlight(db, "alice", b, "an unusual zebrafish passage", note="remember this")
    cs.add_note(db, "alice", c, "Zebrafish again, in a note")
    hits = ct.recall(db, "alice", "zebrafish")["items"]
    assert {h["item_id"] for h in hits} == {b, c}
    by_id = {h["item_id"]: h for h in hits}
    assert by_id[b]["matched_in"] == ["highlight"] and by_id[c]["matched_in"] == ["note"]
    # Every word must match somewhere.
    assert [h["item_id"] for h in ct.recall(db, "alice", "zebrafish remember")["items"]] == [b]


def test_ranked_orders_by_strength(world):
    db, (a, b, c, _d) = world["db"], world["items"]
    cs.record_progress(db, "alice", a, 0.4)
    cs.record_progress(db, "alice", b, 1.0)
    for k in range(3):
        cs.add_highlight(db, "alice", b, f"passage {k}")
    cs.record_progress(db, "alice", b, 1.0)  # a re-read
    cs.add_note(db, "alice", c, "note")
    ranked = ct.corpus_ranked(db, "alice", 10)["items"]
    assert [r["item_id"] for r in ranked] == [b, a, c]
    assert ranked[0]["reopens"] == 1 and ranked[0]["highlights"] == 3
    assert all(0 <= r["strength"] <= 1 for r in ranked)
    assert [r["item_id"] for r in ct.corpus_ranked(db, "alice", 1)["items"]] == [b]


def test_a_fresh_connection_sees_the_same_corpus(world, db_path):
    db, (a, *_rest) = world["db"], world["items"]
    cs.add_highlight(db, "alice", a, "x")
    other = get_db(db_path)
    try:
        assert ct.corpus(other, "alice")["experienced_count"] == 1
    finally:
        other.conn.close()


def test_entity_view_adds_tag_graph_topics(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    ids = add_items(
        [
            {"title": "a", "tags": ["galaxies", "dark matter"]},
            {"title": "b", "tags": ["galaxies", "dark matter", "halos"]},
            {"title": "c", "tags": ["halos", "dark matter"]},
            {"title": "d", "tags": ["proteins", "folding"]},
            {"title": "e", "tags": ["proteins", "folding"]},
        ]
    )
    for item in ids[:3]:
        cs.record_progress(db, "alice", item, 1.0)
    found = ct.corpus_entities(db, "alice")["entities"]
    topics = [e for e in found if e["kind"] == "topic"]
    assert len(topics) == 1 and topics[0]["item_count"] == 3
    assert {i["item_id"] for i in topics[0]["items"]} == set(ids[:3])
    # The summary lists a name once even when a topic is labelled like a tag.
    names = [e["entity"].casefold() for e in ct.corpus(db, "alice")["top_entities"]]
    assert len(names) == len(set(names))
