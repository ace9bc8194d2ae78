"""Exports as Zotero's own import translators read them (issue 32), and every format read
back by the parsers researchers' tools use (the compile check: test_export_compile.py).

What the translators map (read from zotero/translators, RIS.js and BibTeX.js): RIS has no
preprint type (``UNPB`` is unknown to it, a journal article), ``MANSCPT`` is a manuscript
and ``M3`` its type; BibTeX's ``eprinttype`` + ``eprint`` become "arXiv: …" in Extra
(``archivePrefix`` is not read), ``keywords`` the tags, and its unescaping knows ``\\~{}``
but not ``\\textasciitilde``; CSL-JSON's ``article`` is a preprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hermes_corpus import export as ex
from hermes_corpus import signals as cs

from hermes.storage.records import require_user

PAPERS = [
    {
        "title": r"Quiescent galaxies at z~2 with $\boldsymbol{x}$-ray stacking",
        "arxiv_id": "2611.40001",
        "summary": "Stellar masses of 10^{10.5} M\u2299 and \u03b1 \u2243 0.3 \u2272 \u03b2.",
        "url": "https://arxiv.org/abs/2611.40001",
        "content_type": "paper",
        "tags": ["astro-ph.ga"],
        "authors": ["\u0141ukasz Kowalski", "Martin Luther King Jr.", "Johannes van der Waals"],
    },
    {
        "title": "The Gaia mission and the halo",
        "arxiv_id": "2611.40002",
        "summary": "We map the halo.",
        "url": "https://arxiv.org/abs/2611.40002",
        "content_type": "paper",
        "authors": ["Anthony G. A. Brown"],
    },
    {
        "title": "Die Alterung der Gesellschaft",
        "summary": "Wir untersuchen die Folgen der Alterung für die Rente und den Generationenvertrag.",
        "url": "https://example.org/alterung",
        "guid": "https://example.org/alterung",
        "authors": ["Elias Naumann"],
    },
    {
        "title": "Vi\u1ec7t Nam and \u4e2d\u6587 in one title",
        "url": "https://example.org/vn",
        "guid": "https://example.org/vn",
        "authors": ["heise online"],
    },
]


@pytest.fixture
def corpus(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    ids = add_items(PAPERS, feed_url="https://rss.arxiv.org/rss/astro-ph", feed_title="astro-ph")
    for item in ids[:2]:
        cs.record_progress(db, "alice", item, 1.0)
    for item in ids[2:]:
        cs.favorite(db, "alice", item)
    return db


def run(db, fmt: str) -> str:
    return ex.export(db, require_user(db, "alice")["id"], fmt).text


def test_ris_gives_zotero_a_preprint_manuscript_with_its_arxiv_id(corpus):
    import rispy

    entries = rispy.loads(run(corpus, "ris"))
    paper = entries[0]
    assert paper["type_of_reference"] == "MANSCPT" and paper["type_of_work"] == "Preprint"
    assert paper["name_of_database"] == "arXiv" and paper["accession_number"] == "arXiv:2611.40001"
    assert paper["authors"] == ["Kowalski, \u0141ukasz", "King, Martin Luther, Jr.", "van der Waals, Johannes"]
    assert "hermes-experienced" in paper["keywords"] and "hermes-saved" in entries[2]["keywords"]
    assert paper["title"] == "Quiescent galaxies at z~2 with \U0001d431-ray stacking"


def test_bibtex_carries_what_zotero_reads_and_pdflatex_typesets(corpus):
    text = run(corpus, "bibtex")
    paper, gaia, german, other = text.split("\n\n")
    assert "eprint = {2611.40001}" in paper and "eprinttype = {arxiv}" in paper
    # a title without junk for Zotero: \~{} and the Unicode math reads, not escaped commands
    assert r"title = {Quiescent galaxies at z\~{}2 with {$\mathbf{x}$}-ray stacking}" in paper
    assert "textasciitilde" not in text and "textbackslash" not in text
    assert r"author = {Kowalski, {\L}ukasz and King, Jr., Martin Luther and van der Waals, Johannes}" in paper
    assert r"{$\alpha$} {$\simeq$} 0.3 {$\lesssim$} {$\beta$}" in paper
    assert text.isascii()  # pdflatex-safe: every character as LaTeX
    assert r"title = {The {Gaia} mission and the halo}" in gaia  # sentence case keeps its capital
    assert "langid = {german}" in german and "langid" not in paper
    assert r"Vi{\^e}t {Nam} and [U+4E2D][U+6587] in one title" in other  # what fonts lack, readable
    assert "author = {{heise online}}" in other


def test_csl_json_is_a_preprint_with_every_author_and_the_facet_tags(corpus):
    items = json.loads(run(corpus, "csl-json"))
    assert items[0]["type"] == "article" and items[0]["number"] == "arXiv:2611.40001"
    assert items[0]["author"] == [
        {"given": "\u0141ukasz", "family": "Kowalski"},
        {"given": "Martin Luther", "family": "King", "suffix": "Jr."},
        {"given": "Johannes", "family": "van der Waals"},
    ]
    assert "hermes-experienced" in items[0]["keyword"] and "hermes-saved" in items[3]["keyword"]


def test_every_format_parses_back_with_the_libraries_tools_use(corpus):
    import bibtexparser
    import jsonschema
    import rispy
    from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors, SplitNameParts

    lib = bibtexparser.parse_string(
        run(corpus, "bibtex"),
        append_middleware=[LatexDecodingMiddleware(keep_math_mode=False), SeparateCoAuthors(), SplitNameParts()],
    )
    assert lib.failed_blocks == [] and len(lib.entries) == 4
    first = lib.entries[0].fields_dict
    assert [n.last for n in first["author"].value] == [["Kowalski"], ["King"], ["Waals"]]
    assert first["author"].value[0].first == ["\u0141ukasz"] and first["author"].value[1].jr == ["Jr."]
    assert "\u03b1 \u2243 0.3 \u2272 \u03b2" in first["abstract"].value
    assert len(rispy.loads(run(corpus, "ris"))) == 4
    schema = json.loads((Path(__file__).parent / "data" / "csl-data.json").read_text())
    jsonschema.validate(json.loads(run(corpus, "csl-json")), schema)
    assert len(run(corpus, "jsonl").splitlines()) == 4 and run(corpus, "markdown").count("\n## ") == 3
