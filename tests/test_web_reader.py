"""The reader's flows through starlette's test client: opening an item through hermes marks
it read, the unread view and "show read", undo for every action, mark these read, views per
feed / topic / tag / author, paging, search in the persona's order, renaming a feed, the
refresh controls, the Atom feed, the density preference and JSON answers for the script."""

from __future__ import annotations

import html
import re
import sys
import time

import feedparser
import pytest
from web_support import ITEMS, clicks, client, seed, token

from hermes.hookspecs import hookimpl


@pytest.fixture
def ids(db, add_items, no_bar):
    """The seeded items, every one clearing the bar (these are tests of the reader's flows;
    the bar's own are in test_web_pages.py)."""
    return seed(db, add_items)


@pytest.fixture
def web(db_path, ids):
    with client(db_path) as c:
        yield c


def post(c, path, data, *, page="/", json=False):
    headers = {"Accept": "application/json"} if json else {}
    return c.post(path, data={"csrf_token": token(c, page), **data}, headers=headers, follow_redirects=False)


def read_ids(db):
    return [
        r[0] for r in db.execute("SELECT item_id FROM corpus_membership WHERE facet = 'experienced' ORDER BY item_id")
    ]


def shown(page: str) -> list[int]:
    return [int(i) for i in re.findall(r'<article class="item[^"]*" id="item-(\d+)"', page)]


class Signals:
    """A plugin observing every signal written (kind, op, source)."""

    def __init__(self):
        self.seen = []

    @hookimpl
    def hermes_signal_written(self, db, signal):
        self.seen.append((signal.kind, signal.op, signal.item_id, signal.source))


# --- opening an item -------------------------------------------------------------------------


def test_opening_goes_through_hermes_marks_read_with_source_ui_and_moves_on(web, db, ids, pm):
    observer = Signals()
    pm.register(observer)
    page = web.get("/feed?user=ada").text
    # the title is a form posting to /open (opening writes, so it is never a GET link)
    assert '<form method="post" action="/open" target="_blank"' in page
    r = post(web, "/open", {"user": "ada", "item_id": ids[0]})
    assert r.status_code == 200
    assert f'<meta http-equiv="refresh" content="0; url={ITEMS[0]["url"]}">' in r.text
    assert ("progress", "set", ids[0], "ui") in observer.seen  # the corpus tool path, source ui
    assert read_ids(db) == [ids[0]]
    assert db.execute("SELECT opens FROM corpus_progress WHERE item_id = ?", [ids[0]]).fetchone()[0] == 1
    assert ids[0] not in shown(web.get("/feed?user=ada").text)  # left the unread view
    assert ids[0] in shown(web.get("/feed?user=ada&read=1").text)  # "show read" brings it back
    assert web.get(f"/open?user=ada&item_id={ids[0]}").status_code == 405  # never on a GET


def test_opening_from_the_page_script_answers_with_the_address_and_the_counts(web, db, ids):
    # The script opens the tab itself, so it hears back: where to send the tab, and the
    # feed's unread counts after the read (as "Mark read" answers).
    feed = db.execute("SELECT feed_id FROM items WHERE id = ?", [ids[0]]).fetchone()[0]
    unread = re.compile(rf'data-figure="unread-{feed}">(\d+)<')
    before = int(unread.search(web.get("/feed?user=ada").text).group(1))
    r = post(web, "/open", {"user": "ada", "item_id": ids[0], "next": "/feed?user=ada"}, json=True)
    answer = r.json()
    assert answer["ok"] and answer["url"] == ITEMS[0]["url"] and answer["read"] is True
    assert answer["figures"][f"unread-{feed}"] == str(before - 1)
    assert read_ids(db) == [ids[0]]


def test_each_title_has_the_link_itself_beside_it(web, db, ids, add_items):
    """The title is a button (opening marks read), so hovering it shows no address and it
    cannot be copied or middle-clicked: the plain link sits beside it; it writes nothing."""
    page = web.get("/feed?user=ada").text
    assert f'<a class="source-link" href="{ITEMS[0]["url"]}" target="_blank" rel="noopener noreferrer"' in page
    [unsafe] = add_items([{"title": "no link", "summary": "x", "url": "javascript:alert(1)"}])
    page = web.get("/feed?user=ada&days=all&below=1").text
    assert "javascript:" not in page


def test_opening_refuses_an_item_without_a_web_address(web, db, add_items):
    [item] = add_items([{"title": "no link", "summary": "x", "url": "javascript:alert(1)"}])
    r = post(web, "/open", {"user": "ada", "item_id": item})
    assert r.status_code == 400 and "no web address" in r.text
    assert read_ids(db) == []


# --- undo --------------------------------------------------------------------------------------


def test_like_dislike_and_their_undo(web, db, ids):
    r = post(web, "/click", {"user": "ada", "item_id": ids[1], "liked": "1"}, json=True)
    answer = r.json()
    assert answer["ok"] and answer["kind"] == "like" and answer["clicked"] == "like"
    assert answer["undo"] == {
        "action": "/click",
        "label": "Undo",
        "fields": {"user": "ada", "item_id": str(ids[1]), "liked": "none"},
    }
    # ✗ over the like; its undo restores the like, not nothing
    answer = post(web, "/click", {"user": "ada", "item_id": ids[1], "liked": "0"}, json=True).json()
    assert answer["kind"] == "dislike" and answer["message"].startswith("✗ Less like this")
    assert answer["undo"]["fields"]["liked"] == "1"
    post(web, "/click", answer["undo"]["fields"])
    assert clicks(db) == [(1, ids[1], "like", "ui")]
    post(web, "/click", {"user": "ada", "item_id": ids[1], "liked": "none"})
    assert clicks(db) == []


def figures(page: str) -> dict:
    """The page's ``data-figure`` elements and their text, as a person reads it."""
    found = re.findall(r'<(\w+)[^>]*\bdata-figure="([^"]+)"[^>]*>(.*?)</\1>', page, re.S)
    return {name: " ".join(html.unescape(text).split()) for _, name, text in found}


def test_a_rating_answers_the_feed_figures_a_reload_would_show(web, db, ids):
    """A user trial: after ✓ the header still said "No clicks yet" (or the old count and
    weight) until a reload. The answer carries the header and the unread counts, rendered
    as the reloaded page renders them, for the view the rating was made on."""
    here = "/feed?user=ada&days=all"
    before = figures(web.get(here).text)
    assert before["stats"].startswith("No clicks yet")
    feed_id = db.execute("SELECT feed_id FROM items WHERE id = ?", [ids[0]]).fetchone()[0]

    liked = post(
        web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1", "next": f"{here}#item-{ids[0]}"}, json=True
    ).json()
    after = figures(web.get(here).text)
    assert liked["figures"] == after
    assert after["stats"].startswith("1 click · your likes and dislikes weigh ")
    assert int(after[f"unread-{feed_id}"]) == int(before[f"unread-{feed_id}"]) - 1

    undone = post(web, "/click", {**liked["undo"]["fields"], "next": here}, json=True).json()
    assert undone["figures"] == figures(web.get(here).text) == before

    # off the feed page there is no header to update, and without script the page reloads
    elsewhere = post(
        web, "/click", {"user": "ada", "item_id": ids[0], "liked": "0", "next": "/search?user=ada&q=codes"}, json=True
    ).json()
    assert elsewhere["figures"] is None


def test_the_flash_after_a_redirect_carries_the_undo_form_and_keeps_the_place(web, db, ids):
    r = post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "0", "next": f"/feed?user=ada#item-{ids[1]}"})
    assert r.headers["location"] == f"/feed?user=ada#item-{ids[1]}"
    page = web.get("/feed?user=ada").text
    toast = page[page.index('<div class="toast') : page.index("</div>", page.index('<div class="toast'))]
    assert "toast-dislike" in toast  # ✗ is not styled as a green success
    assert 'action="/click"' in toast and 'name="liked" value="1"' not in toast
    assert 'name="liked" value="none"' in toast and f'value="{ids[0]}"' in toast
    assert f'name="next" value="/feed?user=ada#item-{ids[0]}"' in toast  # back where it was


def test_read_and_unread_with_a_tombstone(web, db, ids):
    answer = post(web, "/read", {"user": "ada", "item_id": ids[2]}, json=True).json()
    assert answer["read"] is True and answer["undo"]["fields"]["on"] == "0"
    assert read_ids(db) == [ids[2]]
    answer = post(web, "/read", answer["undo"]["fields"], json=True).json()
    assert answer["read"] is False and read_ids(db) == []
    log = db.execute("SELECT kind, facet, item_id FROM corpus_log ORDER BY revision").fetchall()
    assert log == [("added", "experienced", ids[2]), ("removed", "experienced", ids[2])]
    assert ids[2] in shown(web.get("/feed?user=ada").text)  # unread again


def test_mark_these_read_and_undo_only_what_it_changed(web, db, ids):
    post(web, "/read", {"user": "ada", "item_id": ids[0]})
    page = web.get("/feed?user=ada&days=all").text
    listed = re.search(r'name="item_ids" value="([\d,]+)"', page).group(1)
    assert str(ids[0]) not in listed.split(",")  # already read: not in the unread view
    answer = post(web, "/read-all", {"user": "ada", "item_ids": listed + f",{ids[0]}"}, json=True).json()
    assert sorted(answer["item_ids"]) == sorted(int(i) for i in listed.split(","))
    assert read_ids(db) == sorted(ids)
    assert shown(web.get("/feed?user=ada&days=all").text) == []
    post(web, "/read-all", answer["undo"]["fields"])
    assert read_ids(db) == [ids[0]]  # the one read before stays read


def test_mark_these_read_skips_an_item_rated_since_the_page_loaded(web, db, ids):
    """A user trial: ✓ on an item, then "Mark these 2 read" marked the liked item read too
    ("Marked 2 items read" when the person meant 1). The button's list is the page's as
    loaded; the server leaves out what was rated since, so it holds without script too."""
    here = "/feed?user=ada&days=all"
    page = web.get(here).text
    listed = re.search(r'name="item_ids" value="([\d,]+)"', page).group(1)
    assert listed.split(",") == [str(i) for i in shown(page)]
    liked, rest = int(listed.split(",")[0]), [int(i) for i in listed.split(",")[1:]]
    post(web, "/click", {"user": "ada", "item_id": liked, "liked": "1"})

    answer = post(web, "/read-all", {"user": "ada", "item_ids": listed, "next": here}, json=True).json()
    assert answer["item_ids"] == rest and liked not in read_ids(db)
    assert answer["message"] == f"Marked {len(rest)} items read (not the 1 you rated)"
    assert answer["figures"] == figures(web.get(here).text)  # the chips, as a reload shows
    assert clicks(db) == [(1, liked, "like", "ui")]
    # its undo takes back what it marked, nothing else
    post(web, "/read-all", answer["undo"]["fields"])
    assert read_ids(db) == []


def test_a_read_answers_the_feed_figures_a_reload_would_show(web, db, ids):
    """A user trial: the per-feed unread chips followed a ✓ but not "Mark read"."""
    here = "/feed?user=ada&days=all"
    before = figures(web.get(here).text)
    feed_id = db.execute("SELECT feed_id FROM items WHERE id = ?", [ids[2]]).fetchone()[0]
    answer = post(web, "/read", {"user": "ada", "item_id": ids[2], "next": f"{here}#item-{ids[3]}"}, json=True).json()
    after = figures(web.get(here).text)
    assert answer["figures"] == after
    assert int(after[f"unread-{feed_id}"]) == int(before[f"unread-{feed_id}"]) - 1
    undone = post(web, "/read", {**answer["undo"]["fields"], "next": here}, json=True).json()
    assert undone["figures"] == figures(web.get(here).text) == before


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"user": "ada", "item_ids": ""}, "no items to mark"),
        ({"user": "ada", "item_ids": "1,abc"}, "The item numbers must be a list of at most 200 (a whole number"),
        (
            {"user": "ada", "item_ids": ",".join(["1"] * 201)},
            "at most 200 (a whole number of at least 1 each), got a list of 201.",
        ),
        ({"user": "ada", "item_ids": "99999"}, "unknown item 99999"),
    ],
)
def test_mark_these_read_bad_forms_write_nothing(web, db, data, needle):
    r = post(web, "/read-all", data)
    assert r.status_code in (400, 404) and needle in r.text
    assert read_ids(db) == []


def test_save_and_its_undo(web, db, ids):
    answer = post(web, "/favorite", {"user": "ada", "item_id": ids[3]}, json=True).json()
    assert answer["saved"] is True and answer["undo"]["fields"]["on"] == "0"
    post(web, "/favorite", answer["undo"]["fields"])
    assert db.execute("SELECT count(*) FROM corpus_favorites").fetchone()[0] == 0


def test_a_script_gets_errors_as_json(web, db, ids):
    r = post(web, "/click", {"user": "ada", "item_id": "99999", "liked": "1"}, json=True)
    assert r.status_code == 404 and r.json() == {"ok": False, "message": r.json()["message"]}
    assert "unknown item" in r.json()["message"]


def test_actions_are_never_done_on_get(web, db, ids):
    for path in ("/open", "/read-all", "/prefs", "/refresh", "/feeds/1/rename"):
        r = web.get(f"{path}?user=ada&item_id={ids[0]}&item_ids={ids[0]}&density=compact&title=x")
        assert r.status_code == 405, path
    assert read_ids(db) == [] and clicks(db) == []
    assert db.execute("SELECT title FROM feeds WHERE id = 1").fetchone()[0] == "arXiv cs.LG"


# --- views, paging, search ------------------------------------------------------------------------


def test_views_per_feed_tag_author_and_topic(web, db, ids):
    blog = db.execute("SELECT id FROM feeds WHERE title = 'Circuits blog'").fetchone()[0]
    page = web.get("/feed?user=ada").text
    assert re.search(r'Circuits blog <span class="count"[^>]*>1</span>', page)  # unread per feed
    assert re.search(r'arXiv cs.LG <span class="count"[^>]*>6</span>', page)
    assert shown(web.get(f"/feed?user=ada&feed={blog}").text) == [ids[6]]
    by_tag = shown(web.get("/feed?user=ada&tag=quantum%20error%20correction").text)
    assert sorted(by_tag) == [ids[4], ids[5]]
    # As ingest stores authors: the string, the parsed list, and a new embed_seq so the ranking
    # matrix re-reads the item's keys (author keys among them).
    db.execute(
        "UPDATE items SET author = 'Chris Olah, Neel Nanda', "
        'authors = \'["Chris Olah", "Neel Nanda"]\', '
        "embed_seq = (SELECT max(embed_seq) + 1 FROM items) WHERE id = ?",
        [ids[0]],
    )
    assert shown(web.get("/feed?user=ada&author=Nanda").text) == [ids[0]]
    assert "author: Nanda" in web.get("/feed?user=ada&author=Nanda").text  # the active filter
    from hermes.topics.tag_graph import get_graph

    topic = next(c for c in get_graph(db).communities if "quantum error correction" in c.tags)
    by_topic = shown(web.get(f"/feed?user=ada&topic={topic.label}").text)
    expected = [i for i, item in zip(ids, ITEMS) if set(item["tags"]) & set(topic.tags)]
    assert sorted(by_topic) == expected and ids[4] in expected and ids[0] not in expected
    # a filter that matches nothing says so
    assert "Nothing unread" in web.get("/feed?user=ada&author=Nobody%20Here").text


def test_paging_past_the_first_page(web, db, add_items):
    add_items([{"title": f"Extra paper {k}", "summary": "language models", "days_ago": 0.5} for k in range(40)])
    first = web.get("/feed?user=ada").text
    second = web.get("/feed?user=ada&page=2").text
    assert len(shown(first)) == 30 and len(shown(second)) == 17
    assert not set(shown(first)) & set(shown(second))
    assert "1–30 of 47 unread" in first and "31–47 of 47 unread" in second
    assert 'href="/feed?user=ada&amp;page=2" rel="next"' in first
    assert 'rel="prev"' in second and 'rel="next"' not in second
    assert "No more items" in web.get("/feed?user=ada&page=9").text
    assert web.get("/feed?user=ada&page=0").status_code == 400


def test_search_covers_the_archive_in_the_personas_order(web, db, ids):
    from hermes.tools import call_tool, collect_tools

    post(web, "/click", {"user": "ada", "item_id": ids[4], "liked": "1"})
    post(web, "/read", {"user": "ada", "item_id": ids[5]})
    page = web.get("/search?user=ada&q=codes").text
    expected = call_tool(db, collect_tools()["search_feed"], {"user": "ada", "query": "codes", "limit": 50})
    assert shown(page) == [r["id"] for r in expected["results"]] and len(shown(page)) == 2
    assert "liked ✓" in page  # rated and read items are found too, marked as such
    assert 'class="badge badge-read">' in page
    assert "no item matches" in web.get("/search?user=ada&q=zzzz").text
    assert web.get("/search?user=ada").status_code == 200  # the empty form
    assert web.get("/search?user=nobody&q=x").status_code == 404


# --- feeds -------------------------------------------------------------------------------------


def test_rename_a_feed(web, db):
    r = post(web, "/feeds/1/rename", {"title": "  Machine   learning  "}, page="/feeds")
    assert r.status_code == 303 and r.headers["location"] == "/feeds#feed-1"
    assert db.execute("SELECT title FROM feeds WHERE id = 1").fetchone()[0] == "Machine learning"
    assert "Machine learning" in web.get("/feeds").text
    assert post(web, "/feeds/1/rename", {"title": " "}, page="/feeds").status_code == 400
    assert post(web, "/feeds/99/rename", {"title": "x"}, page="/feeds").status_code == 404


def test_feed_urls_wrap_between_words(web):
    page = web.get("/feeds").text
    assert "https://<wbr>export<wbr>.arxiv<wbr>.org/<wbr>rss/<wbr>cs<wbr>.LG" in page
    assert "word-break: break-all" not in web.get("/static/hermes.css").text


def test_refresh_controls(db_path, db, ids):
    from hermes.ingest.refresher import Refresher

    with client(db_path) as web:
        state = web.get("/api/refresh").json()
        assert state["ok"] and state["background"] is False and state["running"] is None
        r = post(web, "/refresh", {}, page="/feeds")
        assert r.status_code == 503 and "hermes ingest" in r.text  # no refresher in this server
        runs = []

        def command(database, every, *, due):
            runs.append(due)
            return [sys.executable, "-c", "pass"]

        refresher = Refresher(db_path, 3600, command=command, start_delay=3600).start()
        try:
            page = web.get("/feeds").text
            assert "Refresh now" in page and "every 60 min" in page
            answer = post(web, "/refresh", {}, page="/feeds", json=True).json()
            assert answer["ok"] and answer["started"] is True
            deadline = time.monotonic() + 20
            while runs != [False]:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert web.get("/api/refresh").json()["background"] is True
        finally:
            refresher.stop()


# --- the Atom feed ---------------------------------------------------------------------------


def test_the_ranked_feed_as_atom(db_path, db, add_items):
    ids = seed(db, add_items)  # the real bar here: the graph and qubit papers stay below it
    with client(db_path) as web:
        _atom_checks(web, db, ids)


def _atom_checks(web, db, ids):
    post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1"})
    post(web, "/read", {"user": "ada", "item_id": ids[1]})
    r = web.get("/feed/ada.atom")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/atom+xml")
    parsed = feedparser.parse(r.content)
    assert not parsed.bozo and parsed.version == "atom10"
    assert parsed.feed.title == "hermes · ada"
    links = [e.link for e in parsed.entries]
    assert ITEMS[0]["url"] not in links and ITEMS[1]["url"] not in links  # rated, read
    assert 0 < len(parsed.entries) < len(ITEMS) - 2  # only above the persona's bar
    first = parsed.entries[0]
    assert "why:" in first.summary and first.id.startswith("urn:hermes:item:")
    assert web.get("/feed/nobody.atom").status_code == 404
    assert clicks(db) == [(1, ids[0], "like", "ui")]  # reading the feed wrote nothing


def test_atom_entries_are_text_even_for_hostile_titles(web, db, add_items):
    add_items(
        [
            {
                "title": '<script>alert("x")</script> & more',
                "summary": "<b>bold</b> interpretability",
                "days_ago": 0.1,
                "url": "https://e.org/x",
            }
        ]
    )
    parsed = feedparser.parse(web.get("/feed/ada.atom").content)
    assert not parsed.bozo


def test_atom_is_loopback_only_like_every_page(db_path, ids):
    from hermes.web.server import allowed_hosts

    with client(db_path, allowed_hosts=allowed_hosts("127.0.0.1", False)) as web:
        assert web.get("/feed/ada.atom", headers={"host": "127.0.0.1:8765"}).status_code == 200
        assert web.get("/feed/ada.atom", headers={"host": "evil.example"}).status_code == 400


# --- density ----------------------------------------------------------------------------------


def test_density_is_a_preference(web):
    assert '<body class="density-auto">' in web.get("/feed?user=ada").text
    r = post(web, "/prefs", {"density": "compact", "next": "/feed?user=ada"})
    assert r.status_code == 303 and r.headers["location"] == "/feed?user=ada"
    page = web.get("/feed?user=ada").text
    assert '<body class="density-compact">' in page and 'value="comfortable"' in page
    assert post(web, "/prefs", {"density": "huge"}).status_code == 400


# --- a user trial's findings ---------------------------------------------------------------------

ATOM_NS = {"a": "http://www.w3.org/2005/Atom"}


def _atom_entries(web):
    import xml.etree.ElementTree as ET

    return {
        e.findtext("a:title", namespaces=ATOM_NS): e
        for e in ET.fromstring(web.get("/feed/ada.atom").content).findall("a:entry", ATOM_NS)
    }


@pytest.mark.parametrize(
    "enclosure, linked",
    [
        ({"url": "https://cdn.example/cover.jpg", "type": "image/jpeg", "length": 80_000}, False),
        ({"url": "https://cdn.example/ep.mp3", "type": "audio/mpeg", "length": 41_900_000}, True),
        ({"url": "https://cdn.example/ep.mp4", "type": "video/mp4", "length": None}, True),
        ({"url": "https://cdn.example/ep.m4a", "type": None, "length": None}, True),
        ({"url": "https://cdn.example/cover.png", "type": None, "length": None}, False),
    ],
)
def test_only_an_audio_or_video_enclosure_is_linked_as_the_media_file(web, add_items, enclosure, linked):
    """A newsletter's cover image showed as "▶ image · jpeg", "(the episode's file itself)"."""
    add_items(
        [
            {
                "title": "Sparse autoencoders, this week",
                "days_ago": 0.1,
                "url": "https://news.example/1",
                "enclosure": enclosure,
            }
        ]
    )
    page = web.get("/feed?user=ada").text
    assert ("media-link" in page) is linked
    assert "▶ image" not in page and "episode's file" not in page
    if linked:
        assert f'href="{enclosure["url"]}"' in page and "(the media file itself)" in page


def test_the_author_link_says_what_its_page_lists(web, db, add_items):
    """ "Everything by Alice Chen" opened a page of her unread, unrated items only."""
    add_items(
        [
            {
                "title": "Sparse autoencoders at scale",
                "days_ago": 0.1,
                "url": "https://arxiv.org/abs/2601.09999",
                "authors": ["Alice Chen"],
            }
        ]
    )
    page = web.get("/feed?user=ada").text
    assert "Everything by" not in page
    assert 'title="Unread items by Alice Chen you have not rated, from the whole archive"' in page
    assert "/feed?user=ada&amp;days=all&amp;author=Alice%20Chen" in page


def test_the_density_button_offers_the_other_density_on_every_screen(web):
    """ "auto" is compact on a phone: a lone "Compact" button there changed nothing visible."""
    page = web.get("/feed?user=ada").text  # auto: both, the stylesheet shows one
    assert re.search(r'class="[^"]*density-narrow"[^>]*value="comfortable"', page)
    assert re.search(r'class="[^"]*density-wide"[^>]*value="compact"', page)
    post(web, "/prefs", {"density": "comfortable", "next": "/feed?user=ada"})
    page = web.get("/feed?user=ada").text
    assert 'value="compact"' in page and 'value="comfortable"' not in page
    assert "density-wide" not in page  # a choice made: one button, shown everywhere


def test_atom_has_one_author_element_per_person(web, add_items):
    add_items(
        [
            {
                "title": "Sparse autoencoders, a joint paper",
                "days_ago": 0.1,
                "url": "https://arxiv.org/abs/2601.08888",
                "authors": ["Dana Kim", "Alice Chen"],
            }
        ]
    )
    entry = _atom_entries(web)["Sparse autoencoders, a joint paper"]
    assert [a.findtext("a:name", namespaces=ATOM_NS) for a in entry.findall("a:author", ATOM_NS)] == [
        "Dana Kim",
        "Alice Chen",
    ]


def test_an_atom_entry_without_a_link_still_has_an_alternate_or_content(web, add_items):
    """RFC 4287 4.1.1.1: an entry without atom:content has a rel="alternate" link (a summary
    does not count). An episode without <link> had only its rel="enclosure"."""
    add_items(
        [
            {
                "title": "Sparse autoencoders, the episode",
                "days_ago": 0.1,
                "url": None,
                "content_type": "podcast",
                "enclosure": {"url": "https://cdn.example/ep9.mp3", "type": "audio/mpeg", "length": None},
            },
            {
                "title": "Sparse autoencoders, a note without a link",
                "days_ago": 0.1,
                "url": None,
                "summary": "interpretability of language models",
            },
        ]
    )
    entries = _atom_entries(web)
    for entry in entries.values():
        alternate = entry.findall("a:link[@rel='alternate']", ATOM_NS)
        assert alternate or entry.find("a:content", ATOM_NS) is not None
    episode = entries["Sparse autoencoders, the episode"]
    assert [e.get("href") for e in episode.findall("a:link[@rel='alternate']", ATOM_NS)] == [
        "https://cdn.example/ep9.mp3"
    ]
    note = entries["Sparse autoencoders, a note without a link"]
    assert note.find("a:content", ATOM_NS).get("type") == "text"
    assert "why:" in note.findtext("a:content", namespaces=ATOM_NS)
    assert not feedparser.parse(web.get("/feed/ada.atom").content).bozo


def test_the_docs_describe_the_atom_feeds_bar_as_the_feeds():
    """docs/web.md said "a score above the average unread item"; the bar is the match."""
    from pathlib import Path

    import hermes.web.atom as atom

    doc = (Path(__file__).parent.parent / "docs" / "web.md").read_text()
    section = doc.split("## The ranked feed in your own reader")[1].split("\n## ")[0]
    assert "average" not in section
    assert "strong or good match" in " ".join(section.split())
    assert "match strong or good" in " ".join(atom.__doc__.split())


def test_a_date_hermes_estimated_reads_first_seen(db, db_path, add_items, no_bar):
    """An undated entry of a later fetch is dated by when hermes first saw it: the card and
    the explanation say so instead of showing it as the feed's date."""
    from hermes.storage.records import create_user

    [seen, dated] = add_items([{"title": "Undated newsletter issue"}, {"title": "Dated post"}])
    db.execute("UPDATE items SET dated_by = 'first seen' WHERE id = ?", [seen])
    create_user(db, "ada", "newsletter post")
    with client(db_path) as c:
        page = c.get("/feed?user=ada&days=all").text
        card = page.split(f'id="item-{seen}"')[1].split("</article>")[0]
        other = page.split(f'id="item-{dated}"')[1].split("</article>")[0]
        assert 'class="first-seen"' in card and "first seen " in card
        assert "first seen" not in other
        explained = c.get(f"/explain?user=ada&item_id={seen}&days=all").text
    assert "first seen " in explained
