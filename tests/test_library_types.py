"""A library's own type of each entry survives ``hermes persona import`` and comes back out of
``hermes corpus export``: a book is a ``@book`` / ``TY  - BOOK`` / ``"type": "book"`` with its
edition and publisher, a chapter an ``@incollection`` in its book, a conference paper an
``@inproceedings`` in its proceedings, a thesis a ``@phdthesis`` of its school, a report a
``@techreport`` of its institution with its number — for entries stored as items of their own
and for entries matched to a feed's listing. An item no library typed is exported as before
(the other export tests)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import bibtexparser
import pytest
import sqlite_utils
from hermes_corpus import export as corpus_export
from hermes_corpus import schema
from hermes_corpus import signals as cs
from hermes_persona.library_formats import read
from test_persona_support import make_persona, tool
from tex_support import compile_bib, needs_tex

from hermes.storage.records import require_user

FILES = Path(__file__).parent / "data" / "library"
#: each fixture's entries' types, in file order
TYPES = {
    "zotero_types.bib": ["book", "chapter", "paper-conference", "thesis", "report"],
    "jabref_types.bib": ["book", "chapter", "paper-conference", "thesis", "thesis", "report"],
    "zotero_types.ris": ["book", "chapter", "paper-conference", "thesis", "report"],
    "zotero_types.json": ["book", "chapter", "paper-conference", "thesis", "report"],
}
FORMAT_OF = {"bib": "bibtex", "ris": "ris", "json": "csl-json"}


@pytest.fixture
def feed(add_items, db):
    """Two arXiv listings the libraries name: an entry matched to one is typed too."""
    attention, gilmer = add_items(
        [
            {"title": "Attention Is All You Need", "arxiv_id": "1706.03762", "authors": ["Ashish Vaswani"]},
            {
                "title": "Neural Message Passing for Quantum Chemistry",
                "arxiv_id": "1704.01212",
                "authors": ["Justin Gilmer", "Samuel S. Schoenholz"],
            },
        ]
    )
    make_persona(db, "ann", "machine learning")
    return {"attention": attention, "gilmer": gilmer}


def imported(db, text: str, name="ann") -> dict:
    result = tool(db, "import_library", name=name, text=text)
    assert result["ok"], result["message"]
    return result


def into_corpus(db, name="ann") -> None:
    uid = require_user(db, name)["id"]
    for (item,) in db.execute("SELECT item_id FROM clicks WHERE user_id = ? ORDER BY item_id", [uid]).fetchall():
        cs.favorite(db, name, item)


def exported(db, fmt="bibtex", name="ann") -> str:
    return corpus_export.export(db, require_user(db, name)["id"], fmt).text


def bib_entries(bib: str) -> dict[str, tuple[str, dict]]:
    """The exported entries by key: their type and fields as written (braces kept)."""
    library = bibtexparser.parse_string(bib)
    assert not library.failed_blocks
    return {e.key: (e.entry_type, {k: f.value for k, f in e.fields_dict.items()}) for e in library.entries}


def ris_records(ris: str) -> dict[str, dict[str, list[str]]]:
    """The exported records by title: every tag's values."""
    out = {}
    for block in ris.split("ER  - ")[:-1]:
        tags: dict[str, list[str]] = {}
        for tag, value in re.findall(r"^([A-Z][A-Z0-9])  - (.*)$", block, re.M):
            tags.setdefault(tag, []).append(value)
        out[tags["TI"][0]] = tags
    return out


def typed_and_cited(entries) -> dict[str, tuple]:
    """What the round trip keeps, by title: each entry's type and publication fields."""
    return {e.title: (e.csl_type, e.citation) for e in entries}


# --- reading ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TYPES))
def test_each_library_reads_its_entries_types_into_csl_s_vocabulary(name):
    got = read((FILES / name).read_text())
    assert got.refused == [] and [e.csl_type for e in got.entries] == TYPES[name]
    assert all(e.content_type == "paper" for e in got.entries)  # the items' kind, as before


def test_the_fields_each_type_needs_are_read_from_every_format():
    zotero = {e.key: e.citation for e in read((FILES / "zotero_types.bib").read_text()).entries}
    assert zotero["knuth_art_1997"] == {"publisher": "Addison-Wesley", "edition": "3"}
    assert zotero["sutton_temporal_2012"]["container"] == "Reinforcement Learning: State-of-the-Art"
    assert zotero["hinton_relaxation_1977"] == {"publisher": "University of Edinburgh", "genre": "PhD thesis"}
    assert zotero["lamport_paxos_2001"] == {
        "issue": "MSR-TR-2001-57",
        "publisher": "Microsoft Research",
        "genre": "Technical Report",
    }
    jabref = {e.key: e.citation for e in read((FILES / "jabref_types.bib").read_text()).entries}
    assert jabref["Bishop2006"] == {"publisher": "Springer", "edition": "2"}  # an @string's
    assert jabref["Krizhevsky2009"]["genre"] == "Master's thesis"
    assert jabref["Hochreiter1991"] == {
        "issue": "FKI-91",
        "publisher": "Institut für Informatik, Technische Universität München",
    }
    ris = read((FILES / "zotero_types.ris").read_text()).entries
    # a book's T2 is its series (Zotero's RIS): not where it was published
    assert ris[0].citation == {"pages": "775", "publisher": "The MIT Press", "edition": "1"}
    assert ris[2].citation["container"] == "Advances in Neural Information Processing Systems 25"  # C3
    assert ris[3].citation["genre"] == "PhD thesis" and ris[4].citation["issue"] == "UTML TR 2010-003"
    csl = {e.key: e.citation for e in read((FILES / "zotero_types.json").read_text()).entries}
    assert csl["sutton_reinforcement_2018"] == {"publisher": "The MIT Press", "edition": "2"}
    assert csl["srivastava_neural_2012"]["issue"] == "UTML TR 2012-001"


def test_biblatex_s_types_and_a_classic_inbook_are_read():
    text = r"""@thesis{a, title = {A}, type = {mathesis}, institution = {ETH Z{\"u}rich}, year = 2020}
@thesis{b, title = {B}, type = {Habilitationsschrift}, institution = {Uni Wien}, year = 2020}
@report{c, title = {C}, type = {techreport}, institution = {CERN}, number = {CERN-TH-2020-1}, year = 2020}
@inbook{d, title = {D, the book}, chapter = {3}, publisher = {Wiley}, year = 2020}
@inbook{e, title = {E}, booktitle = {The Book}, publisher = {Wiley}, year = 2020}
@misc{f, title = {F}, howpublished = {Blog}, edition = {2}}
@online{g, title = {G}, url = {https://example.org/g}}"""
    got = {e.key: (e.csl_type, e.citation) for e in read(text).entries}
    assert got["a"] == ("thesis", {"publisher": "ETH Zürich", "genre": "Master's thesis"})
    assert got["b"] == ("thesis", {"publisher": "Uni Wien", "genre": "Habilitationsschrift"})
    assert got["c"] == ("report", {"issue": "CERN-TH-2020-1", "publisher": "CERN"})  # the default kind
    assert got["d"] == ("book", {"publisher": "Wiley"})  # classic BibTeX: the book's title
    assert got["e"] == ("chapter", {"container": "The Book", "publisher": "Wiley"})
    assert got["f"][0] is None and got["g"][0] is None  # no type hermes keeps


# --- exporting ----------------------------------------------------------------------------


def test_bibtex_export_writes_each_type_with_its_fields(db, feed):
    imported(db, (FILES / "zotero_types.bib").read_text())
    result = imported(db, (FILES / "jabref_types.bib").read_text())
    assert result["matched_by"] == {"arxiv": 1}  # Vaswani2017: the feed's listing
    into_corpus(db)
    out = bib_entries(exported(db))
    kind, book = out["knuth_art_1997"]
    assert kind == "book" and (book["publisher"], book["edition"], book["year"]) == ("Addison-Wesley", "3", "1997")
    assert "journal" not in book and "howpublished" not in book
    kind, bishop = out["Bishop2006"]
    assert kind == "book" and (bishop["edition"], bishop["publisher"]) == ("2", "Springer")
    kind, chapter = out["sutton_temporal_2012"]
    assert kind == "incollection" and chapter["booktitle"] == "Reinforcement Learning: State-of-the-Art"
    assert (chapter["publisher"], chapter["pages"]) == ("Springer", "31--62")
    assert out["Rumelhart1986"][0] == "incollection" and out["Rumelhart1986"][1]["volume"] == "1"
    kind, paper = out["gilmer_neural_2017"]  # matched to the feed's listing by its URL
    assert kind == "inproceedings" and paper["booktitle"].startswith("Proceedings of the 34th")
    assert (paper["pages"], paper["publisher"], paper["eprint"]) == ("1263--1272", "PMLR", "1704.01212")
    kind, paper = out["Vaswani2017"]
    assert kind == "inproceedings" and paper["booktitle"] == "Advances in Neural Information Processing Systems 30"
    assert "journal" not in paper and paper["eprint"] == "1706.03762"
    kind, thesis = out["hinton_relaxation_1977"]
    assert kind == "phdthesis" and thesis["school"] == "University of Edinburgh" and "type" not in thesis
    assert out["Schmidhuber1990"][1]["school"] == r"Technische Universit{\"a}t M{\"u}nchen"
    kind, masters = out["Krizhevsky2009"]
    assert kind == "mastersthesis" and masters["school"] == "University of Toronto" and "type" not in masters
    kind, report = out["lamport_paxos_2001"]
    assert kind == "techreport" and report["institution"] == "Microsoft Research"
    assert report["number"] == "MSR-TR-2001-57"
    assert report["type"] == "Technical Report" and "publisher" not in report
    kind, report = out["Hochreiter1991"]
    assert kind == "techreport" and report["number"] == "FKI-91" and "type" not in report


def test_ris_export_writes_each_type_with_its_tags(db, feed):
    imported(db, (FILES / "zotero_types.ris").read_text())
    imported(db, (FILES / "jabref_types.bib").read_text())
    into_corpus(db)
    out = ris_records(exported(db, "ris"))
    book = out["Deep learning"]
    assert book["TY"] == ["BOOK"] and book["PB"] == ["The MIT Press"] and book["ET"] == ["1"]
    assert "T2" not in book  # a book is in no container (Zotero reads a book's T2 as its series)
    assert out["Pattern Recognition and Machine Learning"]["ET"] == ["2"]
    chapter = out["Gradient-based learning applied to document recognition, revisited"]
    assert chapter["TY"] == ["CHAP"] and chapter["T2"] == ["Neural Networks: Tricks of the Trade"]
    assert (chapter["SP"], chapter["EP"], chapter["PB"], chapter["ET"]) == (["9"], ["48"], ["Springer"], ["2"])
    conference = out["ImageNet classification with deep convolutional neural networks"]
    assert conference["TY"] == ["CONF"]
    assert conference["T2"] == conference["C3"] == ["Advances in Neural Information Processing Systems 25"]
    attention = out["Attention Is All You Need"]  # matched: a conference paper, not the preprint
    assert attention["TY"] == ["CONF"] and attention["M2"] == ["arXiv: 1706.03762"] and "DB" not in attention
    thesis = out["Learning deep generative models"]
    assert thesis["TY"] == ["THES"] and thesis["PB"] == ["University of Toronto"] and thesis["M3"] == ["PhD thesis"]
    masters = out["Learning multiple layers of features from tiny images"]
    assert masters["TY"] == ["THES"] and masters["M3"] == ["Master's thesis"]
    report = out["A practical guide to training restricted Boltzmann machines"]
    assert report["TY"] == ["RPRT"] and report["SN"] == ["UTML TR 2010-003"] and "IS" not in report
    assert report["PB"] == ["University of Toronto, Department of Computer Science"]
    assert report["M3"] == ["Technical Report"]


def test_csl_json_export_writes_each_type_with_its_fields(db, feed):
    import jsonschema

    imported(db, (FILES / "zotero_types.json").read_text())
    imported(db, (FILES / "jabref_types.bib").read_text())
    into_corpus(db)
    items = json.loads(exported(db, "csl-json"))
    jsonschema.validate(items, json.loads((Path(__file__).parent / "data" / "csl-data.json").read_text()))
    out = {i["citation-key"]: i for i in items}
    book = out["sutton_reinforcement_2018"]
    assert (book["type"], book["edition"], book["publisher"]) == ("book", "2", "The MIT Press")
    assert "container-title" not in book
    chapter = out["graves_long_2012"]
    assert chapter["type"] == "chapter" and chapter["container-title"].startswith("Supervised Sequence Labelling")
    assert (chapter["page"], chapter["publisher"], chapter["edition"]) == ("37–45", "Springer", "1")
    conference = out["ioffe_batch_2015"]
    assert conference["type"] == "paper-conference" and conference["container-title"].startswith("Proceedings of")
    attention = out["Vaswani2017"]
    assert attention["type"] == "paper-conference" and attention["note"] == "arXiv: 1706.03762"
    assert attention["publisher"] == "Curran Associates" and "number" not in attention
    thesis = out["sutskever_training_2013"]
    assert (thesis["type"], thesis["genre"], thesis["publisher"]) == ("thesis", "PhD thesis", "University of Toronto")
    assert out["Krizhevsky2009"]["genre"] == "Master's thesis"
    report = out["srivastava_neural_2012"]
    assert (report["type"], report["number"], report["genre"]) == ("report", "UTML TR 2012-001", "Technical Report")
    assert "issue" not in report


# --- the round trip -----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["bibtex", "ris", "csl-json"])
@pytest.mark.parametrize("name", sorted(TYPES))
def test_every_export_imports_back_with_the_same_types_and_fields(db, feed, name, fmt):
    original = read((FILES / name).read_text()).entries
    imported(db, (FILES / name).read_text())
    into_corpus(db)
    back = read(exported(db, fmt), fmt).entries
    assert typed_and_cited(back) == typed_and_cited(original)


@pytest.mark.parametrize("name", sorted(TYPES))
def test_importing_the_export_again_changes_nothing(db, feed, name):
    fmt = FORMAT_OF[name.rsplit(".", 1)[1]]
    imported(db, (FILES / name).read_text())
    into_corpus(db)
    first = exported(db, fmt)
    # (a title's case hermes's BibTeX guessed, "{Netzen}", is the library's once imported)
    queries = ("SELECT item_id, key, csl_type FROM corpus_item_library", "SELECT * FROM corpus_item_citation")
    rows = [db.execute(f"{q} ORDER BY item_id").fetchall() for q in queries]
    again = imported(db, first)
    assert again["created"] == 0 and again["liked"] == 0
    assert [db.execute(f"{q} ORDER BY item_id").fetchall() for q in queries] == rows
    assert exported(db, fmt) == first


def test_the_latest_library_to_type_an_item_wins_and_an_untyped_entry_leaves_it(db, feed):
    def exported_type() -> str:
        return bib_entries(exported(db))["gilmer"][0]

    imported(db, "@misc{gilmer, title = {x}, eprint = {1704.01212}}")
    into_corpus(db)
    assert exported_type() == "misc"  # no type: as before
    imported(db, "@inproceedings{gilmer, title = {x}, booktitle = {ICML}, eprint = {1704.01212}}")
    assert exported_type() == "inproceedings"
    imported(db, "@misc{gilmer, title = {x}, eprint = {1704.01212}}")  # says no type: kept
    assert exported_type() == "inproceedings"
    imported(db, "@book{gilmer, title = {x}, publisher = {P}, eprint = {1704.01212}}")
    assert exported_type() == "book"


def test_a_citation_stored_before_the_types_gets_their_fields_from_the_same_publication(db, feed):
    """Imported before ``corpus:006_item_type``: the book's citation row has no edition, the
    thesis's no school. Importing the library again fills them in; a citation naming
    another publication is left as it is."""
    imported(db, "@book{b, title = {A book on message passing}, publisher = {P}, edition = {2}, eprint = {1704.01212}}")
    imported(db, "@phdthesis{t, title = {A thesis on attention}, school = {Uni}, eprint = {1706.03762}}")
    db.execute("UPDATE corpus_item_citation SET edition = NULL, genre = NULL")
    db.execute("UPDATE corpus_item_citation SET publisher = NULL WHERE item_id = ?", [feed["attention"]])
    db.execute("UPDATE corpus_item_library SET csl_type = NULL")
    imported(db, "@article{b, title = {x}, journal = {J}, edition = {3}, eprint = {1704.01212}}")  # another one
    imported(db, "@phdthesis{t, title = {A thesis on attention}, school = {Uni}, eprint = {1706.03762}}")
    cited = {
        r[0]: r[1:]
        for r in db.execute("SELECT item_id, container, publisher, edition, genre FROM corpus_item_citation")
    }
    assert cited[feed["gilmer"]] == (None, "P", None, None)
    assert cited[feed["attention"]] == (None, "Uni", None, "PhD thesis")
    imported(db, "@book{b, title = {A book on message passing}, publisher = {P}, edition = {2}, eprint = {1704.01212}}")
    edition = db.execute("SELECT edition FROM corpus_item_citation WHERE item_id = ?", [feed["gilmer"]]).fetchone()
    assert edition == ("2",)


# --- storage ------------------------------------------------------------------------------


def test_the_migration_adds_the_type_and_its_fields_and_runs_once():
    mem = sqlite_utils.Database(memory=True)
    before = [m for m in schema.MIGRATIONS if m.name != "corpus:006_item_type"]
    for migration in before:
        migration.apply(mem)
    mem.execute("INSERT INTO corpus_item_library (item_id, key) VALUES (1, 'smith2020')")
    (m006,) = [m for m in schema.MIGRATIONS if m.name == "corpus:006_item_type"]
    m006.apply(mem)
    m006.apply(mem)  # a second run changes nothing
    assert mem["corpus_item_library"].columns_dict == {"item_id": int, "key": str, "title_spans": str, "csl_type": str}
    assert {"edition": str, "genre": str}.items() <= mem["corpus_item_citation"].columns_dict.items()
    assert mem.execute("SELECT * FROM corpus_item_library").fetchall() == [(1, "smith2020", None, None)]
    assert [m.name for m in schema.MIGRATIONS][-1] == "corpus:006_item_type"


# --- it compiles --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["bibtex", "biber"])
def test_the_typed_export_compiles_without_a_warning(db, feed, tmp_path, backend):
    needs_tex(backend)
    for name in sorted(TYPES):
        imported(db, (FILES / name).read_text())
    into_corpus(db)
    bib = exported(db)
    keys = sorted(bib_entries(bib))
    style = "plain" if backend == "bibtex" else "numeric"
    compile_bib(tmp_path, bib, backend, style, cite=f"\\nocite{{{','.join(keys)}}}")
    blg = (tmp_path / "doc.blg").read_text(errors="replace")
    bbl = " ".join((tmp_path / "doc.bbl").read_text(encoding="utf-8").split())
    if backend == "bibtex":
        # every entry has what plain requires of its type: no "Warning--empty publisher in …"
        assert "Warning--" not in blg, blg
        assert "Addison-Wesley, 3 edition, 1997" in bbl and "2 edition, 2006" in bbl
        assert "PhD thesis, University of Edinburgh, 1977" in bbl
        assert "Master's thesis, University of Toronto, 2009" in bbl
        assert "Technical Report MSR-TR-2001-57, Microsoft Research" in bbl
        assert "pages 31--62. Springer, 2012" in bbl  # a chapter: its book, its pages
        assert "In {\\em Advances in Neural Information Processing Systems 30}, pages 5998--6008" in bbl
    else:
        assert not re.search(r"\bWARN\b", blg), blg
        assert "\\entry{knuth_art_1997}{book}{}" in bbl and "\\field{edition}{3}" in bbl
        assert "\\entry{sutton_temporal_2012}{incollection}{}" in bbl
        assert "\\entry{hinton_relaxation_1977}{thesis}{}" in bbl and "\\field{type}{phdthesis}" in bbl
        assert "\\entry{Krizhevsky2009}{thesis}{}" in bbl and "\\field{type}{mathesis}" in bbl
        assert "\\entry{lamport_paxos_2001}{report}{}" in bbl and "\\field{number}{MSR-TR-2001-57}" in bbl
        assert "\\list{institution}{1}{% {Microsoft Research}% }" in bbl
