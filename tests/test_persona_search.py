"""search_feed: keyword / tag / type matching over the whole archive, in the persona's order."""

from __future__ import annotations

import pytest
from test_persona_support import archive, make_persona, snapshot, tool  # noqa: F401

from hermes.ranking.rank import rank_items
from hermes.storage.clicks import record_click
from hermes.storage.records import require_user


def ids(result) -> list[int]:
    return [r["id"] for r in result["results"]]


def test_search_reaches_old_and_already_rated_items(db, archive):
    alice = make_persona(db)
    record_click(db, alice["id"], archive[0], True, "agent")
    record_click(db, alice["id"], archive[5], False, "agent")
    result = tool(db, "search_feed", user="alice", query="graph")
    assert result["ok"], result["message"]
    # item 0 is 400 days old and liked; item 5 is disliked: both are found and flagged
    assert set(ids(result)) == {archive[0], archive[5]}
    rated = {r["id"]: r["rated"] for r in result["results"]}
    assert rated == {archive[0]: "like", archive[5]: "dislike"}
    assert result["count"] == 2
    unrated = tool(db, "search_feed", user="alice", query="learning")
    assert {r["rated"] for r in unrated["results"]} == {None}


def test_a_limited_search_says_how_many_match_in_all(db, archive):
    """`--limit 2` over eight matches read "2 items matching": the count shown is not all."""
    make_persona(db)
    cut = tool(db, "search_feed", user="alice", query="", tag="cs.LG", limit=2)
    assert len(cut["results"]) == 2
    assert cut["message"].startswith("the best 2 of 3 items matching tag 'cs.LG'"), cut["message"]
    whole = tool(db, "search_feed", user="alice", query="", tag="cs.LG", limit=10)
    assert whole["message"].startswith("3 items matching tag 'cs.LG'"), whole["message"]


def test_results_follow_the_one_ranking_path(db, archive):
    alice = make_persona(db, "alice", "robots and robot arms")
    bob = make_persona(db, "bob", "protein structure prediction")
    record_click(db, bob["id"], archive[2], False, "ui")
    for persona, first in ((alice, archive[6]), (bob, archive[1])):
        result = tool(db, "search_feed", user=persona["name"], query="", tag="cs.LG")
        expected = rank_items(
            db, require_user(db, persona["name"]), limit=10, since_days=None, exclude_clicked=False, tag="cs.LG"
        )
        assert ids(result) == [r["id"] for r in expected]
        assert [r["rank"] for r in result["results"]] == [1, 2, 3]
        assert ids(result)[0] == first


def test_every_query_word_must_match_case_insensitively(db, archive):
    make_persona(db)
    assert ids(tool(db, "search_feed", user="alice", query="GRAPH molecules")) == [archive[0]]
    assert ids(tool(db, "search_feed", user="alice", query="graph sourdough")) == []


@pytest.mark.parametrize(
    "query, index",
    [
        ("%", 3),
        ("100%", 3),
        ("_", 4),
        ("snake_case", 4),
        ("'", 5),
        ("O'Reilly", 5),
    ],
)
def test_sql_wildcards_and_quotes_match_literally(db, archive, query, index):
    make_persona(db)
    result = tool(db, "search_feed", user="alice", query=query)
    assert result["ok"] and ids(result) == [archive[index]], result["message"]


@pytest.mark.parametrize("query", ["\\", "%%", "'; DROP TABLE items; --", '"', "[a-z]*", "?"])
def test_hostile_queries_match_nothing_and_harm_nothing(db, archive, query):
    make_persona(db)
    clicks_and_items = (db["items"].count, db["users"].count)
    result = tool(db, "search_feed", user="alice", query=query)
    assert result["ok"] and result["results"] == [] and "no item matches" in result["message"]
    assert (db["items"].count, db["users"].count) == clicks_and_items


def test_tag_and_content_type_filters(db, archive):
    make_persona(db)
    assert set(ids(tool(db, "search_feed", user="alice", query="", tag="CS.lg"))) == {
        archive[0],
        archive[1],
        archive[6],
    }
    assert ids(tool(db, "search_feed", user="alice", query="learning", content_type="video")) == [archive[6]]
    assert set(ids(tool(db, "search_feed", user="alice", query="", content_type="Paper"))) == {archive[0], archive[1]}
    both = tool(db, "search_feed", user="alice", query="graph", tag="databases", content_type="podcast")
    assert ids(both) == [archive[5]]


def test_an_unknown_tag_is_an_empty_result_that_says_so(db, archive):
    make_persona(db)
    result = tool(db, "search_feed", user="alice", query="", tag="astrology")
    assert result["ok"] is True and result["results"] == [] and result["count"] == 0
    assert "no item is tagged 'astrology'" in result["message"] and "propose_interests" in result["message"]


def test_an_unknown_content_type_is_refused_with_the_known_ones(db, archive):
    make_persona(db)
    result = tool(db, "search_feed", user="alice", query="graph", content_type="hologram")
    assert result["ok"] is False and result["results"] == []
    assert 'content_type="hologram" is no content type in the archive' in result["message"]
    assert [e["field"] for e in result["errors"]] == ["content_type"]
    assert "article, paper, podcast, video" in result["message"]


def test_a_search_needs_something_to_look_for(db, archive):
    make_persona(db)
    result = tool(db, "search_feed", user="alice", query="   ")
    assert result["ok"] is False and "give a query" in result["message"]


@pytest.mark.parametrize("limit", [0, -3, 10_000])
def test_out_of_range_limits_are_refused_with_the_range(db, archive, limit):
    make_persona(db)
    result = tool(db, "search_feed", user="alice", query="", tag="cs.LG", limit=limit)
    assert result["ok"] is False and result["results"] == []
    assert result["message"] == f"limit must be a whole number from 1 to 50, got {limit}."


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        ({"limit": "10"}, "limit must be a whole number"),
        ({"limit": 2.5}, "limit must be a whole number"),
        ({"limit": True}, "limit must be a whole number"),
        ({"query": 42}, "query must be a string"),
        ({"query": "x" * 501}, "at most 500 characters"),
        ({"tag": ["cs.LG"]}, "tag must be a string of at most 200 characters or null"),
        ({"content_type": 3}, "content_type must be a string"),
    ],
)
def test_wrong_types_are_refused(db, archive, arguments, fragment):
    make_persona(db)
    before = snapshot(db)
    result = tool(db, "search_feed", **{"user": "alice", "query": "graph", **arguments})
    assert result["ok"] is False and fragment in result["message"], result["message"]
    assert result["results"] == [] and result["count"] == 0
    assert snapshot(db) == before


def test_search_writes_no_personal_data(db, archive):
    alice = make_persona(db)
    record_click(db, alice["id"], archive[0], True, "ui")
    before = snapshot(db)
    assert tool(db, "search_feed", user="alice", query="graph")["ok"]
    after = snapshot(db)
    # Only the persisted interests-vector cache on the users row may appear.
    assert {t: rows for t, rows in after.items() if t != "users"} == {
        t: rows for t, rows in before.items() if t != "users"
    }
    assert require_user(db, "alice")["interests"] == alice["interests"]


def test_long_summaries_are_shortened_for_small_models(db, add_items):
    add_items([{"title": "Long read on graphs", "summary": "graphs " * 200}])
    make_persona(db)
    result = tool(db, "search_feed", user="alice", query="graphs")
    assert len(result["results"][0]["summary"]) <= 300 and result["results"][0]["summary"].endswith("…")


def test_a_search_for_what_the_faces_show_finds_the_latex_stored(db, add_items):
    """The faces show "$\\Lambda$CDM" as "ΛCDM" and "$\\ell_1$" as "ℓ₁": a trial searched for
    what it read and found nothing. Text stored in Unicode is found as before."""
    ids = add_items(
        [
            {"title": r"Halo counts in $\Lambda$CDM simulations"},
            {"title": r"Sparse codes with an $\ell_1$ penalty"},
            {"title": "ΛCDM written in Unicode by its feed"},
            {"title": "Bread and butter"},
        ]
    )
    make_persona(db, "ann", "cosmology")

    def found(query):
        return {r["id"] for r in tool(db, "search_feed", user="ann", query=query, limit=10)["results"]}

    assert found("ΛCDM") == {ids[0], ids[2]}
    assert found("ℓ₁ penalty") == {ids[1]}
    assert found("Lambda") == {ids[0]}


def test_each_hit_says_how_well_it_matches_as_the_feed_judges_it(db, archive):
    """A trial's search returned a paper the interests text matched strongly with "score":
    0.0 (standardised among two hits): the hit now carries the feed's own ``match``."""
    from hermes.ranking.explain import explain

    alice = make_persona(db)
    result = tool(db, "search_feed", user="alice", query="graph")
    assert result["ok"] and result["results"], result["message"]
    for hit in result["results"]:
        assert hit["match"] == explain(db, alice, hit["id"], since_days=None)["match"]
    assert {hit["match"] for hit in result["results"]} <= {"strong", "good", "weak", "none"}
