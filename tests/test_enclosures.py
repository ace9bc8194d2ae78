"""A podcast's episode file reaches every face: hermes stored the enclosure and showed it
nowhere, so a listener had no way to play an episode from the feed, the tools or the
Atom feed a reader subscribes to (a user trial)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from web_support import client

from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools

EPISODE = {
    "title": "Ep. 7: sparse autoencoders with a guest",
    "url": "https://pod.example/7",
    "content_type": "podcast",
    "summary": "We talk about sparse autoencoders.",
    "enclosure": {"url": "https://cdn.pod.example/ep7.mp3", "type": "audio/mpeg", "length": 41_900_000},
}


def _world(db, add_items):
    [episode, paper] = add_items([EPISODE, {"title": "Sparse autoencoders, a paper"}])
    create_user(db, "ada", "sparse autoencoders")
    return episode, paper


def test_list_feed_gives_the_episode_file(db, add_items, no_bar):
    episode, paper = _world(db, add_items)
    items = {
        i["id"]: i for i in call_tool(db, collect_tools()["list_feed"], {"user": "ada", "since_days": None})["items"]
    }
    assert items[episode]["enclosure"] == EPISODE["enclosure"]
    assert items[paper].get("enclosure") is None  # the compact page leaves a missing one out


def test_the_web_feed_links_the_episode_file_with_its_kind_and_size(db, db_path, add_items, no_bar):
    _world(db, add_items)
    with client(db_path) as c:
        page = c.get("/feed?user=ada&days=all").text
    assert 'class="media-link" href="https://cdn.pod.example/ep7.mp3"' in page
    assert "▶ audio · mpeg · 42 MB" in page
    assert page.count('class="media-link"') == 1  # the paper has none


def test_the_atom_feed_carries_the_enclosure(db, db_path, add_items, no_bar):
    episode, _ = _world(db, add_items)
    db.execute("UPDATE items SET published = strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now')")
    with client(db_path) as c:
        body = c.get("/feed/ada.atom").content
    ns = {"a": "http://www.w3.org/2005/Atom"}
    links = ET.fromstring(body).findall(".//a:entry/a:link[@rel='enclosure']", ns)
    assert [(e.get("href"), e.get("type"), e.get("length")) for e in links] == [
        ("https://cdn.pod.example/ep7.mp3", "audio/mpeg", "41900000")
    ]


def test_an_enclosure_that_is_not_a_web_address_is_not_linked(db, db_path, add_items, no_bar):
    add_items([{**EPISODE, "enclosure": {"url": "javascript:alert(1)", "type": "audio/mpeg", "length": None}}])
    create_user(db, "ada", "sparse autoencoders")
    with client(db_path) as c:
        page = c.get("/feed?user=ada&days=all").text
    assert "media-link" not in page and "javascript:" not in page


def test_search_and_digest_give_the_episode_file_too(db, add_items, no_bar):
    episode, _ = _world(db, add_items)
    db.execute("UPDATE items SET published = strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now')")
    tools = collect_tools()
    found = call_tool(db, tools["search_feed"], {"user": "ada", "query": "guest"})["results"]
    assert [r["enclosure"] for r in found if r["id"] == episode] == [EPISODE["enclosure"]]
    digest = call_tool(db, tools["digest"], {"user": "ada"})
    items = [i for t in digest["topics"] for i in t["items"]] + digest["unclustered"]
    assert [i["enclosure"] for i in items if i["id"] == episode] == [EPISODE["enclosure"]]


def test_an_episode_keeps_its_length_in_time():
    """``itunes:duration`` (a trial's podcast said 60:00 and hermes showed only "58 MB")."""
    from hermes.ingest.parse import duration_seconds, parse_feed

    body = b"""<?xml version="1.0"?><rss version="2.0"
        xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Pod</title>
        <item><title>Ep. 1</title><guid>e1</guid><itunes:duration>1:02:03</itunes:duration>
          <enclosure url="https://cdn.pod.example/1.mp3" type="audio/mpeg" length="5"/></item>
        <item><title>Ep. 2</title><guid>e2</guid><itunes:duration>soon</itunes:duration>
          <enclosure url="https://cdn.pod.example/2.mp3" type="audio/mpeg" length="5"/></item>
        <item><title>Cover</title><guid>e3</guid><itunes:duration>60:00</itunes:duration>
          <enclosure url="https://cdn.pod.example/3.jpg" type="image/jpeg" length="5"/></item>
        </channel></rss>"""
    items = parse_feed(body, url="https://pod.example/feed.xml").items
    assert [i["enclosure"].get("duration") for i in items] == [3723, None, None]
    assert [duration_seconds(t) for t in ("3600", "60:00", "45:30.5", "", "1:2:3:4", "-5")] == [
        3600,
        3600,
        2730,
        None,
        None,
        None,
    ]


def test_the_web_card_gives_the_episode_length(db, db_path, add_items, no_bar):
    add_items([{**EPISODE, "enclosure": {**EPISODE["enclosure"], "duration": 3723}}])
    create_user(db, "ada", "sparse autoencoders")
    with client(db_path) as c:
        page = c.get("/feed?user=ada&days=all").text
    assert "▶ audio · mpeg · 1 h 02 min · 42 MB" in page
