"""A feed removed and subscribed again takes back its items (and the clicks on them), and a
new feed never inherits a removed feed's items."""

from __future__ import annotations

import pytest
import sqlite_utils
from feeds_cli_support import ok_json, run
from ingest_server import FeedServer
from web_support import client, token

from hermes.ingest.feedlist import sample_feed_paths
from hermes.ranking.preferences import source_key
from hermes.storage.migrations import m001_initial, m014_feed_folders, m015_removed_feed_places
from hermes.tools import call_tool, collect_tools


@pytest.fixture
def served():
    """The bundled sample feeds, served over loopback: name -> URL."""
    with FeedServer() as server:
        yield {p.stem: server.add(f"/{p.name}", body=p.read_bytes()) for p in sample_feed_paths()}


def _items(db_path, user="ann"):
    page = ok_json("feed", user, "--all", "--below-bar", "--limit", "100", "--db", db_path)
    return page["items"]


def _feed_items(db, feed_id):
    return {r[0] for r in db.execute("SELECT id FROM items WHERE feed_id = ?", [feed_id])}


def test_readding_a_removed_feed_gives_it_back_its_items_and_likes(db_path, served, db):
    blog, quantum = served["research-notes-blog"], served["arxiv-quantum-physics"]
    assert run("persona", "create", "ann", "--interests", "research notes", "--db", db_path).exit_code == 0
    first = ok_json("feeds", "add", blog, "--title", "Notes", "--db", db_path)["feed"]["id"]
    ok_json("feeds", "add", quantum, "--db", db_path)  # a later feed: the blog's id is not the last
    assert run("ingest", "--db", db_path).exit_code == 0
    blog_items = _feed_items(db, first)
    liked = min(blog_items)
    assert run("like", "ann", liked, "--db", db_path).exit_code == 0
    assert {i["source"] for i in _items(db_path) if i["id"] in blog_items} == {"Notes"}  # ranked once
    n_items = db.execute("SELECT count(*) FROM items").fetchone()[0]

    assert ok_json("feeds", "remove", first, "--yes", "--db", db_path)["removed"]
    added = run("feeds", "add", blog, "--title", "Notes again", "--db", db_path)
    assert added.exit_code == 0, added.output
    assert f"its {len(blog_items)} stored items and every rating of them are its own again" in added.output
    assert "title" not in added.output.split("It was subscribed before:")[1]  # --title won
    # its items are there: not "to load its items", nor "never fetched"
    assert "to load what it published since" in added.output and "load its items" not in added.output
    listed = run("feeds", "list", "--db", db_path).output
    assert "not fetched since it was subscribed" in listed
    assert run("ingest", "--db", db_path).exit_code == 0

    again = ok_json("feeds", "list", "--db", db_path)
    feed = next(f for f in again["feeds"] if f["title"] == "Notes again")
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == n_items  # no duplicates
    assert _feed_items(db, feed["id"]) == blog_items and feed["item_count"] == len(blog_items)
    assert again["orphaned_items"] == 0
    assert db.execute("SELECT label FROM clicks WHERE item_id = ?", [liked]).fetchall() == [("like",)]
    # The ranking (its matrix held since the first ranking) sees them as the re-added feed's:
    # the new title, and the like counted for its source key.
    ranked = [i for i in _items(db_path) if i["id"] in blog_items]
    assert ranked and {i["source"] for i in ranked} == {"Notes again"}
    why = ok_json("explain", "ann", ranked[0]["id"], "--all", "--db", db_path)
    sources = {s["key"]: s for s in why["explanation"]["evidence"]["sources"]}
    assert sources[source_key(feed["id"])]["label"] == "Notes again"
    assert sources[source_key(feed["id"])]["likes"] == 1


def test_a_new_feed_never_takes_a_removed_feeds_id(db_path, served, db):
    blog, podcast = served["research-notes-blog"], served["physics-conversations-podcast"]
    first = ok_json("feeds", "add", blog, "--db", db_path)["feed"]["id"]
    assert run("ingest", "--db", db_path).exit_code == 0
    kept = _feed_items(db, first)
    assert ok_json("feeds", "remove", first, "--yes", "--db", db_path)["removed"]
    other = ok_json("feeds", "add", podcast, "--db", db_path)["feed"]
    assert other["id"] != first and not other["items_kept"]
    assert _feed_items(db, other["id"]) == set()
    assert ok_json("feeds", "list", "--db", db_path)["orphaned_items"] == len(kept)


def test_an_opml_import_also_gives_a_removed_feed_its_items_back(db_path, served, db, tmp_path):
    blog, quantum = served["research-notes-blog"], served["arxiv-quantum-physics"]
    first = ok_json("feeds", "add", blog, "--folder", "Reading", "--db", db_path)["feed"]["id"]
    ok_json("feeds", "add", quantum, "--db", db_path)
    assert run("ingest", "--db", db_path).exit_code == 0
    kept = _feed_items(db, first)
    opml = tmp_path / "subs.opml"
    opml.write_text(f'<opml version="2.0"><body><outline text="b" xmlUrl="{blog}"/></body></opml>')
    assert ok_json("feeds", "remove", first, "--yes", "--db", db_path)["removed"]
    imported = ok_json("feeds", "import-opml", opml, "--db", db_path)
    assert imported["feed_ids"] == [first] and _feed_items(db, first) == kept
    # At the file's top level it keeps its folder; the file's title ("b") is the file's say.
    assert db.execute("SELECT title, folder FROM feeds WHERE id = ?", [first]).fetchone() == ("b", "Reading")


def test_the_web_form_readding_a_removed_feed_says_its_items_are_back(db_path, served, db, monkeypatch):
    blog, quantum = served["research-notes-blog"], served["arxiv-quantum-physics"]
    first = ok_json("feeds", "add", blog, "--db", db_path)["feed"]["id"]
    ok_json("feeds", "add", quantum, "--db", db_path)
    assert run("ingest", "--db", db_path).exit_code == 0
    kept = _feed_items(db, first)
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")  # the web form's feeds are guarded
    with client(db_path) as web:
        for path, data in ((f"/feeds/{first}/remove", {"confirm": "yes"}), ("/feeds", {"url": blog})):
            answer = web.post(path, data={"csrf_token": token(web, "/feeds"), **data}, follow_redirects=False)
            assert answer.status_code == 303
        page = web.get("/feeds").text
    assert _feed_items(db, first) == kept
    assert "not since it was subscribed" in page  # its items are there: not "never"
    assert (
        f"Feed {first} added: its items arrive with the next refresh (Refresh now fetches "
        f"it at once). It was subscribed before: its {len(kept)} stored items"
    ) in page


def test_removal_says_subscribing_again_gives_the_items_back(db_path, served):
    first = ok_json("feeds", "add", served["research-notes-blog"], "--db", db_path)["feed"]["id"]
    assert run("ingest", "--db", db_path).exit_code == 0
    removed = run("feeds", "remove", first, "--yes", "--db", db_path)
    assert "subscribing the same URL again gives them back to it" in removed.output
    assert "click" not in removed.output  # no ratings: none are said to be kept


def test_removing_a_feed_never_fetched_says_nothing_of_items_or_clicks(db_path, served):
    # The user trial: "The archive keeps its 0 items … and 0 clicks; subscribing the same URL
    # again gives them back to it."
    first = ok_json("feeds", "add", served["research-notes-blog"], "--db", db_path)["feed"]["id"]
    preview = run("feeds", "remove", first, "--db", db_path)
    assert "0 items" not in preview.output and "0 clicks" not in preview.output
    removed = run("feeds", "remove", first, "--yes", "--db", db_path)
    assert removed.exit_code == 0 and removed.output.startswith(f"Removed feed {first} (")
    assert "item" not in removed.output and "click" not in removed.output
    assert "gives them back" not in removed.output


def test_readding_restores_the_title_and_folder_the_person_gave_it(db_path, served, db):
    # The user trial: rename, remove, add again brought the feed's own title back and lost
    # the podcast's folder.
    podcast = served["physics-conversations-podcast"]
    first = ok_json("feeds", "add", podcast, "--folder", "Listening", "--db", db_path)["feed"]["id"]
    assert run("ingest", "--db", db_path).exit_code == 0
    assert run("feeds", "rename", first, "Deals $5 & up", "--db", db_path).exit_code == 0
    assert ok_json("feeds", "remove", first, "--yes", "--db", db_path)["removed"]
    added = run("feeds", "add", podcast, "--db", db_path)
    assert added.exit_code == 0, added.output
    assert f"Subscribed: [{first}] Deals $5 & up  (in Listening, " in added.output
    assert (
        "It was subscribed before: its title “Deals $5 & up” and folder “Listening” from before are back, and its"
    ) in added.output
    listed = ok_json("feeds", "list", "--db", db_path)["feeds"]
    assert [(f["id"], f["title"], f["folder"]) for f in listed] == [(first, "Deals $5 & up", "Listening")]
    assert "(in Listening)" in run("feeds", "list", "--db", db_path).output


def test_an_explicit_title_and_folder_win_over_the_remembered_ones(db_path, served):
    blog = served["research-notes-blog"]
    first = ok_json("feeds", "add", blog, "--title", "Old", "--folder", "Work", "--db", db_path)["feed"]
    assert ok_json("feeds", "remove", first["id"], "--yes", "--db", db_path)["removed"]
    again = ok_json("feeds", "add", blog, "--title", "New", "--folder", "Home", "--db", db_path)["feed"]
    assert (again["id"], again["title"], again["folder"], again["restored"]) == (first["id"], "New", "Home", [])


def test_the_mcp_message_names_what_came_back_without_quoting_it(db_path, served, db, monkeypatch):
    # A remembered title may be the feed's own text, which a tool's message never carries.
    blog = served["research-notes-blog"]
    first = ok_json("feeds", "add", blog, "--folder", "Reading", "--db", db_path)["feed"]["id"]
    assert run("feeds", "rename", first, "Mine", "--db", db_path).exit_code == 0
    assert ok_json("feeds", "remove", first, "--yes", "--db", db_path)["removed"]
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")  # add_feed guards loopback otherwise
    result = call_tool(db, collect_tools()["add_feed"], {"url": blog})
    assert result["ok"] and result["feed"]["title"] == "Mine" and result["feed"]["folder"] == "Reading"
    assert "its title and folder from before are back" in result["message"]
    assert "Mine" not in result["message"]


def test_the_migrations_add_folder_site_url_and_removed_feeds_with_their_places(tmp_path):
    db = sqlite_utils.Database(memory=True)
    m001_initial(db)
    for _ in range(2):  # a second run changes nothing
        m014_feed_folders(db)
        m015_removed_feed_places(db)
    assert {"folder", "site_url"} <= set(db["feeds"].columns_dict)
    assert set(db["removed_feeds"].columns_dict) == {"id", "url", "removed", "title", "folder", "site_url"}
