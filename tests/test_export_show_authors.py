"""A podcast's ``itunes:author`` that is the show's own name is cited as the show, whole, in
every export: a field trial's "The Fermi Sea Podcast", whose channel names "Fermi Sea" as
author of every episode, was exported as ``author = {Sea, Fermi}`` (a person, "F. Sea" in
a style's list). A host named by the feed stays a person ("Sean Carroll" of "Sean
Carroll's Mindscape")."""

from __future__ import annotations

import json

import pytest
from hermes_corpus import export as ex
from hermes_corpus import signals as cs
from hermes_corpus.references import person

from hermes.ingest.parse import parse_feed
from hermes.storage.records import require_user


def podcast(title: str, author: str, episode: str) -> bytes:
    """A podcast's RSS as the trial's: the author on the channel only, inherited by its episode."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
<title>{title}</title><link>https://pod.example.org/</link><description>Conversations</description>
<itunes:author>{author}</itunes:author>
<item><title>{episode}</title><link>https://pod.example.org/{len(title)}.html</link>
<description>We talk about the Kondo breakdown.</description>
<enclosure url="https://pod.example.org/{len(title)}.mp3" length="30000000" type="audio/mpeg"/>
<pubDate>Thu, 03 Dec 2026 14:00:00 -0500</pubDate><guid>ep-{len(title)}</guid></item>
</channel></rss>""".encode()


SHOWS = [
    ("The Fermi Sea Podcast", "Fermi Sea", "Episode 41: Quantum criticality in heavy fermions"),
    ("Sean Carroll's Mindscape", "Sean Carroll", "Episode 12: Emergence"),
]


@pytest.fixture
def episodes(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    for k, (title, author, episode) in enumerate(SHOWS):
        parsed = parse_feed(podcast(title, author, episode), url=f"https://pod.example.org/{k}.xml")
        (item,) = parsed.items
        assert item["authors"] == [author]  # the channel's, inherited
        rows = [{**item, "content_type": "podcast", "summary": item["summary"], "guid": item["guid"]}]
        for item_id in add_items(rows, feed_url=f"https://pod.example.org/{k}.xml", feed_title=parsed.title):
            cs.favorite(db, "alice", item_id)
    return db


def export(db, fmt: str) -> str:
    return ex.export(db, require_user(db, "alice")["id"], fmt).text


def test_bibtex_braces_the_show_and_splits_the_host(episodes):
    import bibtexparser

    text = export(episodes, "bibtex")
    assert "author = {{Fermi Sea}}" in text and "Sea, Fermi" not in text
    assert "author = {Carroll, Sean}" in text
    assert bibtexparser.parse_string(text).failed_blocks == []


def test_ris_writes_the_show_as_one_name_and_the_host_inverted(episodes):
    import rispy

    authors = sorted(tuple(r["authors"]) for r in rispy.loads(export(episodes, "ris")))
    assert authors == [("Carroll, Sean",), ("Fermi Sea",)]


def test_csl_json_gives_the_show_as_a_literal(episodes):
    authors = sorted((json.dumps(c["author"]) for c in json.loads(export(episodes, "csl-json"))), key=len)
    assert [json.loads(a) for a in authors] == [[{"literal": "Fermi Sea"}], [{"given": "Sean", "family": "Carroll"}]]


@pytest.mark.parametrize(
    ("name", "source", "parts"),
    [
        ("Fermi Sea", "The Fermi Sea Podcast", {"literal": "Fermi Sea"}),
        ("Fermi Sea", "Fermi Sea: The Podcast", {"literal": "Fermi Sea"}),
        ("Google Research", "Google Research Blog", {"literal": "Google Research"}),
        # a host the show is not named for alone, or a show named for no one
        ("Sean Carroll", "Sean Carroll's Mindscape", {"given": "Sean", "family": "Carroll"}),
        ("Joe Rogan", "The Joe Rogan Experience", {"given": "Joe", "family": "Rogan"}),
        ("Ana Lopez", "The Fermi Sea Podcast", {"given": "Ana", "family": "Lopez"}),
        ("Ana Lopez", "The Podcast", {"given": "Ana", "family": "Lopez"}),
    ],
)
def test_a_name_that_is_its_feed_s_name_is_the_feed_s_publisher(name, source, parts):
    assert person(name, source) == parts
