"""The built-in scorers, registered through ``hermes_score`` like any plugin's.

Written interests (role ``profile``):

- ``profile``: each item's cosine to the best-matching interest of the interests text — its
  clauses (:func:`hermes.ranking.interests.interest_clauses`) with those about one thing
  grouped (:func:`~hermes.ranking.interests.interest_groups`), optionally mixed with the
  whole text's cosine (``WHOLE_SHARE``) — plus a small
  share of BM25 of the whole text over titles and summaries (:mod:`hermes.ranking.lexical`)
  for exact terms an embedding blurs.

Learned from clicks (role ``behaviour``):

- ``preference``: per-tag / type / source / author like–dislike statistics, active from
  click 1. The keyphrases a tagger added (``topic:`` keys) are left out: they are read from
  the item's own text, which ``affinity`` and the classifier already see, and on the
  benchmark every weight given to them lowered nDCG@10 (benchmarks/results/ranking.md,
  "Keyphrases and the ranking"). They still name topics, explain and filter.
- ``affinity``: closeness to the items the persona liked — learns from likes alone.
- ``classifier``: logistic regression over the embeddings of clicked items, with a sample of
  unclicked items as down-weighted negatives. Active only once both a like and a dislike
  exist (never fit on one class); its share of the behaviour role grows with the clicks
  and ``affinity`` hands its share over as it does.

Every vector component comes from one pass over the candidates' embeddings. The constants
below were chosen on ``benchmarks/quality.py`` (see ``benchmarks/results/ranking.md``).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from hermes.facekit.faces import plural

from ..contract import Component, ScoringContext
from ..hookspecs import hookimpl
from ..ranking import categories, interests, logistic, preferences, reference
from ..ranking.interests import interest_groups, interest_members, interests_vectors, wanted_text
from ..ranking.lexical import lexical_scores
from ..ranking.quantized import Int8Candidates
from ..ranking.rank import calibrate
from . import score_cache
from .score_cache import Scope

#: share of the profile taken by the lexical match (the semantic match gets the rest)
LEXICAL_SHARE = 0.1
#: share of the semantic match taken by the cosine to the whole interests text; the cosine
#: to the best-matching clause gets the rest. The whole text says which neighbourhood the
#: persona means ("regularity" alone also matches the next subject over), the best clause
#: which of several listed interests an item serves.
WHOLE_SHARE = 0.0
#: how many of the most recent likes ``affinity`` compares with (one matrix column each)
AFFINITY_LIKES = 16
#: ``affinity`` = mean similarity to the closest k liked items
AFFINITY_K = 3
#: how many of the most recent dislikes the ``disliked`` figure (the nearest disliked item,
#: judged beside the nearest liked one: :data:`hermes.ranking.match.CLOSER`) compares with
RECENT_DISLIKES = 8
#: the classifier's L2 strength (scikit-learn's C)
CLASSIFIER_C = 1.0
#: unclicked items sampled as negatives, and the weight of each relative to a click (light:
#: they say "most items are not for you", the explicit clicks say where the boundary is)
SOFT_NEGATIVES = 50
SOFT_WEIGHT = 0.1
#: the classifier's share of the behaviour role is n / (n + this), n = explicit clicks
CLASSIFIER_SHRINK = 10.0


@hookimpl
def hermes_score(db, user, item_ids, vectors, context):
    matrix, clicks, rows = context.matrix, context.clicks, context.rows
    text = (user.get("interests") or "").strip()
    scope = Scope(matrix, rows, vectors, (user["id"], text), context.exact, context.scratch)
    # the archive sample every figure is judged against, the persona's clicks left out: read
    # once per ranking for all three components
    ground = scope.kept("ground", lambda: reference.unclicked(matrix, {i for i, _ in clicks}))
    # the interest figure is judged against the whole sample: it does not depend on the
    # clicks, so neither does what is typical of it (a trial's "typically 0.37" read 0.35
    # once the papers liked left the ground, and one figure changed its words)
    comps = [profile(db, user, text, context, scope, reference.sample(matrix)[1])]
    fitted = classifier_model(context, user)
    liked = recent_likes(clicks, matrix)
    disliked = recent_likes(clicks, matrix, liked=False)[:RECENT_DISLIKES]
    if fitted["detail"]["active"] or liked:
        # after a click: the previous ranking's exact columns, the short list re-scored
        # (score_cache.Scope.per_row's ``since``)
        behaviour = scope.per_row(
            ("behaviour", tuple(clicks), behaviour_settings()),
            lambda vecs, where: _behaviour(vecs, where, matrix, fitted, liked, disliked),
            lambda: _behaviour_all(matrix, fitted, liked, disliked),
            # a column that was constant (no classifier, no
            # dislike yet) is not served for one that is not
            since=(
                ("behaviour", behaviour_settings(), fitted["detail"]["active"], bool(liked), bool(disliked)),
                tuple(clicks),
            ),
        )
        if scope.scratch.get(("stale", ("behaviour", tuple(clicks), behaviour_settings()))):
            scope.scratch.setdefault("stale_names", set()).update(("classifier", "affinity"))
    if fitted["detail"]["active"]:
        probability = scope.changed("probability", lambda at: _sigmoid(behaviour[at, 0]))
        typical = scope.kept(
            "typical classifier", lambda: 1.0 / (1.0 + np.exp(-(ground @ fitted["coef"] + fitted["intercept"])))
        )
        comps.append(
            Component(
                "classifier",
                "behaviour",
                behaviour[:, 0],
                weight=fitted["weight"],
                detail=fitted["detail"],
                evidence={"classifier": probability},
                reference={"classifier": typical},
            )
        )
    else:
        comps.append(
            Component("classifier", "behaviour", np.zeros(len(item_ids)), active=False, detail=fitted["detail"])
        )
    if clicks:
        comps.append(preference(db, user, scope, clicks))
        if liked:
            # affinity hands over to the classifier as the classifier's evidence grows
            # (the reference figures are the same on a second pass: computed once)
            evidence = {"liked": behaviour[:, 2]}
            typical = {"liked": scope.kept("nearest liked", lambda: nearest(matrix, ground, liked))}
            if disliked:
                evidence["disliked"] = behaviour[:, 3]
                typical["disliked"] = scope.kept("nearest disliked", lambda: nearest(matrix, ground, disliked))
            comps.append(
                Component(
                    "affinity",
                    "behaviour",
                    behaviour[:, 1],
                    weight=1.0 - fitted["weight"],
                    detail={"liked_items": liked, "k": min(AFFINITY_K, len(liked)), "disliked_items": disliked},
                    evidence=evidence,
                    reference=typical,
                )
            )
        else:
            comps.append(
                Component(
                    "affinity",
                    "behaviour",
                    np.zeros(len(item_ids)),
                    active=False,
                    detail={"reason": "no liked items yet"},
                )
            )
    return comps


def _sigmoid(decision: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-decision))`` in float64, step for step (the same bits), in one array:
    at a million candidates each temporary is 8 MB and its page faults."""
    out = decision.astype(np.float64)
    np.negative(out, out=out)
    np.exp(out, out=out)
    out += 1.0
    return np.divide(1.0, out, out=out)


def behaviour_settings() -> tuple:
    """The constants the behaviour columns are computed with (read when called: the quality
    benchmark varies them): a column stored on disk is filed under them."""
    return (
        AFFINITY_LIKES,
        AFFINITY_K,
        CLASSIFIER_C,
        SOFT_NEGATIVES,
        SOFT_WEIGHT,
        CLASSIFIER_SHRINK,
        BEHAVIOUR_COLUMNS,
        RECENT_DISLIKES,
    )


#: the columns :func:`_behaviour` computes (a stored column of another shape is not reused)
BEHAVIOUR_COLUMNS = 4


def _behaviour(vectors, rows, matrix, fitted, liked, disliked) -> np.ndarray:
    """Columns: the classifier's decision value; ``affinity``: the mean cosine to the k
    closest liked items minus the cosine to the average item (all abstracts share a common
    direction in MiniLM's space; what counts is what an item shares with the liked ones
    beyond it); the plain cosines to the nearest liked and the nearest disliked item
    (absolute figures, for the item's ``match``: cosine(v, l) = v·(l − mean) + v·mean; NaN
    without such items). All from one pass over the candidates' vectors (a narrow
    candidate set)."""
    mean = matrix.mean_vector()
    columns = [fitted["coef"]] if fitted["detail"]["active"] else []
    # the clicked items' rows in one read (in int8 storage: one query, not one per click)
    clicked = np.array(liked + disliked, dtype=np.int64)
    rated = matrix.exact_rows(matrix.lookup(clicked)) if len(clicked) else []
    columns += [mean] + [row - mean for row in rated]
    stacked = np.stack(columns).astype(np.float32)
    if isinstance(vectors, Int8Candidates):  # int8 storage: never widen the candidates
        sims = vectors.product(stacked)
    else:
        sims = stacked @ np.asarray(vectors).T
    out = np.full((len(rows), BEHAVIOUR_COLUMNS), np.nan, dtype=np.float32)
    out[:, :2] = 0.0
    if fitted["detail"]["active"]:
        out[:, 0] = sims[0] + fitted["intercept"]
        sims = sims[1:]
    common, likes, dislikes = sims[0], sims[1 : 1 + len(liked)], sims[1 + len(liked) :]
    if liked:
        out[:, 1] = score_cache.mean_of_top_k(list(likes), min(AFFINITY_K, len(liked)))
        out[:, 2] = likes.max(axis=0) + common
    if disliked:
        out[:, 3] = dislikes.max(axis=0) + common
    return out


def _behaviour_all(matrix, fitted, liked, disliked) -> np.ndarray:
    """:func:`_behaviour` for every row of the matrix, from the caches: after a click, one
    pass over the matrix (the refitted classifier and any new clicked item's column); the
    nearest like's cosine is the largest of the k largest ``affinity`` keeps, plus the
    cached v·mean column."""
    active = fitted["detail"]["active"]
    columns, decision = score_cache.like_columns(matrix, liked + disliked, fitted["coef"] if active else None)
    out = np.full((len(matrix), BEHAVIOUR_COLUMNS), np.nan, dtype=np.float32)
    out[:, :2] = 0.0
    if active:
        out[:, 0] = decision + fitted["intercept"]
    if liked:
        k = min(AFFINITY_K, len(liked))
        out[:, 1] = score_cache.top_k_mean(matrix, liked, columns, k)
        out[:, 2] = score_cache.top_max(matrix, liked, columns, k) + matrix.mean_column()
    if disliked:
        out[:, 3] = score_cache.top_max(matrix, disliked, columns, 1) + matrix.mean_column()
    return out


def nearest(matrix, ground: np.ndarray, item_ids: list[int]) -> np.ndarray:
    """Over the reference sample ``ground``, each item's cosine to the nearest of
    ``item_ids``: what the ``liked`` / ``disliked`` figures are judged against."""
    rated = matrix.exact_rows(matrix.lookup(np.array(item_ids, dtype=np.int64)))
    if not len(ground):
        return np.zeros(0, dtype=np.float32)
    return (ground @ rated.T).max(axis=1)


def recent_likes(clicks, matrix, *, liked: bool = True) -> list[int]:
    """The :data:`AFFINITY_LIKES` most recently liked items (``liked=False``: disliked)."""
    held = _held(matrix, clicks)  # one vectorised lookup, not one per click
    found = [i for (i, is_like), ok in zip(reversed(clicks), held[::-1], strict=True) if is_like == liked and ok]
    return list(dict.fromkeys(found))[:AFFINITY_LIKES]


def _held(matrix, clicks) -> np.ndarray:
    """Per click, whether its item is in the matrix."""
    if not clicks:
        return np.zeros(0, dtype=bool)
    return matrix.lookup(np.array([int(i) for i, _ in clicks], dtype=np.int64)) >= 0


def profile(db, user, text: str, context: ScoringContext, scope: Scope, ground: np.ndarray) -> Component:
    """The ``profile`` component (:func:`_profile`); on a second pass that re-scores only
    the behaviour columns (float32 storage, after a click) the first pass's, unchanged."""
    return _once(scope, "profile", lambda: _profile_kept(db, user, text, context, scope, ground), vectors=True)


def _profile_kept(db, user, text: str, context: ScoringContext, scope: Scope, ground: np.ndarray) -> Component:
    """:func:`_profile`, or the component an earlier ranking computed from the same inputs —
    the same matrix, candidates, interests vectors, BM25 column and reference sample — which
    recomputing gives bit for bit (:func:`score_cache.kept_while`): the interests text does
    not depend on the clicks, and the ranking right after a click redid it (≈ 1.4 ms of 19
    at 100k, benchmarks/results/click.md). The same arrays are served: nothing downstream
    writes into a component's (``blend``, ``reblend`` and ``judge`` copy). Not in int8
    storage: its second pass writes exact scores into the first pass's columns in place."""
    matrix = scope.matrix
    wanted = wanted_text(text) if text else ""
    if not wanted or matrix.storage == "int8" or scope.exact is not None:
        return _profile(db, user, text, context, scope, ground)
    embedded = interests_vectors(db, user, context.embedder)
    bm25 = lexical_scores(db, wanted, matrix) if LEXICAL_SHARE else None
    key = (
        "profile",
        *score_cache.matrix_key(matrix),
        scope.persona,
        context.embedder.name,
        WHOLE_SHARE,
        LEXICAL_SHARE,
        interests.SAME_INTEREST,
    )
    return score_cache.kept_while(
        key,
        (bm25, ground, embedded, scope.rows),
        _same_profile_inputs,
        lambda: _profile(db, user, text, context, scope, ground, embedded=embedded, bm25=bm25),
        _component_bytes,
    )


def _same_profile_inputs(kept: tuple, now: tuple) -> bool:
    """The BM25 column and the reference sample are the cached arrays themselves (a new
    array: something changed); the interests vectors and candidate rows are compared."""
    return (
        kept[0] is now[0]
        and kept[1] is now[1]
        and np.array_equal(kept[2], now[2])
        and len(kept[3]) == len(now[3])
        and np.array_equal(kept[3], now[3])
    )


def _component_bytes(comp: Component) -> int:
    arrays = (comp.scores, *comp.detail.values(), *comp.evidence.values(), *comp.reference.values())
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


def _once(scope: Scope, name: str, compute, *, vectors: bool):
    """``compute()`` on a first pass; on a second, the first pass's answer when nothing in
    it is re-scored (``vectors``: it depends on the vectors, re-scored in int8 storage)."""
    key = ("component", name)
    if scope.exact is not None and not (vectors and scope.matrix.storage == "int8"):
        kept = scope.scratch.get(key)
        if kept is not None:
            return kept
    value = compute()
    if scope.exact is None:
        scope.scratch[key] = value
    return value


def _profile(
    db, user, text: str, context: ScoringContext, scope: Scope, ground: np.ndarray, *, embedded=None, bm25=None
) -> Component:
    """``embedded`` and ``bm25``: the interests vectors and BM25 column, when the caller
    read them already (:func:`_profile_kept`)."""
    matrix, rows = scope.matrix, scope.rows
    if not text:
        return Component(
            "profile",
            "profile",
            np.zeros(len(rows)),
            active=False,
            detail={"reason": "the persona has no interests text"},
        )
    wanted = wanted_text(text)  # what the text asks for, not what it asks not to see
    if not wanted:
        return Component(
            "profile",
            "profile",
            np.zeros(len(rows)),
            active=False,
            detail={"reason": "the interests text only says what not to show; it names no interest to rank by"},
        )
    if embedded is None:
        embedded = interests_vectors(db, user, context.embedder)
    # the interests as the order ranks by them: the whole text, then each clause's group
    # (one clause: the whole text alone), then the clauses themselves (to name the clause
    # of the group an item is nearest)
    clauses = embedded[1:] if len(embedded) > 1 else embedded
    groups = interest_groups(clauses) if len(embedded) > 1 else clauses
    members = interest_members(clauses) if len(embedded) > 1 else np.ones((1, 1), dtype=bool)
    weights = np.vstack([embedded[:1], groups, clauses]) if len(embedded) > 1 else embedded
    # One product gives the score and the evidence ``match`` is judged on: the cosine to
    # the best-matching interest (a clause's group), the figure the order ranks by. (Judged
    # on the best single clause instead, a one-field trial ranked a paper second and called
    # it weak, 0.64 vs 0.50; the grouped figure also raised the bar's precision:
    # benchmarks/results/bar.md, 3 Dec.)
    columns = scope.per_row(
        ("profile", WHOLE_SHARE, interests.SAME_INTEREST, "grouped evidence"),
        lambda vecs, where: _profile_columns(vecs @ weights.T, members),
        # every row: one blocked pass (measured 1.6x faster than BLAS's at a million rows)
        lambda: _profile_columns(matrix.product(weights).T, members),
    )
    semantic = columns[:, 0]
    # "clause": an index into interest_clauses(text), the group's clause nearest the item
    # (0 for the whole text when it has a single clause); "related": how many other
    # clauses its group holds
    detail = {"semantic": semantic, "clause": columns[:, 2].astype(np.int64), "related": columns[:, 3].astype(np.int64)}
    evidence = {"interest": columns[:, 1]}
    typical = {"interest": (ground @ groups.T).max(axis=1) if len(ground) else ground[:, 0]}
    if bm25 is None:
        bm25 = lexical_scores(db, wanted, matrix) if LEXICAL_SHARE else None
    if bm25 is None:
        return Component("profile", "profile", semantic, detail=detail, evidence=evidence, reference=typical)
    # log1p: BM25 is heavy-tailed; one long item matching many words should not flatten
    # everything else once the scores are standardised.
    logged = _log1p_of(bm25)
    words, lexical = scope.kept("lexical", lambda: (np.take(bm25, rows), calibrate(np.take(logged, rows))))
    detail.update(lexical=words, lexical_share=LEXICAL_SHARE)
    mixed = (1 - LEXICAL_SHARE) * calibrate(semantic) + LEXICAL_SHARE * lexical
    return Component("profile", "profile", mixed, detail=detail, evidence=evidence, reference=typical)


_LOGGED: OrderedDict = OrderedDict()


def _log1p_of(bm25: np.ndarray) -> np.ndarray:
    """``np.log1p(bm25)`` over every row, kept while :func:`lexical_scores` serves the same
    array (the same values as taking the log of the candidates' rows, once per persona text
    instead of on every ranking)."""
    hit = _LOGGED.get(id(bm25))
    if hit is None or hit[0] is not bm25:
        hit = _LOGGED[id(bm25)] = (bm25, np.log1p(bm25))
        while len(_LOGGED) > 4:
            _LOGGED.popitem(last=False)
    return hit[1]


def _profile_columns(cosines: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Columns, from the cosines to the whole text, each clause's group and each clause (the
    whole text alone for a text of one clause): :func:`semantic_match`; the largest cosine to
    a group; the clause of that group nearest the item; how many other clauses it holds."""
    n = len(members)
    if cosines.shape[1] == 1:
        whole = cosines[:, 0]
        zeros = np.zeros(len(whole), dtype=np.float32)
        return np.stack([whole, whole, zeros, zeros], axis=1).astype(np.float32)
    grouped, single = cosines[:, 1 : 1 + n], cosines[:, 1 + n :]
    group = grouped.argmax(axis=1)
    rows = np.arange(len(cosines))
    # the nearest clause among the group's own (a clause is always its group's member)
    clause = np.where(members[group], single, -np.inf).argmax(axis=1)
    return np.stack(
        [semantic_match(cosines[:, : 1 + n]), grouped[rows, group], clause, members.sum(axis=1)[group] - 1], axis=1
    ).astype(np.float32)


def semantic_match(cosines: np.ndarray) -> np.ndarray:
    """Per item, ``WHOLE_SHARE`` x the cosine to the whole text (column 0) + the rest x the
    cosine to the best-matching interest (columns 1…: the clauses grouped by
    :func:`~hermes.ranking.interests.interest_groups`; none when the text is one clause)."""
    whole = cosines[:, 0]
    if cosines.shape[1] == 1:
        return whole
    return WHOLE_SHARE * whole + (1.0 - WHOLE_SHARE) * cosines[:, 1:].max(axis=1)


def preference(db, user, scope: Scope, clicks) -> Component:
    """:func:`_preference`, once per ranking (it reads no vector)."""
    return _once(scope, "preference", lambda: _preference(db, user, scope, clicks), vectors=False)


def _preference(db, user, scope: Scope, clicks) -> Component:
    """Per family of keys (tags, type, source, author), the mean evidence over the item's
    keys of that family (a tag never clicked counts 0, so one liked tag among many weighs
    less); the families add up. Adding (not averaging) across families keeps a key found on
    every item — the only feed, the only content type — a constant that standardises away
    instead of diluting the tags that discriminate. Keyphrase topics are not counted (see
    the module docstring)."""
    matrix = scope.matrix
    stats = score_cache.stats(db, matrix, user["id"], clicks)
    column = np.zeros(len(matrix.key_index))
    for key, s in stats.items():
        index = matrix.key_index.get(key)
        if index is not None and not key.startswith("topic:"):
            column[index] = s["score"]
    counted_on = _count_once(matrix, column, score_cache.shared_evidence(db, matrix, clicks))

    def with_inferred(sums):
        # an item without categories counts the one it is closest to (hermes.ranking.categories)
        extra = categories.sums(matrix, column)
        return sums if extra is None else sums + extra

    scores = scope.per_row(
        ("preference", tuple(clicks), preferences.PRIOR, categories.WEIGHT, "shared evidence counted once"),
        lambda vecs, where: with_inferred(matrix.key_sums(column, matrix.entry_share()))[where],
        lambda: with_inferred(score_cache.key_sums(matrix, user["id"], column)),
        uses_vectors=False,
    )
    return Component(
        "preference", "behaviour", scores, active=bool(stats), detail={"stats": stats, "counted_on": counted_on}
    )


def _count_once(matrix, column: np.ndarray, groups: list[list[str]]) -> dict[str, str]:
    """Each group of keys the same clicks rated (:func:`~hermes.ranking.preferences.shared_evidence`)
    keeps its score where fewest items carry it, the rest 0, so an item holding several
    counts the clicks once and the evidence still tells items apart (five likes all on one
    feed's papers rate "paper" too, which every item of the archive may be):

    - a show's feed, author and content type: on the family whose keys fewest items carry,
      all of that family's keys (a paper's co-authors are one family, already averaged);
    - a disliked paper's categories: on the category fewest items carry.

    Returns each key left at 0 with the key it is counted on (the explanation names no
    reason by the former)."""
    starts = matrix.pairs_by_column()[1]
    counted_on: dict[str, str] = {}
    for group in groups:
        keys = [k for k in group if k in matrix.key_index]
        if len(keys) < 2:
            continue
        carried = {k: int(starts[matrix.key_index[k] + 1] - starts[matrix.key_index[k]]) for k in keys}
        families: dict[str, list[str]] = {}
        for key in keys:
            families.setdefault(preferences.split_key(key)[0], []).append(key)
        if len(families) > 1:  # keep one family whole
            kept = min(families.values(), key=lambda ks: max(carried[k] for k in ks))
        else:  # one family (categories): keep one key
            kept = [min(keys, key=lambda k: carried[k])]
        for key in keys:
            if key not in kept:
                column[matrix.key_index[key]] = 0.0
                counted_on[key] = kept[0]
    return counted_on


_FITS: OrderedDict = OrderedDict()


def classifier_model(context: ScoringContext, user: dict) -> dict:
    """The click classifier's ``coef``, ``intercept``, ``weight`` and ``detail`` (``active``
    and the ``reason``); cached until the persona's clicks or the matrix change."""
    matrix, clicks = context.matrix, context.clicks
    key = (
        matrix.token,
        len(matrix),
        user["id"],
        tuple(clicks),
        CLASSIFIER_C,
        SOFT_NEGATIVES,
        SOFT_WEIGHT,
        CLASSIFIER_SHRINK,
    )
    return score_cache.kept(_FITS, key, lambda: _fit_classifier(matrix, clicks, user), 64)


def _fit_classifier(matrix, clicks, user) -> dict:
    known = [click for click, ok in zip(clicks, _held(matrix, clicks), strict=True) if ok]
    likes = sum(1 for _, liked in known if liked)
    dislikes = len(known) - likes
    detail = {"active": False, "likes": likes, "dislikes": dislikes}
    inactive = {"coef": None, "intercept": 0.0, "weight": 0.0}
    if not clicks:
        return {**inactive, "detail": {**detail, "reason": "no clicks yet"}}
    if not likes or not dislikes:
        if known:
            have = plural(likes, "like") if likes else plural(dislikes, "dislike")
            reason = f"needs both a like and a dislike; has {have} only"
        else:
            reason = "the clicked items have no embeddings yet"
        return {**inactive, "detail": {**detail, "reason": reason}}
    negatives = soft_negatives(matrix, user["id"], {i for i, _ in clicks}, len(clicks))
    rows = matrix.lookup(np.array([i for i, _ in known], dtype=np.int64))
    X = matrix.exact_rows(np.concatenate([rows, np.asarray(negatives, dtype=np.int64)]))
    y = np.array([int(liked) for _, liked in known] + [0] * len(negatives))
    weights = np.array([1.0] * len(known) + [SOFT_WEIGHT] * len(negatives))
    coef, intercept = logistic.fit(X, y, C=CLASSIFIER_C, sample_weight=weights)
    n = len(known)
    return {
        "coef": coef.astype(np.float32),
        "intercept": intercept,
        "weight": n / (n + CLASSIFIER_SHRINK),
        "detail": {
            **detail,
            "active": True,
            "soft_negatives": len(negatives),
            "reason": f"fit on {plural(likes, 'like')} and {plural(dislikes, 'dislike')}, with "
            f"{len(negatives)} unclicked items as weak negatives",
        },
    }


def soft_negatives(matrix, user_id: int, clicked: set[int], n_clicks: int) -> np.ndarray:
    """Rows of a random sample of unclicked items: most items are not what a persona wants,
    so they anchor the classifier where a handful of near-miss dislikes cannot. Seeded by
    the persona and its click count, so every ranking between two clicks agrees."""
    if SOFT_NEGATIVES <= 0 or not len(matrix):
        return np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng([int(user_id), int(n_clicks)])
    exclude = set(matrix.rows_of(clicked).tolist())
    wanted = min(SOFT_NEGATIVES, len(matrix) - len(exclude))
    # Drawn with replacement, deduplicated in draw order: O(sample), not O(matrix). Python
    # sets, not np.isin / np.unique: their first call imports numpy.ma (12-17 ms of a fresh
    # process's first ranking) for a hundred numbers.
    rows: dict[int, None] = {}
    while len(rows) < wanted:
        draw = rng.integers(0, len(matrix), size=2 * wanted)
        rows.update((r, None) for r in draw.tolist() if r not in exclude)
    return np.sort(np.fromiter(rows, dtype=np.int64, count=len(rows))[:wanted])
