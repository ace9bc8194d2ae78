"""``hermes persona import`` and the ``import_library`` tool: a person's library (BibTeX, RIS,
CSL-JSON as Zotero, JabRef, Mendeley and ``hermes corpus export`` write them) becomes the
persona's likes, source ``bootstrap``; entries found in the archive by arXiv id, DOI or title,
the others stored as items of their own; idempotent; malformed entries refused by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hermes_corpus import export as corpus_export
from hermes_corpus import signals as corpus_signals
from hermes_persona import library, library_scorer
from hermes_persona.library_formats import read, tex_text
from test_persona_support import make_persona, snapshot, tool
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.storage.clicks import record_click
from hermes.storage.records import require_user
from hermes.tools import collect_tools

FILES = Path(__file__).parent / "data" / "library"


@pytest.fixture
def archive(add_items, db):
    """What a feed brought: two arXiv papers, a journal paper known by its DOI, one by its
    title only (a conference paper from a blog feed)."""
    streams, attention, alphafold, mpnn = add_items(
        [
            {
                "title": "Stellar streams in the halo",
                "summary": "We map streams.",
                "arxiv_id": "2401.12345",
                "url": "https://arxiv.org/abs/2401.12345",
                "content_type": "paper",
            },
            {
                "title": "Attention Is All You Need",
                "summary": "Transformers.",
                "arxiv_id": "1706.03762",
                "url": "https://arxiv.org/abs/1706.03762",
                "content_type": "paper",
            },
            {
                "title": "Highly accurate protein structure prediction with AlphaFold",
                "guid": "doi:10.1038/s41586-021-03819-2",
                "url": "https://doi.org/10.1038/s41586-021-03819-2",
                "content_type": "paper",
            },
            {
                "title": "Neural message passing for quantum chemistry",
                "summary": "MPNNs.",
                "url": "https://blog.example.org/mpnn",
            },
        ]
    )
    make_persona(db, "ann", "graph neural networks and protein structure")
    return {"streams": streams, "attention": attention, "alphafold": alphafold, "mpnn": mpnn}


def clicks(db, name="ann") -> list[tuple[int, str, str]]:
    uid = require_user(db, name)["id"]
    return db.execute("SELECT item_id, label, source FROM clicks WHERE user_id = ? ORDER BY item_id", [uid]).fetchall()


def n_items(db) -> int:
    return db.execute("SELECT count(*) FROM items").fetchone()[0]


def imported(db, text: str, name="ann", **kw) -> dict:
    result = tool(db, "import_library", name=name, text=text, **kw)
    assert result["ok"], result["message"]
    return result


# --- reading the formats --------------------------------------------------------------------


def test_a_zotero_bibtex_export_is_matched_by_arxiv_id_doi_and_title(db, archive):
    result = imported(db, (FILES / "zotero.bib").read_text())
    assert result["format"] == "bibtex" and result["entries"] == 3
    # Attention: an arXiv DOI and URL; AlphaFold: its journal DOI; MPNN: no id, its title
    assert result["matched_by"] == {"arxiv": 1, "doi": 1, "title": 1}
    assert result["created"] == 0 and result["liked"] == 3
    assert clicks(db) == sorted((archive[k], "like", "bootstrap") for k in ("attention", "alphafold", "mpnn"))


def test_an_arxiv_doi_alone_matches_the_paper_in_the_archive(db, archive):
    """A trial's entry with only doi = {10.48550/arXiv.0704.1288} was stored a second time:
    the id after "arXiv." was not read (old and new ids alike)."""
    bib = """@article{streams, title = {Some other title}, doi = {10.48550/arXiv.2401.12345}}
@article{att, title = {Not the title either}, doi = {https://doi.org/10.48550/arXiv.1706.03762}}"""
    result = imported(db, bib)
    assert result["matched_by"] == {"arxiv": 2} and result["created"] == 0


def test_a_jabref_file_with_comments_and_string_macros(db, archive):
    before = n_items(db)
    result = imported(db, (FILES / "jabref.bib").read_text())
    assert result["entries"] == 3 and result["n_refused"] == 0  # @Comment and @String are no entries
    assert result["matched_by"] == {"arxiv": 1}  # eprint 2401.12345v3, any version
    assert result["created"] == 2 and n_items(db) == before + 2
    new = {u["key"]: u for u in result["unmatched"]}
    assert set(new) == {"Mueller2020", "Schroedinger1935"}
    assert "10.1103/PhysRevLett.124.010101" in new["Mueller2020"]["reason"]
    row = db.execute(
        "SELECT title, summary, authors, feed_id, published, content_type, embedding "
        "FROM items WHERE title LIKE 'The Bayesian way%'"
    ).fetchone()
    title, summary, authors, feed_id, published, kind, embedding = row
    # BibTeX's own markup is resolved; the math stays as feed text keeps it (hermes.text.latex)
    assert title == "The Bayesian way to $k$-means clustering of stellar streams"
    assert summary == "We show that $k$-means is Bayesian – mostly. 50% of streams & all halos."
    assert json.loads(authors) == ["Hans Müller", "Johannes van der Waals", "LIGO Scientific Collaboration"]
    assert feed_id is None and embedding is not None and kind == "paper"
    assert published.startswith("2020-01-01")
    # the DOI is kept beside the item, where save_item keeps it (the exports read it there)
    assert db.execute("SELECT doi FROM corpus_item_dois").fetchall() == [("10.1103/PhysRevLett.124.010101",)]
    assert db.execute("SELECT title FROM items WHERE title LIKE 'Die gegen%'").fetchone() == (
        "Die gegenwärtige Situation in der Quantenmechanik",
    )


def test_a_jabref_file_with_string_concatenation(db, archive):
    """A trial: ``@string{prb = "Phys. Rev. B"}`` and ``journal = prb # " (Condensed Matter)"``
    imported the journal as the expression itself; bibtexparser 2.1 resolves a macro only
    when it is the whole value."""
    got = {e.key: e for e in read((FILES / "jabref_concatenation.bib").read_text()).entries}
    assert set(got) == {"Haldane1988", "Kane2005"}  # the @comment blocks are no entries
    haldane, kane = got["Haldane1988"], got["Kane2005"]
    assert haldane.citation["container"] == "Phys. Rev. B (Condensed Matter)"
    assert haldane.citation["publisher"] == "American Physical Society, College Park"  # macro # {..} # ".."
    assert kane.citation["container"] == "Phys. Rev. B Lett."  # a @string made of an earlier one
    assert (haldane.published, kane.published) == ("1988-10", "2005-09")  # month = oct, sep # "~28"
    assert "C#-like lattices" in kane.title  # a # inside braces is text
    imported(db, (FILES / "jabref_concatenation.bib").read_text())
    ann = require_user(db, "ann")
    for item, _, _ in clicks(db):
        corpus_signals.favorite(db, "ann", item)
    bib = corpus_export.export(db, ann["id"], "bibtex").text
    assert "journal = {Phys. Rev. B (Condensed Matter)}" in bib and " # " not in bib and "prb" not in bib


def test_entries_without_abstracts_are_stored_from_the_title(db, archive):
    text = "@article{a, title = {Topological phases of matter without an abstract}, year = 2019}\n"
    result = imported(db, text)
    assert result["created"] == 1
    item = db.execute("SELECT summary, embedding IS NOT NULL FROM items WHERE title LIKE 'Topological%'").fetchone()
    assert item == ("", 1)


def test_a_zotero_ris_export(db, archive):
    result = imported(db, (FILES / "zotero.ris").read_text())
    assert result["format"] == "ris" and result["entries"] == 2
    assert result["matched_by"] == {"doi": 1, "arxiv": 1}  # the arXiv id from the URL
    assert {i for i, _, _ in clicks(db)} == {archive["alphafold"], archive["streams"]}


def test_a_zotero_csl_json_export(db, archive):
    result = imported(db, (FILES / "zotero.json").read_text())
    assert result["format"] == "csl-json"
    assert result["matched_by"] == {"arxiv": 1, "title": 1}
    assert {i for i, _, _ in clicks(db)} == {archive["attention"], archive["mpnn"]}


def test_a_title_is_matched_as_read_not_as_written(db, add_items, archive):
    (latex,) = add_items([{"title": r"Sch\"{o}dinger bridges for $\mathcal{O}(n)$ transport, revisited"}])
    text = '@misc{x, title = {{Sch{\\"o}dinger} Bridges for $\\mathcal{O}(n)$ Transport -- Revisited}}'
    result = imported(db, text)
    assert result["matched_by"] == {"title": 1} and clicks(db) == [(latex, "like", "bootstrap")]


def test_a_short_title_alone_does_not_match(db, add_items, archive):
    add_items([{"title": "Introduction"}])
    assert imported(db, "@misc{x, title = {Introduction}}")["created"] == 1


def test_the_format_is_told_by_content_and_can_be_named(db, archive):
    ris = (FILES / "zotero.ris").read_text()
    assert imported(db, ris, format="ris")["entries"] == 2
    refused = tool(db, "import_library", name="ann", text=ris, format="bibtex")
    assert not refused["ok"] and "holds no entries" in refused["message"]


# --- idempotence, provenance, what stays ------------------------------------------------


def test_a_second_import_of_the_same_file_adds_nothing(db, archive):
    text = (FILES / "jabref.bib").read_text() + (FILES / "zotero.bib").read_text()
    first = imported(db, text)
    assert first["liked"] == 6 and first["created"] == 2
    before = snapshot(db)
    again = imported(db, text)
    assert again["liked"] == 0 and again["created"] == 0 and again["already_liked"] == 6
    assert snapshot(db) == before


def test_a_dislike_given_since_is_kept(db, archive):
    ann = require_user(db, "ann")
    record_click(db, ann["id"], archive["attention"], False, "ui")
    result = imported(db, (FILES / "zotero.bib").read_text())
    assert result["kept_dislikes"] == 1 and result["liked"] == 2
    assert (archive["attention"], "dislike", "ui") in clicks(db)


def test_two_entries_of_one_paper_are_one_like(db, archive):
    text = (
        "@misc{a, title={Stellar streams in the halo}, eprint={2401.12345}}\n"
        "@misc{b, title={Stellar Streams in the Halo}}\n"
        "@misc{c, title={A paper the archive does not hold at all}}\n"
        "@misc{d, title={A Paper the Archive does not Hold at All}}\n"
    )
    result = imported(db, text)
    assert result["duplicates"] == 2 and result["liked"] == 2 and result["created"] == 1


def test_the_likes_are_bootstrap_clicks_that_status_counts_and_reset_removes(db, archive):
    imported(db, (FILES / "zotero.bib").read_text())
    status = tool(db, "profile_status", user="ann")
    assert status["clicks_by_source"]["bootstrap"] == 3 and status["likes"] == 3
    assert tool(db, "reset_feedback", name="ann", confirm=True)["ok"]
    assert clicks(db) == []


def test_reset_of_the_bootstrap_source_takes_the_import_back_and_keeps_own_clicks(db, archive):
    """The import's answer says how to take it back; doing it keeps what the person clicked."""
    ann = require_user(db, "ann")
    record_click(db, ann["id"], archive["streams"], False, "ui")
    result = imported(db, (FILES / "zotero.bib").read_text())
    assert "`persona reset" not in result["message"]  # an agent is told the tool, not the CLI
    assert "reset_feedback with confirm=true and source='bootstrap'" in result["message"]
    dry = tool(db, "reset_feedback", name="ann", source="bootstrap")
    assert dry["would_delete"]["clicks"] == 3 and "3 bootstrap clicks (3 likes, 0 dislikes)" in dry["message"]
    assert len(clicks(db)) == 4
    assert tool(db, "reset_feedback", name="ann", confirm=True, source="bootstrap")["ok"]
    assert clicks(db) == [(archive["streams"], "dislike", "ui")]


#: one entry the archive holds (by its arXiv id), one it does not (stored as an item of its own)
ONE_OF_EACH = """@article{streams, title = {Stellar streams in the halo}, eprint = {2401.12345}}
@article{own, title = {Tidal debris of dwarf galaxies in the outer halo}, year = {2019},
  doi = {10.1000/tidal.debris}, abstract = {We model tidal debris.}}"""


def stored_id(db, title_start: str) -> int | None:
    row = db.execute("SELECT id FROM items WHERE title LIKE ?", [title_start + "%"]).fetchone()
    return row[0] if row else None


def feed_ids(db, name="ann") -> list[int]:
    """Every unread item of the persona's feed, any age, weak matches included."""
    result = tool(db, "list_feed", user=name, since_days=None, below_bar=True, limit=100)
    assert result["ok"], result["message"]
    return [i["id"] for i in result["items"]]


def test_reset_of_the_bootstrap_source_removes_the_items_the_import_stored(db, archive):
    """A trial: after `persona reset NAME --source bootstrap` the library's papers the import
    had stored stayed in the archive and came up in the feed as unread items with no link,
    as if a subscription had brought them. They go with the import's likes now; the paper a
    feed brought stays."""
    from hermes.embed import get_embedder
    from hermes.ranking.matrix import get_matrix

    answer = imported(db, ONE_OF_EACH)
    assert "taking the bootstrap clicks back deletes them" in answer["message"]
    own = stored_id(db, "Tidal debris")
    assert own is not None and db.execute("SELECT feed_id FROM items WHERE id = ?", [own]).fetchone() == (None,)
    assert own not in feed_ids(db) and archive["streams"] not in feed_ids(db)  # liked: not unread
    embedder = get_embedder()
    assert own in get_matrix(db, embedder.name, embedder.dimension).ids  # loaded in this process

    dry = tool(db, "reset_feedback", name="ann", source="bootstrap")
    assert dry["would_delete"]["rows"]["items"] == 1
    assert "2 bootstrap clicks" in dry["message"] and "1 library entry stored as an item" in dry["message"]
    assert stored_id(db, "Tidal debris") == own  # a preview changes nothing

    done = tool(db, "reset_feedback", name="ann", confirm=True, source="bootstrap")
    assert done["ok"] and done["deleted"]["rows"]["items"] == 1
    assert "1 library entry stored as an item" in done["message"]
    assert stored_id(db, "Tidal debris") is None  # gone from the archive, with its own rows
    for table in ("item_tag_proposals", "corpus_item_dois", "corpus_item_citation"):
        assert db.execute(f"SELECT count(*) FROM {table} WHERE item_id = ?", [own]).fetchone() == (0,), table
    assert db.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH 'tidal'").fetchone() == (0,)
    assert own not in get_matrix(db, embedder.name, embedder.dimension).ids  # and from the matrix
    assert archive["streams"] in feed_ids(db) and own not in feed_ids(db)  # the feed's paper stays
    assert tool(db, "search_feed", user="ann", query="tidal debris")["results"] == []


def test_an_item_the_import_stored_stays_while_something_else_refers_to_it(db, archive):
    """What the person did with such an item keeps it: their own like, a capture into the
    corpus, another persona's import of the same paper. Only the item nothing refers to goes."""
    bib = "\n".join(
        f"@article{{{key}, title = {{{title}}}, year = {{2018}}}}"
        for key, title in (
            ("liked", "Orbits of globular clusters from Gaia proper motions"),
            ("saved", "Chemical tagging of stars in the thick disk"),
            ("shared", "The accretion history of the Milky Way halo"),
            ("alone", "Dynamical friction on satellites in cold dark matter halos"),
        )
    )
    make_persona(db, "bob", "galactic archaeology")
    imported(db, bib)
    ids = {k: stored_id(db, t) for k, t in (("liked", "Orbits"), ("saved", "Chemical"), ("shared", "The accretion"))}
    alone = stored_id(db, "Dynamical friction")
    ann = require_user(db, "ann")
    record_click(db, ann["id"], ids["liked"], True, "ui")  # the person's own like replaces the import's
    corpus_signals.favorite(db, "ann", ids["saved"], True, source="ui")
    assert imported(db, bib.split("\n")[2], name="bob")["matched"] == 1  # bob's import finds it

    done = tool(db, "reset_feedback", name="ann", confirm=True, source="bootstrap")
    assert stored_id(db, "Dynamical friction") is None and alone not in feed_ids(db)
    assert done["deleted"]["rows"]["items"] == 1
    assert all(
        stored_id(db, t) == ids[k] for k, t in (("liked", "Orbits"), ("saved", "Chemical"), ("shared", "The accretion"))
    )
    assert clicks(db) == [(ids["liked"], "like", "ui")]
    # a reset of the person's own clicks never takes an imported item
    assert tool(db, "reset_feedback", name="ann", confirm=True, source="ui")["deleted"]["rows"].get("items", 0) == 0
    assert stored_id(db, "Orbits") == ids["liked"]


def test_a_full_reset_and_a_deleted_persona_take_the_stored_entries_too(db, archive):
    """Every reset that takes the import's likes back takes its stored entries with them;
    deleting the persona too (its library papers would otherwise turn up in another
    persona's feed as delivered)."""
    make_persona(db, "bob", "galactic archaeology")
    imported(db, ONE_OF_EACH)
    assert tool(db, "reset_feedback", name="ann", confirm=True)["deleted"]["rows"]["items"] == 1
    assert stored_id(db, "Tidal debris") is None
    imported(db, ONE_OF_EACH)
    own = stored_id(db, "Tidal debris")
    dry = tool(db, "delete_persona", name="ann")
    assert "1 library entry stored as an item" in dry["message"] and stored_id(db, "Tidal debris") == own
    assert tool(db, "delete_persona", name="ann", confirm=True)["deleted"]["rows"]["items"] == 1
    assert stored_id(db, "Tidal debris") is None and own not in feed_ids(db, "bob")
    assert stored_id(db, "Stellar streams") == archive["streams"]


def test_another_persona_s_feed_does_not_list_a_library_s_stored_entries(db, archive):
    """While ann's import holds them, the papers it stored are her library, not news: bob's
    unread feed leaves them out as ann's own does (her like), and a search still finds them.
    A paper saved into a corpus (no feed either) is not an import's and stays listed."""
    make_persona(db, "bob", "galactic archaeology, stellar streams, tidal debris")
    imported(db, ONE_OF_EACH)
    own = stored_id(db, "Tidal debris")
    assert own not in feed_ids(db, "bob") and own not in feed_ids(db, "ann")
    assert own in [r["id"] for r in tool(db, "search_feed", user="bob", query="tidal debris")["results"]]
    assert archive["streams"] in feed_ids(db, "bob")  # a feed's paper ann's import liked stays
    why = tool(db, "explain_item", user="bob", item_id=own, since_days=None)
    assert why["ok"] and "a library import stored it" in why["explanation"]["not_in_pool"]
    corpus_signals.favorite(db, "ann", own, True, source="ui")  # ann saves it: now a corpus holds it
    assert own in feed_ids(db, "bob")


def test_the_cli_reset_names_and_removes_the_stored_entries(db, db_path, archive):
    imported(db, ONE_OF_EACH)
    own = stored_id(db, "Tidal debris")

    def run(*args):
        return CliRunner().invoke(build_app(), [*args, "--db", str(db_path)])

    dry = run("persona", "reset", "ann", "--source", "bootstrap")
    assert "1 library entry stored as an item" in dry.output and stored_id(db, "Tidal debris") == own
    done = run("persona", "reset", "ann", "--source", "bootstrap", "--yes")
    assert done.exit_code == 0, done.output
    assert "1 library entry stored as an item" in done.output and stored_id(db, "Tidal debris") is None
    feed = run("feed", "ann", "--all", "--below-bar", "--json")
    assert feed.exit_code == 0, feed.output
    listed = [i["id"] for i in json.loads(feed.output)["items"]]
    assert own not in listed and archive["streams"] in listed


# --- malformed entries ------------------------------------------------------------------


def test_a_malformed_bibtex_entry_is_refused_by_its_line_and_the_others_kept(db, archive):
    text = (
        "@misc{good, title = {Stellar streams in the halo}, eprint = {2401.12345}}\n"
        "\n"
        "@article{broken,\n"
        "  title = {An unclosed brace,\n"
        "  year = 2020,\n"
        "}\n"
        "@article{notitle, author = {Nobody, A.}}\n"
        "@misc{later, title = {Attention is all you need}}\n"
    )
    result = imported(db, text)
    assert result["liked"] == 2
    assert [(r["line"], r["key"]) for r in result["refused"]] == [(3, "broken"), (7, "notitle")]
    assert "lines 3, 7" in result["message"] and "fix them" in result["message"]
    assert "no title" in result["refused"][1]["reason"]


def test_an_unclosed_bibtex_entry_is_named_by_its_own_line_in_the_singular(db, archive):
    """Trial findings: "1 entry could not be read … fix them", and the reason named the
    next entry ("Unexpected block start: `@inproceedings`") instead of the broken one."""
    text = (
        "@misc{good, title = {Stellar streams in the halo}, eprint = {2401.12345}}\n"
        "\n"
        "@article{open,\n"
        "  title = {Never closed},\n"
        "  year = {2020}\n"
        "\n"
        "@inproceedings{next, title = {Attention is all you need}}\n"
    )
    result = imported(db, text)
    [refused] = result["refused"]
    assert refused["line"] == 3
    assert "the entry at line 3 is not closed before the next entry at line 7" in refused["reason"]
    assert "Unexpected block start" not in refused["reason"]
    message = result["message"]
    assert "1 entry could not be read and was left out (line 3" in message and "fix it and" in message


def test_malformed_ris_and_csl_json_are_refused_by_line(db, archive):
    ris = (
        "TY  - JOUR\nTI  - Stellar streams in the halo\nUR  - https://arxiv.org/abs/2401.12345\nER  - \n"
        "TY  - JOUR\nTI  - never ended\n"
        "TY  - JOUR\nTI  - Attention is all you need\nER  - \n"
    )
    result = imported(db, ris)
    assert result["liked"] == 2 and [r["line"] for r in result["refused"]] == [5]
    csl = (
        '[\n  {"title": "Stellar streams in the halo", "URL": "https://arxiv.org/abs/2401.12345"},\n'
        '  {"title": "Attention is all you need"},\n'
        '  {"title": "broken" "x"}\n]\n'
    )
    result = imported(db, csl, name="ann")
    assert result["already_liked"] == 2 and result["refused"][0]["line"] == 4


def test_a_file_with_no_readable_entry_is_refused_and_writes_nothing(db, archive):
    before = snapshot(db)
    result = tool(db, "import_library", name="ann", text="@article{x,\n title = {open\n")
    assert not result["ok"] and "line 1" in result["message"]
    assert result["entries"] == 0 and result["refused"] == []
    assert snapshot(db) == before
    result = tool(db, "import_library", name="ann", text="/home/ann/library.bib")
    # a path is never opened: refused as one, saying to pass the contents (tests/test_mcp_trial_fixes.py)
    assert not result["ok"] and "pass the file's contents" in result["message"]
    assert snapshot(db) == before
    assert not tool(db, "import_library", name="nobody", text="@misc{x, title={y}}")["ok"]


# --- the answer is bounded, the schema says so -------------------------------------------


def test_a_large_library_gets_a_bounded_answer(db, archive):
    text = "\n".join(f"@misc{{k{i}, title = {{A paper about topic number {i} of many}}}}" for i in range(40))
    result = imported(db, text)
    assert result["created"] == 40 and result["n_unmatched"] == 40
    assert len(result["unmatched"]) == 10 and result["unmatched"][0]["line"] == 1
    assert "no item in the archive has this title" in result["unmatched"][0]["reason"]


def test_the_tool_takes_text_of_bounded_size_and_is_idempotent():
    t = collect_tools({"persona"})["import_library"]
    schema = t.argument_model.model_json_schema()["properties"]
    assert schema["text"]["maxLength"] == library.IMPORT_MAX_CHARS
    assert set(schema["format"]["enum"]) == {"auto", "bibtex", "ris", "csl-json"}
    assert t.idempotent and not t.destructive and not t.read_only


def test_progress_is_reported_per_batch(db, archive, monkeypatch):
    monkeypatch.setattr(library, "BATCH", 4)
    seen = []
    token = library.PROGRESS.set(lambda done, total: seen.append((done, total)))
    try:
        text = "\n".join(f"@misc{{k{i}, title = {{A paper about topic number {i} of many}}}}" for i in range(9))
        imported(db, text + "\n@misc{s, title={x}, eprint={2401.12345}}")
    finally:
        library.PROGRESS.reset(token)
    assert seen == [(1, 10), (5, 10), (9, 10), (10, 10)]


# --- round trip with hermes corpus export ------------------------------------------------


@pytest.mark.parametrize("fmt", ["bibtex", "ris", "csl-json"])
def test_a_corpus_export_imports_back_onto_the_same_items(db, archive, add_items, fmt):
    alice = make_persona(db, "alice", "stellar streams")
    for key in ("streams", "alphafold", "mpnn"):
        corpus_signals.favorite(db, "alice", archive[key])
    text = corpus_export.export(db, alice["id"], fmt).text
    before = n_items(db)
    result = imported(db, text, name="ann")
    assert result["entries"] == 3 and result["created"] == 0 and n_items(db) == before
    assert {i for i, _, _ in clicks(db)} == {archive[k] for k in ("streams", "alphafold", "mpnn")}


def test_an_imported_item_exports_with_its_identifiers(db, archive):
    imported(db, (FILES / "jabref.bib").read_text())
    ann = require_user(db, "ann")
    item = db.execute("SELECT id FROM items WHERE title LIKE 'The Bayesian way%'").fetchone()[0]
    corpus_signals.favorite(db, "ann", item)
    text = corpus_export.export(db, ann["id"], "bibtex").text
    assert "doi = {10.1103/PhysRevLett.124.010101}" in text
    again = read(text)
    assert again.entries[0].doi == "10.1103/PhysRevLett.124.010101"
    assert again.entries[0].authors[0] == "Hans Müller"


def test_a_year_alone_stays_a_year_in_every_face_and_export(db, archive):
    """A trial: year = {1998} came out date = {1998-01-01}, DA - 1998/01/01, [[1998, 1, 1]]."""
    from hermes.facekit.faces import date_words
    from hermes.storage.records import item_rows

    imported(
        db,
        """@article{nat98, title = {Gravitational lensing of quasars by galaxies},
  author = {Smith, Jane}, journal = {Nature}, year = {1998}}
@article{mar20, title = {Dark matter halos of dwarf galaxies in the local group},
  author = {Doe, John}, year = {2020}, month = mar}""",
    )
    ann = require_user(db, "ann")
    rows = {r["title"][:4]: r for r in item_rows(db, [i for i, _, _ in clicks(db)]).values()}
    assert date_words(rows["Grav"]) == "1998" and date_words(rows["Dark"]) == "2020-03"
    for item in (rows["Grav"]["id"], rows["Dark"]["id"]):
        corpus_signals.favorite(db, "ann", item)
    bib = corpus_export.export(db, ann["id"], "bibtex").text
    assert "1998-01-01" not in bib and "date = {1998}" in bib and "date = {2020-03}" in bib
    ris = corpus_export.export(db, ann["id"], "ris").text
    assert "1998/01/01" not in ris
    csl = json.loads(corpus_export.export(db, ann["id"], "csl-json").text)
    assert sorted(i["issued"]["date-parts"][0] for i in csl) == [[1998], [2020, 3]]


def test_an_entrys_own_year_is_exported_not_its_arxiv_ids(db, archive):
    """A trial: year = {2019} with eprint 2105.… came out of ``hermes corpus export`` as
    2021 (the arXiv id's year). The entry's own date wins in every format; the id's year is
    for a feed's listing only (test_corpus_export: a replaced paper)."""
    imported(
        db,
        """@article{early, title = {Topological magnons in kagome ferromagnets, the journal version},
  author = {Doe, Jane}, journal = {Phys. Rev. B}, year = {2019}, eprint = {2105.01234},
  archivePrefix = {arXiv}}
@article{late, title = {Machine learned interatomic potentials for amorphous carbon},
  author = {Roe, John}, journal = {Nature}, date = {2023-02-10}, eprint = {2105.06789},
  archivePrefix = {arXiv}}""",
    )
    ann = require_user(db, "ann")
    for item, _, _ in clicks(db):
        corpus_signals.favorite(db, "ann", item)
    bib = corpus_export.export(db, ann["id"], "bibtex").text
    assert bib.count("year = {2019}") == 1 and bib.count("year = {2023}") == 1 and "2021" not in bib, bib
    assert "date = {2019}" in bib and "date = {2023-02-10}" in bib
    assert {e.published[:4] for e in read(bib).entries} == {"2019", "2023"}  # and it imports back so
    ris = corpus_export.export(db, ann["id"], "ris").text
    assert "PY  - 2019" in ris and "PY  - 2023" in ris and "PY  - 2021" not in ris
    csl = json.loads(corpus_export.export(db, ann["id"], "csl-json").text)
    assert sorted(i["issued"]["date-parts"][0] for i in csl) == [[2019], [2023, 2, 10]]


def test_where_an_entry_was_published_reaches_every_export(db, archive):
    """A trial: a Nature entry (journal, volume 396, pages 21--22) came out as @misc with none
    of them, in RIS and CSL-JSON too."""
    imported(
        db,
        """@article{lens98, title = {Gravitational lensing of quasars by galaxies},
  author = {Smith, Jane}, journal = {Nature}, volume = {396}, number = {6706},
  pages = {21--22}, publisher = {Nature Publishing Group}, year = {1998}}""",
    )
    ann = require_user(db, "ann")
    (item,) = [i for i, _, _ in clicks(db)]
    corpus_signals.favorite(db, "ann", item)
    bib = corpus_export.export(db, ann["id"], "bibtex").text
    assert bib.startswith("@article{") and "journal = {Nature}" in bib and "volume = {396}" in bib
    assert "number = {6706}" in bib and "pages = {21--22}" in bib and "publisher = {Nature Publishing Group}" in bib
    ris = corpus_export.export(db, ann["id"], "ris").text
    assert "TY  - JOUR" in ris and "T2  - Nature" in ris and "VL  - 396" in ris
    assert "SP  - 21" in ris and "EP  - 22" in ris and "IS  - 6706" in ris
    (csl,) = json.loads(corpus_export.export(db, ann["id"], "csl-json").text)
    assert (csl["type"], csl["container-title"], csl["volume"], csl["page"]) == (
        "article-journal",
        "Nature",
        "396",
        "21–22",
    )
    again = read(bib).entries[0]  # and it imports back the same
    assert again.citation == {
        "container": "Nature",
        "volume": "396",
        "issue": "6706",
        "pages": "21–22",
        "publisher": "Nature Publishing Group",
    }


def test_a_library_entry_matched_to_a_feed_s_preprint_exports_as_its_journal_version(db, archive):
    """A feed listed the preprint (2024); the person's library knows it as published in
    Phys. Rev. D 110, 2025, with a DOI. The export cites what the library says, as the
    person's reference manager does, and a second library naming another journal for the
    same paper changes nothing (the first is kept)."""
    entry = """@article{streams, title = {Stellar streams in the halo}, author = {Doe, Jane},
  journal = {Phys. Rev. D}, volume = {110}, pages = {043021}, year = {2025},
  doi = {10.1103/PhysRevD.110.043021}, eprint = {2401.12345}, archivePrefix = {arXiv}}"""
    imported(db, entry)
    ann = require_user(db, "ann")
    corpus_signals.favorite(db, "ann", archive["streams"])
    bib = corpus_export.export(db, ann["id"], "bibtex").text
    assert bib.startswith("@article{") and "journal = {Phys. Rev. D}" in bib and "volume = {110}" in bib, bib
    assert "year = {2025}" in bib and "doi = {10.1103/PhysRevD.110.043021}" in bib and "eprint = {2401.12345}" in bib
    ris = corpus_export.export(db, ann["id"], "ris").text
    assert "TY  - JOUR" in ris and "PY  - 2025" in ris and "DO  - 10.1103/PhysRevD.110.043021" in ris
    # the published article: no preprint's type, archive or accession number beside its
    # journal; the arXiv id where Zotero's RIS import reads it into Extra
    assert "T2  - Phys. Rev. D" in ris and "M2  - arXiv: 2401.12345" in ris, ris
    assert "M3  - " not in ris and "DB  - " not in ris and "AN  - " not in ris and "Preprint" not in ris, ris
    (csl,) = json.loads(corpus_export.export(db, ann["id"], "csl-json").text)
    assert csl["type"] == "article-journal" and csl["container-title"] == "Phys. Rev. D", csl
    assert "publisher" not in csl and "number" not in csl and csl["note"] == "arXiv: 2401.12345", csl
    assert "howpublished" not in bib and "{arXiv}" not in bib.replace("archivePrefix = {arXiv}", ""), bib
    make_persona(db, "bob", "stellar streams")
    imported(db, entry.replace("Phys. Rev. D", "Astrophys. J.").replace("2025", "2026"), name="bob")
    assert "journal = {Phys. Rev. D}" in corpus_export.export(db, ann["id"], "bibtex").text


# --- the CLI -------------------------------------------------------------------------------


def test_the_cli_imports_a_file_and_reports(db, db_path, archive):
    run = CliRunner().invoke(build_app(), ["persona", "import", "ann", str(FILES / "jabref.bib"), "--db", str(db_path)])
    assert run.exit_code == 0, run.output
    assert "Imported 3 entries" in run.stdout and "new item, line 7" in run.stdout
    again = CliRunner().invoke(
        build_app(), ["persona", "import", "ann", str(FILES / "jabref.bib"), "--db", str(db_path), "--json"]
    )
    assert json.loads(again.stdout)["already_liked"] == 3


def test_the_cli_names_a_missing_file_in_one_line(db_path, archive):
    run = CliRunner().invoke(build_app(), ["persona", "import", "ann", "/nonexistent/lib.bib", "--db", str(db_path)])
    assert run.exit_code == 1
    assert run.stderr.strip().startswith("error: cannot read /nonexistent/lib.bib")


def test_latin1_bibtex_is_read(db, db_path, archive, tmp_path):
    path = tmp_path / "old.bib"
    path.write_bytes("@misc{x, title = {Gödel numbers for a paper held nowhere else}}".encode("latin-1"))
    run = CliRunner().invoke(build_app(), ["persona", "import", "ann", str(path), "--db", str(db_path)])
    assert run.exit_code == 0, run.output
    assert db.execute("SELECT count(*) FROM items WHERE title LIKE 'Gödel numbers%'").fetchone()[0] == 1


def test_tex_text_resolves_bibtex_markup_and_keeps_math():
    assert (
        tex_text(r"{GPU}-accelerated \emph{in vivo} $\mathcal{O}(n^2)$ 50\% -- {\em Mixture}")
        == r"GPU-accelerated in vivo $\mathcal{O}(n^2)$ 50% – Mixture"
    )


# --- the library's weight in the ranking ---------------------------------------------------


def _library_of(n: int, word: str) -> str:
    return "\n".join(f"@misc{{{word}{i}, title = {{{word} study number {i} of the {word} series}}}}" for i in range(n))


def test_a_small_library_leaves_the_ranking_to_the_core(db, archive):
    from hermes.ranking.rank import rank

    imported(db, _library_of(library_scorer.LIBRARY_MIN - 1, "lensing"))
    ranking = rank(db, require_user(db, "ann"))
    assert "library" not in ranking.components


def test_a_large_library_gets_a_component_that_hands_over_to_own_clicks(db, archive, add_items):
    from hermes.contract import CandidateQuery
    from hermes.ranking.rank import rank

    unread = add_items(
        [{"title": "lensing study of a cluster", "days_ago": 1}, {"title": "sourdough baking at home", "days_ago": 1}]
    )
    imported(db, _library_of(library_scorer.LIBRARY_MIN, "lensing"))
    ann = require_user(db, "ann")
    query = CandidateQuery(since_days=None)
    first = rank(db, ann, query)
    lib = first.components["library"]
    assert lib.role == "behaviour" and lib.weight == library_scorer.LIBRARY_SHARE
    assert lib.detail["library"] == library_scorer.LIBRARY_MIN and lib.detail["own_clicks"] == 0
    order = [int(i) for i in first.item_ids]
    assert order.index(unread[0]) < order.index(unread[1])
    for item in (archive["streams"], archive["attention"]):
        record_click(db, ann["id"], item, False, "ui")
    after = rank(db, ann, query).components["library"]
    handover = library_scorer.HANDOVER
    assert after.weight == pytest.approx(library_scorer.LIBRARY_SHARE * handover / (handover + 2))
