"""The ``library`` component: what a persona's imported library says, weighed against the
person's own clicks that follow it.

A library is many likes and no dislikes (hundreds of papers, `hermes persona import`). The
core's behaviour components were built for a handful of clicks: ``affinity`` compares with
the 16 most recent likes, and the click classifier waits for a dislike and then has a few
near-miss dislikes and 50 light random negatives against hundreds of likes. On the quality
benchmark with a simulated library (benchmarks/quality_library.py) a 100-paper library
ranked *worse* than no library at all. So the library gets a model of its own, the
Scholar-Inbox recipe that did best with it: logistic regression on the library against a
random sample of the archive as large as the library, and the person's own clicks (``ui``,
``agent``). Its share of the behaviour role
starts at :data:`LIBRARY_SHARE` and hands over to the other components as the person's own
clicks come in (half of it after :data:`HANDOVER` own clicks), so 2,000 library papers do not
drown the next 10 dislikes. A persona with fewer than :data:`LIBRARY_MIN` library likes has
no such component: its ranking is exactly the core's. The blend leaves the interests text
little once a library counts as clicks, so the component mixes the text back in
(:data:`INTEREST_MIX`), in proportion to how well the text describes the library.

One direction fit to a library leans to its largest topic; so half of the component is
each item's closeness to its nearest library papers (:data:`KNN_SHARE`: the library as many
examples, as zotero-arxiv-daily uses it), over at most :data:`KNN_MAX` k-means centroids of
a large library. That half reads likes only, so it hands over as the own clicks come
(:data:`KNN_HANDOVER`) to the model, which reads the person's dislikes too.

Library likes are the clicks with source ``bootstrap`` (the import's, and
``bootstrap_persona``'s few).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from hermes.builtins import score_cache
from hermes.contract import Component
from hermes.facekit.faces import plural
from hermes.hookspecs import hookimpl
from hermes.ranking import logistic
from hermes.ranking.interests import interests_vectors, wanted_text
from hermes.ranking.quantized import Int8Candidates
from hermes.ranking.rank import calibrate
from hermes.storage.clicks import click_history

#: fewer library likes than this: no component (the core's affinity reads them well)
LIBRARY_MIN = 10
#: the model's L2 strength (scikit-learn's C); Scholar Inbox's 0.1 kept later dislikes
#: from being drowned better than 1.0 did (benchmarks/quality_library.py --drift)
LIBRARY_C = 0.1
#: random unclicked items as negatives: as many as the library's likes, at least this many
MIN_NEGATIVES = 50
#: the weight of each random negative, relative to a library like
NEGATIVE_WEIGHT = 0.9
#: one own click (``ui`` / ``agent``) counts as this many library entries in the model; 5
#: and 20 were measured worse: the first own dislikes are near misses, and weighed heavily
#: they bent the library's model around them (the core's classifier learns from them)
OWN_CLICK_WEIGHT = 1.0
#: the component's weight in the behaviour role before any own click (the core's
#: components weigh 1 together, preference 1 more)
LIBRARY_SHARE = 4.0
#: own clicks after which the library has half of its starting weight (10 handed over too
#: early: at 30 clicks the core's classifier, fit on the library's likes and a few
#: near-miss dislikes, ranked worse than the library's model)
HANDOVER = 30.0

#: a library like whose cosine to the library's centroid is below the library's median by
#: more than this many robust spreads (1.4826 x the median absolute deviation) weighs
#: :data:`OUTLIER_WEIGHT` in the model (real libraries hold papers off one's topics); 0: off
#: (2 was measured: below INTEREST_MIX 0.5 on the choosing half, so off)
OUTLIER_SPREAD = 0.0
OUTLIER_WEIGHT = 0.2
#: the interests text inside the component: its score is z(library part) + INTEREST_MIX x
#: coherence x z(cosine to the best interests clause), coherence = 2 AUC - 1 (at least 0) of
#: that cosine between the library's likes and the random negatives (a text that says what
#: the library holds keeps its say; one that does not, none); 0: off. 0.5 won on the
#: choosing half before the kNN; with it, 1.0 was at par across fields and 0.008 higher
#: within one field (within the noise), but it slowed the drift test's later dislikes
#: (nDCG@10 0.639 against 0.692 at 5 clicks): 0.5 kept then. Fifth round: 1.0 with
#: KNN_HANDOVER 30 (choosing half: within cond-mat and hep the text tells a field's subjects
#: apart where the library's neighbours do not; 1.5 and 2.0 gained within a field and lost
#: across fields; the drift test's choosing half 0.640 -> 0.635 mean, within its noise)
INTEREST_MIX = 1.0
#: the library as many examples, not one direction: the share of the component taken by
#: each candidate's mean cosine to its :data:`KNN_K` nearest library papers and own likes
#: (beyond the archive's common direction), minus :data:`DISLIKE_PULL` x its cosine to the
#: nearest own dislike; 0: off. 0.5 with K 5: mean nDCG@10 0.960 -> 0.967-0.969 on the
#: choosing half (benchmarks/results/library.md, "Third round"); the pull lost (1.0: 0.959,
#: 0.3: 0.967), so it is off. K 10 (fourth round, choosing half): within one field the 5
#: nearest let the library's few off-topic papers lift their own neighbours (hep, a
#: 90-paper library: 0.752 -> 0.774 mean nDCG@10; cond-mat 0.676 -> 0.683), multi-field at
#: par (0.968 -> 0.968); 15 and 30 gained more within a field and lost across fields
KNN_SHARE = 0.5
KNN_K = 10
#: at most this many examples are compared with: a larger library (with the own likes) is
#: summed up by as many k-means centroids (measured on the choosing half at 0 clicks: 16 to
#: 64 centroids of a 100-paper library rank as well as its 100 papers)
KNN_MAX = 64
DISLIKE_PULL = 0.0
#: the kNN's share hands over as the person's own clicks come: KNN_SHARE x h / (h + own
#: clicks), h this; 0: a constant share. The kNN reads likes only (the library's and the
#: own), never a dislike, so it is the half of the library that cannot hear the person's
#: next dislikes. Fifth round (issue 38, choosing half, mean nDCG@10 of the 8 library cells):
#: 30 with INTEREST_MIX 1.0: cond-mat 0.681 -> 0.698, hep 0.793 -> 0.818, math 0.753 ->
#: 0.753, multi-field 0.967 -> 0.966; h 10 and 5 gained more within hep and lost across fields
KNN_HANDOVER = 30.0
#: random negatives per library like (at least :data:`MIN_NEGATIVES`; not measured again)
NEGATIVE_RATIO = 1.0
#: the weight of one own dislike in the model (own likes weigh :data:`OWN_CLICK_WEIGHT`);
#: 3 was at par across fields and lost within cond-mat (0.660 against 0.673)
OWN_DISLIKE_WEIGHT = 1.0

_FITS: OrderedDict = OrderedDict()


def settings() -> tuple:
    """The constants (read when called: the benchmark varies them)."""
    return (
        LIBRARY_MIN,
        LIBRARY_C,
        MIN_NEGATIVES,
        NEGATIVE_WEIGHT,
        OWN_CLICK_WEIGHT,
        LIBRARY_SHARE,
        HANDOVER,
        OUTLIER_SPREAD,
        OUTLIER_WEIGHT,
        INTEREST_MIX,
        KNN_SHARE,
        KNN_K,
        KNN_MAX,
        DISLIKE_PULL,
        NEGATIVE_RATIO,
        OWN_DISLIKE_WEIGHT,
        KNN_HANDOVER,
    )


@hookimpl
def hermes_score(db, user, item_ids, vectors, context):
    matrix = context.matrix
    if not context.clicks or not len(matrix):
        return None
    clicks = [(i, liked, source == "bootstrap") for i, liked, source in click_history(db, user["id"])]
    library = [i for i, liked, seed in clicks if liked and seed]
    if len(library) < LIBRARY_MIN:
        return None
    clauses = _clauses(db, user, context) if INTEREST_MIX else None
    fitted = _model(matrix, user["id"], clicks, clauses)
    if fitted is None:
        return None
    coef, intercept, n_library, n_own, coherence, examples, disliked, common = fitted
    n_clauses = 0 if clauses is None else len(clauses)
    blocks = [coef[None, :]] + ([clauses] if clauses is not None else [])
    if KNN_SHARE:
        blocks += [common[None, :], examples] + ([disliked] if len(disliked) else [])
    weights = np.vstack(blocks).astype(np.float32)
    products = _product(vectors, weights)
    if context.exact is not None:  # int8 storage: the short list exactly (see ScoringContext)
        positions, exact = context.exact
        products[:, positions] = weights @ np.asarray(exact, dtype=np.float32).T
    scores = products[0] + intercept
    detail = {
        "library": n_library,
        "own_clicks": n_own,
        "reason": f"fit on the library's {plural(n_library, 'like')} and "
        f"{plural(n_own, 'own click')}, against random items of the archive",
    }
    if KNN_SHARE:
        base = 1 + n_clauses
        near = products[base]
        sims = products[base + 1 : base + 1 + len(examples)] - near
        knn = _nearest_mean(sims, KNN_K)
        if len(disliked) and DISLIKE_PULL:
            knn = knn - DISLIKE_PULL * (products[base + 1 + len(examples) :] - near).max(axis=0)
        share = KNN_SHARE * (KNN_HANDOVER / (KNN_HANDOVER + n_own) if KNN_HANDOVER else 1.0)
        scores = (1 - share) * calibrate(scores) + share * calibrate(knn)
        detail["knn_share"] = share
    if clauses is not None:
        detail["coherence"] = coherence
        if coherence > 0:
            scores = calibrate(scores) + INTEREST_MIX * coherence * calibrate(products[1 : 1 + n_clauses].max(axis=0))
    weight = LIBRARY_SHARE * HANDOVER / (HANDOVER + n_own)
    return Component("library", "behaviour", scores, weight=weight, detail=detail)


def _clauses(db, user, context) -> np.ndarray | None:
    """The interests text's clause vectors (the whole text's when it has one clause)."""
    if not wanted_text((user.get("interests") or "").strip()):
        return None
    embedded = interests_vectors(db, user, context.embedder)
    return np.asarray(embedded[1:] if len(embedded) > 1 else embedded, dtype=np.float32)


def _product(vectors, weights: np.ndarray) -> np.ndarray:
    """``(len(weights), candidates)`` products, float64."""
    if isinstance(vectors, Int8Candidates):  # never widen int8 candidates
        return vectors.product(weights).astype(np.float64)
    return (weights @ np.asarray(vectors).T).astype(np.float64)


def _model(matrix, user_id: int, clicks: list[tuple], clauses):
    text = None if clauses is None else clauses.tobytes()
    key = (matrix.token, len(matrix), user_id, tuple(clicks), text, settings())
    return score_cache.kept(_FITS, key, lambda: _fit(matrix, user_id, clicks, clauses), 32)


def _fit(matrix, user_id: int, clicks: list[tuple], clauses=None):
    rows = matrix.lookup(np.array([i for i, _, _ in clicks], dtype=np.int64))
    held = [(r, bool(liked), bool(seed)) for r, (_, liked, seed) in zip(rows.tolist(), clicks, strict=True) if r >= 0]
    n_library = sum(1 for _, liked, seed in held if liked and seed)
    if n_library < LIBRARY_MIN:
        return None
    negatives = _random_rows(
        matrix, user_id, {r for r, _, _ in held}, max(MIN_NEGATIVES, round(NEGATIVE_RATIO * n_library)), len(clicks)
    )
    X = matrix.exact_rows(np.array([r for r, _, _ in held] + negatives, dtype=np.int64))
    y = np.array([int(liked) for _, liked, _ in held] + [0] * len(negatives))
    w = np.array(
        [1.0 if seed else OWN_CLICK_WEIGHT if liked else OWN_DISLIKE_WEIGHT for _, liked, seed in held]
        + [NEGATIVE_WEIGHT] * len(negatives)
    )
    is_library = np.array([liked and seed for _, liked, seed in held] + [False] * len(negatives))
    if OUTLIER_SPREAD:
        w[is_library] *= _typicality(X[is_library])
    coef, intercept = logistic.fit(X, y, C=LIBRARY_C, sample_weight=w)
    n_own = sum(1 for _, _, seed in held if not seed)
    coherence = 0.0
    if clauses is not None:
        cosines = (X @ clauses.T).max(axis=1)
        coherence = max(0.0, 2.0 * _auc(cosines[is_library], cosines[len(held) :]) - 1.0)
    n_held = len(held)
    liked_rows = [k for k in range(n_held) if is_library[k] or (held[k][1] and not held[k][2])]
    examples = _prototypes(X[liked_rows], KNN_MAX) if KNN_SHARE else X[:0]
    disliked = X[[k for k in range(n_held) if not held[k][1]][-KNN_MAX:]]
    return (
        coef.astype(np.float32),
        float(intercept),
        n_library,
        n_own,
        coherence,
        examples,
        disliked,
        matrix.mean_vector(),
    )


def _prototypes(examples: np.ndarray, n: int, rounds: int = 10) -> np.ndarray:
    """``examples`` itself when it has at most ``n`` rows, else ``n`` k-means centroids of
    it (by cosine). The centroids start from the examples farthest apart (the one closest
    to the mean, then each time the one least like every one chosen), so a small topic of a
    large library keeps a centroid of its own; the same examples give the same centroids."""
    if len(examples) <= n:
        return examples
    examples = np.asarray(examples, dtype=np.float32)
    chosen = [int(np.argmax(examples @ examples.mean(axis=0)))]
    closest = examples @ examples[chosen[0]]
    for _ in range(n - 1):
        chosen.append(int(np.argmin(closest)))
        np.maximum(closest, examples @ examples[chosen[-1]], out=closest)
    centres = examples[chosen].copy()
    for _ in range(rounds):
        nearest = np.argmax(examples @ centres.T, axis=1)
        sums = np.zeros_like(centres)
        np.add.at(sums, nearest, examples)
        counts = np.bincount(nearest, minlength=n)
        filled = counts > 0
        centres[filled] = sums[filled] / counts[filled, None]
    return centres


def _nearest_mean(sims: np.ndarray, k: int) -> np.ndarray:
    """Per candidate (column), the mean of its ``k`` largest similarities (all when fewer)."""
    k = min(k, len(sims))
    return np.partition(sims, len(sims) - k, axis=0)[-k:].mean(axis=0)


def _typicality(library: np.ndarray) -> np.ndarray:
    """Per library like, 1, or :data:`OUTLIER_WEIGHT` when it is far from the library's
    centroid (see :data:`OUTLIER_SPREAD`)."""
    centroid = library.mean(axis=0)
    cosines = library @ (centroid / (np.linalg.norm(centroid) or 1.0))
    median = np.median(cosines)
    spread = 1.4826 * np.median(np.abs(cosines - median))
    return np.where(cosines < median - OUTLIER_SPREAD * spread, OUTLIER_WEIGHT, 1.0)


def _auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """The share of (positive, negative) pairs the figure orders right (ties half)."""
    if not len(positive) or not len(negative):
        return 0.5
    greater = (positive[:, None] > negative[None, :]).mean()
    return float(greater + 0.5 * (positive[:, None] == negative[None, :]).mean())


def _random_rows(matrix, user_id: int, clicked: set[int], n: int, n_clicks: int) -> list[int]:
    """``n`` random unclicked rows (fewer in a small archive), the same between two clicks."""
    rng = np.random.default_rng([int(user_id), int(n_clicks), 38])
    wanted = min(n, len(matrix) - len(clicked))
    picked: dict[int, None] = {}
    while len(picked) < wanted:
        picked.update((r, None) for r in rng.integers(0, len(matrix), size=2 * wanted).tolist() if r not in clicked)
    return list(picked)[:wanted]
