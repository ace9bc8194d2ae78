"""Authors as their papers and feeds name them (issue 32): the full list an arXiv listing's
description carries, suffixes kept with their person, organisations never split like a
person's name."""

from __future__ import annotations

import pytest
from hermes_corpus.bibtex import _bib_name
from hermes_corpus.references import inverted, person

from hermes.ingest.parse import parse_feed
from hermes.text.authors import fuller, matches, parse_authors, surname

# An arXiv-API-to-RSS bridge as the JWST listing writes it: <author> is the first author,
# the description opens with the whole list.
JWST = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>JWST papers on arXiv</title>
<link>http://export.arxiv.org/api/query</link><description>JWST (arXiv API, as RSS)</description>
<item>
  <title>The JWST Advanced Deep Extragalactic Survey: quiescent galaxies</title>
  <link>http://arxiv.org/abs/2611.30001v1</link>
  <guid isPermaLink="false">http://arxiv.org/abs/2611.30001v1</guid>
  <author>Kevin N. Hainline</author>
  <description>&lt;p&gt;Authors: Kevin N. Hainline, Rachel S. Somerville, Sandro Tacchella, Francesco D'Eugenio&lt;/p&gt;
&lt;p&gt;We find quiescent galaxies at redshift five.&lt;/p&gt;
&lt;p&gt;Published: 2026-11-29T18:00:00Z&lt;br/&gt;PDF: &lt;a href="https://arxiv.org/pdf/2611.30001v1"&gt;pdf&lt;/a&gt;&lt;/p&gt;</description>
</item></channel></rss>"""

# The arXiv API's Atom: one <author> per person, a suffix after a comma.
ARXIV_API = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>arXiv Query</title>
<id>http://arxiv.org/api/x</id><updated>2026-11-30T00:00:00Z</updated>
<entry><id>http://arxiv.org/abs/2611.30002v1</id><updated>2026-11-29T18:00:00Z</updated>
  <published>2026-11-29T18:00:00Z</published><title>Nonviolent dynamics</title>
  <summary>An abstract.</summary>
  <author><name>Martin Luther King, Jr.</name></author>
  <author><name>Theodore Roosevelt IV</name></author>
  <author><name>Coretta Scott King</name></author>
  <link href="http://arxiv.org/abs/2611.30002v1" rel="alternate" type="text/html"/>
</entry></feed>"""


def test_the_listing_description_gives_every_author_not_the_first_alone():
    (item,) = parse_feed(JWST, url="https://example.org/jwst.xml").items
    assert item["authors"] == ["Kevin N. Hainline", "Rachel S. Somerville", "Sandro Tacchella", "Francesco D'Eugenio"]
    assert item["author"].startswith("Kevin N. Hainline, Rachel S. Somerville")
    assert matches(item["authors"], "Somerville") and "Published" not in item["summary"]


def test_the_fuller_list_wins_only_when_it_holds_every_listed_name():
    assert fuller(["A. Smith"], ["Ann Smith", "Bo Jones"]) == ["Ann Smith", "Bo Jones"]
    assert fuller(["A. Smith", "C. Wu"], ["Ann Smith", "Bo Jones", "Di Li"]) == ["A. Smith", "C. Wu"]
    assert fuller([], ["Bo Jones"]) == ["Bo Jones"]


def test_a_suffix_after_a_comma_is_its_persons_not_another_author():
    (item,) = parse_feed(ARXIV_API, url="https://export.arxiv.org/api/query").items
    assert item["authors"] == ["Martin Luther King Jr.", "Theodore Roosevelt IV", "Coretta Scott King"]
    assert parse_authors("Martin Luther King, Jr., Coretta Scott King") == [
        "Martin Luther King Jr.",
        "Coretta Scott King",
    ]


def test_an_initial_e_is_a_name_not_the_word_and():
    """A trial's "E. Schrödinger Jr." was split at its initial (Portuguese "e": and) into
    "Schrödinger Jr.", which BibTeX then cited as "Schr{\\"o}dinger, Jr., " with no given name."""
    assert parse_authors("E. Schrödinger Jr.") == ["E. Schrödinger Jr."]
    assert parse_authors("E Fermi") == ["E Fermi"]
    assert parse_authors("Ana Silva e João Santos") == ["Ana Silva", "João Santos"]
    assert _bib_name("E. Schrödinger Jr.") == r"Schr{\"o}dinger, Jr., E."


@pytest.mark.parametrize(
    "name, csl, ris, bib",
    [
        (
            "Martin Luther King Jr.",
            {"given": "Martin Luther", "family": "King", "suffix": "Jr."},
            "King, Martin Luther, Jr.",
            "King, Jr., Martin Luther",
        ),
        (
            "Søren Kierkegaard Jr.",
            {"given": "Søren", "family": "Kierkegaard", "suffix": "Jr."},
            "Kierkegaard, Søren, Jr.",
            r"Kierkegaard, Jr., S{\o}ren",
        ),  # ø as LaTeX writes it
        (
            "Theodore Roosevelt IV",
            {"given": "Theodore", "family": "Roosevelt", "suffix": "IV"},
            "Roosevelt, Theodore, IV",
            "Roosevelt, IV, Theodore",
        ),
        (
            "Johannes van der Waals",
            {"given": "Johannes", "family": "Waals", "non-dropping-particle": "van der"},
            "van der Waals, Johannes",
            "van der Waals, Johannes",
        ),
    ],
)
def test_suffixes_and_particles_are_cited_in_their_places(name, csl, ris, bib):
    assert person(name) == csl and inverted(name) == ris and _bib_name(name) == bib


def test_organisations_are_cited_and_explained_whole():
    assert person("heise online") == {"literal": "heise online"}
    assert surname("heise online") == "heise online"  # "by heise online", not "by online"
    assert surname("Kevin N. Hainline") == "Hainline"
    # a show's publisher named like its feed, not a person
    assert _bib_name("Giant Bomb", "Giant Bombcast") == "{Giant Bomb}"
    assert _bib_name("Simon Willison", "Simon Willison's Weblog") == "Willison, Simon"
    assert _bib_name("Giant Bomb") == "Bomb, Giant"  # with nothing to tell, a person's form
