"""The persona's Atom feed is valid for every reader (issue 32): an author on the feed, as
RFC 4287 asks when an entry names none, and no character XML cannot hold."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from hermes.web.atom import ATOM, build_atom

NS = {"a": ATOM}


def item(**kw) -> dict:
    return {
        "id": 1,
        "title": "A post",
        "url": "https://example.org/a",
        "published": "2026-11-30T10:00:00+00:00",
        "authors": [],
        "tags": [],
        "rank": 1,
        "reason": "matches your interests",
        "summary": "",
        **kw,
    }


def test_an_entry_without_an_author_leaves_the_feed_valid():
    root = ET.fromstring(build_atom({"name": "ada", "interests": "galaxies"}, [item()], "http://127.0.0.1"))
    assert root.find("a:author/a:name", NS).text == "hermes"
    (entry,) = root.findall("a:entry", NS)
    assert entry.find("a:author", NS) is None  # RFC 4287: the feed's author stands for it


def test_characters_xml_cannot_hold_are_left_out():
    body = build_atom(
        {"name": "ada", "interests": "gal\x01axies\x1b and \x0bstars"},
        [
            item(
                title="Bad \ufffe text\uffff",
                summary="con\x00trol \ud800 chars",
                authors=["Ada\x07 Lovelace"],
                reason="why\x0c",
            )
        ],
        "http://127.0.0.1",
    )
    root = ET.fromstring(body)  # expat refuses any of them: well-formed now
    assert root.find("a:subtitle", NS).text == "Ranked for ada: galaxies and stars"
    entry = root.find("a:entry", NS)
    assert entry.find("a:title", NS).text == "Bad  text"
    assert entry.find("a:author/a:name", NS).text == "Ada Lovelace"


def test_a_persona_without_interests_gets_a_subtitle_that_says_how_it_is_ranked():
    root = ET.fromstring(build_atom({"name": "theo", "interests": ""}, [item()], "http://127.0.0.1"))
    assert root.find("a:subtitle", NS).text == "Ranked for theo by its likes and dislikes"
