"""Search finds a formula written with TeX scripts by the formula as a person types it (a
trial: "CeCoIn5" found no paper titled ``CeCoIn$_5$``, nor "BaCuSi2O6" ``BaCuSi$_2$O$_6$``:
the index cut them into "cecoin" and "5"). The index's text joins a script to its word
(migration ``core:m019_items_fts_scripts``, :func:`hermes.text.subscripts.index_script_steps`),
and a search reads its query the same way
(:func:`hermes.builtins.default_candidates.as_indexed`), on every face."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from test_persona_support import make_persona, tool
from typer.testing import CliRunner

from hermes.builtins.default_candidates import text_matches
from hermes.cli.app import build_app
from hermes.storage.db import get_db
from hermes.storage.migrations import fts_views, migrate
from hermes.text.subscripts import index_scripts

PAPERS = [
    {"title": "Heavy fermions in CeCoIn$_5$", "summary": "Quantum criticality near a field."},
    {"title": "Magnon condensation", "summary": "Bose-Einstein condensation in BaCuSi$_2$O$_6$ at high field."},
    {"title": "Chiral superconductivity in Sr$_2$RuO$_4$", "summary": "Knight shift under strain."},
    {"title": "Stripes in La$_{2-x}$Sr$_x$CuO$_4$", "summary": "Charge order at x = 1/8."},
    {"title": "Vortex lattice of YBa$_2$Cu$_3$O$_{7-\\delta}$ films", "summary": "Pinning."},
    {"title": "Raising the transition", "summary": "We raise $T_c$ to 40 K; $T_{\\rm c}$ of the films."},
    {"title": "Superfluid $^3$He in aerogel", "summary": "A-phase."},
    {"title": "Metamagnetism of Sr$_3$Ru$_2$O$_7$", "summary": "Nematic phase."},
    {"title": "CeCoIn5 written plainly by its feed", "summary": ""},
    {"title": "CeRhIn$_5$ under pressure", "summary": "Antiferromagnet."},
]

#: (query, indexes of PAPERS it finds)
QUERIES = [
    ("CeCoIn5", [0, 8]),
    ("cecoin5", [0, 8]),
    ("CeCoIn", [0, 8]),  # a word finds itself with a number after it, as "CeCoIn$_5$" before
    ("CeCoIn*", [0, 8]),
    ("CeCoIn$_5$", [0, 8]),  # typed as LaTeX writes it
    ("CeCoIn₅", [0, 8]),  # as the faces show it
    ("BaCuSi2O6", [1]),
    ("Sr2RuO4", [2]),
    ("Sr₂RuO₄", [2]),
    ("Sr$_2$RuO$_4$", [2]),
    ("Sr3Ru2O7", [7]),
    ("Sr", [2, 7]),  # strontium's compounds; "La2-xSrxCuO4" is one word of another element
    ("La2-xSrxCuO4", [3]),  # not one token: matched literally, in the index's reading
    ("La₂₋ₓSrₓCuO₄", [3]),
    ("YBa2Cu3O7", [4]),
    ("YBa2Cu3O", [4]),
    ("Tc", [5]),
    ("$T_c$", [5]),
    ("3He", [6]),
    ("CeRhIn5", [9]),
    ("superconductivity", [2]),
    ("fermions", [0]),
]


@pytest.fixture
def papers(db, add_items):
    make_persona(db, "cm", "heavy fermions and unconventional superconductivity")
    return add_items([{**paper, "days_ago": 1} for paper in PAPERS])


def found(db, query: str) -> list[int]:
    result = tool(db, "search_feed", user="cm", query=query, limit=50)
    assert result["ok"], result["message"]
    return sorted(r["id"] for r in result["results"])


@pytest.mark.parametrize(("query", "wanted"), QUERIES)
def test_a_formula_is_found_as_a_person_types_it(db, papers, query, wanted):
    assert found(db, query) == [papers[k] for k in wanted]


def test_the_words_around_a_formula_and_latex_symbols_are_found_as_before(db, add_items):
    make_persona(db, "cm", "physics")
    ids = add_items(
        [
            {"title": "Running of $\\alpha_s$ at low scales", "summary": ""},
            {"title": "Sparse codes with an $\\ell_1$ penalty", "summary": ""},
            {"title": "Halo counts in $\\Lambda$CDM simulations", "summary": ""},
            {"title": "Price of $\\mathcal{O}(n^2)$ attention", "summary": ""},
            {"title": "Gap $\\Delta_0$ and $\\Delta_{\\rm gap}$", "summary": ""},
            {"title": "It costs $5 and $10 today", "summary": ""},
        ]
    )
    assert found(db, "alpha") == [ids[0]]  # a symbol's script stays a word of its own
    assert found(db, "ℓ₁ penalty") == [ids[1]]
    assert found(db, "ΛCDM") == found(db, "Lambda") == [ids[2]]
    assert found(db, "mathcal attention") == [ids[3]]
    assert found(db, "Δ₀") == found(db, "gap") == [ids[4]]
    assert found(db, "$5") == [ids[5]]  # a price is no script


def test_the_cli_and_the_web_search_find_the_formula(db_path, db, papers):
    from web_support import client

    run = CliRunner().invoke(build_app(), ["persona", "search", "cm", "CeCoIn5", "--json", "--db", str(db_path)])
    assert run.exit_code == 0, run.output
    assert sorted(r["id"] for r in json.loads(run.stdout)["results"]) == [papers[0], papers[8]]
    with client(db_path) as web:
        page = web.get("/search?user=cm&q=BaCuSi2O6").text
    assert [int(i) for i in re.findall(r'<article class="item[^"]*" id="item-(\d+)"', page)] == [papers[1]]


def test_the_index_reads_what_the_query_reader_reads(db, add_items):
    # one table of replacements: m019's views in SQL and index_scripts in Python agree
    texts = [p["title"] + " " + p["summary"] for p in PAPERS] + ["CeCoIn${}_5$ and $\\mathrm{Sr_2RuO_4}$", "$x^2$"]
    ids = add_items([{"title": t, "summary": t} for t in texts])
    for item, text in zip(ids, texts, strict=True):
        title, summary = db.execute("SELECT title, summary FROM items_fts_text WHERE id = ?", [item]).fetchone()
        if "\\" not in text:  # m017 reads a text with a backslash first (its accents, lower case)
            assert title == summary == index_scripts(text), text
    assert index_scripts("Heavy fermions in CeCoIn$_5$") == "heavy fermions in cecoin5"
    assert index_scripts("Sr$_2$RuO$_4$ and $T_{\\rm c}$") == "sr2ruo4 and $tc"
    assert index_scripts("no math: snake_case x^2") == "no math: snake_case x^2"


def test_the_lexical_ranking_reads_the_formula(db, papers):
    from hermes.ranking.lexical import query_terms

    assert query_terms("heavy fermions in CeCoIn$_5$") == ["heavy", "fermions", "cecoin5"]
    rows = db.execute("SELECT rowid FROM items_fts WHERE items_fts MATCH ?", ['"cecoin5"']).fetchall()
    assert sorted(r[0] for r in rows) == [papers[0], papers[8]]


def _as_m018_left_it(db) -> None:
    """The database as m018 left it: m017's reading of the text, both indexes built on it."""
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE name LIKE 'items_fts_scripts%'").fetchall():
        db.execute(f"DROP VIEW {name}")
    db.execute("DROP VIEW items_fts_text")
    db.execute(f"CREATE VIEW items_fts_text AS {fts_views()[-1][1]}")
    for index in ("items_fts", "items_fts_words"):
        db.execute(f"INSERT INTO {index} ({index}) VALUES ('rebuild')")
    db.execute("DELETE FROM _migrations WHERE name = 'core:m019_items_fts_scripts'")


def test_an_existing_database_is_reindexed_by_the_migration(tmp_path):
    db = get_db(tmp_path / "old.db")
    _as_m018_left_it(db)
    for k, paper in enumerate(PAPERS):
        db.execute(
            "INSERT INTO items (guid, title, summary) VALUES (?, ?, ?)", [f"g{k}", paper["title"], paper["summary"]]
        )
    db.conn.commit()
    assert sorted(text_matches(db, ["CeCoIn5"])) == [9]  # the plain one only: m018's index cut the others
    assert migrate(db) == ["core:m019_items_fts_scripts"]
    assert sorted(text_matches(db, ["CeCoIn5"])) == [1, 9]
    assert text_matches(db, ["BaCuSi2O6"]) == [2] and text_matches(db, ["Tc"]) == [6]
    # the triggers index a change as the views read it, and unindex what they indexed
    db.execute("UPDATE items SET title = 'Heavy fermions in CeIrIn$_5$' WHERE id = 1")
    db.execute("DELETE FROM items WHERE id = 2")
    assert text_matches(db, ["CeIrIn5"]) == [1] and text_matches(db, ["BaCuSi2O6"]) == []
    for index in ("items_fts", "items_fts_words"):
        db.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 1)")
    assert migrate(db) == []
    db.conn.close()


def test_an_item_another_client_writes_is_indexed(tmp_path):
    path = tmp_path / "other.db"
    db = get_db(path)
    other = sqlite3.connect(path)
    other.execute("INSERT INTO items (guid, title, summary) VALUES ('x1', 'Magnons in BaCuSi$_2$O$_6$', '')")
    other.commit()
    item = other.execute("SELECT id FROM items WHERE guid = 'x1'").fetchone()[0]
    assert text_matches(db, ["BaCuSi2O6"]) == [item]
    other.execute("DELETE FROM items WHERE id = ?", [item])
    other.commit()
    assert text_matches(db, ["BaCuSi2O6"]) == []
    other.execute("INSERT INTO items_fts_words (items_fts_words, rank) VALUES ('integrity-check', 1)")
    other.close()
    db.conn.close()


@pytest.mark.parametrize(
    "query, wanted",
    [
        ("Temperley-Lieb", [0]),  # the feed's "Temperley--Lieb", shown "Temperley–Lieb"
        ("Temperley–Lieb", [0]),  # pasted as the faces show it
        ("Kazhdan-Lusztig", [1]),
        ("SL(2,Z)", [2, 3]),  # "{\rm SL}(2,\mathbb{Z})", shown "SL(2,ℤ)"; and "SL_2(\mathbb{Z})"
        ("SL(2,ℤ)", [2, 3]),
        ("mean-field", [1]),
    ],
)
def test_a_word_typed_with_punctuation_finds_its_parts_with_other_punctuation_between(db, add_items, query, wanted):
    """A retrial: "Temperley-Lieb", "Kazhdan–Lusztig" (pasted from the page) and "SL(2,Z)"
    found nothing; only the text's exact spelling did. Parts far apart are not a match."""
    make_persona(db, "alg", "representation theory")
    ids = add_items(
        [
            {"title": "Markov traces on Temperley--Lieb algebras", "summary": "Jones index."},
            {"title": "Kazhdan--Lusztig cells", "summary": "A mean--field picture."},
            {"title": "Centralizers of $\\mathbb{Z}^2 \\rtimes {\\rm SL}(2,\\mathbb{Z})$-actions", "summary": ""},
            {"title": "Modular forms", "summary": "Forms on $SL_2(\\mathbb{Z})$ of half weight."},
            {"title": "Temperley and the lattice", "summary": "As Lieb showed, the ice model is exact."},
        ]
    )
    answer = tool(db, "search_feed", user="alg", query=query, limit=50)
    assert sorted(r["id"] for r in answer["results"]) == [ids[i] for i in wanted], answer["message"]


def test_an_umlaut_spelled_out_finds_the_letter(db, add_items):
    """A retrial: "Groebner" and "Kaehler" found nothing; "Grobner" and "Kahler" did."""
    make_persona(db, "alg", "algebraic geometry")
    ids = add_items(
        [
            {"title": 'Gr\\"obner bases of toric ideals', "summary": ""},
            {"title": 'K\\"ahler manifolds of constant curvature', "summary": ""},
            {"title": "Queue lengths", "summary": ""},
        ]
    )
    for query, wanted in (("Groebner", [0]), ("Kaehler manifolds", [1]), ("Gröbner", [0]), ("queue", [2])):
        answer = tool(db, "search_feed", user="alg", query=query, limit=50)
        assert sorted(r["id"] for r in answer["results"]) == [ids[i] for i in wanted], query
