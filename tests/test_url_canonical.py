"""URL canonicalisation drops only what RFC 3986 says is equivalent, and the tracking
parameters it is meant to (issue 32: ``http://www.michele.io//feed``, NetNewsWire's own test
OPML, was stored and fetched as ``http://www.michele.io``)."""

from __future__ import annotations

import pytest

from hermes.ingest.feedlist import canonical_location, same_feed_key
from hermes.ingest.text import canonical_url, remove_dot_segments, without_tracking


@pytest.mark.parametrize(
    "url, want",
    [
        ("http://www.michele.io//feed", "http://www.michele.io//feed"),
        ("https://example.org//a//b.xml?x=1", "https://example.org//a//b.xml?x=1"),
        ("HTTPS://Example.ORG:443/a/./b/../c#top", "https://example.org/a/c"),
        ("http://Example.org:8080/Feed.XML", "http://example.org:8080/Feed.XML"),
        ("https://Me:Secret@example.org/feed", "https://Me:Secret@example.org/feed"),
    ],
)
def test_a_feed_address_keeps_what_is_not_equivalent(url, want):
    assert canonical_location(url) == want


def test_two_slashes_are_two_feeds_one_spelling_of_a_host_is_one():
    assert same_feed_key("http://www.michele.io//feed") != same_feed_key("http://www.michele.io/feed")
    assert same_feed_key("http://WWW.michele.io:80//feed") == same_feed_key("http://www.michele.io//feed")


@pytest.mark.parametrize(
    "path, want",
    [
        # RFC 3986, section 5.4's examples, as paths merged with the base's "/b/c/d;p"
        ("/b/c/g", "/b/c/g"),
        ("/b/c/./g", "/b/c/g"),
        ("/b/c/../g", "/b/g"),
        ("/b/c/../../g", "/g"),
        ("/b/c/../../../g", "/g"),
        ("/b/c/g/.", "/b/c/g/"),
        ("/b/c/g/..", "/b/c/"),
        ("/b/c/./../g", "/b/g"),
        ("/b/c/g;x=1/./y", "/b/c/g;x=1/y"),
        ("mid/content=5/../6", "mid/6"),
        ("//a//b", "//a//b"),
        ("/..//x", "//x"),
    ],
)
def test_dot_segments_are_removed_as_rfc_3986_says(path, want):
    assert remove_dot_segments(path) == want


def test_an_item_link_keeps_its_path_and_parameters_as_written():
    assert (
        canonical_url("https://Blog.example.org//2024//post?id=1&flag&q=a%20b&utm_source=rss#c")
        == "https://blog.example.org//2024//post?id=1&flag&q=a%20b"
    )
    assert canonical_url("https://Me@Example.org:443/x") == "https://Me@example.org/x"
    assert without_tracking("utm_medium=x&fbclid=y") == ""
    assert without_tracking("a=%7E&b") == "a=%7E&b"
