"""Corpus exports: every format read back by a maintained parser (bibtexparser, rispy, the
CSL-JSON schema through jsonschema), stable keys, ``--since``, paging, and the three faces
(CLI, MCP tool, web download)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hermes_corpus import bibtex, references
from hermes_corpus import export as ex
from hermes_corpus import signals as cs
from typer.testing import CliRunner

from hermes.storage.records import require_user
from hermes.tools import call_tool, collect_tools

HARD = r"Braces {x} & 50% of $5 cost #1 under_score ~tilde back\slash, Schrödinger ü"


@pytest.fixture
def corpus(db, add_items):
    """alice: a read arXiv paper, a highlighted article with hard characters, a saved DOI item."""
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    paper, article, doi_item = add_items(
        [
            {
                "title": "Stellar streams in the halo",
                "summary": "We map streams.",
                "arxiv_id": "2401.12345",
                "url": "https://arxiv.org/abs/2401.12345",
                "tags": ["astro-ph.ga", "galaxies"],
                "content_type": "paper",
            },
            {
                "title": HARD,
                "summary": "An essay.",
                "url": "https://blog.example.org/post?id=1&x=%7E",
                "guid": "https://blog.example.org/post?id=1",
            },
            {
                "title": "A journal paper",
                "guid": "doi:10.1000/xyz.42",
                "url": "https://doi.org/10.1000/xyz.42",
                "content_type": "paper",
            },
        ]
    )
    # As ingest stores them: the feed's string and the parsed list (hermes.text.authors).
    db.execute(
        "UPDATE items SET author = ?, authors = ? WHERE id = ?",
        [
            "Alice Smith, Johannes van der Waals and Bob Jones",
            json.dumps(["Alice Smith", "Johannes van der Waals", "Bob Jones"]),
            paper,
        ],
    )
    db.execute("UPDATE items SET author = ?, authors = ? WHERE id = ?", ["OpenAI", json.dumps(["OpenAI"]), article])
    cs.record_progress(db, "alice", paper, 1.0)
    cs.add_highlight(db, "alice", article, HARD, note="my comment")
    cs.add_note(db, "alice", article, "Line one\nline two")
    cs.favorite(db, "alice", doi_item)
    return db, {"paper": paper, "article": article, "doi": doi_item}


def run(db, fmt, **kw):
    return ex.export(db, require_user(db, "alice")["id"], fmt, **kw)


def keys_of(db):
    return [r["key"] for r in references.load(db, require_user(db, "alice")["id"], references.FACETS)]


def test_keys_are_stable_and_id_based(corpus, db):
    db, ids = corpus
    keys = keys_of(db)
    assert keys[0] == "arxiv-2401.12345" and keys[2] == "doi-10.1000-xyz.42"
    assert keys[1].startswith("hermes-") and len(keys[1]) == len("hermes-") + 12
    # Stable across runs and across signals that do not change the item.
    cs.add_note(db, "alice", ids["paper"], "more")
    assert keys_of(db) == keys
    assert run(db, "bibtex").text == run(db, "bibtex").text
    assert references.citation_key("hep-th/9901001", None, "g") == "arxiv-hep-th-9901001"


def test_bibtex_parses_back_with_bibtexparser(corpus):
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors, SplitNameParts

    db, ids = corpus
    text = run(db, "bibtex").text
    lib = bibtexparser.parse_string(
        text, append_middleware=[LatexDecodingMiddleware(), SeparateCoAuthors(), SplitNameParts()]
    )
    assert lib.failed_blocks == []
    entries = {e.key: e.fields_dict for e in lib.entries}
    assert list(entries) == keys_of(db)
    paper = entries["arxiv-2401.12345"]
    assert paper["title"].value == "Stellar streams in the halo"
    assert paper["eprint"].value == "2401.12345" and paper["archivePrefix"].value == "arXiv"
    assert paper["url"].value == "https://arxiv.org/abs/2401.12345"
    assert paper["abstract"].value == "We map streams."
    names = paper["author"].value
    assert [(n.first, n.von, n.last) for n in names] == [
        (["Alice"], [], ["Smith"]),
        (["Johannes"], ["van", "der"], ["Waals"]),
        (["Bob"], [], ["Jones"]),
    ]
    assert paper["year"].value == str(paper["date"].value)[:4]
    hard = next(v for k, v in entries.items() if k.startswith("hermes-"))
    # every character comes back as written, but a tilde: it is written "\~{}", which LaTeX
    # prints and Zotero's import reads as "~" (its import knows no \textasciitilde), and
    # pylatexenc reads as an accent on nothing
    read_back = HARD.replace("~", "")
    assert hard["title"].value == read_back and r"\~{}tilde" in text
    # the persona's notes in annote, Zotero's field for them: note is a citation's, printed
    assert "note" not in hard
    assert read_back in hard["annote"].value and "my comment" in hard["annote"].value
    assert "Line one\nline two" in hard["annote"].value
    assert [n.last for n in hard["author"].value] == [["OpenAI"]]
    assert entries["doi-10.1000-xyz.42"]["doi"].value == "10.1000/xyz.42"
    assert "hermes-saved" in entries["doi-10.1000-xyz.42"]["keywords"].value


def test_a_replaced_arxiv_paper_is_cited_by_the_year_of_its_first_version(db, add_items):
    """A listing of version 3 of hep-th/9901001 is dated today; the paper is from 1999."""
    import rispy

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    old, new = add_items(
        [
            {
                "title": "Old string paper",
                "arxiv_id": "hep-th/9901001",
                "content_type": "paper",
                "url": "https://arxiv.org/abs/hep-th/9901001v3",
                "published": "2026-11-30T00:00:00Z",
            },
            {
                "title": "A new paper",
                "arxiv_id": "2611.00001",
                "content_type": "paper",
                "url": "https://arxiv.org/abs/2611.00001",
                "published": "2026-11-30T00:00:00Z",
            },
        ]
    )
    cs.favorite(db, "alice", old)
    cs.favorite(db, "alice", new)
    entries = {e["title"]: e for e in rispy.loads(run(db, "ris").text)}
    assert entries["Old string paper"]["year"] == "1999"
    assert entries["Old string paper"]["date"] == "1999"
    assert entries["A new paper"]["year"] == "2026"
    assert entries["A new paper"]["date"] == "2026/11/30"
    csl = {e["title"]: e for e in json.loads(run(db, "csl-json").text)}
    assert csl["Old string paper"]["issued"] == {"date-parts": [[1999]]}
    assert "year = {1999}" in run(db, "bibtex").text


def test_an_unbalanced_brace_cannot_break_the_file(db, add_items):
    import bibtexparser

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    a, b = add_items([{"title": "Open { brace"}, {"title": "Close } brace"}])
    cs.favorite(db, "alice", a)
    cs.favorite(db, "alice", b)
    lib = bibtexparser.parse_string(run(db, "bibtex").text)
    assert lib.failed_blocks == [] and len(lib.entries) == 2


def test_ris_parses_back_with_rispy(corpus):
    import rispy

    db, ids = corpus
    entries = rispy.loads(run(db, "ris").text)
    assert [e["id"] for e in entries] == keys_of(db)
    paper = entries[0]
    assert paper["type_of_reference"] == "MANSCPT" and paper["title"] == "Stellar streams in the halo"
    assert paper["authors"] == ["Smith, Alice", "van der Waals, Johannes", "Jones, Bob"]
    assert paper["year"] == "2024"  # the year its id names, not the listing's date
    assert paper["urls"] == ["https://arxiv.org/abs/2401.12345"]
    assert "galaxies" in paper["keywords"]
    article = entries[1]
    assert article["title"] == HARD
    assert any("my comment" in n for n in article["notes"]) and "Line one line two" in " ".join(article["notes"])
    assert entries[2]["doi"] == "10.1000/xyz.42"


def test_csl_json_validates_against_the_schema(corpus):
    import jsonschema

    db, ids = corpus
    schema = json.loads((Path(__file__).parent / "data" / "csl-data.json").read_text())
    items = json.loads(run(db, "csl-json").text)
    jsonschema.validate(items, schema)
    by_id = {i["id"]: i for i in items}
    paper = by_id["arxiv-2401.12345"]
    assert paper["type"] == "article" and paper["number"] == "arXiv:2401.12345"
    # the particle in the family name: Zotero's import drops non-dropping-particle
    assert paper["author"][1] == {"given": "Johannes", "family": "van der Waals"}
    assert paper["issued"]["date-parts"][0][0] >= 2000
    assert by_id["doi-10.1000-xyz.42"]["DOI"] == "10.1000/xyz.42"
    assert next(i for i in items if i["id"].startswith("hermes-"))["author"] == [{"literal": "OpenAI"}]
    # The schema is strict (additionalProperties: false): a stray field must fail it.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{**items[0], "eprint": "x"}], schema)


def test_markdown_and_jsonl(corpus):
    db, ids = corpus
    md = run(db, "markdown").text
    assert "## [Stellar streams in the halo](<https://arxiv.org/abs/2401.12345>)" in md
    assert "> " + HARD in md and "> — my comment" in md
    lines = [json.loads(line) for line in run(db, "jsonl").text.splitlines()]
    assert [x["key"] for x in lines] == keys_of(db) and {x["op"] for x in lines} == {"upsert"}
    assert lines[1]["highlights"][0]["text"] == HARD
    assert lines[0]["authors"] == ["Alice Smith", "Johannes van der Waals", "Bob Jones"]


def test_since_exports_only_what_entered_and_jsonl_carries_removals(corpus):
    db, ids = corpus
    first = run(db, "bibtex")
    assert first.count == 3 and not first.truncated
    nothing = run(db, "bibtex", since=first.revision)
    assert nothing.count == 0 and nothing.text == ""
    cs.favorite(db, "alice", ids["doi"], on=False)  # removal
    cs.record_progress(db, "alice", ids["article"], 0.9)  # already experienced: no change
    later = run(db, "jsonl", since=first.revision)
    assert [(x["op"], x["key"]) for x in map(json.loads, later.text.splitlines())] == [("delete", "doi-10.1000-xyz.42")]
    assert later.count == 0 and later.deleted == 1
    cs.favorite(db, "alice", ids["doi"])  # back again
    again = run(db, "jsonl", since=first.revision)
    assert [(x["op"], x["key"]) for x in map(json.loads, again.text.splitlines())] == [("upsert", "doi-10.1000-xyz.42")]


def test_since_past_a_trimmed_log_says_truncated(corpus, tmp_path):
    db, ids = corpus
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "config.toml").write_text("[corpus]\nlog_retention = 2\n")
    for _ in range(3):
        cs.favorite(db, "alice", ids["doi"], on=False)
        cs.favorite(db, "alice", ids["doi"])
    r = run(db, "jsonl", since=1)
    assert r.truncated is True
    assert run(db, "jsonl", since=0).truncated is False  # a full export is complete


def test_bad_input_is_refused(corpus):
    from hermes.errors import InvalidInput

    db, ids = corpus
    for kwargs in ({"facet": "heard"}, {"since": -1}, {"since": 999}):
        with pytest.raises(InvalidInput):
            run(db, "bibtex", **kwargs)
    with pytest.raises(InvalidInput, match="unknown format"):
        run(db, "endnote")


def test_the_mcp_tool_pages_with_a_cursor(corpus):
    db, ids = corpus
    tool = collect_tools({"corpus"})["export_corpus"]
    assert tool.read_only
    whole = call_tool(db, tool, {"user": "alice", "format": "bibtex"})
    assert whole["ok"] and whole["count"] == 3 and not whole["has_more"]
    pages, since = [], 0
    while True:
        r = call_tool(db, tool, {"user": "alice", "format": "bibtex", "since": since, "max_chars": 1000})
        assert r["ok"] and r["count"] >= 1
        pages.append(r["text"])
        if not r["has_more"]:
            break
        assert "since=" in r["message"]
        since = r["next_since"]
    assert len(pages) > 1 and "\n".join(pages) == whole["text"]
    bad = call_tool(db, tool, {"user": "alice", "format": "docx"})
    assert bad["ok"] is False and "format must be one of" in bad["message"] and bad["text"] == ""
    bad = call_tool(db, tool, {"user": "alice", "max_chars": 10})
    assert bad["ok"] is False and "max_chars" in bad["message"]


def invoke(*args):
    from hermes.cli.app import build_app

    return CliRunner().invoke(build_app(), list(args))


def test_cli_export_to_stdout_and_file(corpus, db_path, tmp_path):
    db, ids = corpus
    r = invoke("corpus", "export", "alice", "--format", "bibtex", "--db", str(db_path))
    assert r.exit_code == 0, r.output
    assert r.stdout == run(db, "bibtex").text
    out = tmp_path / "alice.ris"
    r = invoke("corpus", "export", "alice", "-f", "ris", "--facet", "saved", "--out", str(out), "--db", str(db_path))
    assert r.exit_code == 0, r.output
    assert out.read_text().count("TY  - ") == 1 and "--since" in r.stdout
    r = invoke("corpus", "export", "alice", "--since", "2", "-f", "jsonl", "--db", str(db_path), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["count"] == 1
    r = invoke("corpus", "export", "alice", "-f", "docx", "--db", str(db_path))
    assert r.exit_code == 1 and "unknown format" in r.output and "Traceback" not in r.output
    r = invoke("corpus", "export", "alice", "--out", str(tmp_path / "nope" / "x.bib"), "--db", str(db_path))
    assert r.exit_code == 1 and "does not exist" in r.output


def test_web_download(corpus, db_path):
    from web_support import client

    db, ids = corpus
    with client(db_path) as c:
        r = c.get("/api/corpus/export", params={"user": "alice", "format": "csl-json"})
        assert r.status_code == 200
        assert r.headers["content-disposition"] == 'attachment; filename="hermes-alice-all.json"'
        assert json.loads(r.text)[0]["id"] == "arxiv-2401.12345"
        assert c.get("/api/corpus/export", params={"user": "nobody"}).status_code == 404
        assert c.get("/api/corpus/export", params={"user": "alice", "format": "x"}).status_code == 400
        page = c.get("/corpus", params={"user": "alice"}).text
        assert "/api/corpus/export?user=alice&amp;format=bibtex" in page


def test_two_items_sharing_a_doi_get_distinct_stable_keys(db, add_items):
    import bibtexparser

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    a, b = add_items(
        [
            {"title": "In journal feed A", "url": "https://doi.org/10.1000/same"},
            {"title": "In journal feed B", "url": "https://doi.org/10.1000/same"},
        ]
    )
    cs.favorite(db, "alice", b)
    cs.favorite(db, "alice", a)
    assert keys_of(db) == [f"doi-10.1000-same-i{b}", "doi-10.1000-same"]
    lib = bibtexparser.parse_string(run(db, "bibtex").text)
    assert lib.failed_blocks == [] and len(lib.entries) == 2


def test_organisations_and_shows_are_exported_whole_not_as_a_family_name():
    """A podcast's author "The Gradient Hour" is not Mr Hour; a person's name still splits
    (and a surname such as Press stays a surname)."""
    from hermes_corpus.references import inverted, person

    assert person("The Gradient Hour") == {"literal": "The Gradient Hour"}
    assert person("LIGO Scientific Collaboration") == {"literal": "LIGO Scientific Collaboration"}
    assert inverted("The Gradient Hour") == "The Gradient Hour"
    assert person("William H. Press") == {"given": "William H.", "family": "Press"}
    assert inverted("Lukas J. Furtak") == "Furtak, Lukas J."


# --- user-trial fixes: TeX, case, DOIs, categories, honorifics -------------------------------

MATH_TITLE = r"On the $\ell_1$ Penalty for Sparse Autoencoders"
MATH_ABSTRACT = r"We bound $\|x\|_{2}$ and the $L_1$ norm; 50% of $5 stays prose {open"


def test_math_passes_through_bibtex_and_braces_still_cannot_break_it(db, add_items):
    import bibtexparser

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    a, b = add_items(
        [
            {"title": MATH_TITLE, "summary": MATH_ABSTRACT, "arxiv_id": "2309.08600"},
            {"title": r"Unbalanced $\{x$ math } here"},
        ]
    )
    cs.favorite(db, "alice", a)
    cs.favorite(db, "alice", b)
    text = run(db, "bibtex").text
    assert r"title = {On the $\ell_1$ Penalty for Sparse Autoencoders}" in text
    assert r"$\|x\|_{2}$" in text and r"$L_1$" in text and r"\textbackslash{}ell" not in text
    assert r"50\% of \$5 stays prose \textbraceleft{}open" in text  # prose is still escaped
    # Math whose braces do not balance (BibTeX counts "\{" too) is the text it reads as,
    # escaped, so the file still parses whole: "{x", not "$\{x$" as TeX source.
    assert r"Unbalanced \{x math \} here" in text
    lib = bibtexparser.parse_string(text)
    assert lib.failed_blocks == [] and len(lib.entries) == 2


def test_title_words_whose_case_matters_are_braced_once():
    assert (
        bibtex.bib_tex("Towards 7B SAE on GPT-4 and LLaMA-2", title=True)
        == "Towards {7B} {SAE} on {GPT-4} and {LLaMA-2}"
    )
    # In a sentence-case title a capitalised word is a proper noun; not after a colon.
    assert (
        bibtex.bib_tex("Scaling laws for Transformer models: Towards sparse codes", title=True)
        == "Scaling laws for {Transformer} models: Towards sparse codes"
    )
    # Title Case capitalises every word: only the inner capitals are protected.
    assert bibtex.bib_tex("Attention Is All You Need for SAE", title=True) == "Attention Is All You Need for {SAE}"
    assert bibtex.bib_tex("$L_1$ penalties", title=True) == "{$L_1$} penalties"
    assert bibtex.bib_tex("Towards GPT-4") == "Towards GPT-4"  # abstracts are not recased by styles
    # The feed's own braces are text (escaped); the word inside is braced once, by hermes.
    assert bibtex.bib_tex("{GPT}-4 and SAE", title=True) == r"\{{GPT}\}-4 and {SAE}"


def test_arxiv_papers_carry_their_datacite_doi_and_categories_as_arxiv_spells_them(corpus):
    db, ids = corpus
    bib = run(db, "bibtex").text
    assert "doi = {10.48550/arXiv.2401.12345}" in bib
    assert "keywords = {astro-ph.GA, galaxies, hermes-experienced}" in bib
    paper = json.loads(run(db, "csl-json").text)[0]
    assert paper["DOI"] == "10.48550/arXiv.2401.12345" and "astro-ph.GA" in paper["keyword"]
    # The byline does not repeat the arXiv id as a DOI.
    assert "doi:10.48550" not in run(db, "markdown").text
    assert [
        references.arxiv_category(t)
        for t in (
            "cs.lg",
            "astro-ph.ga",
            "quant-ph",
            "stat.ml",
            "math.oc",
            "physics.optics",
            "cond-mat.mes-hall",
            "dark matter",
            "e.g",
        )
    ] == [
        "cs.LG",
        "astro-ph.GA",
        "quant-ph",
        "stat.ML",
        "math.OC",
        "physics.optics",
        "cond-mat.mes-hall",
        "dark matter",
        "e.g",
    ]


def test_honorifics_are_not_part_of_a_cited_name(db, add_items):
    from hermes_corpus.references import inverted, person

    assert person("Dr. Ana Lopez") == {"given": "Ana", "family": "Lopez"}
    assert person("Prof. Dr Ana Lopez") == {"given": "Ana", "family": "Lopez"}
    assert person("Lopez, Dr. Ana") == {"family": "Lopez", "given": "Ana"}
    assert inverted("Mrs. Bea van der Berg") == "van der Berg, Bea"
    assert person("Dr. Mrs") == {"literal": "Mrs"}  # a title alone is kept, not emptied
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items([{"title": "A talk", "authors": ["Dr. Ana Lopez"]}])
    cs.favorite(db, "alice", item)
    assert "author = {Lopez, Ana}" in run(db, "bibtex").text
    assert json.loads(run(db, "csl-json").text)[0]["author"] == [{"given": "Ana", "family": "Lopez"}]


TRIAL_TITLE = r"\emph{In vivo} calcium imaging decoded with transformers"
TRIAL_ABSTRACT = (
    r"{\em Two-photon} data from Schr\"odinger's lab \& others: 50\% faster, "
    r"in $\mathcal{O}(n^2)$ time; see \textbf{Fig.~1}."
)


@pytest.fixture
def latex_corpus(db, add_items):
    """alice: the user trial's arXiv paper, its title and abstract in LaTeX."""
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (paper,) = add_items(
        [
            {
                "title": TRIAL_TITLE,
                "summary": TRIAL_ABSTRACT,
                "arxiv_id": "2507.10003",
                "url": "https://arxiv.org/abs/2507.10003",
            }
        ]
    )
    cs.favorite(db, "alice", paper)
    return db


def test_bibtex_passes_latex_text_commands_and_accents_through(latex_corpus):
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware

    text = run(latex_corpus, "bibtex").text
    assert "title = {" + TRIAL_TITLE + "}" in text
    assert (
        r"abstract = {{\em Two-photon} data from Schr{\"o}dinger's lab \& others: 50\% faster, "
        r"in $\mathcal{O}(n^2)$ time; see \textbf{Fig.\~{}1}.}"
    ) in text
    lib = bibtexparser.parse_string(text)
    assert lib.failed_blocks == []
    assert lib.entries[0].fields_dict["title"].value == TRIAL_TITLE  # the macro, read back
    decoded = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    assert decoded.entries[0].fields_dict["title"].value == "In vivo calcium imaging decoded with transformers"


def test_bibtex_keeps_case_protection_inside_commands_and_escapes_what_latex_would_not_take():
    # Mid-title, a sentence-case title's capitalised word is braced inside the command too;
    # the author's own braces there are LaTeX's, kept once.
    assert (
        bibtex.bib_tex(r"Calcium imaging \emph{In vivo} with SAE", title=True)
        == r"Calcium imaging \emph{{In} vivo} with {SAE}"
    )
    assert bibtex.bib_tex(r"Calcium imaging \emph{{In} vivo}", title=True) == r"Calcium imaging \emph{{In} vivo}"
    # An accent is braced ({\"o}) and its word judged as read: "Schrödinger", a proper noun.
    assert (
        bibtex.bib_tex(r"\'{E}tudes of the wave equation by Schr\"odinger", title=True)
        == r"{\'{E}}tudes of the wave equation by {Schr{\"o}dinger}"
    )
    # An unknown command, or one whose braces never close, is text: escaped as before.
    assert (
        bibtex.bib_tex(r"\foo{x} and \emph{open")
        == r"\textbackslash{}foo\textbraceleft{}x\textbraceright{} and \textbackslash{}emph\textbraceleft{}open"
    )
    assert bibtex.bib_tex(r"\{\em x}") == r"\{\textbackslash{}em x\}"
    # Prices stay prices, by hermes.text.latex's rule ("US$ 20" closes no math).
    assert bibtex.bib_tex("$5 each, or US$ 20") == r"\$5 each, or US\$ 20"
    assert bibtex.bib_tex("costs $5 and $10") == r"costs \$5 and \$10"


def test_bibtex_with_commands_always_parses(db, add_items):
    import bibtexparser

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    titles = [r"\emph{a \} b} c", r"\textbf{x \{ y", r"{\it open \emph{In} vivo", r"\'{ } \c{} \emph{}"]
    for item in add_items([{"title": t} for t in titles]):
        cs.favorite(db, "alice", item)
    lib = bibtexparser.parse_string(run(db, "bibtex").text)
    assert lib.failed_blocks == [] and len(lib.entries) == len(titles)


def test_plain_text_formats_carry_readable_latex_and_jsonl_the_stored_text(latex_corpus):
    import rispy

    readable_title = "In vivo calcium imaging decoded with transformers"
    (ris,) = rispy.loads(run(latex_corpus, "ris").text)
    assert ris["title"] == readable_title and "𝒪(n²) time" in ris["abstract"]
    assert "Schrödinger's lab & others: 50% faster" in ris["abstract"]
    (csl,) = json.loads(run(latex_corpus, "csl-json").text)
    assert csl["title"] == readable_title and "\\" not in csl["abstract"]
    md = run(latex_corpus, "markdown").text
    assert f"## [{readable_title}](<https://arxiv.org/abs/2507.10003>)" in md and "𝒪(n²)" in md
    (line,) = [json.loads(x) for x in run(latex_corpus, "jsonl").text.splitlines()]
    assert line["title"] == TRIAL_TITLE and line["abstract"] == TRIAL_ABSTRACT


def test_math_that_would_run_code_in_latex_is_escaped_as_prose():
    """A feed's "math" is its author's LaTeX: passed into a .bib, ``$\\input{…}$`` would make
    LaTeX read a file of the person compiling it. Only commands of text and math pass."""
    assert bibtex.bib_tex(r"Leak $\input{/etc/passwd}$ here") == r"Leak \$\textbackslash{}input\{/etc/passwd\}\$ here"
    assert r"\def" not in bibtex.bib_tex(r"$\def\x{1}\x$") and r"\textbackslash{}def" in bibtex.bib_tex(
        r"$\def\x{1}\x$"
    )
    assert bibtex.bib_tex(r"$\mathcal{O}(n^2)$ time") == r"$\mathcal{O}(n^2)$ time"


# --- user-trial fixes: a podcast's and a blog's source, a note's math -----------------------

EPISODE = {"url": "https://cdn.example.org/ep41.mp3", "type": "audio/mpeg", "length": 1000, "duration": 3723}


@pytest.fixture
def sources(db, add_items):
    """alice: a podcast episode (no author, an enclosure with a duration), a blog post with
    an author, an arXiv paper, and a post whose feed was removed."""
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (episode,) = add_items(
        [
            {
                "title": "Ep. 41 – Sparse features",
                "content_type": "podcast",
                "url": "https://pod.example.org/41",
                "enclosure": EPISODE,
            }
        ],
        feed_url="https://pod.example.org/feed",
        feed_title="The Gradient Pod",
    )
    post, paper = add_items(
        [
            {"title": "Why SAEs", "authors": ["Ada Lovelace"], "url": "https://ada.example.org/saes"},
            {"title": "A paper", "arxiv_id": "2401.00001", "content_type": "paper"},
        ],
        feed_url="https://ada.example.org/feed",
        feed_title="Ada's Lab_Notes & *More*",
    )
    (orphan,) = add_items([{"title": "Orphaned post"}], feed_url="https://gone.example.org/feed")
    db.execute("DELETE FROM feeds WHERE url = 'https://gone.example.org/feed'")
    for item in (episode, post, paper, orphan):
        cs.favorite(db, "alice", item)
    return db


def test_bibtex_names_the_feed_an_episode_and_a_post_came_from(sources):
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware

    text = run(sources, "bibtex").text
    lib = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    assert lib.failed_blocks == [] and len(lib.entries) == 4
    episode, post, paper, orphan = (e.fields_dict for e in lib.entries)
    assert episode["howpublished"].value == "The Gradient Pod"
    assert episode["addendum"].value == "Podcast episode, 1:02:03, audio: https://cdn.example.org/ep41.mp3"
    assert post["howpublished"].value == "Ada's Lab_Notes & *More*"
    assert post["author"].value == "Lovelace, Ada"
    # An arXiv paper's source is arXiv (its id, which the classic styles print), not the
    # listing feed; a removed feed's item has no source and still exports.
    assert paper["howpublished"].value == "arXiv:2401.00001" and "journal" not in paper
    assert "howpublished" not in orphan and orphan["title"].value == "Orphaned post"


def test_a_journal_paper_is_an_article_in_its_feed(db, add_items):
    import bibtexparser

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items(
        [{"title": "A result", "url": "https://doi.org/10.1000/j.1", "content_type": "paper"}],
        feed_title="Physical Review Letters",
    )
    cs.favorite(db, "alice", item)
    (entry,) = bibtexparser.parse_string(run(db, "bibtex").text).entries
    assert entry.entry_type == "article" and entry.fields_dict["journal"].value == "Physical Review Letters"
    (csl,) = json.loads(run(db, "csl-json").text)
    assert csl["type"] == "article-journal" and csl["container-title"] == "Physical Review Letters"


def test_ris_csl_and_markdown_name_the_source_too(sources):
    import jsonschema
    import rispy

    episode, post, paper, orphan = rispy.loads(run(sources, "ris").text)
    assert episode["type_of_reference"] == "SOUND" and episode["secondary_title"] == "The Gradient Pod"
    assert episode["urls"] == ["https://pod.example.org/41", "https://cdn.example.org/ep41.mp3"]
    assert post["secondary_title"] == "Ada's Lab_Notes & *More*"
    assert "secondary_title" not in paper and "secondary_title" not in orphan
    schema = json.loads((Path(__file__).parent / "data" / "csl-data.json").read_text())
    items = json.loads(run(sources, "csl-json").text)
    jsonschema.validate(items, schema)
    assert items[0]["container-title"] == "The Gradient Pod" and items[0]["dimensions"] == "1:02:03"
    assert items[1]["container-title"] == "Ada's Lab_Notes & *More*"
    assert "container-title" not in items[2] and "container-title" not in items[3]
    md = run(sources, "markdown").text
    assert "*The Gradient Pod* · " in md and "1:02:03 · [audio](<https://cdn.example.org/ep41.mp3>)" in md
    assert r"Ada Lovelace · *Ada's Lab\_Notes & \*More\** · " in md
    line = json.loads(run(sources, "jsonl").text.splitlines()[0])
    assert line["source"] == "The Gradient Pod" and line["media"]["duration"] == 3723


def test_an_episode_whose_only_url_is_its_audio_lists_it_once(db, add_items):
    import rispy

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items(
        [
            {
                "title": "Ep. 1",
                "content_type": "podcast",
                "url": EPISODE["url"],
                "enclosure": {**EPISODE, "duration": None},
            }
        ],
        feed_title="A Show",
    )
    cs.favorite(db, "alice", item)
    assert "addendum = {Podcast episode}" in run(db, "bibtex").text
    (entry,) = rispy.loads(run(db, "ris").text)
    assert entry["urls"] == [EPISODE["url"]]
    assert "audio" not in run(db, "markdown").text


def test_a_note_passes_harmless_math_like_a_title_and_escapes_the_rest(db, add_items):
    import bibtexparser

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items([{"title": r"Bounds in $\mathcal{O}(\sqrt{n})$"}])
    cs.add_note(db, "alice", item, r"Key idea: features scale as $\sqrt{n}$")
    cs.add_note(db, "alice", item, r"Not math: $\input{/etc/passwd}$ and 50% of $5")
    text = run(db, "bibtex").text
    assert r"title = {Bounds in {$\mathcal{O}(\sqrt{n})$}}" in text
    assert r"annote = {Key idea: features scale as $\sqrt{n}$" in text  # no "Note:" in a note field
    assert r"\$\textbackslash{}input\{/etc/passwd\}\$ and 50\% of \$5" in text
    assert bibtexparser.parse_string(text).failed_blocks == []


def test_math_with_latex_s_own_commands_passes_on_as_written(db, add_items):
    """\\ne, \\left … \\right and \\displaystyle are LaTeX's own (pylatexenc's tables lack them):
    the abstract's math reaches the .bib as the author wrote it, not read into pieces."""
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items(
        [{"title": "Chemical potential", "summary": r"A phase with $\mu \ne 0$ and $\left( x \right)$ found."}]
    )
    cs.favorite(db, "alice", item)
    text = run(db, "bibtex").text
    assert r"$\mu \ne 0$ and $\left( x \right)$" in text and r"{$\neq$}" not in text


def test_an_entry_without_authors_has_a_key_to_sort_by(db, add_items):
    """bibtex's plain style warned "to sort, need author or key" of a news item without a
    byline: it sorts by its source (else its title)."""
    import bibtexparser

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items([{"title": "Le budget 100% voté", "authors": [], "author": ""}])
    cs.favorite(db, "alice", item)
    entry = bibtexparser.parse_string(run(db, "bibtex").text).entries[0]
    assert "author" not in entry.fields_dict and entry.fields_dict["key"].value in (
        "Test feed",
        r"Le budget 100\% voté",
    )


def test_a_long_sort_key_is_cut_at_a_word():
    """A trial read ``key = {Towards Minimal Resources of Measurement-based Quantum Compu}``."""
    from hermes_corpus.bibtex import _sort_key

    title = "Towards Minimal Resources of Measurement-based Quantum Computation on Lattices"
    assert _sort_key(title) == "Towards Minimal Resources of Measurement-based Quantum"
    assert _sort_key("short title") == "short title" and len(_sort_key("x" * 80)) == 60


def test_the_persona_s_notes_are_annotations_no_style_prints(corpus):
    """A trial's bibliography (plain, t.bbl) printed "key idea: …" and "Highlight: …": BibTeX's
    note is a citation's, printed by the standard styles. The notes go where Zotero's BibTeX
    export writes an item's notes, annote (its import reads annote as notes, as it does
    note); CSL-JSON's note, printed by some styles and Zotero's Extra, gives way to annote."""
    db, ids = corpus
    text = run(db, "bibtex").text
    assert not re.search(r"^\s*note = ", text, re.M)
    assert re.search(r"^\s*annote = \{Line one\nline two\n\nHighlight: ", text, re.M)
    items = json.loads(run(db, "csl-json").text)
    noted = next(i for i in items if i.get("annote"))
    assert "note" not in noted and "my comment" in noted["annote"]
    assert not any("note" in i for i in items)
