"""OPML files as other readers write them (issue 32): a raw "&" in one URL (a Miniflux
export), ``xmlURL`` in another case, a blank ``text`` beside a ``title``, and nesting deep
enough to have ended in a RecursionError."""

from __future__ import annotations

import pytest
from hermes_feeds.opml import MAX_FOLDER_DEPTH, read_opml

from hermes.errors import InvalidInput

MINIFLUX = """<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0"><head><title>Miniflux</title></head><body>
  <outline text="Science">
    <outline title="Search" text="Search" xmlUrl="https://export.example.org/api/query?search=galaxies&max=50" htmlUrl="https://example.org/?a=1&b=2"></outline>
    <outline title="Escaped" text="Escaped" xmlUrl="https://example.org/feed?a=1&amp;b=2"></outline>
  </outline>
</body></opml>"""

NETNEWSWIRE = """<?xml version="1.0" encoding="UTF-8"?>
<opml version="1.1"><head><title>Subscriptions</title></head><body>
  <outline text=" " title="Michele" type="rss" xmlURL="http://www.michele.io//feed" HTMLURL="http://www.michele.io"/>
  <outline TEXT="Daring Fireball" type="rss" XMLURL="https://daringfireball.net/feeds/main"/>
</body></opml>"""


def write(tmp_path, text: str):
    path = tmp_path / "subscriptions.opml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_raw_ampersand_in_one_url_does_not_reject_the_file(tmp_path):
    found = read_opml(write(tmp_path, MINIFLUX)).outlines
    assert [(o.url, o.folder) for o in found] == [
        ("https://export.example.org/api/query?search=galaxies&max=50", "Science"),
        ("https://example.org/feed?a=1&b=2", "Science"),
    ]
    assert found[0].site_url == "https://example.org/?a=1&b=2"


def test_a_file_broken_otherwise_is_still_refused_saying_where(tmp_path):
    with pytest.raises(InvalidInput, match="not valid XML"):
        read_opml(write(tmp_path, MINIFLUX.replace("</outline>\n</body>", "</body>")))


def test_attribute_names_in_any_case_and_a_blank_text(tmp_path):
    found = read_opml(write(tmp_path, NETNEWSWIRE)).outlines
    assert [(o.url, o.title, o.site_url) for o in found] == [
        ("http://www.michele.io//feed", "Michele", "http://www.michele.io"),
        ("https://daringfireball.net/feeds/main", "Daring Fireball", None),
    ]


def test_deep_nesting_is_read_without_recursion(tmp_path):
    depth = 5000
    text = (
        '<?xml version="1.0"?><opml version="2.0"><body>'
        + "".join(f'<outline text="f{k}">' for k in range(depth))
        + '<outline text="Deep" xmlUrl="https://example.org/deep.xml"/>'
        + "</outline>" * depth
        + "</body></opml>"
    )
    (deep,) = read_opml(write(tmp_path, text)).outlines
    assert deep.url == "https://example.org/deep.xml"
    assert deep.folder.split(" / ") == [f"f{k}" for k in range(MAX_FOLDER_DEPTH)]
