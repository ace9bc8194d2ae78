"""A "<" that opens no HTML tag is a less-than sign, kept whole from the feed to every face.

A trial's arXiv math listing (fixtures/arxiv-less-than.xml: its items, as arXiv escapes them)
lost text at ingest: feedparser's sanitiser and then the HTML parser read "$0<p\\le 1$, $0<q"
as a <p> tag (0704.0054 was cut to "…, with $0"), "<x_n$. We show … $P_x(\\tau>" as a tag of
its own (0704.0215 lost a sentence, and read on plausibly) and "<c}, which …" as one that
never closed (0704.0685 lost its end). Inside TeX math every "<" is a relation; elsewhere a
"<" opens markup only before a whole tag of an element HTML names
(:mod:`hermes.text.markup`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hermes_corpus import bibtex

from hermes.config import Settings
from hermes.ingest.parse import parse_feed
from hermes.ingest.pipeline import add_feeds, run_ingest
from hermes.ingest.text import embedding_text, plain_text
from hermes.text.markup import has_markup, literal_less_than
from hermes.web.render import readable_preview, readable_summary

FIXTURE = Path(__file__).parent / "fixtures" / "arxiv-less-than.xml"


def source_abstracts() -> dict[str, str]:
    """Each item's abstract as the XML holds it (entities decoded once, as XML does)."""
    root = ET.parse(FIXTURE).getroot()
    return {
        item.findtext("link"): " ".join(item.findtext("description").split("Abstract:", 1)[1].split())
        for item in root.iter("item")
    }


@pytest.fixture
def stored(db) -> dict[str, tuple[str, str]]:
    add_feeds(db, [(str(FIXTURE), None)])
    (report,) = run_ingest(db, settings=Settings())
    assert report["status"] == "new" and report["new"] == 4, report
    return {url: (title, summary) for url, title, summary in db.execute("SELECT url, title, summary FROM items")}


def test_every_abstract_is_stored_whole(stored):
    for url, abstract in source_abstracts().items():
        assert stored[url][1] == abstract, url
    assert "with $0<p\\le 1$, $0<q\\le \\infty$. We discuss" in stored["https://arxiv.org/abs/0704.0054"][1]
    assert (
        "$x_1<...<x_n$. We show the exact asymptotics of $P_x(\\tau>t)" in stored["https://arxiv.org/abs/0704.0215"][1]
    )
    assert "{a1,...as,c |ai<c}, which contains an affirmative answer" in stored["https://arxiv.org/abs/0704.0685"][1]


def test_the_embedded_text_the_bibtex_and_the_page_carry_it(stored):
    title, summary = stored["https://arxiv.org/abs/0704.0215"]
    assert "We show the exact asymptotics" in embedding_text(title, summary)
    assert embedding_text(title, summary).endswith("in terms of the drifts")
    assert "$x_1<...<x_n$. We show the exact asymptotics" in bibtex.bib_tex(summary)
    page = str(readable_summary(summary))
    assert "x₁&lt;...&lt;xₙ. We show the exact asymptotics of Pₓ(τ&gt;t)" in page
    assert "<x" not in page  # escaped, never markup
    title, summary = stored["https://arxiv.org/abs/0704.0054"]
    assert "0&lt;p≤ 1, 0&lt;q≤ ∞. We discuss" in str(readable_summary(summary))
    assert "0<q≤ ∞. We discuss the atomic" in readable_preview(summary, 400)
    # the relations before a later ">" are no <p> tag on the page either
    assert str(readable_summary(r"with $0<p \le 1$, and $x>0$ here")) == "<p>with 0&lt;p ≤ 1, and x&gt;0 here</p>"


def rss(description: str, title: str = "t") -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>c</title><link>http://example.org/</link>'
        f"<item><title>{title}</title><link>http://example.org/1</link>"
        f"<description>{description}</description></item></channel></rss>"
    ).encode()


def atom(title: str, title_type: str, summary: str, summary_type: str) -> bytes:
    return (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>c</title><id>urn:c</id>'
        f'<entry><id>urn:1</id><title type="{title_type}">{title}</title><link href="http://example.org/1"/>'
        f'<summary type="{summary_type}">{summary}</summary></entry></feed>'
    ).encode()


def only(body: bytes) -> dict:
    (item,) = parse_feed(body, url="http://example.org/feed").items
    return item


def test_an_escaped_rss_description_and_title_keep_their_relations():
    item = only(rss("where $x_1&lt;...&lt;x_n$. We show $P(\\tau&gt;t)$ and a&lt;c} too", "Bounds for $0&lt;p&lt;1$"))
    assert item["summary"] == "where $x_1<...<x_n$. We show $P(\\tau>t)$ and a<c} too"
    assert item["title"] == "Bounds for $0<p<1$"


def test_atom_html_and_text_content_keep_their_relations():
    item = only(atom("$x&lt;y$ for q&lt;x", "html", "where $x_1&lt;...&lt;x_n$. We show $P(\\tau&gt;t)$", "html"))
    assert (item["title"], item["summary"]) == ("$x<y$ for q<x", "where $x_1<...<x_n$. We show $P(\\tau>t)$")
    # type="text": each "<" that opens no tag a character; a whole tag is markup even there
    # (feeds call HTML "text": the arXiv API's "&lt;b&gt;stellar streams&lt;/b&gt;"), dropped
    item = only(atom("a &lt;b c&gt; d", "text", "x&lt;p and &lt;script&gt;alert(1)&lt;/script&gt;", "text"))
    assert item["title"] == "a \u2039b c> d"  # a lone tag in text is text (made inert)
    assert item["summary"].startswith("x<p and") and "<script" not in item["summary"] and "</" not in item["summary"]
    # a tag closed again is HTML a feed calls text (the arXiv API's abstracts): markup
    item = only(atom("Use the &lt;b&gt; tag", "text", "We use &lt;b&gt;stellar streams&lt;/b&gt; here", "text"))
    assert (item["title"], item["summary"]) == ("Use the \u2039b> tag", "We use stellar streams here")


@pytest.mark.parametrize(
    "description",
    [
        "<![CDATA[ok <script>alert(1)</script> <img src=x onerror=alert(2)> $a<b$ and x<b>bold</b>]]>",
        "ok &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt; $a&lt;b$ and x&lt;b&gt;bold&lt;/b&gt;",
    ],
)
def test_hostile_markup_is_still_removed(description):
    summary = only(rss(description))["summary"]
    assert summary == "ok $a<b$ and xbold"  # "<b>" before a real tag name is markup, gone


def test_markup_hidden_in_math_is_never_stored_as_markup():
    # double escaped: the text "<script>" between dollars, turned into "‹" whatever its place
    for raw in (
        "$&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;$",
        "$0&amp;lt;p$ autofocus onfocus=alert(1)&amp;gt;",
        "$a&amp;lt;b$ $x onfocus=alert(1) autofocus y&amp;gt;z$",
        "$&amp;lt;img src=x onerror=alert(1)&amp;gt;$",
    ):
        text = plain_text(raw)
        assert "\u2039" in text and "<script" not in text and "<p" not in text and "<b" not in text, text
        assert not has_markup(text)


def test_only_a_whole_tag_of_a_known_element_is_markup():
    assert literal_less_than("a<b>c</b> <o:p></o:p> <command>x</command> <!-- c -->") == (
        "a<b>c</b> <o:p></o:p> <command>x</command> <!-- c -->"
    )
    assert literal_less_than("x<y and z>w, n<10, <x_n$. a, c |ai<c} <p") == (
        "x&lt;y and z>w, n&lt;10, &lt;x_n$. a, c |ai&lt;c} &lt;p"
    )
    # TeX math holds no HTML: dollars around an end tag are a price's
    assert literal_less_than("costs $5</p><p>now x$") == "costs $5</p><p>now x$"
    assert plain_text("$a<b>c$") == "$a<b>c$"  # in math, even before a ">"
