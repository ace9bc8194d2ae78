"""What an interests text asks NOT to see is no interest. A trial's persona wrote "I do not
care about robotics, weather or chemistry": embedded as interests, the clause pulled a
weather paper up, explained as "nearest interest: weather or chemistry"."""

from __future__ import annotations

import pytest

from hermes.ranking.interests import interest_clauses, interests_key, split_unwanted
from hermes.ranking.rank import rank_items
from hermes.storage.records import create_user, require_user
from hermes.tools import call_tool, collect_tools

TEXT = (
    "Mechanistic interpretability of language models, sparse autoencoders. I am also "
    "curious about scaling laws. I do not care about robotics, weather or chemistry."
)


@pytest.mark.parametrize(
    ("text", "wanted", "unwanted"),
    [
        (
            TEXT,
            [
                "Mechanistic interpretability of language models",
                "sparse autoencoders",
                "I am also curious about scaling laws",
            ],
            ["do not care about robotics, weather or chemistry"],
        ),
        ("quantum computing but not hardware; Not crypto.", ["quantum computing"], ["but not hardware", "Not crypto"]),
        ("galaxies (not stars)", ["galaxies"], ["not stars"]),
        ("Anything except politics", [], ["except politics"]),
        ("I'm not interested in sports", [], ["not interested in sports"]),
        # topics that use the words: no cue
        (
            "no-go theorems, learning without labels, skip connections, knot theory, exceptional "
            "points; not only X but also Y",
            [
                "no-go theorems",
                "learning without labels",
                "skip connections",
                "knot theory",
                "exceptional points",
                "not only X but also Y",
            ],
            [],
        ),
    ],
)
def test_what_a_text_asks_not_to_see_is_no_interest(text, wanted, unwanted):
    assert interest_clauses(text) == wanted
    assert split_unwanted(text)[1] == unwanted


def test_a_text_without_such_parts_keeps_its_stored_vectors():
    """Only a text that asks not to see something is embedded again after the upgrade."""
    import hashlib

    from hermes.ranking.interests import INTERESTS_FORMAT

    plain = "galaxy evolution, dark matter"
    assert interests_key("m", plain) == hashlib.sha256(f"m\0{INTERESTS_FORMAT}\0{plain}".encode()).hexdigest()
    assert interests_key("m", TEXT) != hashlib.sha256(f"m\0{INTERESTS_FORMAT}\0{TEXT}".encode()).hexdigest()


def test_an_unwanted_topic_is_not_ranked_up_nor_named_as_an_interest(db, add_items, no_bar):
    ids = add_items(
        [
            {"title": "weather or chemistry"},  # the hash test embedder: same words, same vector
            {"title": "sparse autoencoders"},
            {"title": "bread baking at home"},
        ]
    )
    user = create_user(db, "ada", TEXT)
    order = [i["id"] for i in rank_items(db, user, since_days=None)]
    assert order[0] == ids[1] and order.index(ids[0]) > 0
    why = call_tool(db, collect_tools()["explain_item"], {"user": "ada", "item_id": ids[0], "since_days": None})[
        "explanation"
    ]
    assert "weather or chemistry" not in why["reason"]
    # the closest interest, said once (explain_item leaves the profile component's copy out)
    assert why["evidence"]["interest"]["clause"] != "weather or chemistry"


def test_a_text_that_only_says_what_not_to_show_ranks_by_nothing(db, add_items):
    add_items([{"title": "sports news"}, {"title": "galaxies"}])
    create_user(db, "bob", "I'm not interested in sports")
    feed = call_tool(db, collect_tools()["list_feed"], {"user": "bob", "since_days": None})
    assert feed["ok"]
    profile = call_tool(db, collect_tools()["profile_status"], {"user": "bob"})
    assert profile["ok"]
    assert require_user(db, "bob")["interests"] == "I'm not interested in sports"


def test_create_and_update_say_what_is_left_out_and_how_to_see_less(db):
    tools = collect_tools()
    made = call_tool(db, tools["create_persona"], {"name": "ada", "interests": TEXT})
    assert "“do not care about robotics, weather or chemistry”" in made["message"]
    assert "record_feedback with liked=false" in made["message"]
    assert made["persona"]["not_wanted"] == ["do not care about robotics, weather or chemistry"]
    plain = call_tool(db, tools["update_persona"], {"name": "ada", "interests": "galaxies"})
    assert "Not ranked" not in plain["message"] and plain["persona"]["not_wanted"] == []
