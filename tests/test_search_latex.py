"""Search finds words written with LaTeX accents (a trial: ``Schr\\"odinger`` was found by
neither "Schrödinger" nor "Schrodinger"): migration ``core:m017_items_fts_readable``."""

from __future__ import annotations

import sqlite3

import pytest
from test_persona_support import make_persona, tool

from hermes.builtins.default_candidates import text_matches
from hermes.storage.db import get_db
from hermes.storage.migrations import m006_items_fts, migrate

FORMS = [
    ('Schr\\"odinger cats in a box', ["Schrödinger", "Schrodinger", "SCHRODINGER"]),
    ('Schr{\\"o}dinger bridges', ["Schrödinger", "Schrodinger"]),
    ('Schr\\"{o}dinger operators', ["Schrödinger", "schrodinger"]),
    ('Schr{\\"{o}}dinger maps', ["Schrödinger", "Schrodinger"]),
    ('Gr\\"obner bases for ideals', ["Gröbner", "Grobner"]),
    ("Koll\\'ar's conjecture", ["Kollár", "Kollar"]),
    ("Koll{\\'a}r vanishing", ["Kollár", "Kollar"]),
    ("Fran\\c cois lemma", ["François", "Francois"]),
    ("Fran\\c{c}ois theorem", ["François", "Francois"]),
    ("{\\c C}ela bound", ["Çela", "Cela"]),
    ("Espa\\~na and its rivers", ["España", "Espana"]),
    ("Espa\\~{n}a again", ["España", "Espana"]),
    ("Ch\\^ateau decomposition", ["Château", "Chateau"]),
    ("Caf\\`e society", ["Cafè", "Cafe"]),
    ("Erd\\H{o}s problems", ["Erdős", "Erdos"]),
    ("{\\v C}ech cohomology", ["Čech", "Cech"]),
    ("Mart\\'{\\i}nez estimates", ["Martínez", "Martinez"]),
    ("Stra{\\ss}e networks", ["Straße"]),
]


@pytest.fixture
def latex_items(db, add_items):
    make_persona(db)
    return add_items([{"title": title, "summary": "", "days_ago": 1} for title, _ in FORMS])


def matches(db, query: str) -> list[int]:
    """The search candidate filter's answer (rows another client writes have no embedding
    yet, so a search does not rank them: the filter is what reads the index)."""
    return sorted(text_matches(db, query.split()))


def found(db, query: str) -> list[int]:
    result = tool(db, "search_feed", user="alice", query=query, limit=50)
    assert result["ok"], result["message"]
    return [r["id"] for r in result["results"]]


@pytest.mark.parametrize("index", range(len(FORMS)))
def test_each_accent_form_is_found_by_the_unicode_and_the_plain_word(db, latex_items, index):
    for query in FORMS[index][1]:
        assert latex_items[index] in found(db, query), (FORMS[index][0], query)


def test_the_forms_of_one_word_are_all_found_and_nothing_else(db, latex_items):
    assert sorted(found(db, "Schrödinger")) == sorted(latex_items[:4])
    assert sorted(found(db, "Schrodinger operators")) == [latex_items[2]]


def test_a_word_matched_literally_finds_the_accented_text_too(db, latex_items):
    # "Kollár's" is not one token: it is a LIKE, which reads the index's text as well
    assert found(db, "Kollár's") == [latex_items[5]]
    assert found(db, "Kollar's") == [latex_items[5]]
    assert found(db, "Schrödinger-bridges") == []  # a literal word is still literal


def test_ordinary_words_are_found_as_before(db, latex_items, add_items):
    plain = add_items(
        [
            {"title": "Graph neural networks", "summary": "Message passing on graphs.", "days_ago": 1},
            {"title": "Why 100% reproducible builds matter", "summary": "", "days_ago": 1},
            {"title": "Price of $\\mathcal{O}(n^2)$ attention", "summary": "", "days_ago": 1},
        ]
    )
    assert found(db, "graphs") == [plain[0]]
    assert found(db, "graph passing") == [plain[0]]
    assert found(db, "100%") == [plain[1]]
    assert found(db, "attention") == [plain[2]]
    assert found(db, "mathcal") == [plain[2]]


def test_an_item_another_client_writes_is_indexed(tmp_path):
    path = tmp_path / "other.db"
    db = get_db(path)
    other = sqlite3.connect(path)
    other.execute("INSERT INTO items (guid, title, summary) VALUES ('x1', 'Gr\\\"obner walks', 'on K\\\"ahler')")
    other.commit()
    item = other.execute("SELECT id FROM items WHERE guid = 'x1'").fetchone()[0]
    assert matches(db, "Gröbner") == [item] and matches(db, "Kahler") == [item]
    other.execute("UPDATE items SET title = 'Plain walks' WHERE id = ?", [item])
    other.commit()
    assert matches(db, "Grobner") == [] and matches(db, "plain") == [item]
    other.execute("INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)")
    other.execute("DELETE FROM items WHERE id = ?", [item])
    other.commit()
    assert matches(db, "plain") == []
    other.execute("INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)")
    other.close()
    db.conn.close()


def test_the_migration_reindexes_an_existing_database(tmp_path):
    path = tmp_path / "old.db"
    db = get_db(path)
    # the database as m006 left it: its index cuts Schr\"odinger into "schr" and "odinger"
    for name, kind in db.execute(
        "SELECT name, type FROM sqlite_master WHERE name LIKE 'items_fts%' AND type IN ('view', 'trigger')"
    ).fetchall():
        db.execute(f"DROP {kind.upper()} {name}")
    db.execute("DROP TABLE items_fts")
    db.execute("DROP TABLE items_fts_words_vocab")  # m018's index of the words as written
    db.execute("DROP TABLE items_fts_words")
    m006_items_fts(db)
    db.execute(
        "DELETE FROM _migrations WHERE name IN "
        "('core:m017_items_fts_readable', 'core:m018_items_fts_words', 'core:m019_items_fts_scripts')"
    )
    for k in range(30):
        db.execute(
            "INSERT INTO items (guid, title, summary) VALUES (?, ?, ?)",
            [f"g{k}", f'Schr\\"odinger number {k}' if k % 2 else f"Graphs number {k}", "words"],
        )
    db.conn.commit()
    assert matches(db, "Schrodinger") == []
    assert migrate(db) == [
        "core:m017_items_fts_readable",
        "core:m018_items_fts_words",
        "core:m019_items_fts_scripts",
    ]
    indexed = db.execute("SELECT count(*) FROM items_fts_docsize").fetchone()[0]
    assert indexed == db.execute("SELECT count(*) FROM items").fetchone()[0] == 30
    assert len(matches(db, "Schrödinger")) == 15 and len(matches(db, "graph")) == 15
    assert len(matches(db, "words")) == 30
    db.execute("INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)")
    db.conn.close()


def test_the_lexical_ranking_reads_the_accented_words(db, latex_items):
    # hermes.ranking.lexical's query over the index: the interests' words, quoted, OR-ed
    from hermes.ranking.lexical import COLUMN_WEIGHTS, query_terms

    match = " OR ".join(f'"{t}"' for t in query_terms("Schrödinger equations"))
    rows = db.execute(
        "SELECT rowid, bm25(items_fts, ?, ?) FROM items_fts WHERE items_fts MATCH ?", [*COLUMN_WEIGHTS, match]
    ).fetchall()
    assert {r[0] for r in rows} == set(latex_items[:4]) and all(r[1] < 0 for r in rows)
