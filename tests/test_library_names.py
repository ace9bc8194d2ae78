"""What a person's library calls a paper survives ``hermes persona import`` and comes back out
of ``hermes corpus export``: the entry's cite key (their LaTeX says ``\\cite{smith2020quantum}``)
and a BibTeX title's brace protection (``{DNA} repair in {Escherichia coli}``), for entries
matched to a feed's item as for entries stored as items of their own. ``hermes corpus sync``
keeps a note's name when its item's key changes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import bibtexparser
import pytest
import sqlite_utils
import yaml
from hermes_corpus import export as corpus_export
from hermes_corpus import schema
from hermes_corpus import signals as cs
from hermes_corpus import sync as vault
from hermes_corpus.bibtex import bib_title
from hermes_persona.library_formats import cite_key, protected_spans, read
from test_persona_support import make_persona, tool
from tex_support import compile_bib, needs_tex

from hermes.storage.clicks import record_click
from hermes.storage.records import require_user

FILES = Path(__file__).parent / "data" / "library"


@pytest.fixture
def feed(add_items, db):
    """What the feeds brought: two arXiv listings the libraries name (one under a newer
    version's title), a paper no library names, and one whose arXiv id a library key reads as."""
    ising, attention, streams, other = add_items(
        [
            {"title": "The Ising model of ferromagnetism on a Bethe lattice", "arxiv_id": "2401.12345"},
            {"title": "Attention Is All You Need", "arxiv_id": "1706.03762"},
            {"title": "Stellar streams in the Milky Way halo, revisited with Gaia DR3", "arxiv_id": "2401.22222"},
            {"title": "Spin glasses on sparse random graphs", "arxiv_id": "2402.00001"},
        ]
    )
    make_persona(db, "ann", "lattice models and stellar streams")
    return {"ising": ising, "attention": attention, "streams": streams, "other": other}


def imported(db, text: str, name="ann") -> dict:
    result = tool(db, "import_library", name=name, text=text)
    assert result["ok"], result["message"]
    return result


def liked(db, name="ann") -> list[int]:
    uid = require_user(db, name)["id"]
    return [r[0] for r in db.execute("SELECT item_id FROM clicks WHERE user_id = ? ORDER BY item_id", [uid])]


def exported(db, fmt="bibtex", name="ann") -> str:
    return corpus_export.export(db, require_user(db, name)["id"], fmt).text


def entries(bib: str) -> dict[str, dict]:
    """The exported entries by key: their fields as written (braces kept)."""
    library = bibtexparser.parse_string(bib)
    assert not library.failed_blocks
    return {e.key: {k: f.value for k, f in e.fields_dict.items()} for e in library.entries}


def into_corpus(db, item_ids, name="ann") -> None:
    for item in item_ids:
        cs.favorite(db, name, item)


def item_titled(db, start: str) -> int:
    return db.execute("SELECT id FROM items WHERE title LIKE ?", [start + "%"]).fetchone()[0]


# --- reading a title's protection ---------------------------------------------------------


def test_a_titles_protected_spans_follow_bibtex_s_rule():
    assert protected_spans(r"{DNA} repair in {Escherichia coli}") == [
        ("DNA", True),
        (" repair in ", False),
        ("Escherichia coli", True),
    ]
    assert protected_spans("The {{Ising}} model") == [("The ", False), ("Ising", True), (" model", False)]
    assert protected_spans(r"{Die gegenw{\"a}rtige Situation}") == [("Die gegenwärtige Situation", True)]
    # a text command's argument is protected (BibTeX sees a group); an accent's is not, nor a
    # group opening with a backslash; math's braces are math's
    assert protected_spans(r"\emph{In vivo} imaging of {\"O}sterreich") == [
        ("In vivo", True),
        (" imaging of Österreich", False),
    ]
    assert protected_spans(r"Schr\"{o}dinger's {\em cat} and $\mathcal{O}(n)$ time") is None
    assert protected_spans(r"Costs \& {C\#} in $L_1$") == [("Costs & ", False), ("C#", True), (" in $L_1$", False)]
    assert protected_spans("Plain title") is None and protected_spans(None) is None


def test_only_a_key_the_exports_can_write_and_the_person_cites_is_kept():
    for key in ("smith2020quantum", "Onsager:1944", "Schroedinger_1935", "vaswaniAttentionAllYou2017", "ITEM-1"):
        assert cite_key(key) == key
    # Zotero's CSL-JSON id, a RIS record number, keys no BibTeX entry could carry
    for key in ("http://zotero.org/users/local/AbC/items/5CUHD3SQ", "1234", "a b", "x,y", "a{b}", "50%", None, ""):
        assert cite_key(key) is None
    # hermes's own keys: generated again for the item
    for key in ("arxiv-2401.12345", "arxiv-hep-th-9901001", "doi-10.1000-twin-i7", "hermes-0123456789ab"):
        assert cite_key(key) is None and cite_key(key.upper()) is None
    assert cite_key("arxiv-smith2020") == "arxiv-smith2020"  # a person's, only alike


def test_the_library_s_title_is_written_only_where_it_reads_as_the_item_s():
    spans = protected_spans("The {Ising} model")
    assert bib_title({"title": "The Ising model", "title_spans": spans}) == "The {Ising} model"
    assert bib_title({"title": r"The \emph{Ising} model", "title_spans": spans}) == "The {Ising} model"
    # the feed's newer title: hermes's own guess, as without a library
    assert bib_title({"title": "The Ising model, revised", "title_spans": spans}) == "The {Ising} model, revised"
    # what the library's text holds is escaped as a feed's is: no live TeX reaches the file
    hostile = r"{^^5cinput x} and {100\%} \& {A \write18{rm}} $\input{x}$"
    written = bib_title(
        {"title": r"^^5cinput x and 100% & A \write18rm $\input{x}$", "title_spans": protected_spans(hostile)}
    )
    assert written == r"{\^{}\^{}5cinput x} and {100\%} \& {A \textbackslash{}write18rm} \$\textbackslash{}input\{x\}\$"


# --- the round trip ------------------------------------------------------------------------


def test_a_better_bibtex_export_round_trips_its_keys_and_braces(db, feed):
    result = imported(db, (FILES / "better_bibtex.bib").read_text())
    assert result["matched_by"] == {"arxiv": 2} and result["created"] == 1
    lindahl = item_titled(db, "DNA repair")
    into_corpus(db, liked(db))
    out = entries(exported(db))
    assert set(out) == {"ising1925beitrag", "lindahlDNARepairEscherichia2023", "vaswaniAttentionAllYou2017"}
    # matched to the feed's listing: the library's braces, not hermes's guess
    assert out["ising1925beitrag"]["title"] == "The {Ising} Model of Ferromagnetism on a {Bethe} Lattice"
    assert out["lindahlDNARepairEscherichia2023"]["title"] == "{DNA} repair in {Escherichia coli}: the {RecA} pathway"
    # a title the library left unprotected: hermes's guess, as before (Title Case: none)
    assert out["vaswaniAttentionAllYou2017"]["title"] == "Attention Is All You Need"
    # the other formats give the same keys
    assert {e["id"] for e in json.loads(exported(db, "csl-json"))} == set(out)
    assert set(re.findall(r"^ID  - (.+)$", exported(db, "ris"), re.M)) == set(out)
    assert lindahl in liked(db)


def test_a_jabref_file_with_strings_and_comments_round_trips_its_keys_and_braces(db, feed):
    result = imported(db, (FILES / "jabref_protected.bib").read_text())
    assert result["entries"] == 3 and result["n_refused"] == 0 and result["created"] == 2
    into_corpus(db, liked(db))
    bib = exported(db)
    out = entries(bib)
    assert set(out) == {"Onsager:1944", "Schroedinger_1935", "Streams2024"}
    assert out["Onsager:1944"]["title"] == (
        "Crystal statistics of the two-dimensional {Ising} model with an order-disorder transition"
    )
    assert out["Schroedinger_1935"]["title"] == r"{Die gegenw{\"a}rtige Situation in der Quantenmechanik}"
    # the feed lists a newer version under another title: its title, hermes's guess
    assert out["Streams2024"]["title"] == "Stellar streams in the {Milky} {Way} halo, revisited with {Gaia} {DR3}"
    assert out["Onsager:1944"]["journal"] == "Physical Review Letters"
    # and the export imports back as the library it came from
    assert {e.key for e in read(bib).entries} == set(out)


def test_a_second_import_changes_nothing_and_exports_the_same_bytes(db, feed):
    text = (FILES / "better_bibtex.bib").read_text()
    imported(db, text)
    into_corpus(db, liked(db))
    rows = db.execute("SELECT * FROM corpus_item_library ORDER BY item_id").fetchall()
    first = exported(db)
    again = imported(db, text)
    assert again["created"] == 0 and again["liked"] == 0
    assert db.execute("SELECT * FROM corpus_item_library ORDER BY item_id").fetchall() == rows
    assert exported(db) == first


def test_an_item_rated_before_the_import_keeps_its_rating_and_gets_the_key(db, feed):
    ann = require_user(db, "ann")
    record_click(db, ann["id"], feed["ising"], False, "ui")  # disliked before
    record_click(db, ann["id"], feed["attention"], True, "ui")  # liked before
    imported(db, (FILES / "better_bibtex.bib").read_text())
    labels = dict(db.execute("SELECT item_id, label FROM clicks WHERE user_id = ?", [ann["id"]]).fetchall())
    assert labels[feed["ising"]] == "dislike" and labels[feed["attention"]] == "like"
    into_corpus(db, [feed["ising"], feed["attention"]])
    assert set(entries(exported(db))) == {"ising1925beitrag", "vaswaniAttentionAllYou2017"}


def test_a_key_renamed_in_the_library_and_imported_again_is_the_exported_one(db, feed):
    bib = "@article{old2024, title = {The {Ising} model of ferromagnetism on a Bethe lattice}, eprint = {2401.12345}}"
    imported(db, bib)
    into_corpus(db, [feed["ising"]])
    assert set(entries(exported(db))) == {"old2024"}
    # a RIS file can say no title protection, nor its record number a key: the BibTeX's stays
    imported(db, "TY  - JOUR\nID  - 77\nTI  - The Ising model\nUR  - https://arxiv.org/abs/2401.12345\nER  - \n")
    assert entries(exported(db)).keys() == {"old2024"}
    # (the library's protection alone: no guess added for its Bethe)
    assert entries(exported(db))["old2024"]["title"] == "The {Ising} model of ferromagnetism on a Bethe lattice"
    imported(db, bib.replace("old2024", "new2024"))
    assert set(entries(exported(db))) == {"new2024"}


# --- keys unique across an export ----------------------------------------------------------


def test_two_items_claiming_one_key_leave_it_to_the_lower_id(db, feed):
    make_persona(db, "bob", "spin glasses")
    imported(db, "@article{Smith2020, title = {x}, eprint = {2401.12345}}")
    imported(db, "@article{smith2020, title = {y}, eprint = {2402.00001}}", name="bob")  # case aside, the same
    into_corpus(db, [feed["ising"], feed["other"]])
    assert set(entries(exported(db))) == {"Smith2020", "arxiv-2402.00001"}


def test_hermes_s_own_export_imported_back_keeps_its_keys_on_their_items(db, feed, add_items):
    """Another persona imports ann's export: its keys are hermes's, generated again the same,
    and none is stored to move to another item (two items of one DOI, found as the first)."""
    (first,) = add_items([{"title": "A first listing of the twin paper", "guid": "doi:10.1000/t"}])
    (twin,) = add_items([{"title": "Spin glasses on sparse random graphs, a twin", "url": "https://doi.org/10.1000/t"}])
    into_corpus(db, [feed["ising"], twin, first])
    before = corpus_export.export(db, require_user(db, "ann")["id"], "bibtex").keys
    assert sorted(before) == sorted(["arxiv-2401.12345", "doi-10.1000-t", f"doi-10.1000-t-i{twin}"])
    make_persona(db, "bob", "spin glasses")
    imported(db, exported(db), name="bob")
    assert db.execute("SELECT count(*) FROM corpus_item_library WHERE key IS NOT NULL").fetchone() == (0,)
    assert corpus_export.export(db, require_user(db, "ann")["id"], "bibtex").keys == before


def test_csl_json_citation_keys_are_kept_and_uris_are_not(db, feed):
    items = [
        {"id": "http://zotero.org/users/local/x/items/A1", "title": "Attention Is All You Need", "type": "article"},
        {
            "id": "item-2",
            "citation-key": "isingBethe2024",
            "title": "The Ising model of ferromagnetism on a Bethe lattice",
            "URL": "https://arxiv.org/abs/2401.12345",
        },
    ]
    imported(db, json.dumps(items))
    into_corpus(db, [feed["ising"], feed["attention"]])
    assert set(entries(exported(db))) == {"isingBethe2024", "arxiv-1706.03762"}


# --- the vault --------------------------------------------------------------------------------


def test_a_synced_note_keeps_its_name_and_the_persons_text_when_an_import_keys_its_item(db, feed, tmp_path):
    into_corpus(db, [feed["ising"], feed["other"]])
    folder = tmp_path / "vault"
    ann = require_user(db, "ann")
    vault.sync(db, ann, folder)
    (note,) = [p for p in folder.glob("*.md") if "2401.12345" in p.name]
    mine = "My notes on the Bethe lattice.\n"
    note.write_text(note.read_text() + mine)

    imported(db, (FILES / "better_bibtex.bib").read_text())
    report = vault.sync(db, ann, folder)
    assert report.written == [note.name] and report.removed == [] and report.kept == []
    names = sorted(p.name for p in folder.glob("*.md"))
    assert len(names) == 2 and note.name in names  # no second note, none renamed
    text = note.read_text()
    assert text.endswith(vault.MARKER + "\n" + mine)
    assert yaml.safe_load(text.split("---\n")[1])["key"] == "ising1925beitrag"  # the key to cite
    assert vault.sync(db, ann, folder).written == []  # and stable from then on
    cursor = json.loads((folder / vault.CURSOR).read_text())["notes"][str(feed["ising"])]
    assert cursor["file"] == note.name and cursor["key"] == "arxiv-2401.12345"
    # a rebuild keeps the name too; a new note is named by the library's key, made safe
    assert vault.sync(db, ann, folder, rebuild=True).written == []
    imported(db, "@article{Ising:1925/a, title = {x}, eprint = {1706.03762}}")
    into_corpus(db, [feed["attention"]])
    vault.sync(db, ann, folder)
    assert (folder / "Attention Is All You Need (Ising-1925-a).md").exists()


def test_a_vault_copied_without_its_cursor_keeps_the_notes_named_before_the_import(db, feed, tmp_path):
    into_corpus(db, [feed["ising"]])
    folder = tmp_path / "vault"
    ann = require_user(db, "ann")
    vault.sync(db, ann, folder)
    (note,) = folder.glob("*.md")
    mine = "Mine.\n"
    note.write_text(note.read_text() + mine)
    imported(db, (FILES / "better_bibtex.bib").read_text())
    (folder / vault.CURSOR).unlink()  # a copy of the vault without its hidden files
    report = vault.sync(db, ann, folder)
    assert report.full and [p.name for p in folder.glob("*.md")] == [note.name]
    assert note.read_text().endswith(vault.MARKER + "\n" + mine) and 'key: "ising1925beitrag"' in note.read_text()


def test_a_new_note_does_not_take_the_name_another_note_kept(db, feed, tmp_path, add_items):
    """One article in two journal feeds: the second item's key is the first's with its id
    after it. Once a library keys the first, the second's key is the plain one, which the
    first item's note is still named by: the second's note, new, is named apart."""
    title = "Kagome magnets host flat bands"
    (first,) = add_items([{"title": title, "guid": "doi:10.1000/twin"}], feed_url="https://a.example/rss")
    (twin,) = add_items(
        [{"title": title, "guid": "b-42", "url": "https://doi.org/10.1000/twin"}], feed_url="https://b.example/rss"
    )
    into_corpus(db, [first])
    folder = tmp_path / "vault"
    ann = require_user(db, "ann")
    vault.sync(db, ann, folder)
    kept = f"{title} (doi-10.1000-twin).md"
    assert [p.name for p in folder.glob("*.md")] == [kept]
    imported(db, "@article{kagome2024, title = {Kagome magnets host flat bands}, doi = {10.1000/twin}}")
    into_corpus(db, [twin])
    assert set(entries(exported(db))) == {"kagome2024", "doi-10.1000-twin"}
    vault.sync(db, ann, folder)
    apart = f"{title} (doi-10.1000-twin-i{twin}).md"
    assert sorted(p.name for p in folder.glob("*.md")) == sorted([kept, apart])
    cursor = json.loads((folder / vault.CURSOR).read_text())["notes"]
    assert cursor[str(first)]["file"] == kept and cursor[str(twin)]["file"] == apart
    assert "kagome2024" in (folder / kept).read_text() and "kagome2024" not in (folder / apart).read_text()
    assert vault.sync(db, ann, folder, rebuild=True).written == []  # and so they stay


# --- storage ---------------------------------------------------------------------------------


def test_the_migration_adds_the_library_table():
    mem = sqlite_utils.Database(memory=True)
    for migration in schema.MIGRATIONS:
        migration.apply(mem)
    # (corpus:006_item_type adds csl_type: test_library_types)
    assert {"item_id": int, "key": str, "title_spans": str}.items() <= mem["corpus_item_library"].columns_dict.items()
    assert "corpus:005_item_library" in [m.name for m in schema.MIGRATIONS]


def test_taking_the_import_back_takes_the_names_of_the_items_it_stored(db, feed):
    imported(db, (FILES / "better_bibtex.bib").read_text())
    lindahl = item_titled(db, "DNA repair")
    assert tool(db, "reset_feedback", name="ann", confirm=True, source="bootstrap")["deleted"]["rows"]["items"] == 1
    stored = dict(db.execute("SELECT item_id, key FROM corpus_item_library").fetchall())
    assert lindahl not in stored  # gone with its item; the feed's items keep theirs
    assert stored == {feed["ising"]: "ising1925beitrag", feed["attention"]: "vaswaniAttentionAllYou2017"}


# --- it compiles ------------------------------------------------------------------------------


@pytest.mark.parametrize("style, backend", [("plain", "bibtex"), ("abbrv", "bibtex"), ("authoryear", "biber")])
def test_the_export_compiles_citing_the_library_s_keys_with_its_capitals(db, feed, tmp_path, style, backend):
    needs_tex(backend)
    imported(db, (FILES / "better_bibtex.bib").read_text())
    imported(db, (FILES / "jabref_protected.bib").read_text())
    into_corpus(db, liked(db))
    bib = exported(db)
    keys = sorted(entries(bib))
    compile_bib(tmp_path, bib, backend, style, cite=f"\\cite{{{','.join(keys)}}}")
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert "undefined" not in log, log[-2000:]  # every citation found its entry
    bbl = " ".join((tmp_path / "doc.bbl").read_text(encoding="utf-8").split())
    if backend == "bibtex":
        # plain and abbrv lowercase a title: the library's protected words keep their capitals
        assert "{DNA} repair in {Escherichia coli}: the {RecA} pathway" in bbl
        assert "The {Ising} model of ferromagnetism on a {Bethe} lattice" in bbl
    else:
        assert "\\field{title}{{DNA} repair in {Escherichia coli}: the {RecA} pathway}" in bbl, bbl
        assert "\\entry{Onsager:1944}" in bbl
