"""Issue 31: no topic of what a feed wraps around every item, no topic across two unrelated
feeds, topics at the grain of the window (hermes.topics.window_topics)."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from xml.sax.saxutils import escape

import numpy as np
import pytest
from hermes_digest.tools import digest, kg_communities

from hermes.ingest.pipeline import add_feeds, run_ingest
from hermes.storage.records import create_user
from hermes.topics import tag_graph, window_topics

# What Hacker News's feed (hnrss) puts in every item, and a sponsor line both feeds carry.
HN_BOILERPLATE = (
    '<p>Article URL: <a href="https://blog.example.com/{slug}">https://blog.example.com/{slug}</a></p>'
    '<p>Comments URL: <a href="https://news.ycombinator.com/item?id={id}">'
    "https://news.ycombinator.com/item?id={id}</a></p><p>Points: {points}</p>"
    "<p># Comments: {comments}</p>"
)
SPONSOR = "<p>Hosted by Orbital Hosting Services, www.orbital-hosting.example.net</p>"
BOILERPLATE_WORDS = {
    "url",
    "urls",
    "article",
    "comments",
    "comment",
    "points",
    "point",
    "ycombinator",
    "http",
    "https",
    "www",
    "orbital",
    "hosting",
    "hosted",
    "services",
    "example",
    "blog",
}

HN = [
    ("Rust borrow checker explained", "The Rust borrow checker and lifetimes in the Rust compiler."),
    ("Rust compiler gets faster borrow checking", "Rust compiler borrow checker speedups."),
    ("Writing a Rust compiler plugin", "A Rust compiler plugin and the borrow checker."),
    ("Borrow checker errors in Rust", "Rust borrow checker errors and lifetimes."),
    ("SQLite query planner internals", "The SQLite query planner and SQLite indexes."),
    ("SQLite write-ahead logging", "SQLite write-ahead logging and the SQLite query planner."),
    ("Why SQLite indexes matter", "SQLite indexes and the query planner."),
    ("SQLite in production", "SQLite query planner, SQLite indexes, write-ahead logging."),
    ("Home solar battery storage", "Solar battery storage for a home solar array."),
    ("Solar battery prices fall", "Solar battery storage and solar panel prices."),
    ("Solar panel efficiency record", "Solar panel efficiency and solar battery storage."),
    ("Off-grid solar battery setups", "Solar battery storage and solar panels off grid."),
]
ADS = [
    ("Campaign budget reports", "Campaign budget reports and shared campaign budgets in the reporting interface."),
    ("Shared campaign budgets", "Shared campaign budgets and campaign budget pacing."),
    ("Campaign budget pacing changes", "Campaign budget pacing for shared campaign budgets."),
    ("Daily campaign budget limits", "Campaign budget limits and campaign budget pacing."),
    ("Migrating campaign budgets", "Shared campaign budgets after the campaign budget migration."),
    ("Campaign budget recommendations", "Campaign budget recommendations and shared campaign budgets."),
    ("Conversion tracking tags", "Conversion tracking tags and offline conversion uploads."),
    ("Offline conversion uploads", "Offline conversion uploads for conversion tracking."),
    ("Enhanced conversion tracking", "Conversion tracking with enhanced offline conversion uploads."),
    ("Conversion tracking errors", "Conversion tracking errors in offline conversion uploads."),
    ("Conversion tracking windows", "Conversion tracking windows and offline conversion uploads."),
    ("Conversion tracking for apps", "Conversion tracking for apps and offline conversion uploads."),
]


def slug(title: str) -> str:
    return re.sub(r"\W+", "-", title.lower())


def rss(title: str, items: list[tuple[str, str]], body) -> str:
    entries = "".join(
        f"<item><title>{escape(t)}</title><link>https://example.org/{slug(t)}</link>"
        f"<guid>{escape(title)}-{k}</guid><description>{escape(body(k, t, summary))}</description>"
        f"<pubDate>Mon, 30 Nov 2026 {10 + k % 10:02d}:00:00 +0000</pubDate></item>"
        for k, (t, summary) in enumerate(items)
    )
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>{escape(title)}</title>'
        f"<link>https://example.org/</link><description>{escape(title)}</description>"
        f"{entries}</channel></rss>"
    )


@pytest.fixture
def two_feeds(db, tmp_path, no_bar):
    """A Hacker News front page (link boilerplate only, plus a sponsor line) and an ads API
    blog (the same sponsor line): two feeds with no subject in common."""
    rng = random.Random(7)

    def hn(k, title, summary):
        return (
            f"<p>{summary}</p>"
            + HN_BOILERPLATE.format(
                slug=slug(title), id=41000 + k, points=rng.randint(5, 900), comments=rng.randint(0, 400)
            )
            + SPONSOR
        )

    def ads(k, title, summary):
        return f"<p>{summary}</p>{SPONSOR}"

    (tmp_path / "hn.xml").write_text(rss("Hacker News: Front Page", HN, hn), encoding="utf-8")
    (tmp_path / "ads.xml").write_text(rss("Ads API Developer Blog", ADS, ads), encoding="utf-8")
    add_feeds(db, [(str(tmp_path / "hn.xml"), None), (str(tmp_path / "ads.xml"), None)])
    run_ingest(db)
    create_user(db, "reader", "rust compilers, sqlite, solar batteries, ad campaign budgets")
    return db


def test_no_topic_is_named_by_boilerplate_and_unrelated_feeds_never_share_one(two_feeds):
    db = two_feeds
    # precondition: the tagger did propose the sponsor line, on every item of both feeds
    proposed = {t for (t,) in db.execute("SELECT DISTINCT tag FROM item_tag_proposals")}
    assert any("orbital" in t for t in proposed), sorted(proposed)
    graph = tag_graph.get_graph(db)
    assert len(graph.feed_tags) == 2
    for tags in graph.feed_tags.values():  # and it names each feed, not a subject
        assert any("orbital" in t for t in tags), graph.feed_tags

    result = digest(db, "reader", days=36500, per_topic=50, limit=50)
    assert result["ok"], result["message"]
    assert len(result["topics"]) >= 2
    for topic in result["topics"]:
        words = set(re.findall(r"[\w]+", topic["label"].lower()))
        assert not words & BOILERPLATE_WORDS, topic["label"]
        assert not any(set(re.findall(r"[\w]+", t.lower())) & BOILERPLATE_WORDS for t in topic["tags"])
        sources = {i["source"] for i in topic["items"]}
        assert len(sources) == 1, (topic["label"], sources)  # two unrelated feeds: never one topic
    for community in kg_communities(db, limit=100)["communities"]:
        words = set(re.findall(r"[\w]+", community["label"].lower()))
        assert not words & BOILERPLATE_WORDS, community["label"]


# --- hermes.topics.window_topics on hand-made items -------------------------------------------------


def graph_of(db, add_items, items, **kwargs) -> tag_graph.TagGraph:
    add_items(items, **kwargs)
    return tag_graph.get_graph(db)


def test_two_feeds_sharing_only_a_tag_that_names_each_are_never_one_topic(db, add_items):
    """The same subject words in the text (one vector for all), a tag on every item of both
    feeds: the tag names each feed, so nothing ties them."""

    def items(feed):
        return [{"title": f"Item {k}", "tags": ["sponsor line", f"{feed} subject {k % 2}"]} for k in range(10)]

    add_items(items("a"), feed_url="https://a.example/feed", feed_title="A")
    graph = graph_of(db, add_items, items("b"), feed_url="https://b.example/feed", feed_title="B")
    feeds = dict(db.execute("SELECT id, feed_id FROM items").fetchall())
    tags = dict(db.execute("SELECT id, tags FROM items").fetchall())
    same = np.ones(8)
    window = [window_topics.WindowItem(i, json.loads(tags[i]), feeds[i], same) for i in sorted(feeds)]
    result = window_topics.group(graph, window)
    assert len(result.topics) == 4  # each feed's two subjects
    for topic in result.topics:
        assert len({feeds[i] for i in topic.members}) == 1
        assert "sponsor" not in topic.label


def test_labels_repeat_no_word_and_leave_out_what_the_window_shares(db, add_items):
    """ "galaxy" on most of an astronomy window names the window; "big live live" is a
    fragment; "star cluster" beside "star" repeats a word."""
    clusters = [
        ["galaxy", "star", "star cluster", "globular cluster"],
        ["galaxy", "quasar", "big live live", "active nucleus"],
        ["galaxy", "supernova", "light curve"],
    ]
    items = [{"title": f"paper {c}-{k}", "tags": tags} for c, tags in enumerate(clusters) for k in range(4)]
    graph = graph_of(db, add_items, items)
    ids = [r[0] for r in db.execute("SELECT id FROM items ORDER BY id")]
    # the clusters' own directions: items of a cluster alike, clusters apart
    basis = np.eye(8)
    window = [window_topics.WindowItem(i, items[k]["tags"], 1, basis[k // 4]) for k, i in enumerate(ids)]
    result = window_topics.group(graph, window)
    assert sorted(len(t.members) for t in result.topics) == [4, 4, 4]
    for topic in result.topics:
        words = re.findall(r"[\w-]+", topic.label)
        assert len(words) == len(set(words)), topic.label
        assert "galaxy" not in words and "big live live" not in topic.label, topic.label
    # the most telling shared tag first; "star cluster" would repeat "cluster"
    assert sorted(t.label for t in result.topics) == [
        "active nucleus · quasar",
        "globular cluster · star",
        "light curve · supernova",
    ]


def test_a_window_of_one_field_splits_and_the_split_ignores_the_order_given(db, add_items):
    clusters = [["algebra", "lie algebra"], ["algebra", "knot invariant"], ["algebra", "random walk"]]
    items = [{"title": f"paper {c}-{k}", "tags": tags} for c, tags in enumerate(clusters) for k in range(5)]
    graph = graph_of(db, add_items, items)
    ids = [r[0] for r in db.execute("SELECT id FROM items ORDER BY id")]
    rng = np.random.default_rng(0)
    centres = np.eye(16)[:3]
    vectors = [centres[k // 5] + 0.1 * rng.normal(size=16) for k in range(len(ids))]
    window = [window_topics.WindowItem(i, items[k]["tags"], 1, vectors[k]) for k, i in enumerate(ids)]
    first = window_topics.group(graph, window)
    assert len(first.topics) == 3 and not first.unclustered
    assert {frozenset(t.members) for t in first.topics} == {frozenset(ids[c * 5 : (c + 1) * 5]) for c in range(3)}
    shuffled = list(window)
    random.Random(3).shuffle(shuffled)
    assert window_topics.group(graph, shuffled) == first


def test_an_item_alone_in_the_window_is_unclustered_and_one_without_subject_too(db, add_items):
    items = [
        *({"title": f"paper {k}", "tags": ["lie algebra"]} for k in range(3)),
        {"title": "stray", "tags": ["knitting", "wool"]},
        {"title": "bare", "tags": []},
    ]
    graph = graph_of(db, add_items, [*items, {"title": "archive", "tags": ["knitting", "wool"]}])
    ids = [r[0] for r in db.execute("SELECT id FROM items ORDER BY id")][:5]
    vectors = [np.eye(4)[0]] * 3 + [np.eye(4)[1], np.eye(4)[2]]
    window = [window_topics.WindowItem(i, items[k]["tags"], 1, vectors[k]) for k, i in enumerate(ids)]
    result = window_topics.group(graph, window)
    assert [t.members for t in result.topics] == [tuple(ids[:3])]
    assert result.unclustered == ids[3:]


def test_liked_topics_leave_out_keyphrases_that_name_no_topic(db, add_items):
    """A trial's profile_status listed "dataset" and "detection" among the liked topics:
    keyphrases kept before the tagger learned that alone they name nothing."""
    from hermes_persona.status import profile_status

    from hermes.storage.clicks import record_click

    ids = add_items([{"title": "Object detection on a new dataset", "tags": ["cs.cv"]}])
    db.execute(
        """UPDATE items SET tags = '["cs.cv", "dataset", "detection", "object detection"]',
                  keyphrases = '["dataset", "detection", "object detection"]' WHERE id = ?""",
        [ids[0]],
    )
    user = create_user(db, "ann", "computer vision")
    record_click(db, user["id"], ids[0], True, "ui")
    status = profile_status(db, "ann")
    assert [e["key"] for e in status["liked_topics"]] == ["object detection"]


def test_a_window_of_one_field_is_split_relative_to_what_its_items_share(db, add_items, monkeypatch):
    """Every item leans the same way (the field) and differs a little by its sub-field:
    measured from the window's mean, the sub-fields are apart; measured as they are, the
    field is one topic."""
    clusters = [["algebra", "lie algebra"], ["algebra", "knot invariant"], ["algebra", "random walk"]]
    items = [{"title": f"paper {c}-{k}", "tags": tags} for c, tags in enumerate(clusters) for k in range(5)]
    graph = graph_of(db, add_items, items)
    ids = [r[0] for r in db.execute("SELECT id FROM items ORDER BY id")]
    rng = np.random.default_rng(1)
    basis = np.eye(16)
    vectors = [basis[0] + 0.2 * basis[1 + k // 5] + 0.01 * rng.normal(size=16) for k in range(len(ids))]
    window = [window_topics.WindowItem(i, items[k]["tags"], 1, vectors[k]) for k, i in enumerate(ids)]
    monkeypatch.setattr(window_topics, "TAG_WEIGHT", 0.0)  # the vectors alone decide
    split = window_topics.group(graph, window)
    assert {frozenset(t.members) for t in split.topics} == {frozenset(ids[c * 5 : (c + 1) * 5]) for c in range(3)}
    monkeypatch.setattr(window_topics, "CENTER", 0.0)
    assert len(window_topics.group(graph, window).topics) == 1


def test_the_cut_is_the_finest_that_leaves_few_items_alone():
    """Two groups of four close together and a third farther: Ward merges the first two
    at 1.1 and all at about 1.4, below the coarsest cut (1.5); the window is cut at the
    finest merge from CUT_MIN that leaves no item alone, so the three groups stay two."""
    rng = np.random.default_rng(0)
    centres = [(0.0, 0.0), (0.55, 0.0), (0.275, 0.62)]
    rows = np.array([[x + 0.01 * rng.normal(), y + 0.01 * rng.normal()] for x, y in centres for _ in range(4)])
    parts = window_topics._ward(rows)
    assert len(set(parts)) == 2
    assert len(set(parts[:8])) == 1 and parts[8:] == [parts[8]] * 4
    # with a stray far from all, the same cut still leaves at most MAX_ALONE alone
    parts = window_topics._ward(np.vstack([rows, [[5.0, 5.0]]]))
    assert sorted(Counter(parts).values()) == [1, 4, 8]


def test_an_item_settles_by_its_strongest_links():
    """Each item keeps its three strongest links, and a link either end keeps."""
    strength = np.array(
        [[0, 9, 8, 7, 0.5], [9, 0, 1, 1, 1], [8, 1, 0, 1, 2], [7, 1, 1, 0, 3], [0.5, 1, 2, 3, 0]], dtype=float
    )
    kept = window_topics._nearest(strength)
    assert kept[0, 4] == kept[4, 0] == 0.0  # the weakest link of both ends
    assert kept[1, 4] == kept[4, 1] == 1.0  # item 1 drops it, item 4 keeps it
    assert kept[4, 3] == kept[3, 4] == 3.0 and kept[1, 0] == 9.0
