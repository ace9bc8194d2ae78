"""Items with no feed (a library import, a page saved by hand) are first-class in the topic
graph, the digest (tool, CLI, web) and the corpus's entity view. A trial's library import
stored 10 such items with tags; the graph then counted them as one feed called ``None`` and
read its texts with ``int('None')``, and every digest, ``hermes topics`` and the web digest
failed."""

from __future__ import annotations

import json

import pytest
from hermes_persona import library
from typer.testing import CliRunner
from web_support import client

from hermes.cli.app import build_app
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools
from hermes.topics import tag_graph, window_topics

#: more than FEED_MIN_ITEMS library entries, all with the same keywords: were they one feed,
#: those keywords would be on every item of it
N_LIBRARY = tag_graph.FEED_MIN_ITEMS + 2


def _bibtex(n: int) -> str:
    return "\n".join(
        f"@article{{walk{i},\n  title = {{Random walks in random environment, part {i}}},\n"
        f"  author = {{Doe, Jane and Roe, Rick}},\n  year = {{2019}},\n"
        f"  abstract = {{A random walk in a random environment, case {i}.}},\n"
        "  keywords = {random walk, random environment, percolation}\n}\n"
        for i in range(n)
    )


@pytest.fixture
def archive(db, add_items, no_bar):
    """A feed's recent items and a persona whose library brought feedless tagged items."""
    add_items(
        [
            {"title": f"Percolation on lattices {i}", "summary": "percolation clusters", "tags": ["percolation"]}
            for i in range(3)
        ]
        + [
            {"title": f"Random walk bounds {i}", "summary": "a random walk", "tags": ["random walk", "percolation"]}
            for i in range(3)
        ]
    )
    create_user(db, "prob", "random walks and percolation")
    done = library.import_library(db, "prob", _bibtex(N_LIBRARY))
    assert done.created == N_LIBRARY
    feedless = db.execute("SELECT count(*) FROM items WHERE feed_id IS NULL AND tags != '[]'").fetchone()[0]
    assert feedless == N_LIBRARY
    return db


def test_the_graph_counts_no_feed_for_items_without_one(archive):
    graph = tag_graph.build_graph(archive)
    assert "None" not in graph.feed_tags
    # the library's shared keywords are subjects, not the name of a feed
    assert graph.community_of("random environment") is not None
    assert graph.subject_tags(["random environment", "percolation"], None) == ["random environment", "percolation"]


def test_two_feedless_items_relate_by_a_subject_only():
    """Two items of one feed may share a window topic; two with no feed are not one feed (a
    library paper and a page saved by hand), so only a shared subject tag relates them."""
    items = [window_topics.WindowItem(i, [], feed) for i, feed in enumerate([None, None, 7, 7])]
    keys = [{"walk": "walk"}, {"knitting": "knitting"}, {"a": "a"}, {"b": "b"}]
    related = window_topics._related(items, keys)
    assert not related[0, 1]
    assert related[2, 3]
    keys[1] = {"walk": "walk"}
    assert window_topics._related(items, keys)[0, 1]


def test_digest_and_topics_tools_answer(archive):
    tools = collect_tools()
    digest = call_tool(archive, tools["digest"], {"user": "prob", "days": 36500})
    assert digest["ok"] is True, digest["message"]
    assert digest["topics"]
    communities = call_tool(archive, tools["kg_communities"], {})
    assert communities["ok"] is True, communities["message"]
    assert communities["n_communities"] >= 1


def run(db_path, *args):
    return CliRunner().invoke(build_app(), [*args, "--db", str(db_path)])


def test_cli_digest_topics_and_corpus_show(archive, db_path):
    digest = run(db_path, "digest", "prob", "--since-days", "36500")
    assert digest.exit_code == 0, digest.output
    assert "Traceback" not in digest.output and "failed unexpectedly" not in digest.output
    topics = run(db_path, "topics")
    assert topics.exit_code == 0, topics.output
    assert "Traceback" not in topics.output
    corpus = run(db_path, "corpus", "show", "prob")
    assert corpus.exit_code == 0, corpus.output
    assert "tag graph unavailable" not in corpus.output and "Traceback" not in corpus.output


def test_web_digest_shows_the_library_items_topics(archive, db_path):
    with client(db_path) as web:
        page = web.get("/digest?user=prob&days=36500")
    assert page.status_code == 200, page.text[-2000:]
    assert "Random walks in random environment" in page.text


def test_a_failed_digest_is_a_page_with_its_message(db, db_path, add_items, no_bar, monkeypatch):
    """The failure envelope carries ``saved`` and ``below_bar`` empty (``{}``): the page
    says the message (it was a 500: the template read the dict's ``items`` method)."""
    add_items([{"title": "Apple storage", "tags": ["apple", "pear"]}, {"title": "Pears", "tags": ["pear", "apple"]}])
    create_user(db, "ann", "apples")

    def broken(*args, **kwargs):
        raise RuntimeError("no graph today")

    monkeypatch.setattr(tag_graph, "build_graph", broken)
    with client(db_path) as web:
        page = web.get("/digest?user=ann")
    assert page.status_code == 200
    assert "digest failed unexpectedly (RuntimeError in plugin &#39;digest&#39;)" in page.text
    assert "no graph today" not in page.text  # the exception's text stays in the log
    assert "hermes web" in page.text


def test_a_failed_digest_at_the_cli_says_its_cause(db, db_path, add_items, no_bar, monkeypatch):
    """A person at the terminal reads the cause and where its traceback is, not a server's
    log there is none of."""
    add_items([{"title": "Apple storage", "tags": ["apple", "pear"]}, {"title": "Pears", "tags": ["pear", "apple"]}])
    create_user(db, "ann", "apples")

    def broken(*args, **kwargs):
        raise RuntimeError("no graph today")

    monkeypatch.setattr(tag_graph, "build_graph", broken)
    result = run(db_path, "digest", "ann")
    assert result.exit_code != 0
    assert "RuntimeError: no graph today in plugin 'digest'" in result.output
    assert "the traceback above has the details" in result.output
    assert "server's log" not in result.output


# --- a library entry whose like is taken back -------------------------------------------------


def test_an_unrated_library_entry_goes_with_the_next_bootstrap_reset(db, db_path, add_items, no_bar):
    """A trial: ``hermes unrate`` on an entry only the import's like held left it with no
    feed, no click and no corpus row; ``persona reset --source bootstrap`` then kept it (item
    310), a paper no feed brought that no reset would ever remove. Held by nothing, it is
    not news (no unread list shows it), and the next bootstrap reset deletes and counts it;
    an entry the corpus holds stays."""
    (feed_item,) = add_items([{"title": "A feed's paper on walks", "tags": ["walk"]}])
    create_user(db, "prob", "random walks")
    create_user(db, "bob", "random walks")
    library.import_library(db, "prob", _bibtex(3))
    walks = [r[0] for r in db.execute("SELECT id FROM items WHERE feed_id IS NULL ORDER BY id")]
    unrated, saved, kept = walks
    for item in (unrated, saved):
        result = run(db_path, "unrate", "prob", str(item))
        assert result.exit_code == 0, result.output
    assert db.execute("SELECT count(*) FROM clicks WHERE item_id IN (?, ?)", [unrated, saved]).fetchone() == (0,)
    from hermes_corpus import signals as corpus_signals

    corpus_signals.favorite(db, "prob", saved, True, source="ui")  # saved for later: the corpus holds it

    tools = collect_tools()
    for name in ("prob", "bob"):
        listed = call_tool(db, tools["list_feed"], {"user": name, "since_days": None, "limit": 50})
        ids = [i["id"] for i in listed["items"]]
        assert unrated not in ids and feed_item in ids, name
    why = call_tool(db, tools["explain_item"], {"user": "bob", "item_id": unrated})
    assert "its like was taken back: an unread list leaves it out, and the next reset" in json.dumps(why)

    dry = run(db_path, "persona", "reset", "prob", "--source", "bootstrap")
    assert "2 library entries stored as items" in dry.output, dry.output  # kept's and unrated
    done = run(db_path, "persona", "reset", "prob", "--source", "bootstrap", "--yes")
    assert done.exit_code == 0, done.output
    assert "2 library entries stored as items" in done.output
    left = {r[0] for r in db.execute("SELECT id FROM items")}
    assert unrated not in left and kept not in left
    assert saved in left and feed_item in left


def test_a_reset_of_ui_clicks_still_deletes_no_item(db, add_items):
    """The person's own like replaced the import's; resetting the ``ui`` clicks leaves the
    entry held by nothing, and it stays until a reset takes bootstrap clicks back."""
    create_user(db, "prob", "random walks")
    library.import_library(db, "prob", _bibtex(1))
    (entry,) = [r[0] for r in db.execute("SELECT id FROM items WHERE feed_id IS NULL")]
    tools = collect_tools()
    assert call_tool(db, tools["record_feedback"], {"user": "prob", "item_id": entry, "liked": True})["ok"]
    reset = call_tool(db, tools["reset_feedback"], {"name": "prob", "confirm": True, "source": "agent"})
    assert reset["ok"] and reset["deleted"]["rows"].get("items", 0) == 0
    assert db.execute("SELECT count(*) FROM items WHERE id = ?", [entry]).fetchone() == (1,)
    reset = call_tool(db, tools["reset_feedback"], {"name": "prob", "confirm": True, "source": "bootstrap"})
    assert reset["deleted"]["rows"]["items"] == 1
    assert db.execute("SELECT count(*) FROM items WHERE id = ?", [entry]).fetchone() == (0,)
