"""The large-archive storage of the embedding matrix: int8 codes in memory, exact rows from SQLite.

At a million 384-d items the float32 matrix alone is 1.5 GB. In int8 storage each row is
kept as 384 signed bytes and one float32 scale (``v ≈ scale × codes``, scale = max |v| /
:data:`CODE_RANGE`): 388 MB. Every component scores every row against the codes, through ONNX Runtime's
``DynamicQuantizeMatMul`` (it multiplies int8 without widening it: a pass with 9–21 query
columns took a quarter of numpy's float32 pass at 1M rows, one column about the same;
numpy's own int8 product widens every block first and was 1.6–2.1× slower than float32).
The largest error of a cosine is about 3e-3, so :func:`hermes.ranking.rank.rank` re-scores
its short list with the exact float32 rows, read from the ``items`` table by id
(:class:`ExactRows`): the full matrix is never held in float32, not even while loading
(rows are read and quantised a chunk at a time).

The codes are held transposed (384 × rows, the layout the kernel reads) in a few
contiguous segments: a first load fills one segment sized for it, rows a refresh adds go
to a new small segment, and small segments are merged as they accumulate.
"""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import threading
from collections import OrderedDict

import numpy as np

#: exact rows :class:`ExactRows` keeps (1.5 kB each at 384-d: 6 MB)
KEEP_ROWS = 4096
#: a segment is merged into the one before when it grows to this share of that one's size
MERGE_SHARE = 0.25

_SESSION = None
_SESSION_LOCK = threading.Lock()


def release_free_memory() -> None:
    """Hand the C heap's freed pages back to the system (glibc's ``malloc_trim``; elsewhere
    nothing). A ranking at a million rows frees hundreds of MB of temporaries that glibc
    otherwise keeps mapped: measured 998 → 782 MB of RSS between two rankings."""
    global _TRIM
    if _TRIM is None:
        try:
            _TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM = None


#: the largest code: 7 bits, not 8. ONNX Runtime's u8 × s8 kernel on CPUs without VNNI
#: (AVX2, AVX-512F) sums pairs of products in int16 and saturates: with codes up to 127 a
#: vector's product with itself came out 0.98, a cosine 0.02 off (measured on a Xeon with
#: AVX-512F only); with codes up to 63 no pair can overflow and the largest error is
#: 2e-3 (what ONNX Runtime's own quantisation calls reduce_range). Codes written with 127
#: are still read by their scales.
CODE_RANGE = 63


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes (k, d) int8, scales (k,) float32)`` with ``vectors ≈ codes × scales``."""
    vectors = np.asarray(vectors, dtype=np.float32)
    scales = np.abs(vectors).max(axis=1) / np.float32(CODE_RANGE) if len(vectors) else np.zeros(0, np.float32)
    scales = np.where(scales > 0, scales, np.float32(1)).astype(np.float32)
    codes = np.rint(vectors / scales[:, None]).astype(np.int8)
    return codes, scales


def _session():
    """One ONNX Runtime session computing ``A @ B`` for float ``A`` (m × d) and int8 ``B``
    (d × k) with a per-column scale of ``B`` (built on first use: importing onnxruntime
    costs a fraction of a second that small archives never pay)."""
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is None:
            import onnxruntime as ort
            from onnx import TensorProto, helper

            node = helper.make_node("DynamicQuantizeMatMul", ["A", "B", "b_scale"], ["Y"], domain="com.microsoft")
            graph = helper.make_graph(
                [node],
                "int8_product",
                [
                    helper.make_tensor_value_info("A", TensorProto.FLOAT, ["m", "d"]),
                    helper.make_tensor_value_info("B", TensorProto.INT8, ["d", "k"]),
                    helper.make_tensor_value_info("b_scale", TensorProto.FLOAT, ["k"]),
                ],
                [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["m", "k"])],
            )
            model = helper.make_model(
                graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
            )
            options = ort.SessionOptions()
            options.intra_op_num_threads = min(2, os.cpu_count() or 1)
            options.log_severity_level = 3
            # no arena: it would keep the largest output it ever made (a product of 17
            # columns at a million rows is 68 MB) for the life of the process
            options.enable_cpu_mem_arena = False
            _SESSION = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        return _SESSION


def int8_product(weights: np.ndarray, codes_t: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """``(m, k)``: ``weights @ (codes_t × scales)`` for float ``weights`` (m × d).

    The kernel quantises ``weights`` per tensor; each row is brought to a largest magnitude
    of 1 first (and the result scaled back), so a small column (a classifier's
    coefficients) keeps its precision next to a large one."""
    if not codes_t.shape[1]:
        return np.zeros((len(weights), 0), dtype=np.float32)
    peak = np.abs(weights).max(axis=1)
    peak = np.where(peak > 0, peak, 1.0).astype(np.float32)
    a = np.ascontiguousarray(weights / peak[:, None], dtype=np.float32)
    out = _session().run(None, {"A": a, "B": codes_t, "b_scale": scales})[0]
    out *= peak[:, None]
    return out


class Int8Rows:
    """The matrix's rows as int8 codes (transposed, in segments) and per-row scales."""

    def __init__(self, dimension: int):
        self.dimension = dimension
        #: [codes_t (d × k) int8, scales (k,) float32, filled k] per segment, in row order
        self.segments: list[list] = []
        #: the sum of the exact rows (float64): their mean is exact, not the codes' mean
        #: (``affinity`` centres every like on it)
        self.total = np.zeros(dimension, dtype=np.float64)

    def __len__(self) -> int:
        return sum(s[2] for s in self.segments)

    @property
    def nbytes(self) -> int:
        return sum(s[0].nbytes + s[1].nbytes for s in self.segments)

    @classmethod
    def from_arrays(cls, codes_t: np.ndarray, scales: np.ndarray, total: np.ndarray) -> Int8Rows:
        rows = cls(codes_t.shape[0])
        rows.segments = [[codes_t, scales, codes_t.shape[1]]]
        rows.total = np.asarray(total, dtype=np.float64).copy()
        return rows

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(codes_t, scales)`` of every row in one segment each (for the snapshot; a view
        when there is one segment)."""
        if len(self.segments) == 1:
            return self._filled(0)
        parts = [self._filled(k) for k in range(len(self.segments))]
        return np.concatenate([p[0] for p in parts], axis=1), np.concatenate([p[1] for p in parts])

    # --- growth ----------------------------------------------------------------------------

    def room(self) -> int:
        """Rows the last segment can still take without a new one."""
        return self.segments[-1][0].shape[1] - self.segments[-1][2] if self.segments else 0

    def reserve(self, rows: int) -> None:
        """Make room for up to ``rows`` appended rows in one new segment (a refresh knows
        how many it may read; it fills them a chunk at a time)."""
        self.seal()
        if rows:
            self.segments.append([np.zeros((self.dimension, rows), dtype=np.int8), np.ones(rows, dtype=np.float32), 0])

    def append(self, vectors: np.ndarray) -> None:
        self.total += np.asarray(vectors, dtype=np.float32).sum(axis=0, dtype=np.float64)
        codes, scales = quantise(vectors)
        last = self.segments[-1] if self.segments else None
        if last is None or last[0].shape[1] - last[2] < len(codes):
            self.reserve(len(codes))
            last = self.segments[-1]
        at = last[2]
        last[0][:, at : at + len(codes)] = codes.T
        last[1][at : at + len(codes)] = scales
        last[2] = at + len(codes)

    def replace(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        # the replaced rows' exact vectors are gone: their codes stand in for them in the sum
        self.total += (np.asarray(vectors, dtype=np.float64) - self.dequantise(rows)).sum(axis=0)
        codes, scales = quantise(vectors)
        for k, (segment, column) in enumerate(zip(*self._locate(rows), strict=True)):
            self.segments[segment][0][:, column] = codes[k]
            self.segments[segment][1][column] = scales[k]

    def seal(self) -> None:
        """Trim unfilled room and merge a small last segment into the one before."""
        if not self.segments:
            return
        last = self.segments[-1]
        if last[2] < last[0].shape[1]:
            if last[2] == 0:
                self.segments.pop()
            else:
                self.segments[-1] = [np.ascontiguousarray(last[0][:, : last[2]]), last[1][: last[2]].copy(), last[2]]
        while len(self.segments) > 1 and self.segments[-1][2] >= MERGE_SHARE * self.segments[-2][2]:
            b, a = self.segments.pop(), self.segments.pop()
            self.segments.append([np.concatenate([a[0], b[0]], axis=1), np.concatenate([a[1], b[1]]), a[2] + b[2]])

    # --- reading ---------------------------------------------------------------------------

    def _starts(self) -> np.ndarray:
        return np.cumsum([0] + [s[2] for s in self.segments])

    def _locate(self, rows) -> tuple[np.ndarray, np.ndarray]:
        starts = self._starts()
        rows = np.asarray(rows, dtype=np.int64)
        segment = np.searchsorted(starts, rows, side="right") - 1
        return segment, rows - starts[segment]

    def product(self, weights: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """``(m, len(rows))`` (every row when ``None``): each row's approximate product
        with each of the ``m`` rows of ``weights``."""
        weights = np.atleast_2d(np.asarray(weights, dtype=np.float32))
        if rows is not None:
            codes_t, scales = self.gather(rows)
            return int8_product(weights, codes_t, scales)
        if len(self.segments) == 1:
            return int8_product(weights, *self._filled(0))
        out = np.empty((len(weights), len(self)), dtype=np.float32)
        for k, start in enumerate(self._starts()[:-1]):
            codes_t, scales = self._filled(k)
            out[:, start : start + len(scales)] = int8_product(weights, codes_t, scales)
        return out

    def _filled(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Segment ``k``'s filled codes and scales (the whole arrays once sealed)."""
        codes_t, scales, filled = self.segments[k]
        if filled == len(scales):
            return codes_t, scales
        return np.ascontiguousarray(codes_t[:, :filled]), scales[:filled]

    def gather(self, rows) -> tuple[np.ndarray, np.ndarray]:
        """The codes (d × len(rows)) and scales of ``rows``, in that order."""
        segment, column = self._locate(rows)
        codes_t = np.empty((self.dimension, len(column)), dtype=np.int8)
        scales = np.empty(len(column), dtype=np.float32)
        for s in np.unique(segment):
            where = np.flatnonzero(segment == s)
            codes_t[:, where] = self.segments[s][0][:, column[where]]
            scales[where] = self.segments[s][1][column[where]]
        return codes_t, scales

    def dequantise(self, rows) -> np.ndarray:
        """``(len(rows), d)`` float32: the rows as the codes give them back."""
        codes_t, scales = self.gather(rows)
        return (codes_t.T.astype(np.float32) * scales[:, None]).astype(np.float32)

    def mean(self) -> np.ndarray:
        """The average exact row (float32)."""
        return (self.total / max(len(self), 1)).astype(np.float32)


class ExactRows:
    """Exact float32 embeddings read back from the ``items`` table by id, on a connection
    of this object's own (the ranking's may belong to another thread). The most recently
    read rows are kept (:data:`KEEP_ROWS`): consecutive rankings re-score mostly the same
    short list, and a click's classifier refit reads the same clicked items again."""

    def __init__(self, db_path: str, model: str, dimension: int):
        self.db_path, self.model, self.dimension = db_path, model, dimension
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, np.ndarray] = OrderedDict()

    def forget(self, ids) -> None:
        """Drop kept rows of these ids (re-embedded: the database has new vectors)."""
        with self._lock:
            for i in np.asarray(ids).tolist():
                self._kept.pop(int(i), None)

    def read(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(vectors (len(ids), d) float32, found (len(ids),) bool)``; a row not found (the
        item was deleted or re-embedded by another model since) is zeros."""
        ids = np.asarray(ids, dtype=np.int64)
        out = np.zeros((len(ids), self.dimension), dtype=np.float32)
        found = np.zeros(len(ids), dtype=bool)
        with self._lock:
            for k, i in enumerate(ids.tolist()):
                row = self._kept.get(i)
                if row is not None:
                    self._kept.move_to_end(i)
                    out[k], found[k] = row, True
            # in id order: neighbouring pages of the table (a set, not np.unique: its first
            # call imports numpy.ma, 12-17 ms of a fresh process's first ranking)
            missing = sorted(set(ids[~found].tolist()))
            if not missing:
                return out, found
            if self._conn is None:
                self._conn = sqlite3.connect(self.db_path, check_same_thread=False)
                self._conn.execute("PRAGMA query_only = 1")
            fetched = self._conn.execute(
                "SELECT id, embedding FROM items WHERE id IN (SELECT value FROM json_each(?)) AND embedding_model = ?",
                [json.dumps(missing), self.model],
            ).fetchall()
            for i, blob in fetched:
                self._kept[i] = np.frombuffer(blob, dtype=np.float32)
            while len(self._kept) > KEEP_ROWS:
                self._kept.popitem(last=False)
            rows = {i: np.frombuffer(blob, dtype=np.float32) for i, blob in fetched}
        for k in np.flatnonzero(~found):
            row = rows.get(int(ids[k]))
            if row is not None:
                out[k], found[k] = row, True
        return out, found


class Int8Candidates:
    """Some rows (or all) of an int8 matrix as a plugin's ``hermes_score`` sees them:
    ``vectors @ w`` (w: d × m) is the approximate product, never a float32 copy of the
    rows; ``np.asarray(vectors)`` widens them (costly: for a plugin that needs the rows)."""

    def __init__(self, rows8: Int8Rows, rows: np.ndarray | None, n: int):
        self._int8, self._rows = rows8, rows
        self.shape = (n if rows is None else len(rows), rows8.dimension)
        self.dtype = np.dtype(np.float32)
        self.ndim = 2

    def __len__(self) -> int:
        return self.shape[0]

    def product(self, weights: np.ndarray) -> np.ndarray:
        """``(m, len(self))``: ``weights @ vectors.T``."""
        return self._int8.product(weights, self._rows)

    def __matmul__(self, other):
        other = np.asarray(other, dtype=np.float32)
        single = other.ndim == 1
        out = self.product(other[None, :] if single else other.T)
        return out[0] if single else out.T

    def __array__(self, dtype=None, copy=None):
        rows = np.arange(self.shape[0]) if self._rows is None else self._rows
        dense = self._int8.dequantise(rows)
        return dense if dtype is None else dense.astype(dtype)
