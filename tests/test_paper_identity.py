"""Only a paper's own source updates what is stored for it (issue 32): arXiv's listings and
API; another feed naming the paper brings its own item, and an item that merely links an
arXiv id or DOI does not make save_item answer "already stored" without asking."""

from __future__ import annotations

import json

import pytest
from hermes_corpus import save as saving
from ingest_server import FeedServer, rss
from test_corpus_save import ARXIV_ATOM, ARXIV_QUERY, CSL

from hermes.ingest.parse import parse_feed
from hermes.ingest.provenance import speaks_for_papers
from hermes.ingest.store import store_items

LISTING = "https://rss.arxiv.org/rss/astro-ph"
AGENTS_FEED = "https://feeds.example.net/papers.xml"


def feed(db, url: str) -> int:
    db.execute("INSERT INTO feeds (url, title) VALUES (?, ?)", [url, url])
    return db.execute("SELECT id FROM feeds WHERE url = ?", [url]).fetchone()[0]


def entry(url: str, title: str, summary: str) -> dict:
    (item,) = parse_feed(
        rss([{"title": title, "link": "https://arxiv.org/abs/2401.12345v1", "description": summary}]), url=url
    ).items
    return item


def paper(db) -> tuple:
    return db.execute("SELECT title, summary, feed_id FROM items WHERE arxiv_id = '2401.12345'").fetchone()


@pytest.mark.parametrize(
    "url, own",
    [
        (LISTING, True),
        ("https://export.arxiv.org/api/query", True),
        ("/home/me/listing.xml", True),
        (None, True),
        (AGENTS_FEED, False),
        ("https://arxiv.org.evil.example/rss", False),
    ],
)
def test_whose_word_counts_for_a_paper(url, own):
    assert speaks_for_papers(url) is own


def test_another_feed_cannot_rewrite_a_stored_paper(db):
    listing, other = feed(db, LISTING), feed(db, AGENTS_FEED)
    store_items(db, listing, [entry(LISTING, "Tidal streams", "The real abstract.")])
    found = store_items(db, other, [entry(AGENTS_FEED, "Totally different claims", "Made up.")])
    assert paper(db) == ("Tidal streams", "The real abstract.", listing)
    assert found.updated_ids == [] and len(found.new_ids) == 1  # its own item, linking
    linked = db.execute("SELECT arxiv_id, guid, url, content_type FROM items WHERE id = ?", found.new_ids).fetchone()
    assert linked == (None, f"{AGENTS_FEED}#arxiv:2401.12345", "https://arxiv.org/abs/2401.12345", "article")
    # the same title from another feed is the paper itself (a bridge's copy): held, unchanged
    again = store_items(db, other, [entry(AGENTS_FEED, "Tidal streams", "A shorter abstract.")])
    assert again.new_ids == [] and paper(db)[1] == "The real abstract."
    # arXiv's own listing still updates it (a replaced version)
    store_items(db, listing, [entry(LISTING, "Tidal streams", "Version two.")])
    assert paper(db)[1] == "Version two."


@pytest.fixture
def server(tmp_path):
    with FeedServer() as srv:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text(
            f'[corpus]\narxiv_api = "{srv.url("/api/query")}"\ndoi_resolver = "{srv.url("/doi/")}"\n'
        )
        yield srv


def test_an_item_linking_an_arxiv_id_is_looked_up_before_it_counts_as_stored(db, server):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    server.add(ARXIV_QUERY, body=ARXIV_ATOM, headers={"Content-Type": "application/atom+xml"})
    other = feed(db, AGENTS_FEED)
    store_items(db, other, [entry(AGENTS_FEED, "A fake title", "A fake abstract.")])
    r = saving.save(db, "alice", "2401.12345", allow_private=True, source="ui")
    assert server.log  # arXiv was asked
    assert r["title"] == "Tidal Streams as Probes of the Dark Halo" and r["facet"] == "saved"
    assert json.loads(db.execute("SELECT authors FROM items WHERE id = ?", [r["item_id"]]).fetchone()[0]) == [
        "Ana Lopez",
        "Johannes van der Waals",
    ]


def test_an_item_linking_a_doi_is_looked_up_before_it_counts_as_stored(db, server):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    server.add(
        "/doi/10.1000/xyz.42",
        body=json.dumps(CSL).encode(),
        headers={"Content-Type": "application/vnd.citationstyles.csl+json"},
    )
    other = feed(db, AGENTS_FEED)
    store_items(
        db,
        other,
        [{"guid": "post-1", "url": "https://doi.org/10.1000/xyz.42", "title": "Someone's post", "summary": "x"}],
    )
    r = saving.save(db, "alice", "10.1000/xyz.42", allow_private=True, source="ui")
    assert server.log and r["created"] and r["title"] == "A Journal Paper"
