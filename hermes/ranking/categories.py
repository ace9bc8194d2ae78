"""The nearest feed category of an item that has none, so clicks on categories reach it too.

``preference`` learns from the categories feeds give their items (``tag:`` keys). A
researcher's archive mixes feeds that give them (arXiv listings) with feeds that give none
(blogs, newsletters, podcasts): once a persona has liked a few "quant-ph" papers, every
categorised quant-ph paper gains and the blog post on the same subject does not — a trial
saw every uncategorised item, relevant or not, sink below the categorised ones. An item
without categories is unknown on that family, not neutral.

So each item without a ``tag:`` key gets the category whose items it is closest to: the
nearest centroid among the categories carried by at least :data:`MIN_ITEMS` items, kept
only when the item is at least half as close to that centroid as the category's typical
item (:data:`FLOOR_SHARE`), and at a cosine of :data:`MIN_SIMILARITY` at least — an item unlike every category (a cooking blog in a physics
archive) gets none. ``preference`` counts it at :data:`WEIGHT` of a category the feed gave,
and explanations say it is inferred. Persona-free: computed once per matrix contents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import column_store
from .preferences import FAMILIES

#: a category needs this many items to have a centroid worth comparing with
MIN_ITEMS = 5
#: the most frequent categories compared with (cost: items without one × this many)
MAX_CATEGORIES = 256
#: items of a category read to place its centroid and its own items' spread
SAMPLE = 200
#: kept when the item is at least this share as close to the category's centre as the
#: category's median item is. Not "as close as most of its own items": those placed the
#: centre, so a new item on the same subject is further from it than they are (a blog post
#: is also written unlike an abstract), while an item on another subject is far below half
FLOOR_SHARE = 0.5
#: and at least this cosine, whatever the category's spread: a broad category's half-median
#: let a German news item take "hep-th" at 0.19 (a trial), a figure unrelated texts reach
MIN_SIMILARITY = 0.25
#: an inferred category counts this much of one the feed gave (chosen on
#: benchmarks/quality_mixed.py; see benchmarks/results/ranking.md, "Mixed archives")
WEIGHT = 1.0
#: rows compared per block (keeps the block's similarities small at a million items)
BLOCK = 8192
_TAG = FAMILIES.index("tag:")


@dataclass(frozen=True)
class Inferred:
    """For rows without categories that are close enough to one: the row, the key column
    of its nearest category, and the cosine to that category's centroid; ``keys`` names
    the categories compared with (key column -> ``tag:`` key)."""

    rows: np.ndarray
    columns: np.ndarray
    similarity: np.ndarray
    keys: dict = field(default_factory=dict)

    def of_row(self, row: int) -> tuple[int, float] | None:
        at = np.searchsorted(self.rows, row)
        if at < len(self.rows) and self.rows[at] == row:
            return int(self.columns[at]), float(self.similarity[at])
        return None


NONE = Inferred(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))


def inferred(matrix) -> Inferred:
    """Each uncategorised row's nearest category (see the module docstring), cached on the
    matrix until its contents change, and on disk for the next process
    (:mod:`hermes.ranking.column_store`: at a million items the comparison takes seconds)."""
    return matrix.derived(("inferred_categories", len(matrix.key_index)), lambda: _kept(matrix))


def sums(matrix, values: np.ndarray) -> np.ndarray | None:
    """Per row, ``WEIGHT`` × ``values`` of its inferred category (``values`` indexed like
    :attr:`~hermes.ranking.matrix.Matrix.key_index`), or ``None`` when no row has one."""
    found = inferred(matrix)
    if not len(found.rows) or not WEIGHT:
        return None
    out = np.zeros(len(matrix))
    out[found.rows] = WEIGHT * np.asarray(values, dtype=np.float64)[found.columns]
    return out


def _kept(matrix) -> Inferred:
    eligible, tagged = _categories(matrix)
    untagged = np.flatnonzero(~tagged)
    if not len(eligible) or not len(untagged):
        return NONE
    # filed under the categories' names: a key's column number is this process's own
    wanted = set(eligible.tolist())
    names = {c: k for k, c in matrix.key_index.items() if c in wanted}
    key = (
        "inferred",
        MIN_ITEMS,
        MAX_CATEGORIES,
        SAMPLE,
        FLOOR_SHARE,
        MIN_SIMILARITY,
        tuple(names[c] for c in eligible),
    )
    stored = column_store.load(matrix, "categories", key)
    if stored is not None:  # per row: the index of its category in ``eligible`` (or -1), cosine
        rows = np.flatnonzero(stored[:, 0] >= 0)
        return Inferred(
            rows, eligible[stored[rows, 0].astype(np.int64)], np.asarray(stored[rows, 1], dtype=np.float32), names
        )
    found, at = _infer(matrix, eligible, untagged)
    found = Inferred(found.rows, found.columns, found.similarity, names)
    per_row = np.full((len(matrix), 2), -1.0, dtype=np.float32)
    per_row[found.rows, 0] = at
    per_row[found.rows, 1] = found.similarity
    column_store.save_later(matrix, "categories", key, per_row)
    return found


def _categories(matrix) -> tuple[np.ndarray, np.ndarray]:
    """The key columns of the categories worth a centroid (most items first), and which
    rows carry a category of their own."""
    # a byte per (row, key) pair, not a family number: at a million items the pairs are
    # millions, and this runs inside a ranking that must stay under a gigabyte
    is_tag = (matrix.key_family() == _TAG)[matrix.key_cols]
    counts = np.bincount(matrix.key_cols[is_tag], minlength=len(matrix.key_index))
    eligible = np.flatnonzero(counts >= MIN_ITEMS)
    eligible = eligible[np.argsort(-counts[eligible], kind="stable")][:MAX_CATEGORIES]
    tagged = np.zeros(len(matrix), dtype=bool)
    tagged[matrix.key_rows[is_tag]] = True
    return eligible, tagged


def _infer(matrix, eligible: np.ndarray, untagged: np.ndarray) -> tuple[Inferred, np.ndarray]:
    """The rows of ``untagged`` close enough to their nearest category's centroid, and the
    index of that category in ``eligible`` for each."""
    centroids, floors = _centroids(matrix, eligible)
    rows, at, sims = [], [], []
    for start in range(0, len(untagged), BLOCK):
        block = untagged[start : start + BLOCK]
        cos = matrix.approx_rows(block) @ centroids.T
        best = cos.argmax(axis=1)
        value = cos[np.arange(len(block)), best]
        keep = value >= floors[best]
        rows.append(block[keep])
        at.append(best[keep])
        sims.append(value[keep].astype(np.float32))
    at = np.concatenate(at)
    return Inferred(np.concatenate(rows), eligible[at], np.concatenate(sims)), at


def _centroids(matrix, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit centroids of the categories at ``columns`` and, per category, the least cosine
    to it an inferred item needs (:data:`FLOOR_SHARE`)."""
    order, starts = matrix.pairs_by_column()
    rng = np.random.default_rng(0)  # the same sample, so the same inference, every load
    centroids = np.zeros((len(columns), matrix.dimension), dtype=np.float32)
    floors = np.zeros(len(columns), dtype=np.float32)
    for k, column in enumerate(columns):
        # an item holds a key once, so its rows are distinct
        members = np.sort(matrix.key_rows[order[starts[column] : starts[column + 1]]])
        if len(members) > SAMPLE:
            members = np.sort(rng.choice(members, SAMPLE, replace=False))
        vectors = matrix.approx_rows(members)
        centre = vectors.mean(axis=0)
        centre /= np.linalg.norm(centre) or 1.0
        centroids[k] = centre
        floors[k] = max(FLOOR_SHARE * np.median(vectors @ centre), MIN_SIMILARITY)
    return centroids, floors
