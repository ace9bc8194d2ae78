"""The corpus tables (migrations ``corpus:001_tables`` to ``corpus:006_item_type``).

Raw signals (``corpus_progress``, ``corpus_highlights``, ``corpus_notes``,
``corpus_favorites``) are the truth. ``corpus_membership`` materialises the current facets
so a write can be diffed against them; ``corpus_revision`` and ``corpus_log`` are the
per-persona revision counter and change log. Rows follow their persona when it is deleted
(``ON DELETE CASCADE``); ``item_id`` is not a key: an item is deleted only when no row of
any persona refers to it (:func:`hermes.storage.records.delete_items`), so a corpus row keeps its item.
``corpus_item_dois`` keeps the DOI a save found that the item's own fields do not carry;
``corpus_item_citation`` where an imported library entry was published (journal, volume,
issue, pages, publisher, edition, genre, and the year of that version), which no feed gives
and the exports cite — for an entry the import matched to a feed's preprint too; as CSL
keeps them, a thesis's university or a report's institution is its publisher, a report's
number its issue, genre a thesis's or report's kind. ``corpus_item_library`` what the
person's library calls an item: its cite key, its title's brace protection (BibTeX), and
its type in CSL's vocabulary (``book``, ``chapter``, ``paper-conference``, ``thesis``,
``report``, ``article-journal``, ``manuscript``), which the exports keep.
"""

from __future__ import annotations

from hermes.contract import Migration
from hermes.storage.migrations import run_script


def m001_tables(db) -> None:
    run_script(
        db,
        """
        CREATE TABLE IF NOT EXISTS corpus_progress (
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL,
            max_fraction REAL NOT NULL DEFAULT 0,
            opens INTEGER NOT NULL DEFAULT 0,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            PRIMARY KEY (user_id, item_id)
        );
        -- AUTOINCREMENT: a deleted highlight's id is never handed out again, so a client
        -- holding a stale id cannot delete a newer highlight by mistake.
        CREATE TABLE IF NOT EXISTS corpus_highlights (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL,
            text TEXT NOT NULL,
            note TEXT,
            created TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS corpus_highlights_user_item ON corpus_highlights(user_id, item_id);
        CREATE TABLE IF NOT EXISTS corpus_notes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL,
            text TEXT NOT NULL,
            created TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS corpus_notes_user_item ON corpus_notes(user_id, item_id);
        CREATE TABLE IF NOT EXISTS corpus_favorites (
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL,
            created TEXT NOT NULL,
            PRIMARY KEY (user_id, item_id)
        );
        -- trimmed_through: the newest revision dropped from the log (0 = nothing trimmed),
        -- a consumer asking for changes since an older revision has missed some.
        -- (No semicolons in these comments: run_script splits on them.)
        CREATE TABLE IF NOT EXISTS corpus_revision (
            user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
            revision INTEGER NOT NULL DEFAULT 0,
            trimmed_through INTEGER NOT NULL DEFAULT 0
        );
        -- One row per membership change, (user_id, revision) unique, so a duplicated
        -- revision cannot be stored even by a buggy writer.
        CREATE TABLE IF NOT EXISTS corpus_log (
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            revision INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('added', 'removed')),
            facet TEXT NOT NULL CHECK (facet IN ('experienced', 'saved')),
            item_id INTEGER NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (user_id, revision)
        );
        CREATE TABLE IF NOT EXISTS corpus_membership (
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL,
            facet TEXT NOT NULL CHECK (facet IN ('experienced', 'saved')),
            revision INTEGER NOT NULL,
            added TEXT NOT NULL,
            PRIMARY KEY (user_id, item_id, facet)
        );
        CREATE INDEX IF NOT EXISTS corpus_membership_facet ON corpus_membership(user_id, facet, revision)
        """,
    )


def m002_item_dois(db) -> None:
    # The DOI a save's lookup found for an item whose guid and URL do not carry it: arXiv's
    # API names a paper's journal DOI, and the shared items table has no DOI column.
    run_script(
        db,
        """
        CREATE TABLE IF NOT EXISTS corpus_item_dois (
            item_id INTEGER PRIMARY KEY,
            doi TEXT NOT NULL
        )
        """,
    )


def m003_item_citation(db) -> None:
    run_script(
        db,
        """
        CREATE TABLE IF NOT EXISTS corpus_item_citation (
            item_id INTEGER PRIMARY KEY,
            container TEXT, volume TEXT, issue TEXT, pages TEXT, publisher TEXT
        )
        """,
    )


def m004_citation_year(db) -> None:
    """The year of the published version: a library entry matched to a feed's arXiv listing
    is cited by its journal's year, not the preprint's."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(corpus_item_citation)")}
    if "year" not in columns:
        db.execute("ALTER TABLE corpus_item_citation ADD COLUMN year TEXT")


def m005_item_library(db) -> None:
    # What an imported library calls an item, so the exports give it back: its cite key (the
    # person's LaTeX cites it; a generated key broke every \cite) and, from a BibTeX file, its
    # title as read with the brace-protected spans marked (JSON ``[[text, protected], …]``).
    # Per item, no persona column: the item's own data, deleted with it
    # (hermes.storage.records.item_tables), as corpus_item_citation is.
    run_script(
        db,
        """
        CREATE TABLE IF NOT EXISTS corpus_item_library (
            item_id INTEGER PRIMARY KEY,
            key TEXT,
            title_spans TEXT
        )
        """,
    )


def m006_item_type(db) -> None:
    # The library's own type of an entry (a trial's @book, edition 2, came back out of every
    # export as @misc / GEN, its edition lost) and the fields those types need that a
    # journal's paper has not: a book's edition, a thesis's or report's kind (genre).
    added = (
        ("corpus_item_library", "csl_type"),
        ("corpus_item_citation", "edition"),
        ("corpus_item_citation", "genre"),
    )
    for table, column in added:
        columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT")


MIGRATIONS = [
    Migration(
        "corpus:001_tables",
        m001_tables,
        rows={
            "corpus_membership": ("item in the personal corpus", "items in the personal corpus"),
            "corpus_progress": ("item's reading progress", "items' reading progress"),
            "corpus_highlights": ("highlight", "highlights"),
            "corpus_notes": ("note", "notes"),
            "corpus_favorites": ("favourite", "favourites"),
            "corpus_log": ("entry of the corpus's change log", "entries of the corpus's change log"),
            "corpus_revision": ("", ""),  # the counter of that log: one row, nothing a person made
        },
    ),
    Migration("corpus:002_item_dois", m002_item_dois),
    Migration("corpus:003_item_citation", m003_item_citation),
    Migration("corpus:004_citation_year", m004_citation_year),
    Migration("corpus:005_item_library", m005_item_library),
    Migration("corpus:006_item_type", m006_item_type),
]
