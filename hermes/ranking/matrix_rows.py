"""The Matrix: every embedded item's vector and preference keys, which ranking runs over.

Next to each vector the matrix keeps the item's preference keys (tags, content type,
source, authors, keyphrase topics; see :mod:`hermes.ranking.preferences`) as flat (row, key
column) pairs, so scoring never goes back to SQLite row by row.

The vectors are float32, or — for a large archive (``[ranking] matrix``, chosen by
:func:`hermes.ranking.matrix_loader.choose_storage`) — int8 codes
(:mod:`hermes.ranking.quantized`): then :meth:`Matrix.product` is approximate,
:attr:`Matrix.vectors` does not exist, and :meth:`Matrix.exact_rows` reads exact rows back
from the database for the short list that :func:`hermes.ranking.rank.rank` scores again.

The views a scorer is handed: :class:`CandidateVectors` (some rows, not copied) and
:class:`EntryShare` (per key pair, 1 / the keys of its family). The process cache is
:mod:`hermes.ranking.matrix`, the reading of SQLite and the snapshot
:mod:`hermes.ranking.matrix_loader`.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading

import numpy as np

from . import reference
from .preferences import FAMILIES
from .quantized import ExactRows, Int8Candidates, Int8Rows
from .threads import one_blas_thread

_TOKENS = itertools.count(1)
#: rows per block of :meth:`Matrix.product` (768 kB of float32 384-d rows)
PRODUCT_BLOCK = 512
#: threads of :meth:`Matrix.product` (each on one BLAS thread), for matrices this large
PRODUCT_THREADS = min(2, os.cpu_count() or 1)
PRODUCT_SPLIT_ROWS = 50_000
#: above this many columns :meth:`Matrix.product` hands the whole product to BLAS. At 1M
#: rows on two shared cores the blocked pass was measured faster up to 21 columns (9: 634 vs
#: 795 ms; 21: 850 vs 1,108 ms): the first ranking's profile (about 9 columns) and every
#: liked item's column at once (up to 17: the classifier and 16 likes) are blocked.
BLAS_COLUMNS = 32


class Matrix:
    def __init__(self, model: str, dimension: int, storage: str = "float32"):
        self.model = model
        self.dimension = dimension
        #: "float32", or "int8": the rows as codes (:class:`~hermes.ranking.quantized.Int8Rows`),
        #: every product approximate, exact rows read back by :attr:`exact`
        self.storage = storage
        self._int8 = Int8Rows(dimension) if storage == "int8" else None
        self.exact: ExactRows | None = None
        #: unique per matrix object and never reused: caches of derived scores key on it
        self.token = next(_TOKENS)
        #: the database file it mirrors (set by :func:`hermes.ranking.matrix.get_matrix`; "" when built by hand)
        self.db_path = ""
        self.seq = 0
        self.n = 0
        # Over-allocated buffers: appending a few items does not copy the whole matrix.
        self._vectors = np.zeros((0, dimension), dtype=np.float32)
        self._ids = np.zeros(0, dtype=np.int64)
        self._published = np.zeros(0, dtype=np.float64)
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None
        #: key string -> column; an item's keys are flat (row, column) pairs
        self.key_index: dict[str, int] = {}
        # int32: at a million items the pairs are millions (half the bytes of int64)
        self.key_rows = np.zeros(0, dtype=np.int32)
        self.key_cols = np.zeros(0, dtype=np.int32)
        self._derived: dict = {}  # summaries of the current contents, dropped on change
        #: restored from a snapshot: its ``(count, id sum)`` (matrix_store.fingerprint)
        self.fingerprint: tuple[int, int] | None = None
        #: a snapshot not yet checked against the database: the check, answering whether it
        #: stands (hermes.ranking.matrix.confirm); ``rejected`` once it did not
        self.pending = None
        self.rejected = False
        self._pending_keys: list = []

    # Views of the filled part; a holder of an older view keeps a consistent snapshot.
    @property
    def ids(self) -> np.ndarray:
        return self._ids[: self.n]

    @property
    def vectors(self) -> np.ndarray:
        """The float32 rows (float32 storage only: int8 storage never holds them all)."""
        if self._int8 is not None:
            raise TypeError("this matrix is stored in int8: use product(), select() or exact_rows()")
        return self._vectors[: self.n]

    def exact_rows(self, rows) -> np.ndarray:
        """``(len(rows), d)`` float32: the exact vectors of ``rows`` (in int8 storage read
        back from the database; a row it no longer has comes from the codes)."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._int8 is None:
            return self.vectors[rows]
        vectors, found = self.exact.read(self.ids[rows]) if self.exact else (None, np.zeros(len(rows), bool))
        if not found.all():
            missing = np.flatnonzero(~found)
            if vectors is None:
                vectors = np.zeros((len(rows), self.dimension), dtype=np.float32)
            vectors[missing] = self._int8.dequantise(rows[missing])
        return vectors

    @property
    def nbytes(self) -> int:
        """Bytes held by the rows' vectors (codes and scales in int8 storage)."""
        return self._int8.nbytes if self._int8 is not None else self._vectors.nbytes

    @property
    def published(self) -> np.ndarray:
        return self._published[: self.n]

    def __len__(self) -> int:
        return self.n

    def approx_rows(self, rows) -> np.ndarray:
        """``(len(rows), d)`` float32 vectors of ``rows`` without a database read: exact in
        float32 storage, decoded from the codes in int8 storage."""
        rows = np.asarray(rows, dtype=np.int64)
        return self.vectors[rows] if self._int8 is None else self._int8.dequantise(rows)

    def rows_of(self, item_ids) -> np.ndarray:
        """Row indices of the given item ids (ids not in the matrix are dropped)."""
        rows = self.lookup(np.fromiter((int(i) for i in item_ids), dtype=np.int64))
        return rows[rows >= 0]

    def lookup(self, item_ids: np.ndarray) -> np.ndarray:
        """Row of each id (vectorised), ``-1`` where the id is not in the matrix."""
        item_ids = np.asarray(item_ids, dtype=np.int64)
        if self._sorted is None or len(self._sorted[0]) != self.n:
            # A first load reads the table in rowid order: its ids are usually sorted
            # already, and checking is much cheaper than sorting a million of them.
            if self.n < 2 or bool(np.all(self.ids[1:] > self.ids[:-1])):
                self._sorted = (self.ids, np.arange(self.n))
            else:
                order = np.argsort(self.ids, kind="stable")
                self._sorted = (self.ids[order], order)
        keys, order = self._sorted
        if not len(keys):
            return np.full(len(item_ids), -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(keys, item_ids), len(keys) - 1)
        return np.where(keys[pos] == item_ids, order[pos], -1)

    def vector(self, item_id: int) -> np.ndarray | None:
        row = int(self.lookup(np.array([int(item_id)]))[0])
        return None if row < 0 else self.exact_rows([row])[0]

    # --- derived summaries, cached until the contents change ------------------------------

    def derived(self, name, compute):
        """``compute()``, kept until the contents change: for summaries of the items that
        no persona changes (the mean vector, the key pairs by column, inferred categories)."""
        if name not in self._derived:
            self._derived[name] = compute()
        return self._derived[name]

    def mean_vector(self) -> np.ndarray:
        """The average item vector."""

        def compute():
            if not self.n:
                return np.zeros(self.dimension, dtype=np.float32)
            if self._int8 is not None:
                return self._int8.mean()
            return self.vectors.mean(axis=0).astype(np.float32)

        return self.derived("mean", compute)

    def mean_column(self) -> np.ndarray:
        """``vectors @ mean`` over every row (float32), shared by every persona: added to a
        like's column it gives back the plain cosine, v·l = v·(l − mean) + v·mean."""
        return self.derived("mean_column", lambda: self.product(self.mean_vector()[None, :])[0])

    def derived_for_snapshot(self) -> dict[str, np.ndarray]:
        """The summaries that depend on the contents alone (no persona), computed by the
        same methods a ranking uses, as arrays for :mod:`matrix_store`: a fresh process
        that loads them skips about a second of work at a million items."""
        order, starts = self.pairs_by_column()
        rows, vectors = reference.sample(self)
        return {
            "derived_mean": self.mean_vector(),
            "derived_mean_column": self.mean_column(),
            "derived_entry_counts": self.entry_share().counts,
            "derived_pair_order": order,
            "derived_pair_starts": starts,
            # a fresh process read the sample's rows from SQLite (int8: 1,000 random rows of
            # the table) and hashed every id (issue 36: 18 and 13 ms of its first call at 1M)
            "derived_reference_rows": rows,
            "derived_reference_vectors": vectors,
            "derived_ids_hash": np.array(self.layout()[-1]),
        }

    def restore_derived(self, arrays) -> None:
        """Take back what :meth:`derived_for_snapshot` gave, for these same contents (none
        when ``arrays`` lack them)."""
        if "derived_mean" not in arrays:
            return
        self._derived = {
            "mean": arrays["derived_mean"],
            "mean_column": arrays["derived_mean_column"],
            "entry_share": EntryShare(arrays["derived_entry_counts"]),
            ("pairs", len(self.key_index)): (arrays["derived_pair_order"], arrays["derived_pair_starts"]),
        }
        if "derived_ids_hash" in arrays:  # not in snapshots written before them
            self._derived["reference_sample"] = (arrays["derived_reference_rows"], arrays["derived_reference_vectors"])
            self._derived[("ids_hash", self.n)] = str(arrays["derived_ids_hash"])

    def layout(self) -> tuple:
        """What identifies these contents in any process: model, storage, embedding
        sequence, rows and a hash of their ids in row order (scores stored per row by
        :mod:`hermes.ranking.column_store` are filed under it)."""
        ids_hash = self.derived(
            ("ids_hash", self.n), lambda: hashlib.blake2b(self.ids.tobytes(), digest_size=16).hexdigest()
        )
        return (self.model, self.storage, self.dimension, self.seq, self.n, ids_hash)

    def key_family(self) -> np.ndarray:
        """Each key column's family: its index in :data:`FAMILIES`."""

        def compute():
            prefixes = [next((f for f, p in enumerate(FAMILIES) if k.startswith(p)), 0) for k in self.key_index]
            return np.array(prefixes, dtype=np.int64)

        return self.derived(("family", len(self.key_index)), compute)

    def entry_share(self) -> np.ndarray:
        """For each (row, key) pair, 1 / the number of keys of that family the row has: the
        weight that turns a per-family sum into a per-family mean."""

        def compute():
            # int32 slots while they fit (half the bytes of millions of pairs); the reciprocal
            # taken per slot, then gathered: the same values as 1 / counts[slot]
            wide = self.n * len(FAMILIES) >= np.iinfo(np.int32).max
            family = self.key_family().astype(np.int64 if wide else np.int32)
            slot = self.key_rows.astype(family.dtype) * len(FAMILIES)
            if len(self.key_cols):
                slot += family[self.key_cols]
            counts = np.bincount(slot, minlength=self.n * len(FAMILIES))
            return EntryShare(np.minimum(counts, np.iinfo(np.uint16).max).astype(np.uint16)[slot])

        return self.derived("entry_share", compute)

    def key_sums(self, values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Per row, the sum of ``values[column]`` (times ``weights`` per pair) over the row's
        keys; ``values`` is indexed by :attr:`key_index`, missing columns count as 0.

        Only the pairs of the non-zero columns are read (a persona's statistics touch a few
        keys; adding a zero changes no sum), grouped by column: the cost follows the rows
        those keys are on, not every pair of the matrix. Each row sums its terms in column
        order, so the same ``values`` always give the same bits."""
        values = np.asarray(values, dtype=np.float64)[: len(self.key_index)]
        columns = np.flatnonzero(values)
        if not len(columns):
            return np.zeros(self.n)
        order, starts = self.pairs_by_column()
        take = np.concatenate([order[starts[c] : starts[c + 1]] for c in columns])
        per_pair = np.repeat(values[columns], starts[columns + 1] - starts[columns])
        if weights is not None:
            per_pair = per_pair * weights[take]
        return np.bincount(self.key_rows[take], weights=per_pair, minlength=self.n)[: self.n]

    def pairs_by_column(self) -> tuple[np.ndarray, np.ndarray]:
        """``(order, starts)``: ``order[starts[c]:starts[c + 1]]`` are the pairs of key
        column ``c``, in pair order."""

        def compute():
            # a stable sort of 16-bit keys is a radix sort: several times faster on millions
            small = len(self.key_index) <= np.iinfo(np.uint16).max
            order = np.argsort(self.key_cols.astype(np.uint16) if small else self.key_cols, kind="stable").astype(
                np.int32
            )
            counts = np.bincount(self.key_cols, minlength=len(self.key_index))
            return order, np.concatenate([[0], np.cumsum(counts)])

        return self.derived(("pairs", len(self.key_index)), compute)

    def product(self, weights: np.ndarray) -> np.ndarray:
        """``(m, n)``: ``vectors @ w`` for each of the ``m`` rows of ``weights``, in one pass
        over the matrix.

        In blocks of rows that stay in cache, on one BLAS thread per worker (two halves of a
        large matrix on two threads): BLAS's own product with a handful of columns was
        measured at 2–4 passes' time on two shared cores, the blocked one at about one pass
        (the matrix is read once, the weights stay in cache)."""
        weights = np.ascontiguousarray(np.atleast_2d(weights), dtype=np.float32)
        if self._int8 is not None:  # approximate (about 3e-3 at most): see rank's re-score
            return self._int8.product(weights)
        out = np.empty((len(weights), self.n), dtype=np.float32)
        if len(weights) > BLAS_COLUMNS:  # enough columns for BLAS's blocking to pay
            np.matmul(weights, self.vectors.T, out=out)
            return out
        wt = np.ascontiguousarray(weights.T)

        def blocks(first: int, last: int) -> None:
            block = np.empty((PRODUCT_BLOCK, len(weights)), dtype=np.float32)
            for start in range(first, last, PRODUCT_BLOCK):
                stop = min(start + PRODUCT_BLOCK, last)
                part = block[: stop - start]
                np.matmul(self.vectors[start:stop], wt, out=part)
                out[:, start:stop] = part.T

        # Blocks always start at multiples of PRODUCT_BLOCK: the same bits whatever the split.
        blocks_total = -(-self.n // PRODUCT_BLOCK)
        splits = min(PRODUCT_THREADS, max(1, self.n // PRODUCT_SPLIT_ROWS))
        edges = [min(self.n, (blocks_total * k // splits) * PRODUCT_BLOCK) for k in range(splits + 1)]
        with one_blas_thread():
            workers = [
                threading.Thread(target=blocks, args=(a, b)) for a, b in zip(edges[1:-1], edges[2:], strict=True)
            ]
            for worker in workers:  # numpy lets go of the GIL inside the product
                worker.start()
            blocks(edges[0], edges[1])
            for worker in workers:
                worker.join()
        return out

    def has_key(self, key: str) -> np.ndarray:
        """Boolean mask of the rows carrying ``key``."""
        mask = np.zeros(self.n, dtype=bool)
        column = self.key_index.get(key)
        if column is not None:
            mask[self.key_rows[self.key_cols == column]] = True
        return mask

    def key_count(self, key: str) -> int:
        """How many rows carry ``key`` (counted once per contents for every key)."""
        column = self.key_index.get(key)
        if column is None:
            return 0
        counts = self.derived("key_counts", self._key_counts)
        return int(counts[column]) if column < len(counts) else 0

    def _key_counts(self) -> np.ndarray:
        """Rows per key column: the steps of :meth:`pairs_by_column`'s starts when they are
        held (restored from the snapshot: no pass over millions of pairs), else counted."""
        pairs = self._derived.get(("pairs", len(self.key_index)))
        if pairs is not None:
            return np.diff(pairs[1])
        return np.bincount(self.key_cols, minlength=len(self.key_index))

    def has_any_key(self, keys) -> np.ndarray:
        """Boolean mask of the rows carrying at least one of ``keys``."""
        columns = [self.key_index[k] for k in keys if k in self.key_index]
        mask = np.zeros(self.n, dtype=bool)
        if columns:
            mask[self.key_rows[np.isin(self.key_cols, columns)]] = True
        return mask

    def select(self, rows: np.ndarray):
        """The vectors of ``rows``: the matrix itself when every row is kept, else a
        :class:`CandidateVectors` that does not copy them."""
        if self._int8 is not None:
            return Int8Candidates(self._int8, None if len(rows) == self.n else rows, self.n)
        if len(rows) == self.n:
            return self.vectors
        return CandidateVectors(self.vectors, rows)

    # --- growth ---------------------------------------------------------------------------

    def absorb(self, ids, vecs, published, pair_at, pair_code, names, *, fresh=False) -> None:
        """Add or replace rows. Their keys come as pairs: ``pair_at`` indexes ``ids``,
        ``pair_code`` indexes ``names`` (the distinct key strings). ``fresh``: the caller
        knows none of the ids is held yet (a first load), so no lookup is needed."""
        self._derived = {}
        ids = np.asarray(ids, dtype=np.int64)
        rows = np.full(len(ids), -1, dtype=np.int64) if fresh else self.lookup(ids)
        old = rows >= 0
        if old.any():  # re-embedded items: replace in place, keys re-read
            if self._int8 is not None:
                self._int8.replace(rows[old], vecs[old])
                if self.exact is not None:
                    self.exact.forget(ids[old])
            else:
                self._vectors[rows[old]] = vecs[old]
            self._published[rows[old]] = published[old]
            gone = np.isin(self.key_rows, rows[old])
            self.key_rows, self.key_cols = self.key_rows[~gone], self.key_cols[~gone]
        new = np.flatnonzero(~old)
        start = self.n
        if len(new):
            self._reserve(start + len(new))
            take = slice(None) if len(new) == len(ids) else new
            self._ids[start : start + len(new)] = ids[take]
            if self._int8 is not None:
                self._int8.append(vecs[take])
            else:
                self._vectors[start : start + len(new)] = vecs[take]
            self._published[start : start + len(new)] = published[take]
            rows[new] = np.arange(start, start + len(new))
            self.n = start + len(new)
            self._sorted = None
        if len(pair_at):
            self._pending_keys.append(
                (rows[np.asarray(pair_at)].astype(np.int32), np.asarray(pair_code, dtype=np.int32), names)
            )

    def commit_keys(self) -> None:
        """Fold the keys gathered by :meth:`absorb` into the flat pair arrays (once per
        refresh: concatenating per chunk would copy the growing arrays again and again)."""
        if not self._pending_keys:
            return
        index = self.key_index
        rows, cols = [self.key_rows], [self.key_cols]
        for at, code, names in self._pending_keys:
            column_of = np.array([index.setdefault(k, len(index)) for k in names], dtype=np.int64)
            rows.append(at)
            cols.append(column_of[code].astype(np.int32))
        self.key_rows, self.key_cols = np.concatenate(rows), np.concatenate(cols)
        self._pending_keys = []
        self._derived = {}

    def seal(self) -> None:
        """After a refresh: int8 storage trims the room it reserved and merges segments."""
        if self._int8 is not None:
            self._int8.seal()

    def _reserve(self, size: int) -> None:
        if self._int8 is not None and size - self.n > self._int8.room():
            self._int8.reserve(size - self.n)
        if size <= len(self._ids):
            return
        capacity = max(size, int(len(self._ids) * 1.5) + 1024) if self.n else size
        if self._int8 is None:
            vectors = np.empty((capacity, self.dimension), dtype=np.float32)
            vectors[: self.n] = self.vectors
            self._vectors = vectors
        ids = np.zeros(capacity, dtype=np.int64)
        ids[: self.n] = self.ids
        published = np.zeros(capacity, dtype=np.float64)
        published[: self.n] = self.published
        self._ids, self._published = ids, published


class EntryShare:
    """Per (row, key) pair, 1 / the number of keys of that family the row has, kept as the
    counts (uint16: 2 bytes a pair instead of a float64's 8, at a million items 11 MB
    instead of 44) and divided when read — ``1.0 / k`` is the same float64 either way."""

    def __init__(self, counts: np.ndarray):
        self.counts = counts

    def __len__(self) -> int:
        return len(self.counts)

    def __getitem__(self, take) -> np.ndarray:
        return 1.0 / self.counts[take]

    def __array__(self, dtype=None, copy=None):
        share = 1.0 / self.counts
        return share if dtype is None else share.astype(dtype)


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
