"""Authors are first-class (issue 16): parsed, normalised, a preference family, searchable."""

from __future__ import annotations

import json

import pytest
from hermes_persona.tools import search_feed
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.contract import CandidateQuery
from hermes.ranking.explain import explain
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user
from hermes.text.authors import author_key, item_authors, matches, parse_authors


@pytest.mark.parametrize(
    "raw, expected",
    [
        (
            "Lukas J. Furtak, Adi Zitrin, Ashley Plat and Brenda Frye",
            ["Lukas J. Furtak", "Adi Zitrin", "Ashley Plat", "Brenda Frye"],
        ),  # arXiv's dc:creator
        ("Authors: A. Smith, B. Jones, C. Wu et al.", ["A. Smith", "B. Jones", "C. Wu"]),
        ("Furtak, L. J.", ["L. J. Furtak"]),  # surname first
        ("jdoe@example.org (John Doe)", ["John Doe"]),  # RSS <author>
        ("Johannes van der Waals; Marie Curie", ["Johannes van der Waals", "Marie Curie"]),
        ("L.J. Furtak (STScI), A. Zitrin (BGU)", ["L. J. Furtak", "A. Zitrin"]),
        ("Lukas Furtak, L. Furtak", ["Lukas Furtak"]),  # one person spelled twice
        ("", []),
        ("   ", []),
        ("jdoe@example.org", []),
    ],
)
def test_parse_authors(raw, expected):
    assert parse_authors(raw) == expected


def test_feedparser_author_dicts_and_keys():
    assert parse_authors([{"name": "Ana Pérez"}, {"name": "Wei Chen"}, {}]) == ["Ana Pérez", "Wei Chen"]
    assert {author_key(n) for n in ("Lukas J. Furtak", "L. Furtak", "FURTAK, L.", "Lukas Fúrtak")} == {"furtak, l"}
    assert author_key("Furtak") == "furtak" and author_key("José da Silva") == "da silva, j"
    assert matches(["Lukas J. Furtak"], "furtak") and matches(["Lukas J. Furtak"], "L. Furtak")
    assert not matches(["Lukas J. Furtak"], "M. Furtak") and not matches([], "Furtak")


def test_rss_author_with_an_email_is_the_name_alone():
    """feedparser cuts "mallory@evil.example (Mallory Hacker)" into email "…@evil.exam" and
    name "ple (Mallory Hacker" (its address pattern stops early); the stored names and the
    byline must be the person, and no address is shown or exported."""
    from hermes.ingest.parse import parse_feed

    body = (
        "<rss version='2.0'><channel><title>t</title><item><title>x</title>"
        "<link>https://example.org/x</link>"
        "<author>mallory@evil.example (Mallory Hacker)</author></item></channel></rss>"
    )
    item = parse_feed(body.encode(), url="https://example.org/feed").items[0]
    assert item["authors"] == ["Mallory Hacker"]
    assert item["author"] == "Mallory Hacker"


def test_atom_authors_are_stored_as_a_list(db, tmp_path):
    from hermes.ingest.pipeline import add_feeds, run_ingest

    feed = tmp_path / "atom.xml"
    feed.write_text(
        """<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>b</title>
      <id>urn:b</id><updated>2024-01-01T00:00:00Z</updated>
      <entry><title>Post</title><id>urn:p</id><updated>2024-01-02T00:00:00Z</updated>
      <author><name>Ada Lovelace</name></author><author><name>Charles Babbage</name></author>
      <summary>Engines.</summary></entry></feed>""",
        encoding="utf-8",
    )
    add_feeds(db, [(str(feed), None)])
    run_ingest(db)
    (item_id,) = db.execute("SELECT id FROM items").fetchone()
    assert item_authors(db, item_id) == ["Ada Lovelace", "Charles Babbage"]
    assert item_authors(db, 999) == []


@pytest.fixture
def papers(db, add_items):
    """Six papers on one subject, two of them (and one more, unread) by Furtak."""
    text = "Lensing clusters magnify faint galaxies behind them in deep imaging."
    ids = add_items(
        [
            {"title": "Cluster lens one", "summary": text, "authors": ["Lukas J. Furtak", "Adi Zitrin"]},
            {"title": "Cluster lens two", "summary": text, "authors": ["L. Furtak", "Hakim Atek"]},
            {"title": "Cluster lens three", "summary": text, "authors": ["Lukas Furtak"]},
            {"title": "Cluster lens four", "summary": text, "authors": ["Rachel Bezanson"]},
            {"title": "Cluster lens five", "summary": text, "authors": ["Ivo Labbé"]},
            {"title": "Cluster lens six", "summary": text, "authors": ["M. Furtak"]},
        ]
    )
    user = create_user(db, "astro", "strong lensing by galaxy clusters")
    return ids, user


def test_liking_two_papers_by_an_author_raises_their_other_papers(db, papers):
    ids, user = papers
    before = [int(i) for i in rank(db, user, CandidateQuery(since_days=None, item_ids=tuple(ids[2:]))).item_ids]
    record_click(db, user["id"], ids[0], True, "agent")
    record_click(db, user["id"], ids[1], True, "agent")
    after = [int(i) for i in rank(db, user, CandidateQuery(since_days=None)).item_ids]
    assert after[0] == ids[2], (before, after)  # Lukas Furtak's unread paper comes first
    assert after.index(ids[5]) > 0  # M. Furtak is someone else
    payload = explain(db, user, ids[2])
    assert "by Furtak, whom you liked twice" in payload["reason"]
    people = [t for t in payload["matched_tags"] if t["kind"] == "author"]
    assert people == [
        {"key": "author:furtak, l", "kind": "author", "label": "Furtak", "score": 0.5, "likes": 2, "dislikes": 0}
    ]


def test_an_author_liked_by_a_library_import_is_not_said_to_be_liked_by_you(db, papers):
    """A trial's library import read "by Kovács, whom you liked twice": no click was theirs."""
    ids, user = papers
    record_click(db, user["id"], ids[0], True, "bootstrap")
    record_click(db, user["id"], ids[1], True, "bootstrap")
    payload = explain(db, user, ids[2])
    assert "by Furtak, liked for you twice by bootstrap" in payload["reason"]
    assert "whom you liked" not in payload["reason"]
    (furtak,) = [t for t in payload["matched_tags"] if t["kind"] == "author"]
    assert furtak["likes"] == 2 and furtak["bootstrap_likes"] == 2
    from hermes.ranking.explain_words import _author_liked

    assert _author_liked({"label": "Furtak", "likes": 3, "bootstrap_likes": 2}) == (
        "Furtak, whom you liked once (and bootstrap twice)"
    )
    assert _author_liked({"label": "Furtak", "likes": 3, "dislikes": 1, "bootstrap_likes": 2}) == (
        "Furtak (3 likes, 2 of them by bootstrap, 1 dislike)"
    )


def test_an_author_s_dislikes_are_said_beside_the_likes(db, add_items):
    """A trial read "by Author, whom you liked 10 times" of an author also disliked 8 times."""
    text = "Lensing clusters magnify faint galaxies behind them in deep imaging."
    others = [{"title": f"Galaxy survey {k}", "authors": ["Other Person"]} for k in range(3)]
    # (others in the archive: an author on more than 75% of it is named in no reason)
    ids = add_items(
        [{"title": f"Cluster lens {k}", "summary": text, "authors": ["Lukas Furtak"]} for k in range(5)] + others
    )
    user = create_user(db, "astro", "strong lensing by galaxy clusters")
    for item in ids[:3]:
        record_click(db, user["id"], item, True, "agent")
    record_click(db, user["id"], ids[3], False, "agent")
    payload = explain(db, user, ids[4])
    (furtak,) = [t for t in payload["matched_tags"] if t["kind"] == "author"]
    assert furtak["likes"] == 3 and furtak["dislikes"] == 1 and furtak["score"] > 0
    assert "by Furtak (3 likes, 1 dislike)" in " ".join(payload["phrases"])


def test_two_rated_authors_with_one_surname_are_named_in_full(db, add_items):
    """A trial read "by Author, whom you liked 3 times, and Author, whom you liked 3 times"."""
    text = "Lensing clusters magnify faint galaxies behind them in deep imaging."
    pair = ["Anna Author", "Boris Author"]
    others = [{"title": f"Galaxy survey {k}", "authors": ["Other Person"]} for k in range(2)]
    ids = add_items([{"title": f"Cluster lens {k}", "summary": text, "authors": pair} for k in range(3)] + others)
    user = create_user(db, "astro", "strong lensing by galaxy clusters")
    record_click(db, user["id"], ids[0], True, "agent")
    payload = explain(db, user, ids[1])
    assert {t["label"] for t in payload["matched_tags"] if t["kind"] == "author"} == set(pair)
    assert "by Anna Author, whom you liked once, and Boris Author" in " ".join(payload["phrases"])


def test_search_and_the_cli_filter_by_author(db, db_path, papers):
    ids, _ = papers
    every = search_feed(db, "astro", "", author="Furtak")
    assert every["ok"] and {r["id"] for r in every["results"]} == {ids[0], ids[1], ids[2], ids[5]}
    one = search_feed(db, "astro", "", author="L. Furtak")
    assert {r["id"] for r in one["results"]} == {ids[0], ids[1], ids[2]}
    assert one["results"][0]["authors"]
    words = search_feed(db, "astro", "three", author="Furtak")
    assert [r["id"] for r in words["results"]] == [ids[2]]
    nobody = search_feed(db, "astro", "", author="Nobody")
    assert nobody["ok"] and nobody["results"] == [] and "no item lists 'Nobody'" in nobody["message"]
    out = CliRunner().invoke(
        build_app(), ["persona", "search", "astro", "--author", "L. Furtak", "--db", str(db_path), "--json"]
    )
    assert out.exit_code == 0, out.output
    assert {r["id"] for r in json.loads(out.stdout)["results"]} == {ids[0], ids[1], ids[2]}


def test_an_author_is_found_by_the_base_letters_of_their_name(db, add_items):
    """A trial: ``--author Muller`` found Müller, ``--author Luczak`` not Łuczak (ł has no
    Unicode decomposition)."""
    ids = add_items(
        [
            {"title": "Random graphs", "authors": ["Tomasz Łuczak"]},
            {"title": "Lattice gases", "authors": ["Jens Nørskov"]},
            {"title": "Other paper", "authors": ["Anna Other"]},
        ]
    )
    create_user(db, "prob", "random graphs")
    assert {r["id"] for r in search_feed(db, "prob", "", author="Luczak")["results"]} == {ids[0]}
    assert {r["id"] for r in search_feed(db, "prob", "", author="T. Łuczak")["results"]} == {ids[0]}
    assert {r["id"] for r in search_feed(db, "prob", "", author="Norskov")["results"]} == {ids[1]}
    assert matches(["Tomasz Łuczak"], "luczak") and not matches(["Tomasz Łuczak"], "lucas")


def test_a_first_name_spelled_out_is_not_widened_to_its_initial(db, add_items):
    """A retrial: "Soren Bjork" found Sławomir Björk's papers too (both "bjork, s")."""
    ids = add_items(
        [
            {"title": "Loop-erased walks", "authors": ["Søren Björk"]},
            {"title": "Random matrices", "authors": ["Sławomir Björk"]},
            {"title": "Gaussian fields", "authors": ["S. Björk"]},
        ]
    )
    create_user(db, "prob", "random walks")
    assert {r["id"] for r in search_feed(db, "prob", "", author="Soren Bjork")["results"]} == {ids[0], ids[2]}
    assert {r["id"] for r in search_feed(db, "prob", "", author="S. Björk")["results"]} == set(ids)
    assert {r["id"] for r in search_feed(db, "prob", "", author="Bjork")["results"]} == set(ids)
    assert {r["id"] for r in search_feed(db, "prob", "", author="Sven Bjork")["results"]} == {ids[2]}
    nobody = search_feed(db, "prob", "", author="Anna Bjork")
    assert nobody["results"] == [] and "no item lists 'Anna Bjork'" in nobody["message"]
    # on the no-result path a folded name is known: the words find nothing, not the person
    missing = search_feed(db, "prob", "nonexistentword", author="Slawomir Bjork")
    assert missing["results"] == [] and "no item lists" not in missing["message"]


def test_the_migration_parses_existing_author_strings(db):
    from hermes.storage.migrations import m010_item_authors

    db.execute("INSERT INTO items (guid, title, author) VALUES ('g', 't', 'A. Smith and B. Jones')")
    m010_item_authors(db)  # idempotent: the column exists, the rows are parsed again
    assert json.loads(db.execute("SELECT authors FROM items").fetchone()[0]) == ["A. Smith", "B. Jones"]


def test_the_web_feed_links_authors_and_filters_by_them(db, db_path, papers):
    from web_support import client

    ids, _ = papers
    web = client(db_path)
    # no click yet and a test embedder: the papers sit below the bar, listed under the fold
    page = web.get("/feed", params={"user": "astro", "days": "all", "below": "1"}).text
    assert 'href="/feed?user=astro&amp;days=all&amp;author=Lukas%20J.%20Furtak"' in page
    only = web.get("/feed", params={"user": "astro", "days": "all", "author": "L. Furtak", "below": "1"})
    assert only.status_code == 200 and "author: L. Furtak" in only.text  # the filter chip
    assert "Cluster lens three" in only.text and "Cluster lens four" not in only.text
    assert "Cluster lens six" not in only.text  # M. Furtak


def test_the_corpus_entity_view_lists_authors(db, papers):
    import hermes_corpus.tools as cs

    ids, _ = papers
    for item_id in ids[:3]:
        cs.record_progress(db, "astro", item_id, 1.0)
    result = cs.corpus_entities(db, "astro", limit=50)
    assert result["ok"], result["message"]
    people = {e["entity"]: e for e in result["entities"] if e["kind"] == "author"}
    # Three spellings of one person are one entity, named as first seen.
    furtak = [e for name, e in people.items() if name.endswith("Furtak")]
    assert len(furtak) == 1 and furtak[0]["item_count"] == 3
    assert {"Adi Zitrin", "Hakim Atek"} <= set(people)


def test_the_corpus_page_labels_authors_as_authors_not_topics(db, db_path, papers):
    import hermes_corpus.tools as cs
    from starlette.testclient import TestClient

    from hermes.web.app import create_app

    ids, _ = papers
    for item_id in ids[:3]:
        cs.record_progress(db, "astro", item_id, 1.0)
    with TestClient(create_app(db_path)) as client:
        text = client.get("/corpus?user=astro").text
    assert "Top topics" not in text and "(tags, topics and authors)" in text
    assert '<span class="tag">by ' in text  # a person among them is marked as one


def test_a_title_before_a_name_is_not_part_of_it():
    """A trial's Atom author "Dr. Ana Lopez" was keyed "lopez, d" and an author search for
    "Ana Lopez" did not find her."""
    from hermes.text.authors import author_key, matches, parse_authors

    assert parse_authors("Dr. Ana Lopez and Prof Jane Smith") == ["Ana Lopez", "Jane Smith"]
    assert author_key(parse_authors("Dr. Ana Lopez")[0]) == author_key("Ana Lopez")
    assert matches(parse_authors("Dr. Ana Lopez"), "Ana Lopez")
    assert parse_authors("Dr.") == ["Dr"]  # only a title: kept as written


def test_a_search_typed_with_a_title_finds_the_person():
    """A trial searched --author "Dr. Karl Schmidt" as the feed spells him: the title was
    read as his first initial ("schmidt, d")."""
    from hermes.text.authors import author_key, matches

    assert author_key("Dr. Karl Schmidt") == author_key("Karl Schmidt") == "schmidt, k"
    assert matches(["Karl Schmidt"], "Dr. Karl Schmidt")
    assert not matches(["Dora Schmidt"], "Dr. Karl Schmidt")


def test_a_key_whose_clicks_cancel_out_is_not_listed_as_rated(db, add_items):
    """A trial's explain listed "Author (+0.00), paper (+0.00)": keys that moved nothing."""
    from hermes_feeds.feed_lines import explanation_lines

    text = "Lensing clusters magnify faint galaxies behind them in deep imaging."
    ids = add_items([{"title": f"Cluster lens {k}", "summary": text, "authors": ["Lukas Furtak"]} for k in range(3)])
    user = create_user(db, "astro", "strong lensing by galaxy clusters")
    record_click(db, user["id"], ids[0], True, "agent")
    record_click(db, user["id"], ids[1], False, "agent")
    payload = explain(db, user, ids[2])
    assert any(t["kind"] == "author" and round(t["score"], 2) == 0 for t in payload["matched_tags"])
    assert not any("Furtak (+0.00" in line for line in explanation_lines(payload))
