"""The built-in scorers, registered through ``hermes_score`` like any plugin's.

Written interests (role ``profile``):

- ``profile``: each item's cosine to the best-matching clause of the interests text
  (:func:`hermes.rank.interest_clauses`), mixed with a small share of BM25 of the whole text
  over titles and summaries (:mod:`hermes.lexical`) for exact terms an embedding blurs.

Learned from clicks (role ``behaviour``):

- ``preference``: per-tag / type / source like–dislike statistics, active from click 1.
- ``affinity``: closeness to the items the persona liked — learns from likes alone.
- ``classifier``: logistic regression over the embeddings of clicked items, with a sample of
  unclicked items as down-weighted negatives. Active only once both a like and a dislike
  exist (never fit on one class); its share of the behaviour role grows with the clicks
  and ``affinity`` hands its share over as it does.

Every vector component comes from one pass over the candidates' embeddings. The constants
below were chosen on ``benchmarks/quality.py`` (see ``benchmarks/results/ranking.md``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from . import logistic
from .features import _key_stats, key_values
from .hookspecs import hookimpl
from .lexical import lexical_scores
from .rank import Component, calibrate, interests_vectors

#: share of the profile taken by the lexical match (the clause cosine gets the rest)
LEXICAL_SHARE = 0.1
#: how many of the most recent likes ``affinity`` compares with (one matrix column each)
AFFINITY_LIKES = 16
#: ``affinity`` = mean similarity to the closest k liked items
AFFINITY_K = 3
#: the classifier's L2 strength (scikit-learn's C)
CLASSIFIER_C = 1.0
#: unclicked items sampled as negatives, and the weight of each relative to a click
SOFT_NEGATIVES = 50
SOFT_WEIGHT = 0.9
#: the classifier's share of the behaviour role is n / (n + this), n = explicit clicks
CLASSIFIER_SHRINK = 10.0
FAMILIES = ("tag:", "type:", "source:")


@hookimpl
def hermes_score(db, user, item_ids, vectors, context):
    matrix, clicks, rows = context["matrix"], context["clicks"], context["rows"]
    text = (user.get("interests") or "").strip()
    clauses = np.zeros((0, matrix.dimension), dtype=np.float32)
    if text:
        embedded = interests_vectors(db, user, context["embedder"])
        clauses = embedded[1:] if len(embedded) > 1 else embedded
    fitted = classifier_model(context, user)
    coef = [fitted["coef"]] if fitted["detail"]["active"] else []
    liked = recent_likes(clicks, matrix)
    columns = [*clauses, *coef, *(matrix.vector(i) for i in liked), matrix.mean_vector()]
    sims = np.asarray(vectors @ np.stack(columns, axis=1), dtype=np.float64)
    clause_sims, sims = sims[:, : len(clauses)], sims[:, len(clauses):]
    coef_sims, sims = sims[:, : len(coef)], sims[:, len(coef):]
    like_sims, mean_sims = sims[:, :-1], sims[:, -1]

    comps = [profile(db, text, clause_sims, matrix, rows)]
    if coef:
        comps.append(Component("classifier", "behaviour", coef_sims[:, 0] + fitted["intercept"],
                               weight=fitted["weight"], detail=fitted["detail"]))
    else:
        comps.append(Component("classifier", "behaviour", np.zeros(len(item_ids)), active=False,
                               detail=fitted["detail"]))
    if clicks:
        comps.append(preference(db, user, matrix, rows, clicks))
        # affinity hands over to the classifier as the classifier's evidence grows
        comps.append(affinity(like_sims, mean_sims, liked,
                              weight=1.0 - fitted["weight"] if coef else 1.0))
    return comps


def recent_likes(clicks, matrix) -> list[int]:
    liked = [i for i, is_like in reversed(clicks) if is_like and matrix.vector(i) is not None]
    return list(dict.fromkeys(liked))[:AFFINITY_LIKES]


def profile(db, text: str, clause_sims: np.ndarray, matrix, rows) -> Component:
    if not clause_sims.shape[1]:
        return Component("profile", "profile", np.zeros(len(rows)), active=False,
                         detail={"reason": "the persona has no interests text"})
    semantic = clause_sims.max(axis=1)
    detail = {"semantic": semantic, "clause": clause_sims.argmax(axis=1)}
    bm25 = lexical_scores(db, text, matrix) if LEXICAL_SHARE else None
    if bm25 is None:
        return Component("profile", "profile", semantic, detail=detail)
    words = bm25[rows]
    detail.update(lexical=words, lexical_share=LEXICAL_SHARE)
    # log1p: BM25 is heavy-tailed; one long item matching many words should not flatten
    # everything else once the scores are standardised.
    mixed = (1 - LEXICAL_SHARE) * calibrate(semantic) + LEXICAL_SHARE * calibrate(np.log1p(words))
    return Component("profile", "profile", mixed, detail=detail)


def preference(db, user, matrix, rows, clicks) -> Component:
    """Per family of keys (tags, type, source), the mean evidence over the item's keys of
    that family (a tag never clicked counts 0, so one liked tag among many weighs less);
    the families add up. Adding (not averaging) across families keeps a key found on every
    item — the only feed, the only content type — a constant that standardises away instead
    of diluting the tags that discriminate."""
    stats = _key_stats(db, user["id"])
    n_likes = sum(1 for _, liked in clicks if liked)
    values = key_values(stats, n_likes, len(clicks) - n_likes)
    column = np.zeros(len(matrix.key_index))
    for key, value in values.items():
        index = matrix.key_index.get(key)
        if index is not None:
            column[index] = value
    total = np.zeros(len(rows))
    for family, count in matrix.family_counts(FAMILIES).items():
        in_family = column * (matrix.key_family_mask(family))
        if in_family.any():
            sums = matrix.key_sums(in_family)[rows]
            total += np.divide(sums, count[rows], out=np.zeros(len(rows)), where=count[rows] > 0)
    return Component("preference", "behaviour", total, active=bool(stats),
                     detail={"stats": stats})


def affinity(like_sims: np.ndarray, mean_sims: np.ndarray, liked: list[int],
             weight: float = 1.0) -> Component:
    """Mean cosine to the k closest liked items, minus the cosine to the average item: all
    abstracts share a common direction in MiniLM's space, and what counts is what an item
    shares with the liked ones beyond it."""
    if not liked:
        return Component("affinity", "behaviour", np.zeros(len(mean_sims)), active=False,
                         detail={"reason": "no liked items yet"})
    k = min(AFFINITY_K, len(liked))
    closest = np.partition(like_sims, len(liked) - k, axis=1)[:, -k:]
    return Component("affinity", "behaviour", closest.mean(axis=1) - mean_sims, weight=weight,
                     detail={"liked_items": liked, "k": k})


_FITS: OrderedDict = OrderedDict()
_FITS_LOCK = threading.Lock()


def classifier_model(context: dict, user: dict) -> dict:
    """The click classifier's ``coef``, ``intercept``, ``weight`` and ``detail`` (``active``
    and the ``reason``); cached until the persona's clicks or the matrix change."""
    matrix, clicks = context["matrix"], context["clicks"]
    key = (id(matrix), len(matrix), user["id"], tuple(clicks),
           CLASSIFIER_C, SOFT_NEGATIVES, SOFT_WEIGHT, CLASSIFIER_SHRINK)
    with _FITS_LOCK:
        if key in _FITS:
            _FITS.move_to_end(key)
            return _FITS[key]
    fitted = _fit_classifier(matrix, clicks, user)
    with _FITS_LOCK:
        _FITS[key] = fitted
        while len(_FITS) > 64:
            _FITS.popitem(last=False)
    return fitted


def _fit_classifier(matrix, clicks, user) -> dict:
    known = [(i, liked) for i, liked in clicks if matrix.vector(i) is not None]
    likes = sum(1 for _, liked in known if liked)
    dislikes = len(known) - likes
    detail = {"active": False, "likes": likes, "dislikes": dislikes}
    inactive = {"coef": None, "intercept": 0.0, "weight": 0.0}
    if not clicks:
        return {**inactive, "detail": {**detail, "reason": "no clicks yet"}}
    if not likes or not dislikes:
        if known:
            have = f"{likes} like(s)" if likes else f"{dislikes} dislike(s)"
            reason = f"needs both a like and a dislike; has {have} only"
        else:
            reason = "the clicked items have no embeddings yet"
        return {**inactive, "detail": {**detail, "reason": reason}}
    negatives = soft_negatives(matrix, user["id"], {i for i, _ in clicks}, len(clicks))
    X = np.stack([matrix.vector(i) for i, _ in known] + [matrix.vectors[r] for r in negatives])
    y = np.array([int(liked) for _, liked in known] + [0] * len(negatives))
    weights = np.array([1.0] * len(known) + [SOFT_WEIGHT] * len(negatives))
    coef, intercept = logistic.fit(X, y, C=CLASSIFIER_C, sample_weight=weights)
    n = len(known)
    return {
        "coef": coef.astype(np.float32),
        "intercept": intercept,
        "weight": n / (n + CLASSIFIER_SHRINK),
        "detail": {**detail, "active": True, "soft_negatives": len(negatives),
                   "reason": f"fit on {likes} like(s) and {dislikes} dislike(s), with "
                             f"{len(negatives)} unclicked items as weak negatives"},
    }


def soft_negatives(matrix, user_id: int, clicked: set[int], n_clicks: int) -> np.ndarray:
    """Rows of a random sample of unclicked items: most items are not what a persona wants,
    so they anchor the classifier where a handful of near-miss dislikes cannot. Seeded by
    the persona and its click count, so every ranking between two clicks agrees."""
    if SOFT_NEGATIVES <= 0 or not len(matrix):
        return np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng([int(user_id), int(n_clicks)])
    size = min(len(matrix), SOFT_NEGATIVES + len(clicked))
    rows = rng.choice(len(matrix), size=size, replace=False)
    rows = rows[~np.isin(rows, matrix.rows_of(clicked))]
    return np.sort(rows[:SOFT_NEGATIVES])
