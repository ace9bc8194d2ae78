"""The in-memory embedding matrix that ranking runs over.

Loaded once per (database file, embedding model) and refreshed incrementally: every
embedding write gets a higher ``items.embed_seq``, so a refresh reads only rows newer than
what is held — one indexed ``max()`` per ranking call when nothing changed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import sqlite_utils


@dataclass
class Matrix:
    model: str
    dimension: int
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    vectors: np.ndarray = None  # (n, d) float32, unit rows
    published: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    seq: int = 0
    _row: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.vectors is None:
            self.vectors = np.zeros((0, self.dimension), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.ids)

    def rows_of(self, item_ids) -> np.ndarray:
        """Row indices of the given item ids (ids not in the matrix are dropped)."""
        return np.array([self._row[i] for i in item_ids if i in self._row], dtype=np.int64)

    def vector(self, item_id: int) -> np.ndarray | None:
        row = self._row.get(int(item_id))
        return None if row is None else self.vectors[row]

    def _absorb(self, ids, vecs, published, seq) -> None:
        new_rows = []
        for k, item_id in enumerate(ids):
            row = self._row.get(item_id)
            if row is None:
                new_rows.append(k)
            else:  # re-embedded item: replace in place
                self.vectors[row] = vecs[k]
                self.published[row] = published[k]
        if new_rows:
            take = np.array(new_rows, dtype=np.int64)
            start = len(self.ids)
            self.ids = np.concatenate([self.ids, np.asarray(ids, dtype=np.int64)[take]])
            self.vectors = np.concatenate([self.vectors, vecs[take]])
            self.published = np.concatenate([self.published, published[take]])
            for offset, k in enumerate(new_rows):
                self._row[ids[k]] = start + offset
        self.seq = max(self.seq, seq)


_CACHE: dict[tuple[str, str], Matrix] = {}
_LOCK = threading.Lock()


def db_file(db: sqlite_utils.Database) -> str:
    return db.execute("PRAGMA database_list").fetchone()[2] or f":memory:{id(db.conn)}"


def get_matrix(db: sqlite_utils.Database, model: str, dimension: int) -> Matrix:
    """The up-to-date matrix of items embedded by ``model``."""
    key = (db_file(db), model)
    with _LOCK:
        matrix = _CACHE.get(key)
        if matrix is None:
            matrix = _CACHE[key] = Matrix(model=model, dimension=dimension)
        latest = db.execute("SELECT max(embed_seq) FROM items").fetchone()[0] or 0
        if latest > matrix.seq:
            _refresh(db, matrix, latest)
        return matrix


def _refresh(db: sqlite_utils.Database, matrix: Matrix, latest: int) -> None:
    rows = db.execute(
        """SELECT id, embedding, COALESCE(CAST(strftime('%s', published) AS REAL),
                                          CAST(strftime('%s', fetched) AS REAL), 0)
           FROM items
           WHERE embed_seq > ? AND embed_seq <= ? AND embedding_model = ?
           ORDER BY embed_seq""",
        [matrix.seq, latest, matrix.model],
    ).fetchall()
    if rows:
        ids = [r[0] for r in rows]
        vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        vecs = vecs.reshape(len(rows), matrix.dimension).copy()
        published = np.array([r[2] for r in rows], dtype=np.float64)
        matrix._absorb(ids, vecs, published, latest)
    else:
        matrix.seq = latest


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()
