"""The built-in scorers, registered through ``hermes_score`` like any plugin's.

Written interests (role ``profile``):

- ``profile``: cosine of each item to the persona's interests-text embedding, combined
  with BM25 of the interests text over item titles and summaries (:mod:`hermes.lexical`),
  which catches exact terminology the embedding blurs. Each part is standardised over the
  candidates before they are mixed; ``detail`` keeps both raw parts for explanations.

Learned from clicks (role ``behaviour``):

- ``preference``: per-tag / type / source like–dislike statistics, active from click 1.
- ``affinity``: closeness to the items the persona liked — learns from likes alone.
- ``classifier``: logistic regression over the embeddings of clicked items, with a sample of
  unclicked items as down-weighted negatives. Active only once both a like and a dislike
  exist (never fit on one class), and its share grows with the number of clicks.

All vector components come from one pass over the candidates' embeddings.
"""

from __future__ import annotations

import numpy as np

from . import logistic
from .features import _key_stats, key_values
from .hookspecs import hookimpl
from .lexical import lexical_scores
from .rank import Component, calibrate, interests_vector

#: share of the profile taken by the lexical match (the cosine gets the rest)
LEXICAL_SHARE = 0.5
#: how many of the most recent likes ``affinity`` compares with (one matrix column each)
AFFINITY_LIKES = 24
#: ``affinity`` = mean similarity to the closest k liked items (k ≤ this)
AFFINITY_K = 3
#: the classifier's L2 strength (scikit-learn's C)
CLASSIFIER_C = 1.0
#: unclicked items sampled as negatives, and the weight of each relative to a click
SOFT_NEGATIVES = 50
SOFT_WEIGHT = 0.9
#: the classifier's share of the behaviour role is n / (n + this), n = explicit clicks
CLASSIFIER_SHRINK = 10.0


@hookimpl
def hermes_score(db, user, item_ids, vectors, context):
    matrix, clicks, rows = context["matrix"], context["clicks"], context["rows"]
    interests = (user.get("interests") or "").strip()
    columns: list[np.ndarray] = []
    query = interests_vector(db, user, context["embedder"]) if interests else None
    if query is not None:
        columns.append(query)
    fitted = classifier_model(context, user)
    if fitted.get("coef") is not None:
        columns.append(fitted["coef"])
    liked = [i for i, is_like in clicks if is_like and matrix.vector(i) is not None]
    liked = list(dict.fromkeys(reversed(liked)))[:AFFINITY_LIKES]  # most recent first
    columns.extend(matrix.vector(i) for i in liked)
    sims = (vectors @ np.stack(columns, axis=1)) if columns else np.zeros((len(item_ids), 0))
    sims = np.asarray(sims, dtype=np.float64)
    col = 0
    comps = []
    if query is not None:
        comps.append(profile(db, interests, sims[:, col], matrix, rows))
        col += 1
    else:
        comps.append(Component("profile", "profile", np.zeros(len(item_ids)), active=False,
                               detail={"reason": "the persona has no interests text"}))
    if fitted.get("coef") is not None:
        comps.append(Component("classifier", "behaviour", sims[:, col] + fitted["intercept"],
                               weight=fitted["weight"], detail=fitted["detail"]))
        col += 1
    else:
        comps.append(Component("classifier", "behaviour", np.zeros(len(item_ids)), active=False,
                               detail=fitted["detail"]))
    if clicks:
        comps.append(preference(db, user, matrix, rows, clicks))
        comps.append(affinity(sims[:, col:], liked))
    return comps


def profile(db, text: str, cosine: np.ndarray, matrix, rows) -> Component:
    bm25 = lexical_scores(db, text, matrix)
    detail = {"semantic": cosine}
    if bm25 is None:
        return Component("profile", "profile", cosine, detail=detail)
    words = bm25[rows]
    detail.update(lexical=words, lexical_share=LEXICAL_SHARE)
    # log1p: BM25 is heavy-tailed; one long item matching many words should not flatten
    # everything else once the scores are standardised.
    mixed = (1 - LEXICAL_SHARE) * calibrate(cosine) + LEXICAL_SHARE * calibrate(np.log1p(words))
    return Component("profile", "profile", mixed, detail=detail)


def preference(db, user, matrix, rows, clicks) -> Component:
    stats = _key_stats(db, user["id"])
    n_likes = sum(1 for _, liked in clicks if liked)
    values = key_values(stats, n_likes, len(clicks) - n_likes)
    column = np.zeros(len(matrix.key_index))
    known = np.zeros(len(matrix.key_index))
    for key, value in values.items():
        index = matrix.key_index.get(key)
        if index is not None:
            column[index] = value
            known[index] = 1.0
    total = matrix.key_sums(column)[rows]
    count = matrix.key_sums(known)[rows]
    scores = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
    return Component("preference", "behaviour", scores, active=bool(stats),
                     detail={"stats": stats})


def affinity(sims: np.ndarray, liked: list[int]) -> Component:
    if not liked:
        return Component("affinity", "behaviour", np.zeros(len(sims)), active=False,
                         detail={"reason": "no liked items yet"})
    k = min(AFFINITY_K, sims.shape[1])
    top = np.partition(sims, sims.shape[1] - k, axis=1)[:, -k:] if k < sims.shape[1] else sims
    return Component("affinity", "behaviour", top.mean(axis=1),
                     detail={"liked_items": liked, "k": k})


def classifier_model(context: dict, user: dict) -> dict:
    """Fit the click classifier, or say why it is inactive. Returns ``coef``, ``intercept``,
    ``weight`` and ``detail`` (``active``, ``reason``, counts)."""
    matrix, clicks = context["matrix"], context["clicks"]
    known = [(i, liked) for i, liked in clicks if matrix.vector(i) is not None]
    likes = sum(1 for _, liked in known if liked)
    dislikes = len(known) - likes
    detail = {"active": False, "likes": likes, "dislikes": dislikes}
    if not clicks:
        return {"detail": {**detail, "reason": "no clicks yet"}}
    if not likes or not dislikes:
        if likes or dislikes:
            missing = "dislike" if likes else "like"
            reason = f"needs both a like and a dislike (has {likes or dislikes} {'like' if likes else 'dislike'}s, no {missing})"
        else:
            reason = "the clicked items have no embeddings yet"
        return {"detail": {**detail, "reason": reason}}
    X = [matrix.vector(i) for i, _ in known]
    y = [int(liked) for _, liked in known]
    weights = [1.0] * len(known)
    negatives = soft_negatives(matrix, user["id"], {i for i, _ in clicks}, len(clicks))
    X += [matrix.vectors[r] for r in negatives]
    y += [0] * len(negatives)
    weights += [SOFT_WEIGHT] * len(negatives)
    coef, intercept = logistic.fit(np.stack(X), np.array(y), C=CLASSIFIER_C,
                                   sample_weight=np.array(weights))
    n = len(known)
    return {
        "coef": coef.astype(np.float32),
        "intercept": intercept,
        "weight": n / (n + CLASSIFIER_SHRINK),
        "detail": {**detail, "active": True, "soft_negatives": len(negatives),
                   "reason": f"fit on {likes} likes and {dislikes} dislikes"
                             f" (+{len(negatives)} unclicked items as weak negatives)"},
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
    clicked_rows = matrix.rows_of(clicked)
    rows = rows[~np.isin(rows, clicked_rows)]
    return np.sort(rows[:SOFT_NEGATIVES])
