"""parse_feed: what a feed entry becomes (plain text, UTC dates, ids, types, tags) and
which bodies are refused with a reason."""

from __future__ import annotations

import json

import pytest
from ingest_server import rss

from hermes.ingest.parse import ParseError, arxiv_id, parse_feed
from hermes.ingest.store import ITEM_FIELDS

URL = "https://feeds.example.org/feed.xml"


def one(body: bytes, **kw) -> dict:
    feed = parse_feed(body, url=URL, **kw)
    assert len(feed.items) == 1
    return feed.items[0]


def test_item_has_every_store_field_and_is_json_able():
    item = one(rss([{"title": "A", "link": "https://example.org/a"}]))
    assert set(ITEM_FIELDS) <= set(item)
    json.dumps(item)


def test_title_and_summary_are_plain_text():
    item = one(
        rss(
            [
                {
                    "title": "Caf&eacute; <b>bold</b> &amp; more",
                    "description": "<p>First&nbsp;para.</p><p>Second <script>alert(1)</script>para "
                    '<a href="javascript:alert(2)" onclick="x()">link</a></p>'
                    "<style>p{}</style><img src=x onerror=alert(3)>",
                    "link": "https://example.org/a",
                }
            ]
        )
    )
    assert item["title"] == "Café bold & more"
    assert item["summary"] == "First para. Second para link"


def test_list_items_and_paragraphs_do_not_run_together():
    """A blog's list read "Resample dead latents Normalise decoder columns These matter…"
    in exports and reasons: an item, heading or paragraph ended without a stop gets one."""
    item = one(
        rss(
            [
                {
                    "title": "Tricks",
                    "link": "https://example.org/t",
                    "description": "<h3>Tricks</h3><ul><li>Resample dead latents</li><li>Normalise decoder "
                    "columns</li></ul><p>These matter (a lot)</p><p>Why? See above.</p>",
                }
            ]
        )
    )
    assert item["summary"] == (
        "Tricks. Resample dead latents. Normalise decoder columns. These matter (a lot) Why? See above."
    )
    last = one(
        rss([{"title": "t", "link": "https://example.org/u", "description": "<ul><li>one</li><li>two</li></ul>"}])
    )
    assert last["summary"] == "one. two"  # nothing after the last: no stop added


def test_a_table_keeps_its_cells_apart_and_an_image_keeps_its_alt_text():
    """A trial's table read "Layer Head Role 1 4 previous token", and "Image: <img alt=…>"
    read "Image:"."""
    item = one(
        rss(
            [
                {
                    "title": "Heads",
                    "link": "https://example.org/h",
                    "description": "<p>Image: <img src='a.png' alt='Attention heads by layer'></p>"
                    "<table><tr><th>Layer</th><th>Head</th><th>Role</th></tr>"
                    "<tr><td>1</td><td>4</td><td>previous token</td></tr></table>"
                    "<p>No alt: <img src='b.png'> done</p>",
                }
            ]
        )
    )
    assert item["summary"] == (
        "Image: Attention heads by layer. Layer | Head | Role. 1 | 4 | previous token. No alt: done"
    )


def test_escaped_markup_in_text_cannot_become_a_tag():
    item = one(rss([{"title": "Using &lt;script&gt; tags", "link": "https://example.org/a"}]))
    assert "<script" not in item["title"] and "script" in item["title"]


def test_text_without_markup_skips_the_html_parser_with_the_same_result(monkeypatch):
    """plain_text's fast path (no ``<``, ``&`` or NUL) must give exactly what the parser
    path gives: random strings over the characters the parser treats specially."""
    import random
    import re

    from hermes.ingest import text

    alphabet = list("ab Z>\"'\r\n\t\u00a0é中\u200b\ufeff\x01\x0b\x0c\x1f\x7f\x85\u2028\ud800=/;:-")
    rng = random.Random(7)
    samples = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    fast = [text.plain_text(s) for s in samples]
    monkeypatch.setattr(text, "_MARKUP", re.compile(""))  # every string takes the parser
    assert [text.plain_text(s) for s in samples] == fast


def test_a_lone_surrogate_beside_markup_is_replaced_not_an_error():
    from hermes.ingest.text import plain_text

    assert plain_text("<b>broken \ud800 text</b>") == "broken ? text"


def test_published_is_utc_iso_and_none_without_a_date():
    item = one(rss([{"title": "A", "link": "https://e.org/a", "pubDate": "Mon, 02 Apr 2007 19:18:42 +0200"}]))
    assert item["published"] == "2007-04-02T17:18:42+00:00"
    # No date anywhere: the parser does not invent one (the store decides; see test_ingest_dates).
    undated = one(rss([{"title": "B", "link": "https://e.org/b"}]))
    assert undated["published"] is None


def test_guid_prefers_entry_id_then_link_then_content_hash():
    assert (
        one(rss([{"title": "A", "guid": "tag:e.org,2007:a", "link": "https://e.org/a"}]))["guid"] == "tag:e.org,2007:a"
    )
    # A bare id is only unique inside its own feed.
    bare = (
        b'<rss version="2.0"><channel><title>T</title><item><title>A</title>'
        b'<guid isPermaLink="false">42</guid></item></channel></rss>'
    )
    assert one(bare)["guid"] == f"{URL}#42"
    assert one(rss([{"title": "A", "link": "https://e.org/a"}]))["guid"] == "https://e.org/a"
    h1 = one(rss([{"title": "A", "description": "x"}]))["guid"]
    h2 = one(rss([{"title": "A", "description": "x"}]))["guid"]
    assert h1 == h2 and h1.startswith("sha256:")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("oai:arXiv.org:0704.0001v1", "0704.0001"),
        ("https://arxiv.org/abs/2401.12345v2", "2401.12345"),
        ("http://arxiv.org/pdf/2401.12345", "2401.12345"),
        ("arXiv:hep-th/9901001v3", "hep-th/9901001"),
        ("https://arxiv.org/abs/math.GT/0309136", "math.GT/0309136"),
        ("https://blog.example.org/2024.12345", None),  # numbers without arXiv are not ids
    ],
)
def test_arxiv_ids(text, expected):
    assert arxiv_id(text) == expected


def test_arxiv_item_is_a_paper_with_canonical_url_and_lowercased_categories():
    item = one(
        rss(
            [
                {
                    "title": "Paper",
                    "link": "http://arxiv.org/abs/2401.12345v2?utm_source=rss",
                    "guid": "oai:arXiv.org:2401.12345v2",
                    "description": "arXiv:2401.12345v2 Announce Type: replace Abstract: We show things.",
                    "categories": ["cs.LG", " Machine  Learning ", "cs.lg", "stat.ML"],
                }
            ]
        )
    )
    assert item["arxiv_id"] == "2401.12345" and item["guid"] == "arxiv:2401.12345"
    assert item["url"] == "https://arxiv.org/abs/2401.12345"
    assert item["content_type"] == "paper"
    assert item["tags"] == ["cs.lg", "machine learning", "stat.ml"]
    assert item["summary"] == "We show things."


def test_doi_link_is_a_paper():
    assert (
        one(rss([{"title": "A", "link": "https://doi.org/10.1103/PhysRevLett.98.010401"}]))["content_type"] == "paper"
    )


def _enclosure_feed(mime: str, url: str = "https://e.org/ep1.mp3") -> bytes:
    return (
        f'<rss version="2.0"><channel><title>P</title><item><title>Ep 1</title>'
        f'<guid isPermaLink="false">ep1</guid><link>https://e.org/1</link>'
        f'<enclosure url="{url}" length="1234" type="{mime}"/></item></channel></rss>'
    ).encode()


def test_content_type_from_enclosures():
    pod = one(_enclosure_feed("audio/mpeg"))
    assert pod["content_type"] == "podcast"
    assert pod["enclosure"] == {"url": "https://e.org/ep1.mp3", "type": "audio/mpeg", "length": 1234}
    assert one(_enclosure_feed("video/mp4", "https://e.org/v.mp4"))["content_type"] == "video"
    assert one(_enclosure_feed("", "https://e.org/ep.mp3"))["content_type"] == "podcast"  # by extension
    plain = one(rss([{"title": "A", "link": "https://e.org/a"}]))
    assert plain["content_type"] == "article" and plain["enclosure"] is None


def test_unsafe_links_are_dropped():
    item = one(_enclosure_feed("audio/mpeg", "javascript:alert(1)").replace(b"https://e.org/1", b"javascript:alert(2)"))
    assert item["url"] is None and item["enclosure"] is None


def test_atom_feed_with_html_content_and_author():
    body = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title type="html">My &lt;i&gt;blog&lt;/i&gt;</title>
<link href="https://blog.example.org/"/><id>urn:x</id><updated>2024-01-01T00:00:00Z</updated>
<entry><title>Post</title><id>urn:post:1</id><link href="/posts/1"/><updated>2024-01-02T03:04:05-05:00</updated>
<author><name>Ada &amp; Bob</name></author><category term="Tools"/>
<content type="html">&lt;p&gt;Hello &lt;code&gt;x&lt;/code&gt;&lt;/p&gt;</content></entry></feed>"""
    feed = parse_feed(body, url="https://blog.example.org/atom.xml")
    assert feed.title == "My blog" and feed.warning is None
    item = feed.items[0]
    assert item["summary"] == "Hello x" and item["author"] == "Ada & Bob"
    assert item["url"] == "https://blog.example.org/posts/1"  # resolved against the feed URL
    assert item["published"] == "2024-01-02T08:04:05+00:00" and item["tags"] == ["tools"]


def test_entries_naming_no_author_take_the_feed_s_own():
    """An Atom feed's <author> and a podcast's <itunes:author> apply to entries that name
    none (they were lost: no author in exports or author search); an RSS channel's
    managingEditor (an editor's address) does not, and an entry's own author wins."""
    atom = parse_feed(
        b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">
      <title>Blog</title><author><name>Sam Writer</name></author>
      <entry><title>Mine</title><id>urn:a</id></entry>
      <entry><title>Guest</title><id>urn:b</id><author><name>Ada Guest</name></author></entry>
      </feed>""",
        url="https://e.org/atom",
    )
    assert [(i["authors"], i["author"]) for i in atom.items] == [
        (["Sam Writer"], "Sam Writer"),
        (["Ada Guest"], "Ada Guest"),
    ]
    podcast = parse_feed(
        b"""<?xml version="1.0"?><rss version="2.0"
      xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Pod</title>
      <managingEditor>ed@e.org (Ed Itor)</managingEditor><itunes:author>Latent Hosts</itunes:author>
      <item><title>Ep 1</title><guid>e1</guid></item></channel></rss>""",
        url="https://e.org/pod",
    )
    assert podcast.items[0]["authors"] == ["Latent Hosts"]
    news = parse_feed(
        b"""<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>
      <managingEditor>ed@e.org (Ed Itor)</managingEditor>
      <item><title>Story</title><guid>s1</guid></item></channel></rss>""",
        url="https://e.org/news",
    )
    assert news.items[0]["authors"] == [] and news.items[0]["author"] is None


def test_an_episode_without_a_link_is_opened_at_its_media_file():
    podcast = parse_feed(
        b"""<?xml version="1.0"?><rss version="2.0"><channel><title>P</title>
      <item><title>Ep 1</title><guid isPermaLink="false">e1</guid>
      <enclosure url="https://cdn.e.org/ep1.mp3" type="audio/mpeg" length="100"/></item>
      <item><title>Ep 2</title><guid isPermaLink="false">e2</guid><link>https://e.org/ep2</link>
      <enclosure url="https://cdn.e.org/ep2.mp3" type="audio/mpeg" length="100"/></item>
      </channel></rss>""",
        url="https://e.org/pod",
    )
    assert [i["url"] for i in podcast.items] == ["https://cdn.e.org/ep1.mp3", "https://e.org/ep2"]
    assert podcast.items[0]["guid"] == "https://e.org/pod#e1"  # the id does not change
    cover = parse_feed(
        b"""<?xml version="1.0"?><rss version="2.0"><channel><title>N</title>
      <item><title>Issue 1</title><guid isPermaLink="false">n1</guid>
      <enclosure url="https://cdn.e.org/cover.jpg" type="image/jpeg" length="100"/></item>
      </channel></rss>""",
        url="https://e.org/news",
    )
    assert cover.items[0]["url"] is None  # a cover image is not the item


def test_a_podcast_s_own_name_is_not_an_author():
    """A trial's show "The Gradient Dispatch" (its itunes:author) became the person
    "Dispatch": "by Dispatch, whom you liked once", and one like counted three times."""
    podcast = parse_feed(
        b"""<?xml version="1.0"?><rss version="2.0"
      xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
      <title>The Gradient Dispatch</title><itunes:author>The Gradient Dispatch</itunes:author>
      <item><title>Ep 1</title><guid>e1</guid></item>
      <item><title>Ep 2</title><guid>e2</guid><itunes:author>The Gradient Dispatch</itunes:author></item>
      <item><title>Ep 3</title><guid>e3</guid><author>ana@e.org (Ana Host)</author></item>
      </channel></rss>""",
        url="https://e.org/pod",
    )
    assert [(i["authors"], i["author"]) for i in podcast.items] == [([], None), ([], None), (["Ana Host"], "Ana Host")]


def test_a_podcast_s_owner_is_not_its_host():
    """A trial: a show's <itunes:owner>, the company publishing it, signed every episode
    naming no author ("ML Hour Media", found by search_feed's author as a host); feedparser
    files the owner in the feed's authors list."""

    def parsed(owner: str, author: str, email: str = "") -> list:
        body = f"""<?xml version="1.0"?><rss version="2.0"
          xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
          <title>The Machine Learning Hour</title><itunes:author>{author}</itunes:author>
          <itunes:owner><itunes:name>{owner}</itunes:name>{email}</itunes:owner>
          <item><title>Ep 41</title><guid>e41</guid></item></channel></rss>""".encode()
        return [i["authors"] for i in parse_feed(body, url="https://e.org/pod").items]

    assert parsed("ML Hour Media", "The Machine Learning Hour") == [[]]
    assert parsed("ML Hour Media", "The Machine Learning Hour", "<itunes:email>a@e.org</itunes:email>") == [[]]
    assert parsed("ML Hour Media", "Maria Schneider") == [["Maria Schneider"]]
    assert parsed("Maria Schneider", "Maria Schneider") == [["Maria Schneider"]]


def test_html_page_is_not_a_feed():
    with pytest.raises(ParseError, match="HTML page"):
        parse_feed(b"<!DOCTYPE html><html><head><title>Hi</title></head><body>x</body></html>", url=URL)


@pytest.mark.parametrize(
    "body,reason",
    [
        (b"", "empty body"),
        (b"   \n", "empty body"),
        (b"\x00\xff\xfe garbage" * 50, "not a feed"),
        (b'{"version": "https://jsonfeed.org/version/1.1"}', "JSON Feed is not supported"),
        (b'<?xml version="1.0"?><rss version="2.0"><channel><item><title>a</tit', "malformed"),
        (b'<?xml version="1.0"?><rss version="2.0"><channel><<<<>>>', "malformed"),
    ],
)
def test_not_a_feed_raises_with_reason(body, reason):
    with pytest.raises(ParseError, match=reason):
        parse_feed(body, url=URL)


def test_a_body_that_names_a_local_file_is_not_read_from_disk(tmp_path):
    # feedparser opens a bytes argument as a path if it can; parse_feed must not let it.
    secret = tmp_path / "secret.xml"
    secret.write_bytes(rss([{"title": "secret", "link": "https://e.org/s"}]))
    with pytest.raises(ParseError):
        parse_feed(str(secret).encode(), url=URL)


def test_mis_encoded_feed_keeps_entries_with_a_warning():
    body = (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>T</title>'
        "<item><title>Caf\xe9</title><guid>g1</guid></item></channel></rss>"
    ).encode("latin-1")
    feed = parse_feed(body, url=URL)
    assert feed.items[0]["title"] == "Café"
    assert "declared as utf-8" in feed.warning


def test_declared_charset_header_is_honoured():
    body = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
        "<item><title>Gr\xfc\xdfe</title><guid>g1</guid></item></channel></rss>"
    ).encode("latin-1")
    feed = parse_feed(body, url=URL, headers={"Content-Type": "application/rss+xml; charset=iso-8859-1"})
    assert feed.items[0]["title"] == "Grüße" and feed.warning is None


def test_truncated_feed_keeps_what_it_yields_with_a_warning():
    body = rss([{"title": "A", "link": "https://e.org/a"}, {"title": "B", "link": "https://e.org/b"}])
    feed = parse_feed(body[: body.index(b"<title>B")], url=URL)
    assert [i["title"] for i in feed.items] == ["A"] and feed.warning
    # A trial's cut-short local file read as "unchanged (warning: no element found)": the
    # warning says the feed was cut short and that entries after the cut are missing.
    assert "cut short" in feed.warning and "entries after that point are missing" in feed.warning
    assert "1 could be read" in feed.warning


def test_empty_valid_feed_has_no_items():
    feed = parse_feed(b'<rss version="2.0"><channel><title>Quiet</title></channel></rss>', url=URL)
    assert feed.title == "Quiet" and feed.items == []


def test_duplicate_entries_within_a_feed_are_collapsed():
    body = rss([{"title": "A", "guid": "tag:x,1:a"}, {"title": "A again", "guid": "tag:x,1:a"}])
    assert len(parse_feed(body, url=URL).items) == 1


def test_the_full_text_wins_over_a_teaser_summary():
    """A trial's newsletter gave "Sparse autoencoders are now st" as its description and the
    whole post in content:encoded; only the teaser was ranked, searched and shown."""
    post = "<p>" + "Sparse autoencoders are now standard for interpretability. " * 20 + "</p>"
    rss_doc = (
        b'<?xml version="1.0"?><rss version="2.0" '
        b'xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>N</title>'
        b"<item><title>SAEs</title><link>https://n.example/1</link>"
        b"<description>Sparse autoencoders are now st</description>"
        b"<content:encoded><![CDATA[" + post.encode() + b"]]></content:encoded></item>"
        b"<item><title>Same</title><link>https://n.example/2</link>"
        b"<description>A whole summary of the post, nearly as long as it.</description>"
        b"<content:encoded><![CDATA[<p>A whole summary of the post, as long as it.</p>]]>"
        b"</content:encoded></item></channel></rss>"
    )
    items = {i["title"]: i for i in parse_feed(rss_doc, url="https://n.example/feed").items}
    assert items["SAEs"]["summary"].startswith("Sparse autoencoders are now standard")
    assert len(items["SAEs"]["summary"]) > 1000
    assert items["Same"]["summary"] == "A whole summary of the post, nearly as long as it."
    atom = (
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>B</title>'
        b"<entry><title>Dashboards</title><id>tag:b,1</id><link href='https://b.example/1'/>"
        b"<summary>Feature dashboards.</summary><content type='html'>"
        + ("&lt;p&gt;" + "Understanding SAE latents with feature dashboards. " * 10 + "&lt;/p&gt;").encode()
        + b"</content></entry></feed>"
    )
    [entry] = parse_feed(atom, url="https://b.example/feed").items
    assert entry["summary"].startswith("Understanding SAE latents")
