"""The lexical half of the profile: BM25 of the persona's interests text over item texts.

MiniLM cosine misses exact terminology a researcher writes ("Calabi-Yau", "HII regions");
a word match catches it, and on the arXiv benchmark the two together beat either alone.
SQLite's FTS5 index (``items_fts``, migration ``core:m006_items_fts``) does the matching,
so a fresh process tokenises nothing and never needs the embedding model. The scores are
cached per (database, interests text) and recomputed when the matrix's revision moves.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from hermes.text.language import INTEREST_STOP_WORDS
from hermes.text.subscripts import index_scripts

from . import column_store
from .matrix import Matrix, db_file

if TYPE_CHECKING:  # annotations only: registering the plugins loads no sqlite-utils (issue 36)
    import sqlite_utils

#: BM25 column weights (title, summary): a term in the title says more about the item.
COLUMN_WEIGHTS = (2.0, 1.0)
MAX_TERMS = 64
_CACHE_SIZE = 128


_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CACHE: OrderedDict[tuple, tuple[int, np.ndarray]] = OrderedDict()
_LOCK = threading.Lock()


def query_terms(text: str) -> list[str]:
    """The distinct content words of ``text``, in order (at most :data:`MAX_TERMS`), its
    scripts read as the index reads them ("CeCoIn$_5$" is "cecoin5")."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(index_scripts(text or "").lower()):
        if len(token) > 1 and token not in INTEREST_STOP_WORDS and not token.isdigit():
            seen.setdefault(token, None)
    return list(seen)[:MAX_TERMS]


def lexical_scores(db: sqlite_utils.Database, text: str, matrix: Matrix) -> np.ndarray | None:
    """BM25 of ``text`` for every row of ``matrix`` (0 where nothing matches), or ``None``
    when there is nothing to match with (no content words, no FTS5 index)."""
    terms = query_terms(text)
    if not terms or not len(matrix):
        return None
    key = (db_file(db), matrix.model, " ".join(terms))
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] == matrix.seq and len(hit[1]) == len(matrix):
            _CACHE.move_to_end(key)
            return hit[1]
    # a fresh process reads what a previous one computed over the same contents
    stored = ("bm25", tuple(COLUMN_WEIGHTS), tuple(terms))
    scores = column_store.load(matrix, "bm25", stored)
    if scores is None:
        scores = _bm25(db, terms, matrix)
        if scores is None:
            return None
        column_store.save_later(matrix, "bm25", stored, scores)
    with _LOCK:
        _CACHE[key] = (matrix.seq, scores)
        _CACHE.move_to_end(key)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return scores


def _bm25(db, terms: list[str], matrix: Matrix) -> np.ndarray | None:
    match = " OR ".join(f'"{t}"' for t in terms)  # quoted: no term is read as FTS syntax
    try:
        rows = db.execute(
            "SELECT rowid, bm25(items_fts, ?, ?) FROM items_fts WHERE items_fts MATCH ?",
            [*COLUMN_WEIGHTS, match],
        ).fetchall()
    except sqlite3.OperationalError:  # no FTS5 in this SQLite build, or no index
        return None
    scores = np.zeros(len(matrix))
    if rows:
        found = np.array(rows, dtype=np.float64)
        where = matrix.lookup(found[:, 0].astype(np.int64))
        keep = where >= 0
        scores[where[keep]] = -found[keep, 1]  # FTS5 reports BM25 negated (lower = better)
    return scores


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()
