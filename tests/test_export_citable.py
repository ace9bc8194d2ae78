"""A BibTeX export's entries say where their items are in every standard style: an arXiv
preprint its identifier ("arXiv:0704.0054 [math.CA]"; a trial's plain bibliography read
"Fermionic construction of tau functions and random processes, 2007." and nothing else),
printed once by biblatex too; and the citation exports tag an item with its categories and
the person's tags, not the keyphrase tagger's machine phrases."""

from __future__ import annotations

import json
import re

import pytest
from hermes_corpus import export as ex
from hermes_corpus import signals as cs
from tex_support import compile_bib, needs_tex

from hermes.storage.records import require_user

PREPRINT = {
    "title": "The Hardy-Lorentz spaces",
    "arxiv_id": "0704.0054",
    "url": "https://arxiv.org/abs/0704.0054",
    "content_type": "paper",
    "tags": ["math.ca", "math.fa"],
    "authors": ["Wael Abu-Shammala", "Alberto Torchinsky"],
}
#: an archive without subject classes, and no category at all
OTHER_PREPRINTS = [
    {"title": "Holography at finite density", "arxiv_id": "0704.0100", "content_type": "paper", "tags": ["hep-th"]},
    {"title": "Fermionic construction of tau functions", "arxiv_id": "0704.1157", "content_type": "paper"},
]


@pytest.fixture
def corpus(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    papers = add_items([PREPRINT, *OTHER_PREPRINTS], feed_url="https://rss.arxiv.org/rss/math", feed_title="math")
    post, orphan, book = add_items(
        [
            {"title": "Why SAEs", "url": "https://www.ada.example.org/saes"},
            {"title": "A page whose feed is gone", "url": "https://gone.example.org/p/1_x%20y#top"},
            {"title": "Brownian motion and stochastic calculus", "url": "https://doi.org/10.1007/978-1-4612-0949-2"},
        ],
        feed_url="https://ada.example.org/feed",
        feed_title="Ada's Lab Notes",
    )
    db.execute("UPDATE feeds SET title = NULL WHERE url = 'https://ada.example.org/feed'")
    (kept,) = add_items([{"title": "Kept", "url": "https://ada.example.org/kept"}], feed_url="https://b.example.org")
    for item in [*papers, post, orphan, book, kept]:
        cs.favorite(db, "alice", item)
    return db


def bibtex(db) -> str:
    return ex.export(db, require_user(db, "alice")["id"], "bibtex").text


def entries(bbl: str) -> dict[str, str]:
    """A biber .bbl's entries by key."""
    return {m[1]: m[0] for m in re.finditer(r"\\entry\{([^}]*)\}.*?\\endentry", bbl, re.S)}


def test_an_entry_says_where_its_item_is(corpus):
    text = bibtex(corpus)
    assert "howpublished = {arXiv:0704.0054 [math.CA]}" in text, text
    assert "eprintclass = {math.CA}" in text and "primaryClass = {math.CA}" in text
    assert "howpublished = {arXiv:0704.0100 [hep-th]}" in text
    assert "howpublished = {arXiv:0704.1157}" in text  # no category: no class
    # no feed title: the site's host ("%" and "#" of the address would break biblatex's field)
    assert "howpublished = {gone.example.org}" in text and "howpublished = {ada.example.org}" in text
    # a DOI rather than its resolver's host; biblatex prints the doi field once, as for eprint
    assert "howpublished = {doi:10.1007/978-1-4612-0949-2}" in text and "options = {doi=false}" in text
    assert "howpublished = {Test feed}" in text  # a feed's title where there is one


@pytest.mark.parametrize("style", ["plain", "unsrt", "alpha", "abbrv"])
def test_the_standard_styles_print_an_arxiv_id(corpus, tmp_path, style):
    needs_tex("bibtex")
    compile_bib(tmp_path, bibtex(corpus), "bibtex", style)
    bbl = (tmp_path / "doc.bbl").read_text(encoding="utf-8")
    assert "arXiv:0704.0054 [math.CA]" in bbl and "arXiv:0704.1157" in bbl, bbl
    assert "gone.example.org" in bbl and "doi:10.1007/978-1-4612-0949-2" in bbl, bbl
    assert "Warning" not in (tmp_path / "doc.blg").read_text(), "a style warned about a field"


def test_biblatex_prints_an_arxiv_id_once(corpus, tmp_path):
    """biblatex's misc prints howpublished and, by default, eprint: the entry's option turns
    the second off. Biber's .bbl holds every field, so what is counted is what prints the id
    as an identifier: the text fields holding it, and eprint unless the option hides it."""
    needs_tex("biber")
    compile_bib(tmp_path, bibtex(corpus), "biber", "numeric")
    entry = entries((tmp_path / "doc.bbl").read_text(encoding="utf-8"))["arxiv-0704.0054"]
    options = re.match(r"\\entry\{[^}]*\}\{misc\}\{([^}]*)\}", entry)[1]
    printed = re.findall(r"\\field\{(howpublished|note|addendum)\}\{[^}]*0704\.0054", entry)
    if "\\verb{eprint}" in entry and "eprint=false" not in options:
        printed.append("eprint")
    assert printed == ["howpublished"], (printed, options)
    assert r"\field{eprintclass}{math.CA}" in entry and r"\field{eprinttype}{arxiv}" in entry


def test_citation_exports_leave_the_taggers_keyphrases_out(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items([{**PREPRINT, "tags": ["math.ca", "my reading list", "corollary", "functional"]}])
    # what the keyphrase tagger marks: its two phrases (hermes.ingest.tagging)
    db.execute("UPDATE items SET keyphrases = ? WHERE id = ?", [json.dumps(["corollary", "functional"]), item])
    cs.favorite(db, "alice", item)
    user = require_user(db, "alice")["id"]
    bib = ex.export(db, user, "bibtex").text
    assert "keywords = {math.CA, my reading list, hermes-saved}" in bib, bib
    ris = ex.export(db, user, "ris").text
    assert [line for line in ris.splitlines() if line.startswith("KW")] == [
        "KW  - math.CA",
        "KW  - my reading list",
        "KW  - hermes-saved",
    ], ris
    (csl,) = json.loads(ex.export(db, user, "csl-json").text)
    assert csl["keyword"] == "math.CA, my reading list, hermes-saved"
    # the tools' export keeps every stored tag
    (line,) = ex.export(db, user, "jsonl").text.splitlines()
    assert "corollary" in json.loads(line)["tags"]
