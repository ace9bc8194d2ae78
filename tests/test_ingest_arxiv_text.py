"""Clean arXiv text (issue 16): bridge-shaped descriptions, the rss.arxiv.org shape,
cross-listed and replaced papers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hermes.ingest.arxiv_text import clean_title, split_bridge
from hermes.ingest.parse import parse_feed
from hermes.ingest.pipeline import add_feeds, run_ingest

FIXTURES = Path(__file__).parent / "fixtures"
META = ("Published:", "Updated:", "Comments:", "PDF:", "arxiv.org/pdf")


def bridge_items():
    feed = parse_feed((FIXTURES / "arxiv-api-bridge.xml").read_bytes(), url="https://e.org/bridge")
    assert feed.warning is None  # well-formed, as a real bridge's output is
    return feed.items


def test_bridge_summary_starts_at_the_abstract_and_authors_go_to_the_list():
    items = bridge_items()
    assert len(items) == 24
    first = items[0]
    assert first["summary"].startswith("We discuss the results from the combined IRAC and MIPS")
    assert first["authors"] == [
        "Mateo P. Moreau",
        "Priya T. Weber",
        "Kenji Fischer",
        "Priya Haddad",
        "Elena Petrova",
    ]  # written "Authors: …"
    assert items[1]["authors"] == [
        "Ling Nakamura",
        "Carlos Fischer",
        "Ling Rossi",
        "Carlos M. Rossi",
    ]  # a bare author paragraph
    for item in items:
        assert not any(m in item["summary"] for m in META), item["summary"][-120:]
        assert not any(item["summary"].startswith(a) for a in item["authors"])
        assert item["authors"] and item["content_type"] == "paper" and item["tags"] == []
        assert item["guid"].startswith("arxiv:0704.") and item["url"].startswith("https://arxiv.org/abs/")


def test_split_bridge_plain_text_and_shapes_it_leaves_alone():
    text = (
        "Authors: A. Smith, B. Jones and C. Wu\nWe measure the thing.\nIt is big.\n"
        "Comments: 5 pages\nJournal ref: ApJ 1, 2 (2024)\nPDF: https://arxiv.org/pdf/2401.00001v2"
    )
    found = split_bridge(text, limit=4000)
    assert found.authors == "A. Smith, B. Jones and C. Wu"
    assert found.abstract == "We measure the thing. It is big." and found.comments == "5 pages"
    # An abstract whose first paragraph is a sentence is not mistaken for an author list.
    prose = "<p>We present a new survey of galaxies.</p><p>The survey covers the sky.</p>"
    assert split_bridge(prose, limit=4000) is None
    assert split_bridge("Just one paragraph of text.", limit=4000) is None
    assert clean_title("Dusty galaxies. (arXiv:2401.00001v1 [astro-ph.GA])") == "Dusty galaxies."


def test_the_rss_arxiv_org_shape_keeps_working():
    body = b"""<?xml version="1.0"?><rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"
      xmlns:arxiv="http://arxiv.org/schemas/atom"><channel><title>astro-ph updates</title>
      <link>https://arxiv.org/</link><item><title>Dusty star-forming galaxies</title>
      <link>https://arxiv.org/abs/2401.00001</link>
      <description>arXiv:2401.00001v1 Announce Type: new Abstract: We find dusty galaxies.</description>
      <guid isPermaLink="false">oai:arXiv.org:2401.00001v1</guid><category>astro-ph.GA</category>
      <pubDate>Mon, 01 Jan 2024 00:00:00 -0500</pubDate><arxiv:announce_type>new</arxiv:announce_type>
      <dc:creator>Lukas J. Furtak, Adi Zitrin, Hakim Atek</dc:creator></item></channel></rss>"""
    (item,) = parse_feed(body, url="https://rss.arxiv.org/rss/astro-ph").items
    assert item["summary"] == "We find dusty galaxies." and item["announce_type"] == "new"
    assert item["authors"] == ["Lukas J. Furtak", "Adi Zitrin", "Hakim Atek"]
    assert item["tags"] == ["astro-ph.ga"]


def official(entries: list[tuple[str, str, str, str]]) -> str:
    """An rss.arxiv.org listing: (arxiv id with version, announce type, category, abstract)."""
    items = "".join(
        f"<item><title>Paper {ident[:10]}</title><link>https://arxiv.org/abs/{ident[:10]}</link>"
        f"<description>arXiv:{ident} Announce Type: {kind} Abstract: {abstract}</description>"
        f'<guid isPermaLink="false">oai:arXiv.org:{ident}</guid><category>{cat}</category>'
        f"<pubDate>Mon, 01 Jan 2024 00:00:00 -0500</pubDate>"
        f"<arxiv:announce_type>{kind}</arxiv:announce_type><dc:creator>A. Author</dc:creator></item>"
        for ident, kind, cat, abstract in entries
    )
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom"><channel><title>listing</title>'
        f"<link>https://arxiv.org/</link>{items}</channel></rss>"
    )


def test_cross_listed_and_replaced_papers_update_the_stored_item(db, tmp_path):
    ga, co = tmp_path / "ga.xml", tmp_path / "co.xml"
    ga.write_text(
        official(
            [
                ("2401.00001v1", "new", "astro-ph.GA", "Version one of the abstract."),
                ("2401.00002v1", "new", "astro-ph.GA", "Another paper."),
            ]
        )
    )
    co.write_text(official([("2401.00001v1", "cross", "astro-ph.CO", "Version one of the abstract.")]))
    add_feeds(db, [(str(ga), "GA"), (str(co), "CO")])
    first = run_ingest(db)
    assert sum(s["new"] for s in first) == 2 and first.embedded == 2
    # the cross-listing: one of the two listings updates what the other stored (feeds are
    # stored as their fetches complete, so which one is a matter of timing)
    assert sum(s["updated"] for s in first) == 1
    rows = db.execute("SELECT id, tags, summary, embed_seq FROM items WHERE arxiv_id = '2401.00001'").fetchall()
    assert len(rows) == 1
    item_id, tags, summary, seq = rows[0]
    assert sorted(json.loads(tags)[:2]) == ["astro-ph.co", "astro-ph.ga"]

    # The next day's listing announces a replacement (v2) with a revised abstract.
    ga.write_text(official([("2401.00001v2", "replace", "astro-ph.GA", "Version two, revised.")]))
    second = run_ingest(db)
    assert sum(s["new"] for s in second) == 0 and {s["title"]: s["updated"] for s in second}["GA"] == 1
    assert second.embedded == 1  # the new text is embedded again
    rows = db.execute("SELECT id, summary, embed_seq FROM items WHERE arxiv_id = '2401.00001'").fetchall()
    assert len(rows) == 1 and rows[0][0] == item_id
    assert rows[0][1] == "Version two, revised." and rows[0][2] > seq
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == 2
    # Seeing the same version again changes nothing.
    shutil.copy(ga, tmp_path / "again.xml")
    third = run_ingest(db, feed_ids=[1])
    assert third.embedded == 0 and third[0]["updated"] == 0


# --- The user trial's bridge shapes (issue 16, "Clean arXiv text") ---------------------------

TRIAL_TAIL = "Published: 2026-11-29T23:00:00Z Comments: Accepted at ICLR 2027 PDF"
ABSTRACT = (
    "We study how the size of circuits discovered by activation patching scales with "
    "model parameters. Circuit size grows sublinearly; we fit a scaling law across 30 models."
)


def test_the_trials_paragraph_shape_loses_its_published_comments_and_pdf_lines():
    # <p>Authors: …</p><p>abstract</p><p>Published: …</p><p>Comments: …</p><p><a>PDF</a></p>
    feed = parse_feed((FIXTURES / "arxiv-bridge-paragraphs.xml").read_bytes(), url="https://e.org/bridge")
    assert [i["summary"][-25:] for i in feed.items] == [
        "use the features to steer model behaviour."[-25:],
        "a scaling law across 30 models."[-25:],
        "QM9 and discuss equivariance."[-25:],
    ]
    for item in feed.items:
        assert not any(m in item["summary"] for m in ("Published", "Comments", "PDF", "Authors"))
    assert feed.items[1]["summary"] == ABSTRACT
    assert feed.items[1]["authors"] == ["Bob Kumar", "Eve Laurent"]


@pytest.mark.parametrize(
    "html",
    [
        # run together into the abstract's paragraph (what HTML-to-text of some bridges gives)
        f"<p>Authors: Bob Kumar, Eve Laurent</p><p>{ABSTRACT} {TRIAL_TAIL}</p>",
        f"Authors: Bob Kumar, Eve Laurent<br>{ABSTRACT}<br>Published: 2026-11-29T23:00:00Z<br>"
        "Comments: Accepted at ICLR 2027<br><a href='https://arxiv.org/pdf/2611.02345v1'>PDF</a>",
        f"<p>Bob Kumar, Eve Laurent</p><p>{ABSTRACT}</p><p>Published: 2026-11-29T23:00:00Z</p>"
        "<p>Comments: Accepted at ICLR 2027</p><p><a href='https://arxiv.org/pdf/2611.02345v1'>PDF</a></p>",
        f"<p>Authors: Bob Kumar, Eve Laurent</p><p>{ABSTRACT} Published: 2026-11-29T23:00:00Z "
        "Updated: 2026-11-30T08:00:00Z Comments: Accepted at ICLR 2027 [pdf] [html]</p>",
    ],
)
def test_bridge_shapes_the_trial_found(html):
    found = split_bridge(html, limit=4000)
    assert found.abstract == ABSTRACT
    assert found.authors == "Bob Kumar, Eve Laurent"
    assert found.comments == "Accepted at ICLR 2027"
    assert found.dates["published"] == "2026-11-29T23:00:00Z"


def test_metadata_run_into_a_lone_paragraph_is_cut_too():
    found = split_bridge(f"{ABSTRACT} {TRIAL_TAIL}", limit=4000)
    assert found.abstract == ABSTRACT and found.authors is None
    assert found.dates == {"published": "2026-11-29T23:00:00Z"}


@pytest.mark.parametrize(
    "prose",
    [
        # words that look like metadata but are the abstract's own
        "We estimate the PDF",
        "The catalogue was updated: 2021-03-04 marks its last release, which we describe.",
        "We thank the referees. Published: 2020-01-01 was the first release; this is the second.",
        "Published: work on the topic is scarce. We fill the gap.",
        "We compare PDF and CDF estimators. Abstract interpretation is used throughout.",
    ],
)
def test_an_abstracts_own_words_are_never_cut(prose):
    found = split_bridge(f"<p>Authors: A. Smith, B. Jones</p><p>{prose}</p>", limit=4000)
    assert found.abstract == prose and found.dates == {}
    assert split_bridge(prose, limit=4000) is None  # one paragraph of prose: not a bridge
