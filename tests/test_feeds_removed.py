"""A removed feed's items leave the ranked feed, the digest and the Atom feed (a person who
removed a feed does not want it recommended) but stay in the archive: search finds them,
the corpus keeps them, their clicks keep teaching, and asking (``--removed-feeds``) ranks
them."""

from __future__ import annotations

import pytest
from feeds_cli_support import ok_json, run

from hermes.contract import CandidateQuery
from hermes.ranking.rank import rank
from hermes.storage.records import create_user, require_user
from hermes.tools import call_tool, collect_tools

KEPT = "https://example.org/kept.xml"
GONE = "https://example.org/gone.xml"


@pytest.fixture
def two_feeds(db, db_path, add_items):
    kept = add_items(
        [{"title": f"Quantum error correction note {k}", "days_ago": 1} for k in range(3)],
        feed_url=KEPT,
        feed_title="Kept",
    )
    gone = add_items(
        [{"title": f"Quantum error correction digest {k}", "days_ago": 1} for k in range(3)],
        feed_url=GONE,
        feed_title="Gone",
    )
    create_user(db, "ada", "quantum error correction")
    assert run("like", "ada", gone[0], "--db", db_path).exit_code == 0
    assert run("read", "ada", gone[1], "--db", db_path).exit_code == 0
    feed_id = db.execute("SELECT id FROM feeds WHERE url = ?", [GONE]).fetchone()[0]
    assert ok_json("feeds", "remove", feed_id, "--yes", "--db", db_path)["removed"]
    return kept, gone


def feed_ids(db_path, *extra) -> set[int]:
    page = ok_json("feed", "ada", "--all", "--below-bar", "--limit", "100", *extra, "--db", db_path)
    return {i["id"] for i in page["items"]}


def test_the_ranked_feed_leaves_a_removed_feeds_items_out_unless_asked(two_feeds, db_path):
    kept, gone = two_feeds
    assert feed_ids(db_path) == set(kept)
    # asked: the unread one is ranked again (the liked and the read one stay out as ever)
    assert feed_ids(db_path, "--removed-feeds") == set(kept) | {gone[2]}


def test_the_digest_and_any_ranking_that_does_not_ask_leave_them_out(two_feeds, db, db_path):
    kept, gone = two_feeds
    digest = ok_json("digest", "ada", "--days", "36500", "--below-bar", "--db", db_path)
    listed = {i["id"] for t in digest["topics"] for i in t["items"]}
    listed |= {i["id"] for i in digest["unclustered"] + digest["below_bar"]["items"]}
    assert listed and not listed & set(gone)
    # the Atom feed and the web feed rank with a CandidateQuery that does not ask either
    ranked = rank(db, require_user(db, "ada"), CandidateQuery(since_days=None, exclude_read=True))
    assert not set(ranked.item_ids.tolist()) & set(gone)


def test_the_archive_the_corpus_and_the_clicks_keep_them(two_feeds, db, db_path):
    _, gone = two_feeds
    found = call_tool(db, collect_tools()["search_feed"], {"user": "ada", "query": "digest"})
    assert {r["id"] for r in found["results"]} == set(gone)
    assert db.execute("SELECT item_id, label FROM clicks").fetchall() == [(gone[0], "like")]
    corpus = {r[0] for r in db.execute("SELECT item_id FROM corpus_membership")}
    assert gone[1] in corpus


def test_subscribing_again_brings_them_back_to_the_feed(two_feeds, db, db_path):
    kept, gone = two_feeds
    db.execute("INSERT INTO feeds (id, url, title) SELECT id, url, 'Gone' FROM removed_feeds")
    assert feed_ids(db_path) == set(kept) | {gone[2]}


def test_an_explanation_says_the_items_feed_was_removed(two_feeds, db):
    from hermes.ranking.explain import explain

    kept, gone = two_feeds
    user = require_user(db, "ada")
    why = explain(db, user, gone[2], since_days=None)
    assert why["in_pool"] is False and "its feed was removed" in why["not_in_pool"], why
    assert explain(db, user, kept[0], since_days=None)["in_pool"] is True
    asked = explain(db, user, gone[2], query=CandidateQuery(since_days=None, removed_feeds=True))
    assert asked["in_pool"] is True
