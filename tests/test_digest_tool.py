"""The digest tool (seed 001): grouping, unclustered, determinism, truncation, ranking
quality, empty windows, no LLM call, the one explanation, the persona's bar, bad input."""

from __future__ import annotations

import pytest
from hermes_digest import tools as digest_tools
from hermes_digest.tools import digest, kg_communities
from test_tag_graph import language_model_archive

from hermes.storage.clicks import record_click
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools
from hermes.topics import tag_graph

OLD = 60  # days ago: outside every window the tests use, but part of the tag graph


@pytest.fixture
def corpus(db, add_items, no_bar):
    """Two topics in the archive (fruit, planets); this week's items to digest: three on
    fruit, two on planets, one on knitting that nothing else shares, one untagged. Every
    item clears the bar here (the bar's own tests are at the end)."""
    background = [
        {"title": f"Orchard report {i}", "tags": ["apple", "avocado", "banana"], "days_ago": OLD} for i in range(4)
    ] + [{"title": f"Sky survey {i}", "tags": ["mars", "venus", "jupiter"], "days_ago": OLD} for i in range(4)]
    # the archive in a feed of its own: the week's feed then has too few items for a tag on
    # most of them to name it (hermes.topics.tag_graph.FEED_SHARE)
    add_items(background, feed_url="https://example.org/archive.xml", feed_title="Archive")
    week = {
        "fruit_a": {
            "title": "Apple and avocado harvest",
            "summary": "Apple avocado orchard harvest.",
            "tags": ["apple", "avocado"],
        },
        "fruit_b": {
            "title": "Avocado and banana harvest",
            "summary": "Avocado banana orchard harvest.",
            "tags": ["avocado", "banana"],
        },
        # two fruit tags and one planet tag, words of the fruit items: it goes with them
        "fruit_strong": {
            "title": "Apple and avocado harvest under Venus",
            "summary": "Apple avocado orchard harvest.",
            "tags": ["apple", "avocado", "venus"],
        },
        "planet_a": {
            "title": "Venus and Mars transits",
            "summary": "Venus Mars planet transit.",
            "tags": ["venus", "mars"],
        },
        "planet_b": {
            "title": "Mars and Jupiter transits",
            "summary": "Mars Jupiter planet transit.",
            "tags": ["mars", "jupiter"],
        },
        "no_match": {"title": "Knitting patterns", "summary": "Wool and needles.", "tags": ["knitting"]},
        "untagged": {"title": "An untagged note", "tags": []},
    }
    ids = add_items([{**v, "days_ago": 1} for v in week.values()])
    user = create_user(db, "ann", "apple orchards and planets")
    return {"ids": dict(zip(week, ids)), "user": user}


def topic_of(result: dict, item_id: int) -> dict | None:
    """The topic the digest grouped ``item_id`` under."""
    for topic in result["topics"]:
        if item_id in [i["id"] for i in topic["items"]]:
            return topic
    return None


def members(result: dict) -> list[set[int]]:
    return [{i["id"] for i in t["items"]} for t in result["topics"]]


def test_items_group_with_the_items_their_tags_overlap_most(db, corpus):
    ids = corpus["ids"]
    result = digest(db, "ann", days=7, per_topic=10, detail=True)
    assert result["ok"], result["message"]
    fruit = {ids["fruit_a"], ids["fruit_b"], ids["fruit_strong"]}
    planets = {ids["planet_a"], ids["planet_b"]}
    assert sorted(members(result), key=len) == [planets, fruit]  # venus does not pull it over
    entry = next(i for t in result["topics"] for i in t["items"] if i["id"] == ids["fruit_strong"])
    assert entry["matched_tags"] == ["apple", "avocado", "venus"]
    # the topic's archive community is the one its tags say the most about
    graph = tag_graph.get_graph(db)
    assert topic_of(result, ids["fruit_a"])["community"] == graph.community_of("apple").label
    assert topic_of(result, ids["planet_a"])["community"] == graph.community_of("mars").label


def test_a_topic_is_named_by_the_tags_its_items_share(db, corpus):
    """The planets community is "mars · venus · jupiter" across the archive; this week's
    planet items share mars, which names their topic first."""
    result = digest(db, "ann", days=7, per_topic=10, detail=True)
    topic = topic_of(result, corpus["ids"]["planet_a"])
    assert topic["label"].split(" · ")[0] == "mars"
    carried = {tag for item in topic["items"] for tag in item["matched_tags"]}
    assert set(topic["label"].split(" · ")) <= carried
    assert set(topic["tags"]) <= carried  # and so are the topic's tags


def test_every_item_of_a_topic_carries_one_of_the_tags_its_heading_names(db, add_items, no_bar):
    """The most telling tags of a topic can all miss one item (a RAG paper under
    "dictionary learning · language model · cs.lg"); the heading covers each item first."""
    week = add_items(
        [
            {"title": "Alpha beta", "summary": "alpha beta gamma", "tags": ["alpha", "beta"]},
            {"title": "Alpha beta gamma", "summary": "alpha beta gamma", "tags": ["alpha", "beta"]},
            {"title": "Beta gamma", "summary": "alpha beta gamma", "tags": ["beta", "gamma"]},
            {"title": "Gamma eps", "summary": "alpha beta gamma", "tags": ["gamma", "eps"]},
        ]
    )
    create_user(db, "ann", "alpha beta gamma eps")
    [topic] = digest(db, "ann", days=7, per_topic=10, detail=True)["topics"]
    named = set(topic["label"].split(" · "))
    assert {i["id"] for i in topic["items"]} == set(week)
    for item in topic["items"]:
        assert named & set(item["matched_tags"]), (topic["label"], item["matched_tags"])


def test_an_item_goes_where_its_distinctive_tag_is_not_where_most_tags_are(db, add_items, no_bar):
    """The user trial: a sparse-autoencoder paper also tagged with the archive's generic
    "language model" and "dataset" was filed under "language model · dataset · …" although
    an interpretability topic existed."""
    language_model_archive(add_items, days_ago=OLD)
    week = add_items(
        [
            {
                "title": "Sparse autoencoders find features",
                "summary": "sparse autoencoder features",
                "tags": ["sparse autoencoder", "language model", "dataset"],
            },
            {
                "title": "Sparse autoencoders and circuits",
                "summary": "sparse autoencoder features",
                "tags": ["sparse autoencoder", "interpretability"],
            },
        ]
        + [
            {
                "title": f"A benchmark dataset {k}",
                "summary": "language model benchmark dataset",
                "tags": ["language model", "dataset", "benchmark"],
            }
            for k in range(3)
        ]
    )
    create_user(db, "ann", "interpretability of language models")
    result = digest(db, "ann", days=7, per_topic=10)
    topic = topic_of(result, week[0])
    assert {i["id"] for i in topic["items"]} == set(week[:2])
    assert topic["label"].split(" · ")[0] == "sparse autoencoder"  # named by what they share


def test_the_digest_says_how_many_clear_the_bar_beside_how_many_it_grouped(db, corpus):
    """The web page said "30 … clear your bar" when 45 cleared it and the best 30 were
    grouped: the payload carries both numbers."""
    result = digest(db, "ann", days=7, limit=2)
    assert result["n_items"] == 2 and result["n_cleared"] == 7  # every item clears the bar here
    assert "7 unread items from the last 7 days clear the bar; the best 2 are grouped" in result["message"]


def test_items_sharing_nothing_with_the_window_land_in_unclustered(db, corpus):
    """The knitting item shares no tag and no word with the others, the untagged one has no
    subject: both are reported, never dropped."""
    result = digest(db, "ann", days=7, per_topic=10)
    unclustered = {i["id"] for i in result["unclustered"]}
    assert unclustered == {corpus["ids"]["no_match"], corpus["ids"]["untagged"]}
    listed = unclustered | {i["id"] for t in result["topics"] for i in t["items"]}
    assert listed == set(corpus["ids"].values())  # nothing dropped
    assert result["n_items"] == 7 and result["n_in_window"] == 7


def test_assignment_is_deterministic_across_repeated_calls(db, corpus):
    first = digest(db, "ann", days=7)
    for _ in range(3):
        tag_graph.clear_cache()  # also when the graph is reloaded or rebuilt
        assert digest(db, "ann", days=7) == first
    db.execute("DELETE FROM kg_cache")
    tag_graph.clear_cache()
    assert digest(db, "ann", days=7) == first


def test_per_topic_truncates_but_n_total_reports_the_true_count(db, corpus, add_items):
    add_items(
        [
            {
                "title": f"More apple and avocado harvest {i}",
                "summary": "Apple avocado orchard harvest.",
                "tags": ["apple", "avocado"],
                "days_ago": 2,
            }
            for i in range(3)
        ]
    )
    # 10 items clear the bar and the digest groups the best 9: it overflows, per_topic cuts
    result = digest(db, "ann", days=7, per_topic=2, limit=9)
    assert result["n_cleared"] == 10 and result["n_items"] == 9
    topic = topic_of(result, corpus["ids"]["fruit_a"])
    assert len(topic["items"]) == 2
    assert topic["n_total"] >= 5  # of the fixture's three fruit items and the three new ones
    ranks = [i["rank"] for i in topic["items"]]
    assert ranks == sorted(ranks)  # the best-ranked are the ones shown
    assert all(len(t["items"]) <= 2 for t in result["topics"])
    assert sum(t["n_total"] for t in result["topics"]) + len(result["unclustered"]) == result["n_items"]


def test_a_digest_that_shows_every_item_cuts_no_topic_to_per_topic(db, corpus, add_items):
    """Trial finding: 4 items in 1 topic showed 3 and '1 more in this topic'. When the
    digest groups every item that clears the bar, a topic shows all of its items."""
    add_items(
        [
            {
                "title": f"More apple and avocado harvest {i}",
                "summary": "Apple avocado orchard harvest.",
                "tags": ["apple", "avocado"],
                "days_ago": 2,
            }
            for i in range(3)
        ]
    )
    result = digest(db, "ann", days=7)  # limit 30: room for all 10
    assert result["n_cleared"] == result["n_items"] == 10
    topic = topic_of(result, corpus["ids"]["fruit_a"])
    assert topic["n_total"] == 6 and len(topic["items"]) == 6
    assert all(len(t["items"]) == t["n_total"] for t in result["topics"])
    assert "(all shown)" in result["message"] and "per topic" not in result["message"]
    # a per_topic asked for is kept even so
    asked = digest(db, "ann", days=7, per_topic=2)
    assert len(topic_of(asked, corpus["ids"]["fruit_a"])["items"]) == 2
    assert "at most 2 per topic" in asked["message"]


def test_limit_caps_the_items_grouped(db, corpus):
    result = digest(db, "ann", days=7, limit=2)
    assert result["n_items"] == 2 and result["n_in_window"] == 7
    ranks = sorted(i["rank"] for t in result["topics"] for i in t["items"])
    ranks += [i["rank"] for i in result["unclustered"]]
    assert sorted(ranks) == [1, 2]
    # the message counts every item that clears the bar, then says how many are grouped
    assert result["message"].startswith("7 unread items from the last 7 days clear the bar; the best 2 are grouped: ")


def test_classifier_inactive_for_one_class_and_active_with_both(db, corpus, add_items):
    uid = corpus["user"]["id"]
    extra = add_items([{"title": f"Extra {i}", "tags": ["apple"], "days_ago": 2} for i in range(4)])
    quality = digest(db, "ann")["ranking_quality"]
    assert quality["clicks"] == 0 and quality["classifier_active"] is False and quality["caveat"]

    record_click(db, uid, extra[0], True, "agent")
    record_click(db, uid, extra[1], True, "agent")
    quality = digest(db, "ann")["ranking_quality"]
    assert quality["clicks"] == 2 and quality["likes"] == 2
    assert quality["classifier_active"] is False
    assert "like and one dislike" in quality["caveat"]

    record_click(db, uid, extra[2], False, "agent")
    quality = digest(db, "ann")["ranking_quality"]
    assert quality["classifier_active"] is True and quality["caveat"] is None
    assert quality["clicks"] == 3 and quality["dislikes"] == 1


def test_dislikes_only_is_also_single_class(db, corpus, add_items):
    extra = add_items([{"title": "Extra", "tags": ["apple"], "days_ago": 2}])
    record_click(db, corpus["user"]["id"], extra[0], False, "ui")
    quality = digest(db, "ann")["ranking_quality"]
    assert quality["classifier_active"] is False and "dislike" in quality["caveat"]


def test_clicked_items_are_not_in_the_digest(db, corpus):
    record_click(db, corpus["user"]["id"], corpus["ids"]["fruit_strong"], True, "agent")
    result = digest(db, "ann", per_topic=10)
    shown = {i["id"] for t in result["topics"] for i in t["items"]} | {i["id"] for i in result["unclustered"]}
    assert corpus["ids"]["fruit_strong"] not in shown and len(shown) == 6


def _success_keys(db) -> tuple[set, set]:
    # below_bar: the items show even if none clears the bar (else it is "nothing to show")
    result = digest(db, "ann", days=OLD + 30, below_bar=True)
    assert result["ok"]
    return set(result), set(result["ranking_quality"])


@pytest.mark.parametrize("case", ["no items", "old items only", "everything clicked"])
def test_an_empty_window_returns_ok_false_with_the_success_keys(db, add_items, case):
    user = create_user(db, "ann", "anything")
    if case != "no items":
        ids = add_items(
            [
                {"title": "Old news", "tags": ["a", "b"], "days_ago": 30 if case == "old items only" else 1},
                {"title": "Old news 2", "tags": ["a", "b"], "days_ago": 30},
            ]
        )
        if case == "everything clicked":
            record_click(db, user["id"], ids[0], True, "agent")
    result = digest(db, "ann", days=7)
    assert result["ok"] is False and "last 7 days" in result["message"]
    assert result["topics"] == [] and result["unclustered"] == [] and result["window_days"] == 7
    assert result["n_items"] == 0
    if case != "no items":
        keys, quality_keys = _success_keys(db)
        # the success keys; nothing_to_show=true: a valid call with nothing to show (faces exit 0)
        assert set(result) == keys and result["nothing_to_show"] is True
        assert set(result["ranking_quality"]) == quality_keys
    assert result["ranking_quality"]["clicks"] == (1 if case == "everything clicked" else 0)


def test_the_registered_tool_is_the_function_with_checked_arguments(db, corpus):
    tool = collect_tools()["digest"]
    assert [p.name for p in tool.arguments()] == ["user", "days", "per_topic", "limit", "below_bar", "detail"]
    assert call_tool(db, tool, {"user": "ann"}) == digest(db, "ann")
    refused = call_tool(db, tool, {"user": "ann", "chat_fn": "print"})
    assert refused["ok"] is False and 'no parameter "chat_fn"' in refused["message"]


def test_items_carry_the_one_explanation_of_the_digest_ranking(db, corpus):
    """The reason is the explanation's line, read off the digest's own ranking (the same
    text explain_item gives for that window), and nothing is stored."""
    from hermes.ranking.explain import explain

    result = digest(db, "ann", per_topic=10, detail=True)
    items = {i["id"]: i for t in result["topics"] for i in t["items"]} | {i["id"]: i for i in result["unclustered"]}
    item = items[corpus["ids"]["fruit_strong"]]
    assert item["match"] == "strong" and item["reason"].startswith("Strong match: ")
    assert item["explanation"]["reason"] == item["reason"]
    assert item["explanation"]["evidence"]["interest"]["clause"] == "apple orchards and planets"
    assert db.execute("SELECT count(*) FROM explanations").fetchone()[0] == 0
    same = explain(db, corpus["user"], item["id"], since_days=7, store=False)
    assert same["reason"] == item["reason"] and same["rank"] == item["rank"]


def test_items_carry_a_reason_from_the_ranking_components(db, corpus):
    result = digest(db, "ann", per_topic=10, detail=True)
    top = min([i for t in result["topics"] for i in t["items"]] + result["unclustered"], key=lambda i: i["rank"])
    assert top["rank"] == 1 and top["explanation"]["top"][0]["component"] == "profile"
    assert "your interest" in top["reason"]


def test_topics_are_ordered_by_their_best_item(db, corpus):
    result = digest(db, "ann", per_topic=10)
    best = [t["items"][0]["rank"] for t in result["topics"]]
    assert best == sorted(best)


# --- the persona's bar ------------------------------------------------------------------------


@pytest.fixture
def mixed_week(db, add_items):
    """Two items on the persona's interests, three on nothing it wrote."""
    ids = add_items(
        [
            {"title": "Apple orchards in spring", "summary": "Apple orchards and planets.", "tags": ["apple"]},
            {"title": "Planets and apple orchards", "summary": "Orchards, apple, planets.", "tags": ["mars"]},
            {"title": "Bicycle repair", "summary": "Chains, gears, brakes.", "tags": ["bikes"]},
            {"title": "Tax forms", "summary": "Deadlines for returns.", "tags": ["tax"]},
            {"title": "Football results", "summary": "League tables.", "tags": ["sport"]},
        ]
    )
    create_user(db, "ann", "apple orchards and planets")
    return ids


def test_only_items_that_clear_the_bar_are_grouped_the_rest_counted(db, mixed_week):
    result = digest(db, "ann", per_topic=10)
    grouped = {i["id"] for t in result["topics"] for i in t["items"]} | {i["id"] for i in result["unclustered"]}
    assert grouped == set(mixed_week[:2]) and result["n_items"] == 2
    assert result["below_bar"] == {"label": "below your bar", "items": [], "n_total": 3}
    assert "3 more items below the bar (below_bar=true lists them)" in result["message"]
    assert all(i["match"] in ("strong", "good") for t in result["topics"] for i in t["items"])
    listed = digest(db, "ann", per_topic=10, below_bar=True)["below_bar"]
    assert {i["id"] for i in listed["items"]} == set(mixed_week[2:]) and listed["n_total"] == 3
    assert all(
        i["match"] in ("weak", "none") and i["reason"].startswith(("Weak match", "No match")) for i in listed["items"]
    )
    ranks = [i["rank"] for i in listed["items"]]
    assert ranks == sorted(ranks) and min(ranks) == 3  # below the fold: after the two above it


def test_when_nothing_clears_the_bar_the_digest_says_so(db, mixed_week):
    """A digest that shows no item is the contract's empty answer (ok false, nothing_to_show
    true, every key present), as for an empty window; asked for the items below the bar, it
    shows them and is an ordinary answer."""
    create_user(db, "bea", "medieval church architecture")
    db.execute("DELETE FROM kg_cache")
    result = digest(db, "bea")
    assert result["ok"] is False and result["nothing_to_show"] is True
    # an answer of nothing writes nothing: no tag graph is built (and cached) for an empty page
    assert db.execute("SELECT count(*) FROM kg_cache").fetchone()[0] == 0
    assert result["topics"] == [] and result["unclustered"] == [] and result["below_bar"]["items"] == []
    assert set(result) == set(digest(db, "nobody"))
    assert result["message"].startswith("Nothing unread from the last 7 days clears bea's bar")
    assert result["below_bar"]["n_total"] == 5 and result["n_items"] == 0 and result["n_in_window"] == 5
    listed = digest(db, "bea", below_bar=True)
    assert listed["ok"] and listed["nothing_to_show"] is False and len(listed["below_bar"]["items"]) == 5


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,fragment",
    [
        ({"user": "nobody"}, "unknown persona"),
        ({"user": ""}, "user must be a non-empty string"),
        ({"user": "ann", "days": 0}, "days"),
        ({"user": "ann", "days": -3}, "days"),
        ({"user": "ann", "days": 10**9}, "days"),
        ({"user": "ann", "days": "7"}, "days"),
        ({"user": "ann", "days": True}, "days"),
        ({"user": "ann", "per_topic": 0}, "per_topic"),
        ({"user": "ann", "per_topic": 51}, "per_topic"),
        ({"user": "ann", "limit": 0}, "limit"),
        ({"user": "ann", "limit": 10_000}, "limit"),
        ({"user": "ann", "limit": 2.5}, "limit"),
        ({"user": "ann", "below_bar": "yes"}, "below_bar"),
    ],
)
def test_bad_input_is_refused_with_every_key_present(db, corpus, args, fragment):
    result = digest(db, **args)
    assert result["ok"] is False and fragment in result["message"]
    # every key of an answer, and the problems of a refused argument (issue 35)
    argument = fragment != "unknown persona"
    assert set(result) == set(digest(db, "ann")) | ({"errors"} if argument else set())
    assert [e["field"] for e in result.get("errors", [])] == ([fragment.split()[0]] if argument else [])
    assert result["topics"] == [] and result["unclustered"] == []


def test_a_refusal_carries_no_figure_of_a_persona(db, corpus):
    """An unknown persona is refused through the shared path, as list_feed and
    profile_status refuse it: ok false, the message, every key present and each object of
    the answer empty ({}); a zeroed ranking_quality (0 clicks, classifier inactive) read as
    the figures of a persona that exists."""
    tools = collect_tools()
    for args in ({"user": "nobody"}, {"user": "ann", "days": 0}):
        refused = call_tool(db, tools["digest"], args)
        assert refused["ok"] is False and not refused["nothing_to_show"]
        assert refused["ranking_quality"] == refused["saved"] == refused["below_bar"] == {}
    for name in ("digest", "list_feed", "profile_status"):
        refused = call_tool(db, tools[name], {"user": "nobody"})
        assert refused["message"].startswith("unknown persona 'nobody'"), name
        assert [k for k, v in refused.items() if isinstance(v, dict) and v] == [], name


def test_an_empty_window_is_an_answer_with_its_sections(db):
    """Not a refusal: the persona's figures and the sections are there, empty."""
    create_user(db, "cy", "anything")
    empty = digest(db, "cy")
    assert empty["ok"] is False and empty["nothing_to_show"] and not empty["n_in_window"]
    assert empty["below_bar"] == {"label": "below your bar", "items": [], "n_total": 0}
    assert empty["saved"] == {"label": "saved, not read yet", "items": [], "n_total": 0}
    assert empty["ranking_quality"]["clicks"] == 0 and empty["ranking_quality"]["caveat"]


def test_days_up_to_a_century_is_accepted(db, corpus):
    assert digest(db, "ann", days=36500)["n_in_window"] == 15


# --- kg_communities ---------------------------------------------------------------------------


def test_kg_communities_lists_labels_sizes_top_tags_and_left_out(db, corpus):
    result = kg_communities(db)
    assert result["ok"]
    labels = {c["label"] for c in result["communities"]}
    assert labels == {tag_graph.get_graph(db).community_of(t).label for t in ("apple", "mars")}
    for c in result["communities"]:
        assert c["size"] == len(c["top_tags"]) == 3 and c["n_items"] >= 4
    assert result["singletons_left_out"] == 1  # "knitting"
    assert kg_communities(db, limit=1)["communities"] == result["communities"][:1]


def test_kg_communities_on_an_empty_archive_and_bad_limit(db):
    result = kg_communities(db)
    assert result["ok"] is False and "ingest" in result["message"]
    assert set(result) == set(digest_tools.Communities.model_fields) - {"errors"}  # no argument refused
    assert result["nothing_to_show"] is True  # a fine call with nothing to show (the CLI exits 0)
    assert kg_communities(db, limit=0)["ok"] is False
    assert kg_communities(db, limit=0)["nothing_to_show"] is False  # a mistake is not an empty answer


# --- saved for later (the corpus plugin's facets, reached through its tools) ------------------


def test_saved_items_not_read_are_listed_in_their_own_section(db, corpus, add_items):
    tools = collect_tools()
    if "favorite" not in tools or "record_progress" not in tools:
        pytest.skip("the corpus plugin is not installed")
    old = add_items([{"title": f"Saved long ago {i}", "tags": ["apple"], "days_ago": OLD} for i in range(4)])
    for item_id in old:
        assert call_tool(db, tools["favorite"], {"user": "ann", "item_id": item_id})["ok"]
    read = call_tool(db, tools["record_progress"], {"user": "ann", "item_id": old[0], "fraction": 0.9})
    assert read["ok"], read["message"]
    result = digest(db, "ann", per_topic=2)
    saved = result["saved"]
    assert saved["label"] == "saved, not read yet"
    assert saved["n_total"] == 3 and len(saved["items"]) == 2  # per_topic caps it too
    assert {i["id"] for i in saved["items"]} <= set(old[1:])  # read item is no longer saved
    assert "3 saved items not read yet" in result["message"]
    # Nothing crosses personas.
    create_user(db, "bob", "planets")
    assert digest(db, "bob")["saved"]["n_total"] == 0


def test_saved_section_is_empty_without_the_corpus_plugin(db, corpus, monkeypatch):
    from hermes import plugins

    monkeypatch.setenv("HERMES_PLUGINS", "signals,default_embedder,default_candidates,scorers,digest")
    plugins.pm_cache_clear()
    assert digest(db, "ann")["saved"] == {"label": "saved, not read yet", "items": [], "n_total": 0}


def test_saved_items_make_a_digest_with_nothing_over_the_bar_an_answer(db, mixed_week):
    """Saved, unread items are shown by the digest: with them it is not "nothing to show"."""
    tools = collect_tools()
    if "favorite" not in tools:
        pytest.skip("the corpus plugin is not installed")
    create_user(db, "bea", "medieval church architecture")
    assert call_tool(db, tools["favorite"], {"user": "bea", "item_id": mixed_week[0]})["ok"]
    result = digest(db, "bea")
    assert result["ok"] and result["nothing_to_show"] is False
    assert [i["id"] for i in result["saved"]["items"]] == [mixed_week[0]]


def _schema_errors(tool_name: str, answer: dict) -> list[str]:
    from jsonschema import Draft202012Validator

    schema = collect_tools({"digest"})[tool_name].output_schema()
    return [
        f"{'/'.join(map(str, e.path))}: {e.message[:160]}" for e in Draft202012Validator(schema).iter_errors(answer)
    ]


def test_every_section_of_a_digest_validates_against_its_typed_schema(db, mixed_week):
    """Issue 34: topics, unclustered, below_bar and saved items are typed in the output
    schema (not ``{"type": "object"}``), and what the tool returns is what it declares."""
    tools = collect_tools()
    if "favorite" in tools:
        assert call_tool(db, tools["favorite"], {"user": "ann", "item_id": mixed_week[4]})["ok"]
    result = digest(db, "ann", per_topic=10, below_bar=True, detail=True)
    assert result["below_bar"]["items"] and (result["topics"] or result["unclustered"])
    assert "favorite" not in tools or result["saved"]["items"]
    assert _schema_errors("digest", result) == []
    assert _schema_errors("digest", digest(db, "ann", per_topic=10, below_bar=True)) == []  # compact
    item = (result["topics"][0]["items"] if result["topics"] else result["unclustered"])[0]
    assert set(item["explanation"]) == {"match", "evidence", "top", "phrases", "reason"}
    schema = collect_tools({"digest"})["digest"].output_schema()
    for name in ("DigestItem", "Topic", "SavedItem", "Explanation"):
        assert schema["$defs"][name]["properties"], name
    assert schema["$defs"]["DigestItem"]["required"][:2] == ["id", "rank"]


def test_kg_communities_validates_against_its_typed_schema(db, corpus):
    result = kg_communities(db)
    assert result["communities"] and _schema_errors("kg_communities", result) == []
    schema = collect_tools({"digest"})["kg_communities"].output_schema()
    assert set(schema["$defs"]["Community"]["properties"]) == {"label", "size", "n_items", "top_tags"}
    assert collect_tools({"digest"})["kg_communities"].title == "Topics of the archive"


# --- an agent's answer: compact by default, fitted to its budget --------------------------


def _held(result: dict) -> list[dict]:
    """The items of the answer's ranked sections (saved items are not ranked)."""
    return [i for t in result["topics"] for i in t["items"]] + result["unclustered"] + result["below_bar"]["items"]


def test_an_agents_digest_is_compact_by_default_as_list_feeds_page(db, corpus):
    """A user trial: about 28,000 characters for 9 items, each carrying its ~2,000-character
    explanation unasked. Compact, an item keeps what choosing needs — list_feed's compact
    shape — and detail=true gives the rest."""
    from hermes_feeds.tools import list_feed

    from hermes.answers import size_of

    compact = digest(db, "ann", per_topic=10, below_bar=True)
    full = digest(db, "ann", per_topic=10, below_bar=True, detail=True)
    assert [i["id"] for i in _held(compact)] == [i["id"] for i in _held(full)]
    feed = {i["id"]: i for i in list_feed(db, "ann", below_bar=True)["items"]}
    for item in _held(compact):
        assert not {"explanation", "summary", "tags", "matched_tags"} & set(item), item
        assert {"id", "rank", "title", "url", "match", "reason", "score"} <= set(item)
        assert set(item) == set(feed[item["id"]]) and item["reason"] == feed[item["id"]]["reason"]
    for item in _held(full):
        assert {"match", "evidence", "top", "phrases", "reason"} == set(item["explanation"])
        assert "summary" in item and "matched_tags" in item
    assert size_of(compact) < size_of(full)


@pytest.mark.parametrize("face", ["cli", "web"])
def test_a_persons_digest_is_whole_without_asking(db, corpus, face):
    """The CLI and the web page call the same tool and show the whole digest: the compact
    answer and the budget are an agent's (MCP's) only."""
    tool = collect_tools()["digest"]
    result = call_tool(db, tool, {"user": "ann", "per_topic": 10}, face=face)
    assert result["ok"] and _held(result)
    for item in _held(result):
        assert set(item["explanation"]) == {"match", "evidence", "top", "phrases", "reason"}
        assert "summary" in item and "tags" in item
    assert result["shortened"] == result["left_out"] == 0


@pytest.mark.parametrize("detail", [True, False])
def test_a_digest_over_its_budget_counts_only_items_it_holds_and_keeps_the_best_whole(db, corpus, monkeypatch, detail):
    """A user trial: 152 items were said to be shortened and 123 more left out of an
    answer that held 152, and the best-ranked items were shortened too. Cut to a budget,
    the items split by rank: the best whole, then the shortened, then the left out; the
    counts add up to what the answer would otherwise hold, and the message says so."""
    from hermes.answers import size_of

    whole_answer = digest(db, "ann", per_topic=10, below_bar=True, detail=detail)
    held = {i["rank"]: i for i in _held(whole_answer)}
    assert len(held) >= 5 and whole_answer["shortened"] == whole_answer["left_out"] == 0
    seen = set()
    for budget in range(size_of(whole_answer) - 100, 1200, -150):
        monkeypatch.setattr(digest_tools, "ANSWER_BUDGET", budget)
        result = digest(db, "ann", per_topic=10, below_bar=True, detail=detail)
        shown = sorted(_held(result), key=lambda i: i["rank"])
        shortened, left_out = result["shortened"], result["left_out"]
        cut = [i for i in shown if detail and set(i["explanation"]) == {"match", "reason"}]
        kept_whole = len(shown) - len(cut)
        assert len(cut) == shortened and kept_whole + shortened + left_out == len(held), budget
        # by rank: whole, then shortened, then left out
        assert [i["rank"] for i in shown] == sorted(held)[: len(shown)]
        assert shown[kept_whole:] == cut
        if len(shown) > 1:
            assert size_of(result) <= budget
        assert shown and shown[0]["rank"] == min(held)
        if shown[0] in cut:  # the best stays whole unless whole it would not fit at all
            grown = size_of(held[min(held)]["explanation"]) - size_of(shown[0]["explanation"])
            assert size_of(result) + grown > budget - digest_tools.MESSAGE_ROOM, budget
        if shortened or left_out:
            assert f"under {budget:,} characters" in result["message"]
            assert ("the best item is whole" in result["message"]) == (shortened and kept_whole == 1)
            if left_out:
                assert f"the {left_out} lowest-ranked item" in result["message"]
            assert "smaller limit or per_topic" in result["message"]
        seen.add((bool(shortened), bool(left_out)))
    assert (False, True) in seen and (detail is False or (True, False) in seen)


def test_a_digest_past_its_budget_does_not_say_all_its_topic_items_are_shown(db, corpus, monkeypatch):
    whole = digest(db, "ann", detail=True)
    assert "(all shown)" in whole["message"]
    monkeypatch.setattr(digest_tools, "ANSWER_BUDGET", 2500)
    result = digest(db, "ann", detail=True)
    shown = sum(len(t["items"]) for t in result["topics"])
    assert result["left_out"] and shown < sum(t["n_total"] for t in result["topics"])
    assert "(all shown)" not in result["message"] and f"({shown} shown)" in result["message"]
    assert len(result["topics"]) == len(whole["topics"])  # a topic with no item left keeps its count
