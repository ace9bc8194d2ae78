"""Entities a feed escaped twice are decoded once more, after the HTML is sanitised; a
relation such as "3<z<8" stays a relation (issue 32)."""

from __future__ import annotations

from hermes.ingest.parse import parse_feed
from hermes.ingest.text import plain_text

# An rss.arxiv.org-shaped listing entry whose abstract was escaped twice, as the JWST listing
# does: in the XML "&amp;amp;percnt;" is the HTML "&amp;percnt;", the text "&percnt;".
LISTING = b"""<?xml version='1.0' encoding='UTF-8'?>
<rss xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns:dc="http://purl.org/dc/elements/1.1/"
     version="2.0"><channel><title>astro-ph updates on arXiv.org</title>
<link>http://rss.arxiv.org/rss/astro-ph</link><description>astro-ph updates</description>
<item>
  <title>Quiescent galaxies at 3&amp;lt;z&amp;lt;8 with JWST</title>
  <link>https://arxiv.org/abs/2611.20001</link>
  <description>arXiv:2611.20001v1 Announce Type: new
Abstract: About 30&amp;amp;percnt; of galaxies above 10^10 M&amp;amp;odot; at 3&amp;lt;z&amp;lt;8
are quiescent &amp;amp;mdash; a sample of &amp;amp;sext; stars &amp;amp;#37; &amp;amp;#x25;.</description>
  <guid isPermaLink="false">oai:arXiv.org:2611.20001v1</guid>
  <category>astro-ph.GA</category>
  <pubDate>Wed, 25 Nov 2026 00:00:00 -0500</pubDate>
  <arxiv:announce_type>new</arxiv:announce_type>
  <dc:creator>Rachel S. Somerville, Kenji Watanabe</dc:creator>
</item></channel></rss>"""


def _item() -> dict:
    (item,) = parse_feed(LISTING, url="https://rss.arxiv.org/rss/astro-ph").items
    return item


def test_a_double_escaped_abstract_is_stored_as_its_author_wrote_it():
    summary = _item()["summary"]
    assert "30% of galaxies above 10^10 M\u2299 at 3<z<8 are quiescent \u2014" in summary
    assert "\u2736 stars % %." in summary  # &sext; (six-pointed star) and numeric references
    assert "&" not in summary


def test_a_relation_in_a_title_is_not_taken_for_a_tag():
    assert _item()["title"] == "Quiescent galaxies at 3<z<8 with JWST"
    assert plain_text("0 &lt; p &lt; 1") == "0 < p < 1"


def test_double_escaped_markup_is_text_and_never_a_tag():
    text = plain_text(
        "see &amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt; and &amp;lt;img src=x onerror=alert(2)"
    )
    assert "<script" not in text and "<img" not in text and "</" not in text
    assert "script" in text and "img src=x" in text


def test_what_only_looks_like_an_entity_is_kept():
    # no semicolon, a name HTML does not define, a prefix of a name: as written
    assert plain_text("AT&amp;T, R&amp;D; and &amp;c. &amp;ampx;") == "AT&T, R&D; and &c. &ampx;"
    # a text with no HTML at all is never decoded: it has no entities of its own
    assert plain_text("R&D;") == "R&D;"


def test_a_comment_or_closing_tag_opener_never_stays_markup():
    """The feedparser corpus stored "<!'" from an escaped "&lt;!'": nothing follows to make
    it a tag, but "<!", "</" and "<?" are never a relation either."""
    from hermes.ingest.text import _neutralised

    assert _neutralised("<!' and </b and <?x") == "\u2039!' and \u2039/b and \u2039?x"
    assert _neutralised("3<z<8") == "3<z<8"
