"""What the built-in scorers keep between rankings, so a click costs one pass over the matrix.

A feed ranking scores every row of the matrix. These caches make the call after a click
cheap, each keyed on the matrix's identity (:func:`matrix_key`) so any change to the items
drops them:

- :class:`Scope`: each component's scores over every row, per persona text and clicks — a
  repeated ``list_feed`` does no matrix product at all. Right after a click the behaviour
  columns are the previous ranking's exact ones (:func:`_from_base`): the ranking re-scores
  its short list with the new clicks and no pass over the matrix waits for the click; the
  exact columns for the new clicks are computed on a thread, for the next click to start
  from (issue 36: the top 10 agreed with a full recomputation on 9.9 of 10 at 100k items,
  and the quality benchmarks did not move — benchmarks/results/click.md). On a large archive they are also
  stored on disk (:mod:`hermes.ranking.column_store`) for the next process.
- :func:`like_columns`: each liked item's similarity column (``vectors @ (v − mean)``),
  shared by every persona. A new like adds one column, computed in the same product as the
  refitted classifier's decision values.
- :func:`stats`: a persona's per-key like / dislike statistics, per clicks.
- :func:`key_sums`: ``preference`` over every row, per persona. A click changes the
  statistics of its item's few keys; only the rows carrying those keys are updated.
- ``Matrix.mean_column``: every row's similarity to the average item, which turns a like's
  column back into a plain cosine (the nearest like's, for the item's ``match``); kept on
  the matrix, and in its snapshot, with the other persona-free summaries.
- :func:`top_k_mean`: ``affinity``'s per-row k largest similarities to the liked items. A
  new like is folded into the previous persona state; a like that drops out of the recent
  window re-reads only the rows it was among the k largest of.

The k largest values of a row are found by an exact max/min network, whatever order the
columns come in, and summed in one fixed order: from the same columns, the incremental
result equals a recomputation from scratch bit for bit (a column computed in another batch
of products can differ in the last bit of a float32). ``preference`` adds the
change of each key's statistic to the previous sums, which can differ from summing afresh in
the last bit of a float64; rows carrying the same keys stay exactly equal, so ties are kept.
"""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict

import numpy as np

from .. import __version__
from ..ranking import column_store, preferences

#: similarity columns kept (4 bytes × items each): the recent-likes and recent-dislikes
#: windows (16 + 8) plus some slack, so the click that just dropped out of a persona's window
#: is still there to be taken out
MAX_COLUMNS = 32
#: per-row component scores kept: every click makes new entries (its persona's behaviour
#: and preference), so at a million rows 32 of them held ~300 MB; a byte budget keeps the
#: recent ones (about four at 1M rows — two personas' profiles, one's behaviour and
#: preference — which keeps ranking within 1 GB there; all 32 at 100k)
MAX_SCORES = 32
MAX_SCORE_BYTES = 48 * 2**20
#: per-row top-k states kept (k × 4 bytes × items each): a persona's likes (k = 3) and
#: dislikes (k = 1), for a few personas
MAX_TOPS = 6
#: a previous top-k state is updated when at most this many likes changed, else rebuilt
MAX_STEPS = 4

_LOCK = threading.Lock()
_SCORES: OrderedDict = OrderedDict()
_COLUMNS: OrderedDict = OrderedDict()
_TOPS: OrderedDict = OrderedDict()
_PREFERENCES: OrderedDict = OrderedDict()
_STATS: OrderedDict = OrderedDict()
_ITEM_KEYS: OrderedDict = OrderedDict()
#: the last rankings' answers that no click changes (the ``profile`` component), with what
#: they were computed from (:func:`kept_while`)
_UNCHANGED: OrderedDict = OrderedDict()
#: ... at most this many, and this many bytes of their arrays (the newest always stays)
MAX_UNCHANGED = 4
MAX_UNCHANGED_BYTES = 48 * 2**20
#: per persona and kind of click-dependent scores: (clicks, exact scores over every row)
_BASES: OrderedDict = OrderedDict()
#: what was served for (that key, clicks) from a base: the same answer every time
_STALE: OrderedDict = OrderedDict()
_PENDING: dict = {}
#: serve the previous ranking's exact scores after a click (the short list re-scored);
#: ``False``: every row computed exactly after each click (benchmarks compare the two)
INCREMENTAL = True
#: a base at most this many clicks behind is served from (a benchmark's pages of several
#: clicks at once, a person rating a page without looking at the feed in between)
MAX_STALE = 8
#: benchmarks: the exact scores after a click wait for :func:`settle` instead of starting
#: at once (a person reads the page before the next click; this times the two apart)
DEFER = False
#: more changed keys than this (a rebuilt persona, many clicks at once): sum afresh
MAX_CHANGED_KEYS = 64


def matrix_key(matrix) -> tuple:
    return (matrix.token, len(matrix), matrix.seq)


def _get(cache: OrderedDict, key):
    with _LOCK:
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
        return hit


def _put(cache: OrderedDict, key, value, bound: int, max_bytes: int | None = None) -> None:
    """Keep at most ``bound`` entries and, with ``max_bytes``, at most that many bytes of
    them (the newest entry always stays)."""
    with _LOCK:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > bound:
            cache.popitem(last=False)
        if max_bytes is not None:
            while len(cache) > 1 and sum(getattr(v, "nbytes", 0) for v in cache.values()) > max_bytes:
                cache.popitem(last=False)


def kept(cache: OrderedDict, key, compute, bound: int):
    """``cache[key]``, or ``compute()`` kept there (the oldest out past ``bound`` entries):
    the one bounded memo for what a scorer fits per persona and clicks (the click
    classifier, a plugin's library model)."""
    hit = _get(cache, key)
    if hit is None:
        hit = compute()
        _put(cache, key, hit, bound)
    return hit


class _Unchanged:
    """A :func:`kept_while` entry: its inputs, its value and the bytes of the value's arrays."""

    def __init__(self, inputs, value, nbytes: int):
        self.inputs, self.value, self.nbytes = inputs, value, nbytes


def kept_while(key, inputs, same, compute, nbytes):
    """``compute()``, kept under ``key`` and served again while ``same(kept inputs,
    inputs)``: for an answer that is a pure function of its inputs, recomputing it gives the
    same bits, so serving it again changes nothing (``nbytes(value)``: what it holds)."""
    hit = _get(_UNCHANGED, key)
    if hit is not None and same(hit.inputs, inputs):
        return hit.value
    value = compute()
    _put(_UNCHANGED, key, _Unchanged(inputs, value, nbytes(value)), MAX_UNCHANGED, MAX_UNCHANGED_BYTES)
    return value


class Scope:
    """Where vector scores are computed. When the candidates are most of the matrix (the
    feed), each component is computed once for every row and cached until the persona's
    text or clicks or the matrix change; a narrow candidate set (a search) is scored
    directly.

    ``exact`` (:attr:`hermes.contract.ScoringContext.exact`, int8 storage's second pass):
    the candidates at those positions get scores computed from their exact vectors, the
    others keep the (cached) approximate ones — written into the first pass's copy, kept in
    ``scratch`` (:attr:`~hermes.contract.ScoringContext.scratch`), rather than into a new
    copy of every candidate's scores."""

    def __init__(self, matrix, rows, vectors, persona, exact=None, scratch=None):
        self.matrix, self.rows, self.vectors, self.persona = matrix, rows, vectors, persona
        self.full = len(rows) * 4 >= len(matrix)
        self.exact = exact
        # what a second pass (int8 storage, or scores served from before a click) reuses
        self.scratch = scratch if scratch is not None else {}

    def per_row(self, what, compute, compute_all=None, *, uses_vectors=True, since=None):
        """``compute(vectors, rows) -> (len(rows), …)`` scores, for the candidates.
        ``compute_all()``, when given, computes them for every row of the matrix (it may use
        the caches below); by default ``compute`` over the whole matrix does.
        ``uses_vectors=False``: the scores do not depend on the vectors (nothing to re-score).

        ``since=(family, clicks)``: the scores depend on the persona's ``clicks`` (a
        tuple, oldest first) and ``family`` names them without the clicks. After a click,
        the previous clicks' exact scores over every row are served (``stale``, see
        :func:`_from_base`) and :func:`hermes.ranking.rank.rank` re-scores its short list
        with ``compute``; the exact scores for these clicks are computed meanwhile on a
        thread, for the next click to start from."""
        first = self.scratch.get(("per_row", what)) if self.exact is not None else None
        if first is not None:
            out = first  # the first pass's scores: only the exact positions change below
        elif not self.full:
            out = compute(self.vectors, self.rows)
        else:
            key = (*matrix_key(self.matrix), self.persona, what)
            hit = _from_base(self, what, since, compute_all) if since is not None else None
            if hit is not None:
                self.scratch["stale"] = True
                self.scratch[("stale", what)] = True
            else:
                hit = _get(_SCORES, key)
            if hit is None:
                hit = self._stored_or_computed(what, compute, compute_all)
                _put(_SCORES, key, hit, MAX_SCORES, MAX_SCORE_BYTES)
                if since is not None:
                    _put(_BASES, (*matrix_key(self.matrix), self.persona, since[0]), (tuple(since[1]), hit), MAX_TOPS)
            # a copy (the cached scores stay as they are); ``take`` copies a (rows, k) block
            # several times faster than fancy indexing, and when every row is a candidate
            # (rows are in matrix order) a plain copy is twice as fast again
            out = hit.copy() if len(self.rows) == len(hit) else np.take(hit, self.rows, axis=0)
        if self.exact is None:
            self.scratch[("per_row", what)] = out
        if (
            self.exact is not None
            and uses_vectors
            and (self.matrix.storage == "int8" or self.scratch.get(("stale", what)))
        ):
            at, vectors = self.exact
            out[at] = compute(vectors, self.rows[at])
        return out

    def changed(self, name, compute):
        """``compute(positions)`` for the candidates at ``positions``: every candidate on
        a first pass; on the second, the first pass's array with only the exact positions
        computed again (the same values as computing it all, without a pass over all)."""
        first = self.scratch.get(("changed", name)) if self.exact is not None else None
        if first is None:
            out = compute(slice(None))
            if self.exact is None:
                self.scratch[("changed", name)] = out
            return out
        at = self.exact[0]
        first[at] = compute(at)
        return first

    def kept(self, name, compute):
        """``compute()``, once per ranking: what depends on no vector is the same on the
        second pass."""
        value = self.scratch.get(("kept", name))
        if value is None:
            value = self.scratch[("kept", name)] = compute()
        return value

    def _stored_or_computed(self, what, compute, compute_all):
        """Every row's scores: from the column a previous process stored for the same
        contents, persona and clicks (:mod:`hermes.ranking.column_store`), else computed
        and stored for the next one."""
        key = (__version__, self.persona, what)
        hit = column_store.load(self.matrix, what[0], key)
        if hit is None:
            everything = np.arange(len(self.matrix))
            hit = compute_all() if compute_all is not None else compute(self.matrix.select(everything), everything)
            # one slot per persona and kind: a newer column replaces one not yet written
            column_store.save_later(self.matrix, what[0], key, hit, slot=(self.persona[0], what[0]))
        return hit


def _from_base(scope: Scope, what, since, compute_all):
    """Every row's scores for ``since``'s clicks served from the exact scores of an earlier
    ranking of the same persona whose clicks these extend by at most :data:`MAX_STALE`
    (``None`` when there is none, or :data:`INCREMENTAL` is off: compute them exactly).

    The same clicks always get the same answer in a process: the first request after a
    click picks its base (the last exact scores, those of the previous ranking: a thread
    computes them after each ranking served this way, and the next click waits for it),
    and later requests reuse that choice. The scores are stale only outside the short list
    :func:`hermes.ranking.rank.rank` re-scores (:data:`hermes.ranking.rank.STALE_RESCORE`
    candidates); quality and the overlap with the exact ranking: benchmarks/results/click.md."""
    family, clicks = since[0], tuple(since[1])
    bkey = (*matrix_key(scope.matrix), scope.persona, family)
    served = _get(_STALE, (bkey, clicks))
    if served is not None:
        return served
    if not INCREMENTAL or compute_all is None:
        return None
    if _get(_SCORES, (*matrix_key(scope.matrix), scope.persona, what)) is not None:
        return None  # computed exactly already: keep serving that
    settle(bkey)
    base = _get(_BASES, bkey)
    if base is None:
        return None
    then, scores = base
    if not (len(then) < len(clicks) <= len(then) + MAX_STALE and clicks[: len(then)] == then):
        return None
    _put(_STALE, (bkey, clicks), scores, MAX_TOPS)
    matrix, persona = scope.matrix, scope.persona

    def exact():
        try:
            value = compute_all()
        except Exception:  # noqa: BLE001 — the next click computes them itself
            return
        _put(_BASES, bkey, (clicks, value), MAX_TOPS)
        if matrix_key(matrix) != bkey[:3]:  # the matrix took in new items meanwhile
            return
        column_store.save_later(matrix, family[0], (__version__, persona, what), value, slot=(persona[0], family[0]))

    worker = threading.Thread(target=exact, name="hermes-exact-scores", daemon=True)
    with _LOCK:
        _PENDING[bkey] = worker
    if not DEFER:
        worker.start()
    return scores


def settle(bkey=None) -> None:
    """Wait for the exact scores being computed after a ranking (all of them, or ``bkey``'s)."""
    with _LOCK:
        workers = list(_PENDING.values()) if bkey is None else [_PENDING.get(bkey)]
    for worker in workers:
        if worker is not None:
            if not worker.is_alive() and worker.ident is None:  # deferred: run it now
                worker.start()
            worker.join()
    with _LOCK:
        for key, worker in list(_PENDING.items()):
            if worker.ident is not None and not worker.is_alive():
                del _PENDING[key]


def _at_exit() -> None:
    """A process that ranked after a click finishes the exact columns before it exits and
    files them on disk for the next process (column_store's own exit hook may have run
    already: it is registered at its first write)."""
    settle()
    column_store.flush()


atexit.register(_at_exit)


def like_columns(matrix, liked: list[int], extra: np.ndarray | None = None):
    """``({item id: column}, extra product)``: each liked item's similarity column over
    every row (``vectors @ (v − mean)``, float32) and ``vectors @ extra`` when ``extra`` is
    given — the missing columns and ``extra`` computed in one pass over the matrix."""
    mkey = matrix_key(matrix)
    columns = {i: _get(_COLUMNS, (mkey, i)) for i in liked}
    missing = [i for i in liked if columns[i] is None]
    weights = [extra] if extra is not None else []
    if missing:
        mean = matrix.mean_vector()
        weights += [matrix.vector(i) - mean for i in missing]
    product = None
    if weights:
        sims = matrix.product(np.stack(weights))
        if extra is not None:
            product, sims = sims[0], sims[1:]
        for i, column in zip(missing, sims, strict=True):
            # a copy: a view would keep the whole product (the classifier's row too) alive. In
            # int8 storage the column is approximate anyway (the short list is re-scored from
            # exact vectors, not from these): float16 halves what 24 columns hold at 1M rows.
            columns[i] = column = column.astype(np.float16 if matrix.storage == "int8" else np.float32)
            _put(_COLUMNS, (mkey, i), column, MAX_COLUMNS)
    return columns, product


def stats(db, matrix, persona, clicks) -> dict:
    """A persona's per-key like / dislike statistics
    (:func:`hermes.ranking.preferences.key_stats`), kept until its clicks or the matrix
    change. Each clicked item's keys are kept too, so a new click reads and parses only its
    own item's tags and authors (parsing every clicked item's took longer than the rest of
    a warm ranking at 100k items)."""
    key = (matrix_key(matrix), persona, tuple(clicks))
    hit = _get(_STATS, key)
    if hit is None:
        hit = preferences.stats_of(clicks, _clicked_keys(db, matrix, clicks))
        _put(_STATS, key, hit, MAX_SCORES)
    return hit


def shared_evidence(db, matrix, clicks) -> list[list[str]]:
    """:func:`hermes.ranking.preferences.shared_evidence` of these clicks, from the clicked
    items' kept keys."""
    return preferences.shared_evidence(clicks, _clicked_keys(db, matrix, clicks))


def _clicked_keys(db, matrix, clicks) -> dict[int, list[str]]:
    """Each clicked item's keys, kept per matrix: a new click reads only its own item's."""
    mkey = matrix_key(matrix)
    known = _get(_ITEM_KEYS, mkey) or {}
    missing = {item_id for item_id, _ in clicks} - known.keys()
    if missing:
        # a copy: another thread may be reading the kept dict
        known = {**known, **dict.fromkeys(missing, ()), **preferences.keys_of_items(db, missing)}
        _put(_ITEM_KEYS, mkey, known, MAX_TOPS)
    return known


def key_sums(matrix, persona, values: np.ndarray) -> np.ndarray:
    """``matrix.key_sums(values, matrix.entry_share())``, updated from this persona's
    previous values when few keys changed."""
    key = (matrix_key(matrix), persona, len(values))
    previous = _get(_PREFERENCES, key)
    if previous is not None:
        delta = values - previous[0]
        changed = np.count_nonzero(delta)
        if not changed:
            return previous[1]
        if changed <= MAX_CHANGED_KEYS:
            sums = previous[1] + matrix.key_sums(delta, matrix.entry_share())
            _put(_PREFERENCES, key, (values, sums), MAX_TOPS)
            return sums
    sums = matrix.key_sums(values, matrix.entry_share())
    _put(_PREFERENCES, key, (values, sums), MAX_TOPS)
    return sums


def top_k_mean(matrix, liked: list[int], columns: dict, k: int) -> np.ndarray:
    """Per row, the mean of the ``k`` largest of ``columns[i]`` over ``liked`` (float32)."""
    return _mean(_top_k(matrix, liked, columns, k))


def top_max(matrix, liked: list[int], columns: dict, k: int) -> np.ndarray:
    """Per row, the largest of ``columns[i]`` over ``liked``: the first of the ``k`` largest
    :func:`top_k_mean` keeps (no extra pass)."""
    return _top_k(matrix, liked, columns, k)[0]


def _top_k(matrix, liked: list[int], columns: dict, k: int) -> np.ndarray:
    mkey, wanted = matrix_key(matrix), frozenset(liked)
    tops = _get(_TOPS, (mkey, wanted))
    if tops is None:
        tops = _update(mkey, wanted, liked, columns, k)
        if tops is None:
            tops = _fold([columns[i] for i in liked], k)
        _put(_TOPS, (mkey, wanted), tops, MAX_TOPS)
    return tops


def mean_of_top_k(columns: list[np.ndarray], k: int) -> np.ndarray:
    """Per row, the mean of the ``k`` largest of ``columns`` (no cache: a few rows)."""
    return _mean(_fold(columns, k))


def _mean(tops: np.ndarray) -> np.ndarray:
    total = tops[0].copy()
    for level in tops[1:]:  # one fixed order of summation, whatever path built ``tops``
        total += level
    return total / np.float32(len(tops))


def _update(mkey, wanted: frozenset, liked, columns, k):
    """The top-k state for ``wanted`` from a cached state of a near set, or ``None``."""
    with _LOCK:
        near = [(len(s - wanted) + len(wanted - s), s, t) for (m, s), t in _TOPS.items() if m == mkey and len(t) == k]
    if not near:
        return None
    steps, have, base = min(near, key=lambda c: c[0])
    removed = [_get(_COLUMNS, (mkey, i)) for i in have - wanted]
    if steps > MAX_STEPS or any(c is None for c in removed):
        return None
    tops = base.copy()
    for i in liked:
        if i not in have:
            _insert(tops, columns[i])
    if removed:
        # A row whose k largest did not include a removed value keeps them; the others are
        # recomputed from the current columns (ties count as included: exact either way).
        stale = np.zeros(len(tops[0]), dtype=bool)
        for column in removed:
            stale |= column >= base[-1]
        rows = np.flatnonzero(stale)
        if len(rows):
            tops[:, rows] = _fold([columns[i][rows] for i in liked], k)
    return tops


def _fold(columns: list[np.ndarray], k: int) -> np.ndarray:
    """``(k, n)``: per row the k largest values of ``columns``, largest first."""
    # float32 even over float16 columns (int8 storage): numpy's float16 arithmetic is
    # about four times slower, and these states are few
    tops = np.full((k, len(columns[0])), -np.inf, dtype=np.float32)
    for column in columns:
        _insert(tops, column)
    return tops


def _insert(tops: np.ndarray, column: np.ndarray) -> None:
    """Fold one column into the per-row sorted top-k (a max/min network: exact)."""
    carry = column
    for level in range(len(tops)):
        low = np.minimum(tops[level], carry)
        np.maximum(tops[level], carry, out=tops[level])
        carry = low


def clear() -> None:
    settle()
    with _LOCK:
        _BASES.clear()
        _STALE.clear()
        _UNCHANGED.clear()
        _SCORES.clear()
        _COLUMNS.clear()
        _TOPS.clear()
        _PREFERENCES.clear()
        _STATS.clear()
        _ITEM_KEYS.clear()
