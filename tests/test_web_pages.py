"""Every page and action of the web UI through starlette's test client."""

from __future__ import annotations

import html
import re

import pytest
from web_support import ITEMS, clicks, client, seed, token


@pytest.fixture
def ids(db, add_items, no_bar):
    """The seeded items, every one clearing the bar (the bar's own tests use ``bar_ids``)."""
    return seed(db, add_items)


@pytest.fixture
def bar_ids(db, add_items):
    return seed(db, add_items)


@pytest.fixture
def web(db_path, ids):
    with client(db_path) as c:
        yield c


def post(c, path, data, *, page="/"):
    return c.post(path, data={"csrf_token": token(c, page), **data}, follow_redirects=False)


# --- persona picker -----------------------------------------------------------------------------


def test_home_lists_personas(web):
    page = web.get("/")
    assert page.status_code == 200
    assert "ada" in page.text and "Mechanistic interpretability" in page.text
    assert 'href="/feed?user=ada"' in page.text


def test_home_counts_only_a_feeds_items_as_from_the_feeds(web, db, ids):
    # A trial's finding: "247 items from 6 feeds" where 5 came from an imported .bib (no feed).
    n = len(ITEMS)
    assert f"{n} items from 2 feeds. Pick" in web.get("/").text
    db.execute("UPDATE items SET feed_id = NULL WHERE id = ?", [ids[0]])  # as a library import stores it
    assert f"{n - 1} items from 2 feeds, 1 saved or imported from a library. Pick" in web.get("/").text
    on_blog = db.execute("SELECT count(*) FROM items WHERE feed_id = 2").fetchone()[0]
    db.execute("DELETE FROM feeds WHERE id = 2")  # a removed feed's items stay
    assert (
        f"{n - 1 - on_blog} items from 1 feed, 1 saved or imported from a library, "
        f"{on_blog} kept from feeds since removed. Pick"
    ) in web.get("/").text


def test_home_without_personas_says_how_to_start(db_path, db):
    with client(db_path) as c:
        page = c.get("/")
    assert page.status_code == 200
    assert "No personas yet" in page.text


def test_create_persona(web, db):
    r = post(web, "/personas", {"name": "grace", "interests": "compilers and type systems"})
    assert r.status_code == 303
    assert r.headers["location"] == "/feed?user=grace"
    assert db.execute("SELECT interests FROM users WHERE name = 'grace'").fetchone()[0] == "compilers and type systems"
    assert web.get(r.headers["location"]).status_code == 200


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"name": "", "interests": "x"}, "The persona&#39;s name must be a non-empty string of at most 64"),
        ({"name": "bob", "interests": "   "}, "The interests text must be a non-empty string of at most"),
        ({"name": "b" * 201, "interests": "x"}, "name must be a non-empty string of at most 64 characters"),
    ],
)
def test_create_persona_bad_values(web, db, data, needle):
    r = post(web, "/personas", data)
    assert r.status_code == 400
    assert needle in r.text
    assert db.execute("SELECT count(*) FROM users").fetchone()[0] == 1


def test_a_too_long_interests_text_is_refused_beside_the_form_and_kept(web, db):
    """The form's limit is the create_persona tool's; a longer text comes back in the form
    with the reason in web words, not on a bare page that loses the writing."""
    page = web.get("/").text
    assert 'maxlength="4000"' in page and "at most 4,000 characters" in page
    assert '<input name="name" required maxlength="64"' in page  # the name limit, too
    typed = "spectroscopy of exoplanet atmospheres " * 120
    r = post(web, "/personas", {"name": "bob", "interests": typed})
    assert r.status_code == 400
    assert "The interests text must be a non-empty string of at most 4,000 characters" in r.text
    assert typed.strip() in r.text and 'value="bob"' in r.text
    assert "interests must be" not in r.text  # the tool's parameter name is not a web word
    assert db.execute("SELECT count(*) FROM users").fetchone()[0] == 1


def test_create_persona_duplicate_is_400_with_the_tools_message(web, db):
    r = post(web, "/personas", {"name": "ada", "interests": "again"})
    assert r.status_code == 400
    assert "ada" in r.text
    assert db.execute("SELECT interests FROM users WHERE name = 'ada'").fetchone()[0] != "again"


# --- the feed ----------------------------------------------------------------------------------


def test_feed_shows_ranked_items_with_reason_tags_source_date(web, ids):
    page = web.get("/feed?user=ada")
    assert page.status_code == 200
    text = page.text
    for item in ITEMS:
        assert item["title"] in text
    assert "arXiv cs.LG" in text
    assert "interpretability" in text  # a tag
    assert text.count('class="reason"') == len(ITEMS)
    assert text.count('class="btn btn-like"') == len(ITEMS)
    assert text.count('class="btn btn-dislike"') == len(ITEMS)
    assert "Mark read" in text and "Save" in text and "Highlight" in text
    # published dates are shown as days
    assert text.count("<time datetime=") == len(ITEMS)


def test_feed_order_is_the_ranking(web, db, ids):
    from hermes.ranking.rank import rank_items
    from hermes.storage.records import require_user

    expected = [i["title"] for i in rank_items(db, require_user(db, "ada"), limit=30)]
    text = web.get("/feed?user=ada").text
    positions = [text.index(t) for t in expected]
    assert positions == sorted(positions)


def test_feed_window_and_limit(web):
    one_day = web.get("/feed?user=ada&days=1").text
    assert ITEMS[0]["title"] in one_day and ITEMS[6]["title"] not in one_day
    archive = web.get("/feed?user=ada&days=all&limit=2").text
    assert archive.count('class="btn btn-like"') == 2


def test_feed_empty_window_offers_the_archive(web, db, add_items):
    from hermes.storage.records import create_user

    create_user(db, "old", "anything")
    db.execute("UPDATE items SET published = '2001-01-01T00:00:00+00:00'")
    from hermes.ranking import matrix

    matrix.clear_cache()
    page = web.get("/feed?user=old")
    assert page.status_code == 200
    assert "Nothing unread" in page.text and "days=all" in page.text


@pytest.mark.parametrize(
    "query, needle",
    [
        ("user=ada&limit=abc", "limit must be a whole number"),
        ("user=ada&limit=0", "limit must be a whole number from 1 to 200, got &#34;0&#34;"),
        ("user=ada&limit=100000", "limit must be a whole number from 1 to 200"),
        ("user=ada&days=-3", "days must be a whole number from 1 to 36500"),
        ("user=ada&days=soon", "or &#34;all&#34; (the whole archive), got &#34;soon&#34;"),
        ("", "choose a persona first"),
    ],
)
def test_feed_bad_query_is_400_with_message(web, query, needle):
    r = web.get(f"/feed?{query}")
    assert r.status_code == 400
    assert needle in r.text
    assert "<h1>Bad request</h1>" in r.text


def test_unknown_persona_is_a_404_page(web):
    for path in ("/feed?user=nobody", "/digest?user=nobody", "/corpus?user=nobody"):
        r = web.get(path)
        assert r.status_code == 404, path
        assert "unknown persona" in r.text and "ada" in r.text  # names the known ones
        assert "<h1>Not found</h1>" in r.text


def test_an_unknown_feed_is_a_404_page_not_an_empty_feed(web):
    """An empty feed would read as "nothing unread" and a weightless behaviour: untrue."""
    r = web.get("/feed?user=ada&feed=99")
    assert r.status_code == 404
    assert "There is no feed 99" in r.text and "Feeds page" in r.text
    assert web.get("/feed?user=ada&feed=1").status_code == 200


def test_an_unknown_item_s_page_links_back_to_the_feed_it_names(web):
    """A trial: the 404 said "go back to the feed for the current items" with no such link."""
    r = web.get("/explain?user=ada&item_id=99999")
    assert r.status_code == 404 and "go back to the feed" in r.text
    assert '<a href="/feed?user=ada' in r.text and "Back to the feed</a>" in r.text


def test_unknown_path_is_a_404_page_and_api_paths_get_json(web):
    r = web.get("/no/such/page")
    assert r.status_code == 404 and "<h1>Not found</h1>" in r.text
    r = web.get("/api/no-such-thing")
    assert r.status_code == 404 and r.json()["ok"] is False


def test_persona_names_are_url_encoded(web, db):
    from hermes.storage.records import create_user

    create_user(db, "Dr. Ada & co", "interpretability")
    home = web.get("/").text
    assert "/feed?user=Dr.%20Ada%20%26%20co" in home
    assert web.get("/feed?user=Dr.%20Ada%20%26%20co").status_code == 200


# --- clicks --------------------------------------------------------------------------------------


def test_like_is_stored_with_source_ui_and_leaves_the_feed(web, db, ids):
    r = post(
        web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1", "next": "/feed?user=ada"}, page="/feed?user=ada"
    )
    assert r.status_code == 303
    assert r.headers["location"] == "/feed?user=ada"
    assert clicks(db) == [(1, ids[0], "like", "ui")]
    page = web.get("/feed?user=ada").text
    assert "✓ More like this: " + ITEMS[0]["title"][:40] in page  # the flash message
    assert f'data-item-id="{ids[0]}"' not in page  # clicked items leave the unread feed
    # the flash is shown once
    assert "toast-like" not in web.get("/feed?user=ada").text


def test_dislike_then_like_replaces_the_click(web, db, ids):
    post(web, "/click", {"user": "ada", "item_id": ids[1], "liked": "0"})
    assert clicks(db) == [(1, ids[1], "dislike", "ui")]
    post(web, "/click", {"user": "ada", "item_id": ids[1], "liked": "1"})
    assert clicks(db) == [(1, ids[1], "like", "ui")]


def test_click_redirects_to_the_default_without_next(web, ids):
    r = post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1"})
    assert r.headers["location"] == "/feed?user=ada"


@pytest.mark.parametrize(
    "next_value", ["//evil.example/", "https://evil.example/", "javascript:alert(1)", "/\\evil.example", "feed"]
)
def test_click_never_redirects_off_site(web, ids, next_value):
    r = post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1", "next": next_value})
    assert r.status_code == 303
    assert r.headers["location"] == "/feed?user=ada"


@pytest.mark.parametrize(
    "data, status, needle",
    [
        ({"user": "ada", "item_id": "abc", "liked": "1"}, 400, "The item number must be a whole number"),
        ({"user": "ada", "item_id": "", "liked": "1"}, 400, "The item number is missing"),
        (
            {"user": "ada", "item_id": "-4", "liked": "1"},
            400,
            "The item number must be a whole number of at least 1, got",
        ),
        (
            {"user": "ada", "item_id": "1", "liked": "maybe"},
            400,
            "The rating must be one of &#34;like&#34;, &#34;dislike&#34;, &#34;none&#34;",
        ),
        ({"user": "ada", "item_id": "1"}, 400, "The rating is missing: give one of &#34;like&#34;"),
        ({"user": "ada", "item_id": "99999", "liked": "1"}, 404, "unknown item 99999"),
        ({"user": "zed", "item_id": "1", "liked": "1"}, 404, "unknown persona"),
        ({"item_id": "1", "liked": "1"}, 400, "choose a persona first"),
    ],
)
def test_bad_click_forms(web, db, data, status, needle):
    r = post(web, "/click", data)
    assert r.status_code == status
    assert needle in r.text
    assert clicks(db) == []


def test_actions_only_accept_post(web, db, ids):
    for path in ("/click", "/read", "/favorite", "/highlight", "/personas"):
        r = web.get(f"{path}?user=ada&item_id={ids[0]}&liked=1")
        assert r.status_code == 405, path
    assert clicks(db) == []


# --- corpus actions -------------------------------------------------------------------------------


def corpus_facet(db, facet):
    return [r[0] for r in db.execute("SELECT item_id FROM corpus_membership WHERE facet = ? ORDER BY item_id", [facet])]


def test_mark_read_makes_the_item_experienced(web, db, ids):
    r = post(web, "/read", {"user": "ada", "item_id": ids[2], "next": f"/feed?user=ada#item-{ids[2]}"})
    assert r.status_code == 303 and r.headers["location"] == f"/feed?user=ada#item-{ids[2]}"
    assert corpus_facet(db, "experienced") == [ids[2]]
    page = web.get("/feed?user=ada").text
    assert "Marked read" in page
    assert f'id="item-{ids[2]}"' not in page  # read items leave the unread view
    shown = web.get("/feed?user=ada&read=1").text  # "Show read" brings them back
    assert f'id="item-{ids[2]}"' in shown and shown.count('class="badge badge-read">') == 1
    assert clicks(db) == []  # reading is not a like


def test_corpus_strength_label_sits_beside_the_title_not_over_it(web, db, ids):
    """A trial saw "strength 0.46" run over the item's title: the label lived in a 2.6rem
    grid column it outgrew. Now meter and label are one block sized to its words, beside
    the title (its own block) on a desktop and above it on a phone; nothing is positioned."""
    for item_id in ids[:2]:
        post(web, "/read", {"user": "ada", "item_id": item_id, "next": "/feed?user=ada"})
    page = web.get("/corpus?user=ada").text
    rows = page.split('<ol class="ranked">')[1].split("</ol>")[0].split("<li>")[1:]
    assert len(rows) == 2
    for row in rows:
        cell = re.search(r'<div class="strength-cell">(.*?)</div>', row, re.S)
        assert cell and '<span class="strength-num">strength 0.' in cell.group(1)
        assert '<div class="ranked-title">' in row.split(cell.group(0))[1]
    css = web.get("/static/hermes.css").text
    rules: dict[str, str] = {}  # the first rule of each selector: the desktop one
    for selector, body in re.findall(r"(\.ranked[^{]*|meter\.strength|\.strength-num)\{([^}]*)\}", css):
        rules.setdefault(selector, body)
    desktop = rules[".ranked li "]
    columns = re.search(r"grid-template-columns:([^;]*);", desktop).group(1).split()
    assert columns[0] == "max-content"  # the label's column is as wide as its words
    assert "nowrap" in rules[".ranked .strength-cell "]
    assert not any("position" in body for body in rules.values())
    phone = css.split("@media (max-width: 560px)")[1].split("\n}")[0]
    assert ".ranked li { grid-template-columns: minmax(0, 1fr); }" in phone  # title below


def test_favorite_saves_and_unsaves(web, db, ids):
    post(web, "/favorite", {"user": "ada", "item_id": ids[3], "on": "1"})
    assert corpus_facet(db, "saved") == [ids[3]]
    page = web.get("/feed?user=ada").text
    assert "★ Saved" in page and "badge-saved" in page
    post(web, "/favorite", {"user": "ada", "item_id": ids[3], "on": "0"})
    assert corpus_facet(db, "saved") == []
    assert corpus_facet(db, "experienced") == []  # a favorite alone never means read


def test_highlight_with_note(web, db, ids):
    r = post(
        web,
        "/highlight",
        {"user": "ada", "item_id": ids[0], "text": "monosemantic features", "note": "check against SAE bench"},
    )
    assert r.status_code == 303
    row = db.execute("SELECT item_id, text, note FROM corpus_highlights").fetchone()
    assert row == (ids[0], "monosemantic features", "check against SAE bench")
    assert corpus_facet(db, "experienced") == [ids[0]]
    assert "Highlight saved with a note" in web.get("/feed?user=ada").text


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"text": "   "}, "The highlighted passage must be a non-empty string of at most 10,000 characters"),
        ({"text": "x" * 10_001}, "The highlighted passage must be a non-empty string of at most 10,000"),
        ({"text": "ok", "note": "n" * 10_001}, "The note must be a string of at most 10,000 characters, got"),
    ],
)
def test_highlight_bad_values(web, db, ids, data, needle):
    r = post(web, "/highlight", {"user": "ada", "item_id": ids[0], **data})
    assert r.status_code == 400
    assert needle in r.text
    assert db.execute("SELECT count(*) FROM corpus_highlights").fetchone()[0] == 0


def test_bad_favorite_value(web, db, ids):
    r = post(web, "/favorite", {"user": "ada", "item_id": ids[0], "on": "perhaps"})
    assert r.status_code == 400 and "The on / off choice must be yes or no" in r.text


# --- digest ----------------------------------------------------------------------------------------


def test_digest_groups_by_topic_with_the_caveat(web):
    page = web.get("/digest?user=ada")
    assert page.status_code == 200
    text = page.text
    assert text.count('class="topic"') >= 2
    assert "language models" in text
    assert 'class="caveat"' in text and "No feedback yet" in text
    assert text.count('class="reason"') >= 3
    assert "(0 clicks; classifier inactive)" in text
    assert 'days=365">a year</a>' in text  # a longer period than a month is one click away


def test_a_digest_topic_links_to_every_unread_item_of_its_community(web, db, add_items):
    """Old papers make "cryogenics" central to the qubits community; this week's qubit items
    do not carry it, so their heading leaves it out while the link keeps the community."""
    import html
    import re
    from urllib.parse import parse_qs, urlsplit

    from hermes.topics import tag_graph

    add_items(
        [
            {"title": f"Dilution fridge {k}", "tags": ["qubits", "cryogenics", "decoding"], "days_ago": 60}
            for k in range(3)
        ]
    )
    labels = {c.label for c in tag_graph.get_graph(db).communities}
    text = web.get("/digest?user=ada&per_topic=50").text
    sections = re.findall(r'<section class="topic" id="topic-\d+">(.*?)</section>', text, re.S)
    headings = []
    for section in sections:
        heading = html.unescape(re.search(r"<h2>(?:<a[^>]*>)?([^<]+)", section).group(1)).strip()
        link = re.search(r'class="topic-link" href="([^"]+)"[^>]*>([^<]+)<', section)
        if link is None:  # a group of this window that sits in no topic of the archive
            continue
        href, words = html.unescape(link.group(1)), html.unescape(link.group(2))
        community = parse_qs(urlsplit(href).query)["topic"][0]
        assert community in labels  # the link goes to the whole community, whatever the heading
        assert words == community  # and says so: a link never reads as another topic's name
        headings.append((heading, community))
        if heading != community:  # the wider topic is named as such, not as the items' tags
            assert "Part of the topic <a" in section and f">{html.escape(community)}</a>" in section
        page = web.get(href).text
        assert f"topic: {html.escape(community)}" in page
        for item_id in re.findall(r'id="item-(\d+)"', section):
            assert f'id="item-{item_id}"' in page
    assert any("cryogenics" in c and "cryogenics" not in h for h, c in headings), headings


def test_digest_caveat_goes_away_once_the_classifier_trains(web, db, ids):
    for item_id, liked in ((ids[0], "1"), (ids[1], "1"), (ids[4], "0"), (ids[5], "0")):
        post(web, "/click", {"user": "ada", "item_id": item_id, "liked": liked})
    from hermes.plugins import get_plugin_manager  # noqa: F401  (classifier comes from scorers)

    text = web.get("/digest?user=ada").text
    from hermes.tools import call_tool, collect_tools

    quality = call_tool(db, collect_tools()["digest"], {"user": "ada"})["ranking_quality"]
    assert ('class="caveat"' in text) == bool(quality["caveat"])


def test_digest_caveat_counts_one_click_in_the_singular(web, ids):
    post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1"})
    assert "(1 click; classifier inactive)" in web.get("/digest?user=ada").text


def test_a_saved_item_the_topics_show_is_not_drawn_twice(web, ids):
    post(web, "/favorite", {"user": "ada", "item_id": ids[0], "on": "1"})
    text = web.get("/digest?user=ada&per_topic=3").text
    assert 'id="saved"' in text
    assert text.count(f'id="item-{ids[0]}"') == 1  # one card, under its topic
    assert f'listed above (<a href="#item-{ids[0]}">go to it</a>)' in text


def test_digest_per_topic_truncates_and_links_to_all(web, add_items):
    import re

    # a digest of every item that clears the bar cuts no topic (trial finding) unless asked
    assert "showing" not in web.get("/digest?user=ada").text
    assert "showing 1 of" in web.get("/digest?user=ada&per_topic=1").text
    # more clear the bar than the 30 it groups: per_topic cuts
    add_items(
        [{"title": f"Sparse features, part {k}", "tags": ["interpretability"], "days_ago": 0.5} for k in range(30)]
    )
    one = web.get("/digest?user=ada&per_topic=1").text
    sizes = [int(n) for n in re.findall(r"showing 1 of (\d+)", one)]
    assert sizes and min(sizes) >= 2 and f"per_topic={max(sizes)}" in one
    everything = web.get(f"/digest?user=ada&per_topic={max(sizes)}").text
    assert "showing" not in everything
    assert everything.count('class="item') > one.count('class="item')


def test_the_digest_states_how_many_clear_the_bar_when_it_groups_only_the_best(web, db, add_items):
    """The digest groups its best 30; the page said "30 that clear your bar" while 37 did
    (the CLI and the feed page said 37). It says the true number, and that 30 are grouped."""
    import re

    from hermes.tools import call_tool, collect_tools

    add_items(
        [
            {"title": f"Sparse features, part {k}", "tags": ["interpretability"], "days_ago": 0.1 + k / 100}
            for k in range(30)
        ]
    )
    result = call_tool(db, collect_tools()["digest"], {"user": "ada"})
    assert (
        result["n_items"] == 30
        and "37 unread items from the last 7 days clear the bar; the best 30 are grouped" in result["message"]
    )
    text = web.get("/digest?user=ada").text
    line = re.sub(r"\s+", " ", re.search(r'<p class="muted cleared">(.*?)</p>', text, re.S).group(1))
    assert line.startswith(
        "37 unread items that clear your bar; the best 30 are grouped here "
        '(<a href="/feed?user=ada&amp;days=7">the feed</a> lists all 37):'
    ), line
    assert "of 37 unread that clear your bar" in web.get("/feed?user=ada").text  # the same count


def test_a_digest_that_groups_every_item_clearing_the_bar_says_no_more(web):
    text = web.get("/digest?user=ada").text
    assert '<p class="muted cleared">7 unread items that clear your bar:' in text
    assert "are grouped here" not in text


def test_digest_bad_days_and_empty_window(web, db):
    r = web.get("/digest?user=ada&days=zero")
    assert r.status_code == 400 and "days must be a whole number" in r.text
    r = web.get("/digest?user=ada&per_topic=500")
    assert r.status_code == 400 and "per_topic must be a whole number from 1 to 50" in r.text
    db.execute("UPDATE items SET published = '2001-01-01T00:00:00+00:00'")
    from hermes.ranking import matrix

    matrix.clear_cache()
    page = web.get("/digest?user=ada")
    assert page.status_code == 200
    assert "No unread items" in page.text


# --- corpus page -------------------------------------------------------------------------------------


def test_corpus_page_shows_facets_strength_and_changes(web, db, ids):
    post(web, "/read", {"user": "ada", "item_id": ids[0]})
    post(web, "/highlight", {"user": "ada", "item_id": ids[1], "text": "power law"})
    post(web, "/favorite", {"user": "ada", "item_id": ids[1], "on": "1"})
    post(web, "/favorite", {"user": "ada", "item_id": ids[4], "on": "1"})
    text = web.get("/corpus?user=ada").text
    experienced = text.split("Experienced, strongest first")[1].split("Saved for later")[0]
    saved = text.split("Saved for later")[1].split("Recent changes")[0]
    changes = text.split("Recent changes")[1]
    assert ITEMS[0]["title"] in experienced and ITEMS[1]["title"] in experienced
    assert ITEMS[4]["title"] in saved and ITEMS[0]["title"] not in saved
    assert experienced.count("<meter") == 2
    # a trial read "0.46 0.46" before each item: the figure once, and named
    figures = re.findall(r"\b[01]\.\d\d\b", re.sub(r"<[^>]+>", " ", experienced))
    assert len(figures) == 2 and experienced.count("strength 0.") + experienced.count("strength 1.") == 2
    assert "Strength, from 0 to 1: how firmly an item sits in ada's corpus" in html.unescape(experienced)
    assert "1 highlight" in experienced
    assert changes.count('class="change-added"') >= 3


# --- feeds page ---------------------------------------------------------------------------------------


def test_feeds_page_lists_counts_and_errors(web, db):
    db.execute(
        "INSERT INTO feeds (url, title, last_error, error_count) VALUES "
        "('https://broken.example/rss', 'Broken feed', 'HTTP 500 from server', 3)"
    )
    text = web.get("/feeds").text
    assert "arXiv cs.LG" in text and "https://export.arxiv.org/rss/cs.LG" in text
    assert '<td class="num">6</td>' in text and '<td class="num">1</td>' in text
    assert "HTTP 500 from server" in text and 'class="failing"' in text


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"url": ""}, "The feed URL must start with http:// or https://"),
        ({"url": "ftp://example.org/feed"}, "must start with http:// or https://"),
        ({"url": "javascript:alert(1)"}, "must start with http:// or https://"),
        ({"url": "https://example.org/" + "a" * 2000}, "The feed URL must be a non-empty string of at most 2,000"),
    ],
)
def test_add_feed_bad_values(web, db, data, needle):
    r = post(web, "/feeds", data, page="/feeds")
    assert r.status_code == 400
    assert needle in r.text
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 2


def test_add_feed_refused_by_the_tool_shows_the_form_again(web, db):
    # Loopback is refused by the private-address guard unless the user allowed it.
    r = post(web, "/feeds", {"url": "http://127.0.0.1:9/feed.xml", "title": "Mine"}, page="/feeds")
    assert r.status_code == 400
    assert 'class="flash flash-error"' in r.text
    assert 'value="http://127.0.0.1:9/feed.xml"' in r.text  # what was typed is kept
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 2


def test_add_feed_validates_with_one_fetch(web, db, monkeypatch):
    from feeds_support import SAMPLE_ENTRIES, CannedServer, rss

    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")
    with CannedServer() as server:
        server.routes["/feed.xml"] = (
            200,
            {"Content-Type": "application/rss+xml"},
            rss("Loopback feed", SAMPLE_ENTRIES),
        )
        r = post(web, "/feeds", {"url": server.url("/feed.xml"), "title": ""}, page="/feeds")
        assert r.status_code == 303 and r.headers["location"] == "/feeds"
        assert server.requests == ["/feed.xml"]
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 3
    assert "Loopback feed" in web.get("/feeds").text


def test_adding_a_subscribed_loopback_feed_again_says_already_subscribed(web, db):
    # A trial's finding: the guard's "refused: private address" answered a person who typed
    # a loopback feed the page lists already. Said before any fetch; nothing is added.
    db.execute("INSERT INTO feeds (url, title, subscribed_by) VALUES ('http://127.0.0.1:9/feed.xml', 'Mine', 'user')")
    r = post(web, "/feeds", {"url": "HTTP://127.0.0.1:9/feed.xml", "title": ""}, page="/feeds")
    assert r.status_code == 303 and r.headers["location"] == "/feeds#feed-3", r.text
    page = web.get(r.headers["location"]).text
    said = html.unescape(re.search(r'<span class="toast-message">(.*?)</span>', page, re.S).group(1))
    assert said == "Already subscribed: feed 3 “Mine” has this URL; nothing changed."
    assert "refused" not in said and db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 3


def test_remove_feed_needs_confirmation(web, db, ids):
    confirm = web.get("/feeds/1/remove")
    assert confirm.status_code == 200
    assert "Remove feed" in confirm.text and "items stay" in confirm.text
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 2  # GET removed nothing
    r = post(web, "/feeds/1/remove", {}, page="/feeds")
    assert r.status_code == 400 and "not confirmed" in r.text
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 2
    r = post(web, "/feeds/1/remove", {"confirm": "yes"}, page="/feeds")
    assert r.status_code == 303
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == len(ITEMS)  # orphaned, kept
    assert "Removed" in web.get("/feeds").text


def test_the_feeds_pages_keep_the_persona_a_person_came_from(web, db, ids):
    """From a feed, Feeds keeps its Feed / Digest / Corpus tabs, on the page, its removal
    confirmation and after each action (a trial found only "Personas" there)."""
    feed = web.get("/feed?user=ada").text
    assert 'href="/feeds?user=ada"' in feed
    page = web.get("/feeds?user=ada").text
    assert 'href="/feed?user=ada"' in page and 'href="/digest?user=ada"' in page
    assert 'action="/feeds?user=ada"' in page and 'href="/feeds/1/remove?user=ada"' in page
    assert 'action="/feeds/1/rename?user=ada"' in page and 'action="/refresh?user=ada"' in page
    confirm = web.get("/feeds/1/remove?user=ada").text
    assert 'href="/feed?user=ada"' in confirm and 'href="/feeds?user=ada">Cancel' in confirm
    r = post(web, "/feeds/1/rename?user=ada", {"title": "Renamed"}, page="/feeds")
    assert r.status_code == 303 and r.headers["location"] == "/feeds?user=ada#feed-1"
    r = post(web, "/feeds/1/remove?user=ada", {"confirm": "yes"}, page="/feeds")
    assert r.status_code == 303 and r.headers["location"] == "/feeds?user=ada"
    # a name that is no persona (renamed since) is no error; the browser's last persona stands in
    stale = web.get("/feeds?user=nobody")
    assert stale.status_code == 200 and 'href="/feed?user=ada"' in stale.text
    web.cookies.clear()  # a browser that has shown no persona: the persona list's navigation
    assert 'href="/feed?user=' not in web.get("/feeds").text
    assert 'href="/feed?user=' not in web.get("/feeds?user=nobody").text


def test_every_page_carries_the_last_persona_s_navigation(web, db):
    """A user trial reached Feeds with only "Personas" and "Feeds" in its header: no way back
    to the feed, digest or corpus. A persona's pages remember it (a cookie, as the window and
    density are), and the pages that are nobody's carry its tabs, search and chip."""
    from hermes.storage.records import create_user

    create_user(db, "bea", "protein folding")
    nav = ('href="/feed?user=bea"', 'href="/digest?user=bea"', 'href="/corpus?user=bea"', 'href="/persona?user=bea"')
    for path in ("/feeds", "/feeds/1/remove", "/keys"):
        assert not any(link in web.get(path).text for link in nav), path  # no persona used yet
    assert web.get("/digest?user=bea").status_code == 200
    for path in ("/feeds", "/feeds/1/remove", "/keys"):
        page = web.get(path).text
        assert all(link in page for link in nav) and 'name="user" value="bea"' in page, path
    assert 'action="/feeds/1/rename?user=bea"' in web.get("/feeds").text  # its actions return to it
    web.get("/corpus?user=ada")
    assert 'href="/feed?user=ada"' in web.get("/feeds").text  # the last one used
    db.execute("UPDATE users SET name = 'ada2' WHERE name = 'ada'")
    assert 'href="/feed?user=ada2"' in web.get("/feeds").text  # kept by id: a rename keeps it
    web.cookies.clear()
    web.cookies.set("hermes_persona", "999")
    page = web.get("/feeds")  # deleted since (or edited): the persona list's navigation, no error
    assert page.status_code == 200 and 'href="/feed?user=' not in page.text and 'href="/">Personas' in page.text


def test_remove_unknown_feed_is_404(web):
    assert web.get("/feeds/999/remove").status_code == 404
    assert post(web, "/feeds/999/remove", {"confirm": "yes"}).status_code == 404
    assert web.get("/feeds/abc/remove").status_code == 404


# --- tool groups missing ----------------------------------------------------------------------------


def test_pages_say_so_when_tool_groups_are_disabled(db_path, db, add_items, monkeypatch):
    ids = seed(db, add_items)
    monkeypatch.setenv("HERMES_PLUGINS", "signals,default_embedder,default_candidates,scorers")
    from hermes import plugins

    plugins.pm_cache_clear()
    with client(db_path) as c:
        feed = c.get("/feed?user=ada")
        assert feed.status_code == 200
        assert "corpus tools are not available" in feed.text
        assert "Mark read" not in feed.text
        assert 'class="btn btn-like"' in feed.text  # clicks are core: still there
        assert "digest tools are not available" in c.get("/digest?user=ada").text
        assert "corpus tools are not available" in c.get("/corpus?user=ada").text
        assert "feeds tools are not available" in c.get("/feeds").text
        assert "persona tools are not available" in c.get("/").text
        feed_token = token(c, "/feed?user=ada")
        r = c.post("/read", data={"csrf_token": feed_token, "user": "ada", "item_id": ids[0]})
        assert r.status_code == 503 and "corpus tools are not available" in r.text
        r = c.post(
            "/click",
            data={"csrf_token": feed_token, "user": "ada", "item_id": ids[0], "liked": "1"},
            follow_redirects=False,
        )
        assert r.status_code == 303
    assert clicks(db) == [(1, ids[0], "like", "ui")]


# --- assets ------------------------------------------------------------------------------------------


def test_static_assets_are_local(web):
    css = web.get("/static/hermes.css")
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    assert "http://" not in css.text and "https://" not in css.text and "@import" not in css.text
    page = web.get("/feed?user=ada").text
    import re

    for ref in re.findall(r'(?:href|src)="([^"]+)"', page):
        if ref.startswith(("http://", "https://")):
            # only the items' own links may point elsewhere, never an asset
            assert "arxiv.org/abs" in ref or "example.org/blog" in ref, ref
    # the one script is this server's own file, never inline (the CSP allows no other)
    import re as _re

    assert _re.findall(r"<script[^>]*>", page) == ['<script src="/static/hermes.js" defer>']
    assert "</script>" in page and _re.search(r"<script[^>]*>\s*\S+\s*</script>", page) is None
    js = web.get("/static/hermes.js")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    assert "http://" not in js.text and "https://" not in js.text and "eval(" not in js.text


def test_the_corpus_json_api_lives_in_the_same_app(web, ids):
    post(web, "/read", {"user": "ada", "item_id": ids[0]})
    r = web.get("/api/corpus?user=ada")
    assert r.status_code == 200
    assert r.json()["experienced_count"] == 1
    assert web.get("/api/corpus/items?user=ada&facet=experienced").json()["items"][0]["item_id"] == ids[0]
    assert web.get("/api/corpus?user=nobody").status_code == 404


# --- explanations --------------------------------------------------------------------------------


def test_feed_reasons_come_from_the_explanation(web, db, ids):
    from markupsafe import escape

    from hermes.ranking.explain import explain
    from hermes.storage.records import require_user

    text = web.get("/feed?user=ada").text
    first_id = int(text.split('data-item-id="')[1].split('"')[0])
    expected = explain(db, require_user(db, "ada"), first_id, store=False)["reason"]
    assert str(escape(expected)) in text
    assert f'href="/explain?user=ada&amp;days=7&amp;item_id={first_id}"' in text


# --- the persona's bar ---------------------------------------------------------------------------


def test_feed_folds_the_items_below_the_bar(db_path, db, bar_ids):
    with client(db_path) as c:
        text = c.get("/feed?user=ada").text
        interpretability = [ITEMS[i]["title"] for i in (0, 1, 6)]
        elsewhere = [ITEMS[i]["title"] for i in (2, 3, 4, 5)]  # graphs, crystals, qubits
        assert all(t in text for t in interpretability)
        assert not any(t in text for t in elsewhere)
        assert "4 more items below your bar" in text
        assert 'href="/feed?user=ada&amp;below=1#below-bar">show</a>' in text
        shown = c.get("/feed?user=ada&below=1").text
    assert all(t in shown for t in elsewhere)
    fold = shown.index('id="below-bar"')
    assert all(shown.index(t) < fold for t in interpretability)
    assert all(shown.index(t) > fold for t in elsewhere)
    assert "No match: not close to any of your interests" in shown[fold:]


def test_feed_says_plainly_when_nothing_clears_the_bar(db_path, db, bar_ids):
    from hermes.storage.records import create_user

    create_user(db, "bea", "medieval church architecture")
    with client(db_path) as c:
        text = c.get("/feed?user=bea").text
    assert (
        "Nothing unread from the last 7 days clears your bar: none of the 7 items there is "
        "a strong or good match for bea."
    ) in text
    assert "7 items below your bar" in text and 'class="reason"' not in text
    assert "Look in the whole archive</a>, add feeds on your topics" in text
    with client(db_path) as c:  # the whole archive: the advice starts its own sentence
        everything = c.get("/feed?user=bea&days=all").text
    assert "match for bea.\nAdd feeds on your topics" in everything


# the list's head and the fold under a filter, the items below the bar shown: never two
# counts that read as two sets of the same items


def _head_and_fold(page: str) -> list[str]:
    found = re.findall(r'<p class="muted">\d.*?</p>|<p class="fold".*?</p>', page, re.S)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", m)).split(" · as ranked")[0].strip() for m in found]


def test_filtered_feed_with_nothing_above_the_bar_says_the_list_is_all_below(db_path, db, bar_ids):
    from hermes.storage.records import create_user

    create_user(db, "bea", "medieval church architecture")
    with client(db_path) as c:
        page = c.get("/feed?user=bea&feed=1&below=1").text
    head, fold = _head_and_fold(page)
    assert head == "1–6 of 6 unread in this view, none of which clears your bar: the closest first"
    assert fold == "All 6 are below your bar (match weak or none) — hide"
    assert "6 items below your bar" not in page


def test_filtered_feed_with_some_above_says_how_many_clear_the_bar(db_path, db, bar_ids):
    with client(db_path) as c:
        page = c.get("/feed?user=ada&feed=1&below=1").text
        unfiltered = c.get("/feed?user=ada&below=1").text
    assert _head_and_fold(page) == [
        "1–6 of 6 unread in this view, best first: 2 clear your bar, 4 below it",
        "4 more items below your bar (match weak or none) — hide",
    ]
    assert _head_and_fold(unfiltered)[0] == "1–7 of 7 unread, best first: 3 clear your bar, 4 below it"


def test_without_below_the_head_counts_only_what_clears_the_bar(db_path, db, bar_ids):
    with client(db_path) as c:
        page = c.get("/feed?user=ada&feed=1").text
    assert _head_and_fold(page) == [
        "1–2 of 2 unread in this view that clear your bar, best first",
        "4 more items below your bar — show",
    ]


@pytest.mark.parametrize(
    "view, window",
    [
        ("days=7", "of 7 unread items of the last 7 days"),
        ("days=all", "of 7 unread items in the whole archive"),
        ("days=all&feed=1", "of 6 unread items in the whole archive (this view)"),  # the arXiv feed only
    ],
)
def test_details_page_ranks_among_the_items_the_feed_showed(db_path, db, bar_ids, view, window):
    from html import unescape

    with client(db_path) as c:
        feed = c.get(f"/feed?user=ada&{view}&below=1").text
        lines = feed.split('data-item-id="')[1:]
        assert lines
        for line in lines:
            link = unescape(line.split('class="details" href="')[1].split('"')[0])
            assert link.startswith("/explain?user=ada&") and "below" not in link
            assert all(part in link for part in view.split("&"))
            reason = line.split('<span class="reason-text">')[1].split("</span>")[0]
            rank = line.split('<span class="rank">')[1].split("</span>")[0]
            page = c.get(link).text
            assert f'<aside class="notice explain-reason">{reason}</aside>' in page
            assert f"Ranks {rank} {window}" in page


def test_digest_page_folds_below_the_bar_and_its_details_agree(db_path, db, bar_ids):
    from html import unescape

    with client(db_path) as c:
        page = c.get("/digest?user=ada").text
        assert "3 unread items that clear your bar" in page
        assert ITEMS[2]["title"] not in page and "4 more items below your bar" in page
        shown = c.get("/digest?user=ada&below=1").text
        assert ITEMS[2]["title"] in shown and "(match weak or none)" in shown
        for line in shown.split('data-item-id="')[1:]:
            link = unescape(line.split('class="details" href="')[1].split('"')[0])
            reason = line.split('<span class="reason-text">')[1].split("</span>")[0]
            details = c.get(link).text
            assert f'<aside class="notice explain-reason">{reason}</aside>' in details
            assert "items of the last 7 days" in details


def test_explanation_page(web, db, ids):
    post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1"})
    r = web.get(f"/explain?user=ada&item_id={ids[1]}")
    assert r.status_code == 200
    text = r.text
    assert ITEMS[1]["title"] in text
    assert "Components" in text and "profile" in text
    assert "Closest items you liked" in text and ITEMS[0]["title"] in text  # the liked item
    assert "Ranks " in text
    assert db.execute("SELECT count(*) FROM explanations").fetchone()[0] == 0  # GET stores nothing


def test_explanation_page_of_an_item_the_feed_leaves_out(web, db, ids):
    """A liked item is not in the feed: its page says so and what it would rank, not a rank."""
    post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1"})
    text = web.get(f"/explain?user=ada&item_id={ids[0]}").text
    assert "Not among the unread items of the last 7 days (you liked it already)" in text
    assert "<dt>would rank</dt>" in text and "Ranks " not in text
    # its closest liked item is itself: said so, not "nearest: <its own title>"
    assert "you liked this item itself" in text and "nearest:" not in text
    # the table's weights and what a contribution is measured against
    assert '<th class="num">weight</th>' in text and "lies above the average" in text


def test_explanation_page_of_an_item_ranked_alone_says_why_every_share_is_zero(web, db, ids):
    for liked in (ids[0], ids[2]):  # rated items leave the window: ids[1] is ranked alone
        post(web, "/click", {"user": "ada", "item_id": liked, "liked": "1"})
    text = web.get(f"/explain?user=ada&days=1&item_id={ids[1]}").text
    assert "Ranks 1 of 1 " in text
    assert "Ranked alone (one item in this window)" in text
    feed = web.get("/feed?user=ada&days=1").text  # the feed's weight line says why it is 0
    assert (
        "weigh 0% of the ranking, the interests text the rest (what you rated does not tell these items apart" in feed
    )
    assert "Ranked alone" not in web.get(f"/explain?user=ada&item_id={ids[1]}").text


@pytest.mark.parametrize(
    "query, status, needle",
    [
        # an id's internal ceiling is no bound to tell a person (a trial read "from 1 to 4611686018427387904")
        ("user=ada&item_id=abc", 400, "The item number must be a whole number of at least 1, got &#34;abc&#34;"),
        ("user=ada&item_id=99999", 404, "unknown item"),
        ("user=nobody&item_id=1", 404, "unknown persona"),
        ("item_id=1", 400, "choose a persona first"),
    ],
)
def test_explanation_page_errors(web, query, status, needle):
    r = web.get(f"/explain?{query}")
    assert r.status_code == status and needle in r.text, r.text
    assert "4611686018427387904" not in r.text


@pytest.mark.parametrize(
    "path, needle",
    [
        # a guessed or old link without the item's parameter: missing, not "got 'None'"
        ("/explain?user=ada&item=60", "The item number is missing: give a whole number"),
        # the digest allows the same century of days as the feed and the tools
        ("/digest?user=ada&days=36501", "days must be a whole number from 1 to 36500"),
    ],
)
def test_a_missing_or_out_of_range_value_says_which(web, path, needle):
    r = web.get(path)
    assert r.status_code == 400
    assert needle in r.text and "None" not in r.text
