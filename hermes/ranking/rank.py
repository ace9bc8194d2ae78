"""The one ranking path: candidates through ``hermes_candidates``, scores through
``hermes_score``, calibrated and blended here.

``blend_weight(n) = n / (n + 5)`` moves weight from the persona's written interests
(``profile`` components) to what its clicks taught (``behaviour`` components). Components
are put on one scale before blending (see :func:`calibrate`), ``boost`` components from
plugins are added on that scale, and ties break on the item id so every call agrees.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from hermes.storage.records import item_rows

from ..contract import CandidateQuery, Component, ScoringContext
from ..embed import get_embedder
from ..plugins import call_each, get_plugin_manager, warn
from ..storage.clicks import user_clicks
from . import lexical
from .match import BAR, LEVELS, Judgement, judge
from .matrix import Matrix, confirm, get_matrix
from .quantized import release_free_memory
from .threads import one_blas_thread

if TYPE_CHECKING:  # annotations only: registering the plugins loads no sqlite-utils (issue 36)
    import sqlite_utils

ROLES = ("profile", "behaviour", "boost")
#: int8 storage: the best this many candidates (at least twice the ``limit``) are scored a
#: second time with their exact float32 vectors. A cosine from the codes is off by 3e-3 at
#: most; re-scoring the int8 top 1,000 restored the float32 top 100 of every query measured
#: (benchmarks/results/ranking.md, "int8 storage").
RESCORE = 1000
#: after a click the behaviour scores of most candidates are the previous ranking's (see
#: ``hermes.builtins.score_cache.Scope.per_row``): the best this many (at least twice the
#: ``limit``) are scored again with the new clicks, exactly, and blended on the first pass's
#: scales. At 100k candidates the top 10 then agreed with a full recomputation on 9.9 of 10
#: and the quality benchmarks did not move (benchmarks/results/click.md).
STALE_RESCORE = 1000
#: ... and this many candidates, evenly spaced, from which the stale components' mean and
#: spread over all candidates are estimated again
STALE_SAMPLE = 1000
#: a component whose spread is below this share of its size is constant up to float32
#: rounding: it calibrates to zeros, not to a unit spread of rounding noise
CONSTANT_SPREAD = 1e-6


@dataclass
class Ranking:
    item_ids: np.ndarray  # ranked, best first
    scores: np.ndarray
    contributions: dict[str, np.ndarray]  # per component, on the blended scale, row-aligned
    components: dict[str, Component]  # scores in candidate order (see ``raw`` for ranked)
    blend_weight: float
    n_clicks: int
    #: each component's raw (uncalibrated) score, row-aligned with ``item_ids``
    raw: dict[str, np.ndarray] = field(default_factory=dict)
    #: how many candidates were ranked (before ``limit``)
    n_candidates: int = 0
    #: the share of the blended scale each component got (0 when inactive or constant)
    shares: dict[str, float] = field(default_factory=dict)
    #: for each ranked item, its index among the candidates (to read ``Component.detail``)
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: for each ranked item, its absolute match (an index into ``match.LEVELS``)
    levels: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    #: how many candidates (all of them, not only the ranked ones) reached each level
    level_counts: dict[str, int] = field(default_factory=dict)
    #: whether the items that clear the persona's bar were put first (see :func:`rank`)
    bar_first: bool = False
    #: how each kind of evidence counted for each ranked item (row-aligned with
    #: ``item_ids``): what the explanation words
    judgement: Judgement | None = None
    #: candidates (all of them) the click classifier kept below the bar
    #: (:data:`hermes.ranking.match.VETO`): what an empty bar's advice names
    n_vetoed: int = 0

    def match(self, position: int) -> str:
        """``"strong"``, ``"good"``, ``"weak"`` or ``"none"`` for the item at ``position``."""
        return LEVELS[int(self.levels[position])]

    def above_bar(self, position: int) -> bool:
        return int(self.levels[position]) >= BAR

    @property
    def n_above_bar(self) -> int:
        """Candidates whose match clears the bar (strong or good)."""
        return sum(self.level_counts.get(name, 0) for name in LEVELS[BAR:])

    @property
    def n_below_bar(self) -> int:
        return self.n_candidates - self.n_above_bar


def blend_weight(n_clicks: int) -> float:
    return n_clicks / (n_clicks + 5.0)


# --- candidates ----------------------------------------------------------------------------


def candidate_rows(db, user: dict, query: CandidateQuery, matrix: Matrix) -> np.ndarray:
    """Row indices of ``matrix`` that every ``hermes_candidates`` answer keeps."""
    keep = np.ones(len(matrix), dtype=bool)
    for answer in get_plugin_manager().hook.hermes_candidates(db=db, user=user, query=query, matrix=matrix):
        if answer is None:
            continue
        if isinstance(answer, np.ndarray) and answer.dtype == bool:
            keep &= answer
        else:
            keep &= np.isin(matrix.ids, np.fromiter(answer, dtype=np.int64))
    if query.include_ids:
        keep |= np.isin(matrix.ids, np.array(query.include_ids, dtype=np.int64))
    return np.flatnonzero(keep)


# --- calibration and blending --------------------------------------------------------------


def calibrate(scores: np.ndarray) -> np.ndarray:
    """z-score over the candidates, so components of different natural scales blend fairly.
    A constant component carries no ranking information and calibrates to zeros.

    (Rank-Gaussian and median/IQR scaling were tried on the quality benchmark; neither beat
    the plain z-score.)"""
    return _calibrated(scores)[0]


def _calibrated(scores) -> tuple[np.ndarray, float, float]:
    """:func:`calibrate`'s result and the mean and spread it used (spread 0: constant)."""
    copied = not (isinstance(scores, np.ndarray) and scores.dtype == np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores, 0.0, 0.0
    mean = scores.mean()
    # a float32 column was just copied to float64: subtract in that copy (the same bits; at
    # a million candidates each new 8 MB array costs its page faults in a fresh process)
    deviation = np.subtract(scores, mean, out=scores) if copied else scores - mean
    # numpy's std, step for step (the same bits), without its second pass for the mean
    std = np.sqrt(np.mean(deviation * deviation))
    # A float32 score computed two ways (cached, or recomputed in another batch of products)
    # can differ in its last bit; a component that is constant but for that would otherwise
    # be blown up to a unit spread and order the feed by rounding noise.
    if not np.isfinite(std) or std < 1e-12 or std <= CONSTANT_SPREAD * abs(mean):
        return np.zeros_like(scores), mean, 0.0
    deviation /= std  # in place: at a million candidates each copy is 8 MB
    return deviation, mean, std


def blend(components: list[Component], n_clicks: int, size: int, scales: dict | None = None):
    """Return (final scores, per-component contributions, effective blend weight, shares).

    A component that is inactive, or constant over these candidates, gets no share: a
    preference component over items that all share the same feed and type would otherwise
    take half of the behaviour weight while saying nothing. ``scales``, when given, gets
    each blended component's calibration (mean, spread), in blending order (for
    :func:`reblend`)."""
    calibrated, spread = {}, set()
    for c in components:
        if c.active:
            calibrated[c.name], mean, std = _calibrated(c.scores)
            if std:
                # not constant: some score is off the mean by at least the spread, so not
                # every calibrated score is 0 (no pass over them to find one)
                spread.add(c.name)
                if scales is not None:
                    scales[c.name] = (mean, std)
    useful = [c for c in components if c.name in spread]
    by_role = {role: [c for c in useful if c.role == role] for role in ROLES}
    w = blend_weight(n_clicks) if by_role["behaviour"] else 0.0
    if not by_role["profile"]:
        w = 1.0 if by_role["behaviour"] else 0.0
    role_weight = {"profile": 1.0 - w, "behaviour": w, "boost": 1.0}
    total = np.zeros(size, dtype=np.float64)
    contributions: dict[str, np.ndarray] = {}
    shares: dict[str, float] = {}
    for role, comps in by_role.items():
        norm = sum(c.weight for c in comps) if role != "boost" else 1.0
        for c in comps:
            shares[c.name] = role_weight[role] * c.weight / (norm or 1.0)
            contributions[c.name] = calibrated[c.name]
            contributions[c.name] *= shares[c.name]  # in place: the calibrated copy is not kept
            total += contributions[c.name]
    for c in components:
        contributions.setdefault(c.name, np.zeros(size))
        shares.setdefault(c.name, 0.0)
    if scales is not None:  # in the order the total summed them
        order = list(contributions)
        ordered = sorted(scales.items(), key=lambda item: order.index(item[0]))
        scales.clear()
        scales.update(ordered)
    return total, contributions, w, shares


def reblend(
    components: list[Component], at: np.ndarray, total: np.ndarray, contributions: dict, shares: dict, scales: dict
) -> None:
    """Blend the candidates at ``at`` again from ``components`` (new scores for them), on
    the scales :func:`blend` found over all candidates, updating ``total`` and
    ``contributions`` in place: the same operations as :func:`blend`, for those rows only."""
    scores = {c.name: np.asarray(c.scores)[at].astype(np.float64) for c in components}
    part = np.zeros(len(at), dtype=np.float64)
    for name, (mean, std) in scales.items():
        if name not in scores:  # its scorer failed this time (reported): keep the first pass
            part += contributions[name][at]
            continue
        value = scores[name] - mean
        value /= std
        value *= shares[name]
        contributions[name][at] = value
        part += value
    total[at] = part


def top_order(ids: np.ndarray, total: np.ndarray, limit: int | None, first: np.ndarray | None = None) -> np.ndarray:
    """Indices of the best ``limit`` scores, best first; ties go to the lower item id.
    Scores are compared rounded to 12 decimals (the last bits of a sum depend on the order
    it was added in), and everything tied with the last kept score is sorted too, so the
    cut is deterministic. ``first`` (booleans): those items come before the others, each
    group in score order."""
    if first is not None and first.any() and not first.all():
        head = _ordered(ids, total, _pool(total, limit, first), limit)
        if limit is not None and len(head) >= limit:
            return head
        rest = None if limit is None else limit - len(head)
        return np.concatenate([head, _ordered(ids, total, _pool(total, rest, ~first), rest)])
    return _ordered(ids, total, _pool(total, limit), limit)


def _ordered(ids: np.ndarray, total: np.ndarray, pool: np.ndarray, limit: int | None) -> np.ndarray:
    rounded = np.round(total[pool], 12)
    order = pool[np.lexsort((ids[pool], -rounded))]
    return order if limit is None else order[:limit]


#: below this many scores :func:`_pool` partitions them all (a threshold saves nothing)
POOL_DIRECT = 8192


def _pool(total: np.ndarray, limit: int | None, among: np.ndarray | None = None) -> np.ndarray:
    """The rows (of ``among``, booleans, or all) whose score, rounded to 12 decimals,
    reaches the ``limit``-th best rounded: the best ``limit`` and everything tied with the
    last of them. Rounding is monotone, so the rounded k-th best is the k-th best rounded:
    only the scores near the cut are rounded, not every candidate's.

    The k-th best is found among the rows at or above a threshold read from an even sample
    of the scores (:func:`_below_kth`), not by partitioning every score: at a million
    candidates ``np.partition`` took 8 ms per call, the comparison under 1 ms. When fewer
    than ``limit`` rows reach the threshold it is not low enough and every row is
    partitioned, as before: the same rows either way."""
    n = len(total) if among is None else int(np.count_nonzero(among))
    if limit is None or limit >= n:
        return np.arange(len(total)) if among is None else np.flatnonzero(among)
    if limit <= 0:
        return np.zeros(0, dtype=np.int64)
    near = None
    low = _below_kth(total, limit, n, among)
    if low is not None:
        reach = total >= low
        if among is not None:
            reach &= among
        near = np.flatnonzero(reach)
        if len(near) < limit:
            near = None  # the threshold was above the k-th best
    if near is None:
        near = np.arange(len(total)) if among is None else np.flatnonzero(among)
    values = total[near]
    kth = np.partition(values, len(values) - limit)[len(values) - limit]
    if low is not None and len(near) < n and not kth - 1e-11 >= low:
        # scores within the rounding margin below the k-th best may lie under the threshold
        reach = total >= kth - 1e-11
        if among is not None:
            reach &= among
        near = np.flatnonzero(reach)
        values = total[near]
    pool = near[values >= kth - 1e-11]
    return pool[np.round(total[pool], 12) >= np.round(kth, 12)]


def _below_kth(total: np.ndarray, limit: int, n: int, among: np.ndarray | None) -> float | None:
    """A score likely just below the ``limit``-th best of ``n`` (the rows of ``among``):
    from an even sample, the score that about 1.5 × ``limit`` + 16 rows' worth of the
    sample reach (``None``: too few scores for a sample to save anything). Only a guess:
    :func:`_pool` checks that at least ``limit`` rows reach it."""
    if len(total) <= POOL_DIRECT or 16 * limit > n:
        return None
    stride = max(1, len(total) // max(2048, 8 * limit))
    sample = total[::stride]
    if among is not None:
        sample = sample[among[::stride]]
    rank = int(limit * len(sample) / n * 1.5) + 16
    if rank >= len(sample):
        return None
    low = float(np.partition(sample, len(sample) - rank)[len(sample) - rank])
    return low if np.isfinite(low) else None


def rank(
    db: sqlite_utils.Database,
    user: dict,
    query: CandidateQuery = CandidateQuery(),
    limit: int | None = None,
    *,
    bar_first: bool = False,
) -> Ranking:
    """Rank the candidates for ``user``: the best ``limit`` of them, or all when ``None``.

    Every candidate also gets its absolute ``match`` (:mod:`hermes.ranking.match`). With
    ``bar_first`` the items that clear the persona's bar come first, then the others, each
    group in blend order: what every feed face shows above and below its fold."""
    embedder = get_embedder()
    # a fresh process ranks on its snapshot while the check against the database runs
    matrix = get_matrix(db, embedder.name, embedder.dimension, unconfirmed=True)
    rows = candidate_rows(db, user, query, matrix)
    clicks = user_clicks(db, user["id"])
    ids = matrix.ids[rows]
    context = ScoringContext(
        clicks=clicks, blend_weight=blend_weight(len(clicks)), embedder=embedder, matrix=matrix, rows=rows, query=query
    )
    failed: set[str] = set()  # scorers left out (named in a warning): not asked again
    components = score(db, user, ids, context, failed)
    scales: dict = {}
    total, contributions, w, shares = blend(components, len(clicks), len(ids), scales)
    judgement = judge(components, len(ids), embedder.name, len(clicks))
    levels = judgement.levels
    int8 = matrix.storage == "int8"
    stale = bool(context.scratch.get("stale"))  # behaviour served from before a click
    shortlist = max(RESCORE if int8 else STALE_RESCORE, 2 * (limit or 0))
    if (int8 or stale) and len(ids) and shortlist:
        # The scores came from the int8 codes, or from the clicks before the last: score the
        # best of them again, exactly, and blend them on the scales found over every
        # candidate (whose mean and spread over many candidates the approximation barely
        # moves). The others keep their scores.
        short = top_order(ids, total, shortlist, first=levels >= BAR if bar_first else None)
        if stale:
            # and an even sample of every candidate: the stale components' new mean and spread
            # over all of them (a click moves the classifier's scale), estimated from it
            sample = np.linspace(0, len(ids) - 1, min(len(ids), STALE_SAMPLE)).astype(np.int64)
            extra = np.zeros(len(ids), dtype=bool)
            extra[sample] = True
            extra[short] = False
            extra = np.flatnonzero(extra)
            # the sample's own rows from the codes in int8 storage (no database read): it
            # only estimates a mean and a spread, and its best rows are in the short list
            if int8:
                vectors = np.concatenate([matrix.exact_rows(rows[short]), matrix.approx_rows(rows[extra])])
                short = np.concatenate([short, extra])
            else:  # the same rows either way: one copy of them, not two
                short = np.concatenate([short, extra])
                vectors = matrix.exact_rows(rows[short])
        else:
            vectors = matrix.exact_rows(rows[short])
        context = replace(context, exact=(short, vectors))
        if int8:
            # what the built-in scorers reuse is kept in context.scratch; anything else a
            # plugin returned is not held twice at a million candidates
            del components
            components = score(db, user, ids, context, failed)
        else:
            # only the built-in scorers served stale scores: the others keep their first pass
            others = {name for name, _ in get_plugin_manager().list_name_plugin()} - {"scorers"}
            again = score(db, user, ids, context, failed | others)
            names = {c.name for c in again}
            components = again + [c for c in components if c.name not in names]
        if stale:
            for c in components:
                if c.name in context.scratch.get("stale_names", ()) and c.name in scales:
                    _, mean, std = _calibrated(np.asarray(c.scores)[sample])
                    if std:
                        scales[c.name] = (mean, std)
        reblend(components, short, total, contributions, shares, scales)
        judgement.put(
            short,
            judge(
                [replace(c, evidence={k: np.asarray(v)[short] for k, v in c.evidence.items()}) for c in components],
                len(short),
                embedder.name,
                len(clicks),
            ),
        )
        if int8:
            release_free_memory()
    order = top_order(ids, total, limit, first=levels >= BAR if bar_first else None)
    if not confirm(db, matrix):  # the snapshot was stale: rank on the matrix read again
        lexical.clear_cache()  # kept by the contents' seq and size, which the two may share
        return rank(db, user, query, limit, bar_first=bar_first)
    counts = np.bincount(levels, minlength=len(LEVELS)) if len(ids) else np.zeros(len(LEVELS))
    return Ranking(
        item_ids=ids[order],
        scores=total[order],
        contributions={k: v[order] for k, v in contributions.items()},
        components={c.name: c for c in components},
        blend_weight=w,
        n_clicks=len(clicks),
        # the ranked rows taken, then widened (the same values; not every candidate's copied)
        raw={c.name: np.asarray(c.scores)[order].astype(np.float64) for c in components},
        n_candidates=len(ids),
        shares=shares,
        order=order,
        levels=levels[order],
        level_counts={name: int(n) for name, n in zip(LEVELS, counts, strict=True)},
        bar_first=bar_first,
        judgement=judgement.take(order),
        n_vetoed=int(judgement.vetoed.sum()) if judgement.vetoed is not None else 0,
    )


def score(db, user: dict, ids: np.ndarray, context: ScoringContext, failed: set[str] | None = None) -> list[Component]:
    """Every ``hermes_score`` answer's components for the candidates ``ids``.

    A scorer that raises is named in a warning (:func:`hermes.plugins.warn`: stderr, and
    the message of the tool call) and left out, so one broken plugin leaves the feed usable;
    ``failed`` collects those plugins' names and they are not called again (the int8 second
    pass keeps their first pass's blend). A plugin that answers with a malformed component
    is left out the same way, the warning saying what is wrong (how many scores, the role,
    NaN): a person's feed does not stop for a plugin's bug.
    """
    components: list[Component] = []
    if not len(ids):
        return components
    failed = set() if failed is None else failed
    # No copy of the candidates' vectors: a view, or rows multiplied in place.
    vectors = context.matrix.select(context.rows)
    answers = call_each("hermes_score", failed=failed, db=db, user=user, item_ids=ids, vectors=vectors, context=context)
    # on one BLAS thread: the scorers' products are a few thousand rows at most (the matrix
    # products run their own threads), where a threaded BLAS on a busy two-core machine
    # waits out its sleeping workers (hermes.ranking.threads): the short list's re-score
    # took 0.2 s instead of a few ms
    with one_blas_thread():
        answered = list(answers)
    for plugin, answer in answered:
        mine = [c for c in (answer if isinstance(answer, list) else [answer]) if c is not None]
        problems = [p for p in (malformed(c, len(ids)) for c in mine) if p]
        if problems:
            failed.add(plugin)
            warn(
                f"plugin {plugin!r} returned a malformed component from hermes_score and was "
                f"left out: {'; '.join(problems)}"
            )
            continue
        components.extend(mine)
    return components


def malformed(comp, n: int) -> str | None:
    """What is wrong with a scorer's answer for ``n`` candidates, or ``None``."""
    if not isinstance(comp, Component):
        return f"{comp!r} is not a hermes.Component"
    if comp.role not in ROLES:
        return f"{comp.name!r} has role {comp.role!r}; expected one of {', '.join(ROLES)}"
    scores = np.asarray(comp.scores)
    if scores.shape != (n,):
        got = f"{len(scores)} scores" if scores.ndim == 1 else f"scores of shape {scores.shape}"
        return f"{comp.name!r} has {got}; expected {n} scores, one per candidate in item_ids"
    if scores.dtype.kind not in "biuf":
        return f"{comp.name!r} has scores of dtype {scores.dtype}; expected numbers"
    if scores.dtype.kind == "f" and np.isnan(scores).any():
        return f"{comp.name!r} has {int(np.isnan(scores).sum())} NaN score(s) of {n}"
    return None


def rank_items(
    db: sqlite_utils.Database,
    user: dict,
    *,
    limit: int = 20,
    since_days: float | None = 7,
    exclude_clicked: bool = True,
    text: str | None = None,
    tag: str | None = None,
    content_type: str | None = None,
    author: str | None = None,
    item_ids=None,
) -> list[dict]:
    """The top ``limit`` items for ``user`` as dicts with ``score`` and ``rank``."""
    query = CandidateQuery(
        since_days=since_days,
        exclude_clicked=exclude_clicked,
        text=text,
        tag=tag,
        content_type=content_type,
        author=author,
        item_ids=tuple(item_ids) if item_ids is not None else None,
    )
    return items_of(db, rank(db, user, query, limit=limit))


def items_of(db: sqlite_utils.Database, ranking: Ranking) -> list[dict]:
    """The ranked items as dicts (``item_rows``) with ``score`` and ``rank``; an item deleted
    since the matrix was loaded is left out."""
    top = ranking.item_ids
    rows = item_rows(db, top)
    out = []
    for position, item_id in enumerate(top):
        item = rows.get(int(item_id))
        if item is None:  # deleted since the matrix was loaded
            continue
        item["score"] = round(float(ranking.scores[position]), 4)
        item["rank"] = len(out) + 1
        out.append(item)
    return out
