"""The in-memory embedding matrix that ranking runs over.

Loaded once per (database file, embedding model) and refreshed incrementally: every
embedding write gets a higher ``items.embed_seq``, so a refresh reads only rows newer than
what is held — one indexed ``max()`` per ranking call when nothing changed. Next to each
vector the matrix keeps the item's preference keys (tags, content type, source; see
:mod:`hermes.features`), so scoring never goes back to SQLite row by row. Keys are read
when an item's embedding is written; an item whose tags change later is re-read when it is
re-embedded.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import sqlite_utils

from .features import item_keys


class Matrix:
    def __init__(self, model: str, dimension: int):
        self.model = model
        self.dimension = dimension
        self.seq = 0
        self.n = 0
        # Over-allocated buffers: appending a few items does not copy the whole matrix.
        self._vectors = np.zeros((0, dimension), dtype=np.float32)
        self._ids = np.zeros(0, dtype=np.int64)
        self._published = np.zeros(0, dtype=np.float64)
        self._row: dict[int, int] = {}
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None
        #: key string -> column; an item's keys are flat (row, column) pairs
        self.key_index: dict[str, int] = {}
        self.key_rows = np.zeros(0, dtype=np.int64)
        self.key_cols = np.zeros(0, dtype=np.int64)
        self._derived: dict = {}  # summaries of the current contents, dropped on change

    # Views of the filled part; a holder of an older view keeps a consistent snapshot.
    @property
    def ids(self) -> np.ndarray:
        return self._ids[: self.n]

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors[: self.n]

    @property
    def published(self) -> np.ndarray:
        return self._published[: self.n]

    def __len__(self) -> int:
        return self.n

    def rows_of(self, item_ids) -> np.ndarray:
        """Row indices of the given item ids (ids not in the matrix are dropped)."""
        rows = self.lookup(np.asarray(list(item_ids), dtype=np.int64))
        return rows[rows >= 0]

    def lookup(self, item_ids: np.ndarray) -> np.ndarray:
        """Row of each id (vectorised), ``-1`` where the id is not in the matrix."""
        item_ids = np.asarray(item_ids, dtype=np.int64)
        if self._sorted is None or len(self._sorted[0]) != self.n:
            order = np.argsort(self.ids, kind="stable")
            self._sorted = (self.ids[order], order)
        keys, order = self._sorted
        if not len(keys):
            return np.full(len(item_ids), -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(keys, item_ids), len(keys) - 1)
        return np.where(keys[pos] == item_ids, order[pos], -1)

    def vector(self, item_id: int) -> np.ndarray | None:
        row = self._row.get(int(item_id))
        return None if row is None else self.vectors[row]

    def key_sums(self, values: np.ndarray) -> np.ndarray:
        """Per row, the sum of ``values[column]`` over the row's keys (``values`` is indexed
        by :attr:`key_index`; columns beyond its length count as 0)."""
        values = np.asarray(values, dtype=np.float64)
        padded = np.zeros(len(self.key_index))
        padded[: len(values)] = values[: len(padded)]
        return np.bincount(self.key_rows, weights=padded[self.key_cols], minlength=self.n)[: self.n]

    def mean_vector(self) -> np.ndarray:
        """The average item vector (cached until the matrix changes)."""
        if "mean" not in self._derived:
            mean = self.vectors.mean(axis=0) if self.n else np.zeros(self.dimension)
            self._derived["mean"] = mean.astype(np.float32)
        return self._derived["mean"]

    def key_family_mask(self, prefix: str) -> np.ndarray:
        """1.0 for the key columns starting with ``prefix`` (``"tag:"``…), else 0.0."""
        name = ("family", prefix, len(self.key_index))
        if name not in self._derived:
            self._derived[name] = np.array(
                [key.startswith(prefix) for key in self.key_index], dtype=np.float64)
        return self._derived[name]

    def family_counts(self, prefixes) -> dict[str, np.ndarray]:
        """Per key family, how many keys of that family each row has."""
        return {p: self._family_count(p) for p in prefixes}

    def _family_count(self, prefix: str) -> np.ndarray:
        name = ("count", prefix)
        if name not in self._derived:
            self._derived[name] = self.key_sums(self.key_family_mask(prefix))
        return self._derived[name]

    def select(self, rows: np.ndarray):
        """The vectors of ``rows``: the matrix itself when every row is kept, else a
        :class:`CandidateVectors` that does not copy them."""
        if len(rows) == self.n:
            return self.vectors
        return CandidateVectors(self.vectors, rows)

    def _absorb(self, ids, vecs, published, keys, seq) -> None:
        self._derived = {}
        replaced, new_rows = [], []
        for k, item_id in enumerate(ids):
            row = self._row.get(item_id)
            if row is None:
                new_rows.append(k)
            else:  # re-embedded item: replace in place
                self._vectors[row] = vecs[k]
                self._published[row] = published[k]
                replaced.append((row, k))
        if replaced:
            gone = np.isin(self.key_rows, [r for r, _ in replaced])
            self.key_rows, self.key_cols = self.key_rows[~gone], self.key_cols[~gone]
            self._add_keys([(r, keys[k]) for r, k in replaced])
        if new_rows:
            start, count = self.n, len(new_rows)
            self._reserve(start + count)
            take = np.array(new_rows, dtype=np.int64)
            self._ids[start : start + count] = np.asarray(ids, dtype=np.int64)[take]
            self._vectors[start : start + count] = vecs[take]
            self._published[start : start + count] = published[take]
            for offset, k in enumerate(new_rows):
                self._row[ids[k]] = start + offset
            self._add_keys([(start + offset, keys[k]) for offset, k in enumerate(new_rows)])
            self.n = start + count
        self.seq = max(self.seq, seq)

    def _reserve(self, size: int) -> None:
        if size <= len(self._ids):
            return
        capacity = max(size, int(len(self._ids) * 1.5) + 1024)
        vectors = np.zeros((capacity, self.dimension), dtype=np.float32)
        vectors[: self.n] = self.vectors
        ids = np.zeros(capacity, dtype=np.int64)
        ids[: self.n] = self.ids
        published = np.zeros(capacity, dtype=np.float64)
        published[: self.n] = self.published
        self._vectors, self._ids, self._published = vectors, ids, published

    def _add_keys(self, row_keys: list[tuple[int, list[str]]]) -> None:
        rows, cols = [], []
        for row, keys in row_keys:
            for key in keys:
                col = self.key_index.setdefault(key, len(self.key_index))
                rows.append(row)
                cols.append(col)
        if rows:
            self.key_rows = np.concatenate([self.key_rows, np.array(rows, dtype=np.int64)])
            self.key_cols = np.concatenate([self.key_cols, np.array(cols, dtype=np.int64)])


class CandidateVectors(np.lib.mixins.NDArrayOperatorsMixin):
    """Some rows of the matrix, row-aligned with the candidates, without copying them.

    Copying 100k of 384-d rows costs more than scoring them, so ``vectors @ w`` multiplies
    the whole matrix and keeps the candidates' rows (or gathers them first when they are
    few). Anything else — ``np.asarray(vectors)``, indexing, ``.T``, ``.mean()``, ufuncs —
    works on one materialised copy.
    """

    def __init__(self, base: np.ndarray, rows: np.ndarray):
        self._base = base
        self._rows = np.asarray(rows, dtype=np.int64)
        self._dense: np.ndarray | None = None
        self.shape = (len(self._rows), base.shape[1])
        self.dtype = base.dtype
        self.ndim = 2

    def __len__(self) -> int:
        return len(self._rows)

    def __matmul__(self, other):
        other = np.asarray(other)
        if self._dense is not None or len(self._rows) * 4 < len(self._base):
            return np.asarray(self) @ other
        return (self._base @ other)[self._rows]

    def __array__(self, dtype=None, copy=None):
        if self._dense is None:
            self._dense = self._base[self._rows]
        return self._dense if dtype is None else self._dense.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.matmul and method == "__call__" and inputs[0] is self and not kwargs:
            return self.__matmul__(inputs[1])
        inputs = tuple(np.asarray(x) if isinstance(x, CandidateVectors) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer, slice)):
            return self._base[self._rows[key]]
        return np.asarray(self)[key]

    def __iter__(self):
        return iter(np.asarray(self))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(np.asarray(self), name)


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
        if latest < matrix.seq:  # the file was replaced or rolled back: start over
            matrix = _CACHE[key] = Matrix(model=model, dimension=dimension)
        if latest > matrix.seq:
            _refresh(db, matrix, latest)
        return matrix


def _refresh(db: sqlite_utils.Database, matrix: Matrix, latest: int) -> None:
    # A first load scans the table in rowid order and sorts by embed_seq afterwards: about
    # twice as fast as walking the embed_seq index into random table pages.
    seq = "+embed_seq" if matrix.seq == 0 else "embed_seq"  # "+": no index, scan the table
    rows = db.execute(
        f"""SELECT id, embedding, COALESCE(CAST(strftime('%s', published) AS REAL),
                                           CAST(strftime('%s', fetched) AS REAL), 0),
                   tags, content_type, feed_id, embed_seq
            FROM items
            WHERE {seq} > ? AND {seq} <= ? AND embedding_model = ?""",
        [matrix.seq, latest, matrix.model],
    ).fetchall()
    if rows:
        rows.sort(key=lambda r: r[6])
        ids = [r[0] for r in rows]
        vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        vecs = vecs.reshape(len(rows), matrix.dimension)
        published = np.array([r[2] for r in rows], dtype=np.float64)
        keys = [item_keys(_tags(r[3]), r[4], r[5]) for r in rows]
        matrix._absorb(ids, vecs, published, keys, latest)
    else:
        matrix.seq = latest


def _tags(raw) -> list[str]:
    try:
        tags = json.loads(raw or "[]")
    except ValueError:
        return []
    return tags if isinstance(tags, list) else []


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()
