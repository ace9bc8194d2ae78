"""A search word finds itself and its inflections, not the words its stem begins (a trial:
``hermes persona search qi witness`` answered "the best 10 of 105 items matching 'witness'"
where 2 of 165 items hold "witness": the porter index cut it to "wit" and the search asked
for the prefix "wit*", which every "with", "within" and "without" matched). The rule is
:func:`hermes.builtins.default_candidates.text_matches`, so every face (CLI, MCP, web) keeps
it; the index of the words as written is migration ``core:m018_items_fts_words``.

A second trial: ``hermes persona search kondo superconduct`` found 21 of the 44 items holding
that string, none of the "superconductor(s)" or "superconductivity" papers, and
``superconduct*`` found nothing. A word of ``PREFIX_FROM`` (7) letters or more now also finds
the longer words it begins, as typed, and ``word*`` does at any length."""

from __future__ import annotations

import json
import re

import pytest
from test_persona_support import make_persona, tool
from typer.testing import CliRunner

from hermes.builtins.default_candidates import PREFIX_FROM, inflection_root, text_matches, word_forms
from hermes.cli.app import build_app
from hermes.storage.db import get_db
from hermes.storage.migrations import migrate

WITNESS = [
    {"title": "Entanglement witness for three qubits", "summary": "A witness operator built from local measurements."},
    {"title": "Witnesses of entanglement in photonic chips", "summary": "Two witnesses compared."},
    {"title": "Entanglement witnessed in a cold-atom lattice", "summary": "Detected with few copies."},
]
#: items that share the letters of porter's stem "wit" and nothing else of "witness"
FILLER = [
    {"title": f"Entanglement in qubit array {k}", "summary": f"We work with {k} qubits within a trap, without loss."}
    for k in range(12)
]


@pytest.fixture
def archive(db, add_items, no_bar):
    make_persona(db, "qi", "quantum information and entanglement")
    return add_items(
        [{**item, "days_ago": 1} for item in WITNESS + FILLER],
        feed_url="https://example.org/qi.xml",
        feed_title="QI",
    )


def matches(db, query: str) -> set[int]:
    return set(text_matches(db, query.split()))


def test_a_word_finds_its_inflections_and_not_the_words_its_stem_begins(db, archive):
    witness = set(archive[:3])
    assert matches(db, "witness") == witness
    assert matches(db, "witnesses") == witness
    assert matches(db, "Witnessed") == witness
    assert matches(db, "entanglement witness") == witness
    assert matches(db, "with") == set(archive[2:])  # "with" is a word of its own
    assert len(matches(db, "entanglement")) == len(archive)


def test_search_feed_counts_the_real_matches(db, archive):
    result = tool(db, "search_feed", user="qi", query="witness", limit=2)
    assert result["ok"], result["message"]
    assert {r["id"] for r in result["results"]} <= set(archive[:3]) and result["count"] == 2
    assert result["message"].startswith("the best 2 of 3 items matching 'witness'")
    every = tool(db, "search_feed", user="qi", query="entanglement witness", limit=50)
    assert sorted(r["id"] for r in every["results"]) == archive[:3]
    assert every["message"].startswith("3 items matching 'entanglement witness'")


def test_the_cli_search_finds_the_witness_items_only(db_path, db, archive):
    def run(*words: str):
        return CliRunner().invoke(build_app(), ["persona", "search", "qi", *words, "--db", str(db_path)])

    found = run("witness", "--json")
    assert found.exit_code == 0, found.output
    assert sorted(r["id"] for r in json.loads(found.stdout)["results"]) == archive[:3]
    assert "3 items matching 'witness'" in run("witness").stdout
    assert json.loads(run("witnesses", "--json").stdout)["count"] == 3


def test_the_web_search_finds_the_witness_items_only(db_path, db, archive):
    from web_support import client

    with client(db_path) as web:
        page = web.get("/search?user=qi&q=entanglement+witness").text
    shown = [int(i) for i in re.findall(r'<article class="item[^"]*" id="item-(\d+)"', page)]
    assert sorted(shown) == archive[:3]


@pytest.mark.parametrize(
    ("query", "found", "not_found"),
    [
        ("general", ["general", "generals"], ["generation", "generate", "generic", "generous", "genera"]),
        ("universe", ["universe", "universes"], ["university", "universal", "universities"]),
        ("network", ["network", "networks", "networked", "networking"], ["net", "nets"]),
        ("net", ["net", "nets", "netting"], ["network", "netherlands", "nether"]),
        ("hoping", ["hope", "hoped", "hopes", "hoping"], ["hop", "hopping"]),
        ("study", ["study", "studies", "studied", "studying"], ["student", "studio"]),
        ("controlled", ["control", "controls", "controlling"], ["controller"]),
        ("used", ["use", "uses", "using"], ["user", "usual", "us"]),
        ("graph", ["graph", "graphs", "graphing"], ["graphene", "graphite"]),
    ],
)
def test_other_words_whose_stem_is_a_common_prefix(db, add_items, query, found, not_found):
    ids = add_items([{"title": f"On {w}", "summary": ""} for w in found + not_found])
    by_word = dict(zip(found + not_found, ids, strict=True))
    assert matches(db, query) == {by_word[w] for w in found}
    assert matches(db, query.upper()) == {by_word[w] for w in found}


def test_every_inflection_begins_where_the_vocabulary_is_read():
    # word_forms reads the vocabulary from the root (less a last "e" or "i") on, and at most
    # four letters longer: every form of a root must lie there
    words = (
        "witness witnesses witnessed witnessing hope hoped hoping hopes hop hopped hopping study "
        "studies studied studying agree agreed agreeing control controlled controlling controls "
        "generate generated generating generates size sizing sized trouble troubling troubled "
        "enable enabling run running runs use used using uses need needed needing cry cried "
        "cries crying file filing filed universe universes network networked networking"
    ).split()
    for word in words:
        root = inflection_root(word)
        start = root[:-1] if root[-1:] in ("e", "i") else root
        assert word.startswith(start) and len(word) <= len(root) + 4, (word, root)


def test_short_and_unusual_words(db, add_items):
    a, b, c = add_items(
        [
            {"title": "Is it a qi gas?", "summary": ""},
            {"title": "Gases and x-ray", "summary": ""},
            {"title": "Søren and Schrödinger", "summary": ""},
        ]
    )
    assert matches(db, "is") == {a} and matches(db, "qi") == {a}
    assert matches(db, "x-ray") == {b}  # literal, by LIKE, as before
    assert matches(db, "Søren") == {c} and matches(db, "schrodinger") == {c}
    assert all(f.startswith('"') and f.endswith('"') for f in word_forms(db, "gases"))


def test_an_existing_database_is_indexed_by_the_migration(tmp_path):
    db = get_db(tmp_path / "old.db")
    # the database as m017 left it: no index of the words as written
    for trigger in ("insert", "delete", "unindex", "update"):
        db.execute(f"DROP TRIGGER items_fts_words_{trigger}")
    db.execute("DROP TABLE items_fts_words_vocab")
    db.execute("DROP TABLE items_fts_words")
    db.execute("DELETE FROM _migrations WHERE name IN ('core:m018_items_fts_words', 'core:m019_items_fts_scripts')")
    for k, text in enumerate(["Entanglement witnesses", "with", "within reach", "Witnessing it"]):
        db.execute("INSERT INTO items (guid, title, summary) VALUES (?, ?, '')", [f"g{k}", text])
    db.conn.commit()
    assert migrate(db) == ["core:m018_items_fts_words", "core:m019_items_fts_scripts"]
    assert sorted(text_matches(db, ["witness"])) == [1, 4]
    db.execute("UPDATE items SET title = 'a witness' WHERE id = 2")
    db.execute("DELETE FROM items WHERE id = 1")
    assert sorted(text_matches(db, ["witness"])) == [2, 4]
    db.execute("INSERT INTO items_fts_words (items_fts_words, rank) VALUES ('integrity-check', 1)")
    db.conn.close()


SUPERCONDUCT = [
    {"title": "Kondo effect in a superconductor", "summary": "A magnetic impurity in an s-wave superconductor."},
    {"title": "Superconductors with strong spin-orbit coupling", "summary": "Two superconductors compared."},
    {"title": "Superconductivity near a Kondo lattice", "summary": "Heavy fermions."},
    {"title": "Superconducting qubits", "summary": "Coherence of a superconducting loop."},
    {"title": "The Kondo lattice on a graph", "summary": "Spin chains and a network of dots."},
    {"title": "Graphene nanoribbons", "summary": "Spinor states on the honeycomb; paragraphs of topology."},
]


@pytest.fixture
def condensed(db, add_items, no_bar):
    make_persona(db, "kondo", "heavy fermions and superconductivity")
    return add_items(
        [{**item, "days_ago": 1} for item in SUPERCONDUCT],
        feed_url="https://example.org/cm.xml",
        feed_title="CM",
    )


def test_a_long_word_finds_the_words_it_begins(db, condensed):
    superconduct = set(condensed[:4])
    assert matches(db, "superconduct") == superconduct  # superconductor(s), -ivity, -ing
    assert matches(db, "Superconduct") == superconduct
    assert matches(db, "superconduct*") == superconduct
    assert matches(db, "kondo superconduct") == {condensed[0], condensed[2]}
    # as typed, never by its root: "superconductors" finds "superconductor" (its inflection),
    # not "superconductivity" nor "superconducting"
    assert matches(db, "superconductors") == set(condensed[:2])
    assert matches(db, "topolog") == {condensed[5]}


def test_a_shorter_word_begins_others_only_with_a_star(db, condensed):
    assert PREFIX_FROM == 7
    assert matches(db, "topolo") == set()  # 6 letters: the word itself
    assert matches(db, "topolo*") == {condensed[5]}
    assert matches(db, "graph") == {condensed[4]}  # not "graphene"
    assert matches(db, "graph*") == {condensed[4], condensed[5]}  # at a word start: not "paragraphs"
    assert matches(db, "spin") == {condensed[1], condensed[4]}  # "spin-orbit", "spin": not "spinor"
    assert matches(db, "spin*") == {condensed[1], condensed[4], condensed[5]}
    assert matches(db, "net") == set() and matches(db, "net*") == {condensed[4]}
    assert all(f.endswith('"') for f in word_forms(db, "graph"))
    assert word_forms(db, "graph*")[-1] == '"graph"*'


def test_a_starred_word_without_the_index_is_its_letters(db, condensed):
    db.execute("DROP TABLE items_fts_words")  # a SQLite without FTS5: every word is a LIKE
    db.execute("DROP TABLE items_fts")
    assert matches(db, "graph*") == {condensed[4], condensed[5]}
    assert matches(db, "superconduct*") == set(condensed[:4])


def test_every_face_counts_the_words_a_prefix_finds(db_path, db, condensed):
    from web_support import client

    result = tool(db, "search_feed", user="kondo", query="superconduct", limit=2)
    assert result["ok"], result["message"]
    assert {r["id"] for r in result["results"]} <= set(condensed[:4]) and result["count"] == 2
    assert result["message"].startswith("the best 2 of 4 items matching 'superconduct'")
    starred = tool(db, "search_feed", user="kondo", query="graph*", limit=10)
    assert sorted(r["id"] for r in starred["results"]) == condensed[4:]

    cli = CliRunner().invoke(build_app(), ["persona", "search", "kondo", "superconduct", "--db", str(db_path)])
    assert cli.exit_code == 0, cli.output
    assert "4 items matching 'superconduct'" in cli.stdout

    with client(db_path) as web:
        page = web.get("/search?user=kondo&q=kondo+superconduct").text
    shown = [int(i) for i in re.findall(r'<article class="item[^"]*" id="item-(\d+)"', page)]
    assert sorted(shown) == [condensed[0], condensed[2]]
