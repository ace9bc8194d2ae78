"""An episode without a <link>: its address is its media file, or its guid only when the
guid is itself an absolute http(s) URL (never a bare "ep-12" resolved against the feed)."""

from __future__ import annotations

from hermes.ingest.parse import parse_feed

URL = "http://127.0.0.1:8765/podcast.xml"

PODCAST = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
<title>Loopback podcast</title><link>http://127.0.0.1:8765/</link>
<item><title>Episode 12</title><guid>ep-12</guid>
  <enclosure url="http://127.0.0.1:8765/media/ep12.mp3" type="audio/mpeg" length="100"/></item>
<item><title>Episode 13</title><guid>urn:uuid:0d3c6a3e-13</guid>
  <enclosure url="https://cdn.example.org/ep13.mp3" type="audio/mpeg" length="100"/></item>
<item><title>Episode 14</title><guid>https://show.example.org/episodes/14</guid></item>
<item><title>Episode 15</title><guid>ep-15</guid></item>
<item><title>Episode 16</title><guid isPermaLink="false">ep-16</guid></item>
<item><title>Episode 17</title><link>https://show.example.org/17</link><guid>ep-17</guid>
  <enclosure url="https://cdn.example.org/ep17.mp3" type="audio/mpeg" length="100"/></item>
</channel></rss>
"""


def by_title() -> dict[str, dict]:
    return {item["title"]: item for item in parse_feed(PODCAST, url=URL).items}


def test_bare_guid_is_no_link_the_enclosure_is():
    items = by_title()
    assert items["Episode 12"]["url"] == "http://127.0.0.1:8765/media/ep12.mp3"
    assert items["Episode 13"]["url"] == "https://cdn.example.org/ep13.mp3"


def test_guid_that_is_an_absolute_url_stands_in_for_the_link():
    assert by_title()["Episode 14"]["url"] == "https://show.example.org/episodes/14"


def test_without_link_or_media_a_bare_guid_gives_no_link():
    items = by_title()
    assert items["Episode 15"]["url"] is None
    assert items["Episode 16"]["url"] is None
    assert all("127.0.0.1:8765/ep-" not in (item["url"] or "") for item in items.values())


def test_a_real_link_wins_and_guids_stay_distinct():
    items = by_title()
    assert items["Episode 17"]["url"] == "https://show.example.org/17"
    assert len({item["guid"] for item in items.values()}) == len(items)


def test_a_malformed_url_as_guid_is_no_link_and_no_failure():
    """feedparser's corpus has a guid "http://[…" that urlsplit refuses (Invalid IPv6 URL):
    the feed still parses, and that guid is no address."""
    feed = PODCAST.replace(b"<guid>ep-15</guid>", b"<guid>http://[not-an-address/15</guid>")
    items = {item["title"]: item for item in parse_feed(feed, url=URL).items}
    assert items["Episode 15"]["url"] is None and len(items) == 6
