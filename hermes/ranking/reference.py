"""A fixed sample of the archive, the ground an item's figures are judged against.

A cosine of 0.55 between a paper and a liked one says "same subject" in an archive of
thirteen fields and nothing at all in an archive of one (there the median cosine between
two random papers is about 0.5). So every evidence figure a scorer gives
(:attr:`hermes.contract.Component.evidence`) comes with the same figure over this sample
(:attr:`~hermes.contract.Component.reference`), and :mod:`hermes.ranking.match` calls a
figure close only when few items of *this* archive reach it.

The sample is the same for every persona and every ranking until the archive's contents
change (it is a derived summary of the matrix), so two rankings between clicks agree.
"""

from __future__ import annotations

import numpy as np

#: how many items the reference is computed over: enough that its upper percentiles move by
#: well under a hundredth of a cosine from one sample to the next, few enough that one
#: product over it costs nothing beside the ranking
SIZE = 1000


def sample(matrix) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, exact vectors)`` of up to :data:`SIZE` items of ``matrix``, drawn with a
    fixed seed and kept until the contents change."""

    def compute():
        n = len(matrix)
        if n <= SIZE:
            rows = np.arange(n, dtype=np.int64)
        else:
            rows = np.sort(np.random.default_rng(0).choice(n, SIZE, replace=False))
        vectors = matrix.exact_rows(rows) if n else np.zeros((0, matrix.dimension), dtype=np.float32)
        return rows, np.asarray(vectors, dtype=np.float32)

    return matrix.derived("reference_sample", compute)


def unclicked(matrix, clicked_ids) -> np.ndarray:
    """The sample's vectors without the clicked items (a liked item is 1.0 from itself: kept
    in, a persona's own clicks would raise the ground it is judged on)."""
    rows, vectors = sample(matrix)
    if not len(clicked_ids) or not len(rows):
        return vectors
    clicked = matrix.lookup(np.asarray(list(clicked_ids), dtype=np.int64))
    # the rows are sorted: searchsorted, not np.isin (its first call imports numpy.ma)
    at = np.searchsorted(rows, clicked)
    hit = (clicked >= 0) & (at < len(rows))
    hit[hit] = rows[at[hit]] == clicked[hit]
    keep = np.ones(len(rows), dtype=bool)
    keep[at[hit]] = False
    return vectors[keep]
