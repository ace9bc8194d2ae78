"""How well an item matches a persona in absolute terms: ``strong``, ``good``, ``weak`` or
``none``, whatever else happens to be a candidate.

The blend that orders a feed standardises every component over the candidates, so the best
of a poor lot always looks like a strong match. ``match`` is judged from figures that keep
their meaning from one ranking to the next (:attr:`hermes.contract.Component.evidence`):

- ``interest``: the cosine between the item and the interest of the interests text it
  matches best (a clause with the clauses about the same thing,
  :func:`hermes.ranking.interests.interest_groups`: the figure the order ranks by);
- ``liked``: the cosine between the item and the nearest item the persona liked;
- ``disliked``: the same for the nearest disliked item (judged only beside ``liked``);
- ``classifier``: the click classifier's probability of a like, once it is trained.

Each figure is placed against thresholds and the item takes the best level any of them
reaches. The thresholds are cosines of one embedding model, so they are kept per model
(:data:`THRESHOLDS`); they were chosen on the labelled arXiv corpus with the real model
(``benchmarks/match_calibration.py``, figures in BENCHMARKS.md) and never on the items
being ranked. Four rules make them true inside one field (``benchmarks/bar_field.py``):
the thresholds rise where this archive's typical figure is higher than the corpus's
(:data:`SHIFT`, judged over :attr:`~hermes.contract.Component.reference`), and the
classifier's good and strong need a probability rare there (:data:`RARE`); the liked figure
lifts nothing where a disliked item is as near (:data:`CLOSER`); once the persona has
clicked, strong needs the clicks to agree (:data:`CONFIRMED_BY_CLICKS`); a trained
classifier that leans to a dislike keeps the item below the bar (:data:`VETO`). ``strong`` and ``good``
clear the persona's bar; ``weak`` and ``none`` sit below it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..contract import Component

#: from worst to best; an item's level is an index into this tuple
LEVELS = ("none", "weak", "good", "strong")
#: the first level that clears the persona's bar
BAR = LEVELS.index("good")
STRONG = LEVELS.index("strong")

MINILM = "sentence-transformers/all-MiniLM-L6-v2"

#: per embedding model and evidence kind: the lowest figure that reaches weak, good, strong
#: (chosen by benchmarks/match_calibration.py; see BENCHMARKS.md, "Match calibration"). The
#: interest figure is the grouped one since 3 Dec: strong 0.47 -> 0.53 and its TYPICAL
#: 0.20 -> 0.18 (the many-field archive's median of that figure), chosen on the choosing half
#: of benchmarks/bar_field.py (good 0.37 stayed the best cut)
THRESHOLDS: dict[str, dict[str, tuple[float, float, float]]] = {
    MINILM: {
        "interest": (0.09, 0.37, 0.53),
        "liked": (0.08, 0.48, 0.56),
        "classifier": (0.32, 0.53, 0.58),
    },
    # The test embedder hashes words: a cosine there measures shared words, not meaning. Not
    # calibrated on anything; set so an item sharing one common word ("and") with a text stays
    # below the bar and one sharing several of its words clears it.
    "hermes/hash-384": {
        "interest": (0.20, 0.30, 0.50),
        "liked": (0.25, 0.40, 0.60),
        "classifier": (0.50, 0.65, 0.80),
    },
}


#: evidence kinds whose figures count for an item's level only from this level up. The
#: classifier between its weak and good thresholds is undecided (the reason says "your likes
#: and dislikes do not tell either way"): no evidence of any match, so it lifts nothing to
#: weak. Without this, two likes and two dislikes turned every unrelated item into a weak
#: match (probabilities around 0.36).
COUNTS_FROM = {"classifier": BAR}
#: how the faces show such a figure's level where it does not count
UNCOUNTED = "undecided: does not count for the match"

#: Judged against the archive. The thresholds were chosen on an archive of many fields,
#: where an item's figure against a random item of the archive is typically TYPICAL (the
#: median of the reference). Where the typical figure is higher — an archive of one field,
#: where most papers are 0.3–0.5 from any liked one, or many likes, whose nearest is near
#: anything — every threshold rises by SHIFT times the excess: a figure counts as close only
#: as far as it is closer than is usual *here*. Chosen on the choosing half of
#: benchmarks/bar_field.py (BENCHMARKS.md, "The bar"); measured there, this beats judging
#: a figure by how many spreads it stands above the archive's bulk.
TYPICAL: dict[str, dict[str, float]] = {
    MINILM: {"interest": 0.18, "liked": 0.22},
    # the hash embedder's cosines count shared words: no archive makes them typical
    "hermes/hash-384": {},
}
#: (liked: 1 to 3 measured the same; 1 keeps a persona taught by likes alone — an imported
#: library, no interests text, no dislike yet — from finding nothing close in one field)
SHIFT = {"interest": 1.0, "liked": 1.0}
#: Rare here: a level of these kinds also needs the figure to be in this archive's top
#: share (a quantile of the reference, per level from weak up; 0: not needed). The
#: classifier's probability has no neighbourhood to be typical of: taught the likes against
#: a few dislikes far from them (a trial's four polymer papers ranked 250-330 of 390), it
#: puts most of a one-field archive over 0.5, and the bar grew 13 -> 52 items. Chosen on the
#: choosing half of benchmarks/bar_field.py with both click patterns (BENCHMARKS.md, "The bar").
RARE: dict[str, tuple[float, float, float]] = {"classifier": (0.0, 0.97, 0.99)}
#: a reference of fewer items says too little of what is typical here (the top quarter of
#: 20 items is five of them): below this, figures are judged by the thresholds alone
MIN_REFERENCE = 100
#: the classifier, once trained, keeps an item below the bar when it leans towards a dislike
#: (its probability under this): a near-miss the interests text matches closely stays down
#: once the persona has disliked its like. (The classifier is class-balanced: 0.5 is its
#: "either way".) Measured against 0.45, 0.4 and 0.32, and against sparing items whose
#: interest or liked figure is strong: each let more irrelevant items above the bar as the
#: clicks grew (within one field 4.1 -> 5-7 at 30 clicks instead of 2.6), and sparing
#: strong ones cost the precision of strong (0.91 -> 0.85-0.89 at 30 clicks).
VETO = 0.5
#: … once it is fit on this many clicks: on one like and one dislike (and the sampled
#: unclicked items) it leans to a dislike on nearly everything, the persona's best match
#: included; the benchmark's smallest budget, where VETO was chosen, is 5
VETO_CLICKS = 5
#: … and below this many clicks it spares an item the interests text matches strongly (as
#: this archive judges it; the item is then good, not strong: unconfirmed). Fit on a few
#: clicks, the classifier learns the likes against a sample of the archive: in a trial's
#: one-field archive 3 likes and 3 dislikes (two off the field) put papers the interests text
#: matched strongly at 0.41–0.49, and the veto held 21 items down, 10 of them such papers
#: ("Notes on the Kondo lattice", interest 0.67; 7 above the bar, 17 with them spared). On
#: benchmarks/bar_field.py (choosing half, 5 clicks, one field) sparing them moved strong +
#: good precision 0.75 -> 0.75 and recall 0.20 -> 0.21 (reporting half 0.77 -> 0.75, 0.21 ->
#: 0.22); sparing them at every budget cost precision at 30 clicks (0.78 -> 0.77)
#: (3 Dec, measured and not shipped, 5 clicks, one field: sparing an item the classifier puts
#: in this archive's top half / quarter / tenth / 1 % moved the reporting half's strong + good
#: precision 0.75 -> 0.65 / 0.68 / 0.71 / 0.75 for recall 0.22 -> 0.28 / 0.27 / 0.26 / 0.22;
#: needing a disliked item as near, 0.71 / 0.25. Where the veto empties the bar, the items it
#: holds are relevant 0.50-0.66 of the time: the faces say the clicks are why instead,
#: :func:`hermes.ranking.explain_words.held_by_clicks`)
SPARE_STRONG_INTEREST_BELOW = 10
#: … and from then on it spares one unless a disliked item is as near as the nearest liked
#: one (:data:`CLOSER`): the veto holds down what resembles a dislike, not a paper on the
#: stated interest that a classifier of 12 diverse clicks puts at 0.47 (an MCP trial's
#: "Hubbard model" papers, interest 0.61, all under the bar, which held one podcast episode).
#: On benchmarks/bar_field.py, both click patterns, both halves: the same figures to the
#: second decimal but one (many fields at 10 clicks, 12.3 -> 12.4 irrelevant above the bar)
SPARE_UNLESS_DISLIKED_NEAR = True
#: "disliked" is judged only beside "liked": the liked figure lifts nothing where a disliked
#: item is as near, or nearer, give or take this (chosen: within 0.05 of the liked one)
CLOSER = -0.05
#: Once the persona has clicked, the interests text alone reaches ``good``, not ``strong``:
#: strong needs what the person taught to agree (the liked figure or the classifier strong
#: too). Inside one field an item strong by its interest figure alone was relevant 0.80–0.84
#: of the time at every budget on the choosing half of benchmarks/bar_field.py (0.78–0.84 on
#: the reporting half), one confirmed by the clicks 0.90–0.95; the bar (strong and good
#: alike) lets the same items through. Before any click there is nothing to confirm with,
#: and the interests text is all the bar has (docs/match.md: what it can reach).
CONFIRMED_BY_CLICKS = True


def shown_limit(limit: float) -> str:
    """A threshold as the faces write it: rounded up to two decimals (:func:`on_shown_grid`),
    so a figure shown below it (cut, :func:`shown`) is below it."""
    return f"{on_shown_grid((limit,))[0]:.2f}"


def on_shown_grid(limits: tuple[float, ...]) -> tuple[float, ...]:
    """``limits`` rounded up to the two decimals every face shows (:func:`shown_limit`): a
    figure then clears a limit exactly when the figure shown (cut, :func:`shown`) does. An
    archive's quantile is any number: a trial read "probability 0.57" as good beside "a
    match needs 0.58 here" (0.5763 against 0.5707)."""
    return tuple(math.ceil(limit * 100 - 1e-9) / 100 for limit in limits)


def shown(figure: float) -> str:
    """A similarity or probability as every face writes it: cut, not rounded, to the
    thresholds' two decimals, so the figure shown is on the same side of each threshold as
    the figure judged (0.4744 and 0.465 would both round to 0.47, one strong, one good)."""
    if not math.isfinite(figure):
        return "–"
    return f"{math.floor(figure * 100 + 1e-9) / 100:.2f}"


def thresholds(model: str) -> dict[str, tuple[float, float, float]]:
    """The thresholds for ``model``; an embedder nobody calibrated gets MiniLM's (its
    cosines may mean something else: calibrate it as BENCHMARKS.md describes)."""
    return THRESHOLDS.get(model, THRESHOLDS[MINILM])


def level_of(kind: str, value: float, model: str) -> int:
    """The level one figure reaches on its own (``none`` for a kind without thresholds)."""
    limits = thresholds(model).get(kind)
    value = float(value)
    if limits is None or not math.isfinite(value):
        return 0
    # level_counts' rule for one value, in Python floats (float64, as it compares): an
    # explanation asks for a few figures per item, where building arrays cost 12 µs a call
    return sum(value >= limit for limit in limits)


@dataclass
class Judgement:
    """Each candidate's level, and the level each kind of evidence reached for it as it
    counted (after the archive's reference and the dislikes): what the explanation words."""

    levels: np.ndarray
    by_kind: dict[str, np.ndarray] = field(default_factory=dict)
    #: where the liked figure did not count because a disliked item is closer
    nearer_disliked: np.ndarray | None = None
    #: where the classifier kept the item below the bar
    vetoed: np.ndarray | None = None
    #: per kind with a reference, the figure an item here typically reaches (the kinds the
    #: archive raises, :func:`raises`, were judged against it)
    typical: dict[str, float] = field(default_factory=dict)
    #: where the interests text alone was strong and the clicks did not confirm it
    #: (:data:`CONFIRMED_BY_CLICKS`): the item is a good match
    unconfirmed: np.ndarray | None = None
    #: the kinds whose levels also needed the figure to be rare here (:data:`RARE`; not
    #: where the reference was too small to tell)
    rare: frozenset = frozenset()
    #: per kind, the limits (weak, good, strong) its figures were judged against here
    limits: dict = field(default_factory=dict)

    def _arrays(self) -> dict:
        return {
            "levels": self.levels,
            **{f"by_kind.{k}": v for k, v in self.by_kind.items()},
            "nearer_disliked": self.nearer_disliked,
            "vetoed": self.vetoed,
            "unconfirmed": self.unconfirmed,
        }

    def take(self, order) -> Judgement:
        """The same judgement for the candidates at ``order`` (in that order)."""

        def at(array):
            return None if array is None else array[order]

        return Judgement(
            self.levels[order],
            {k: v[order] for k, v in self.by_kind.items()},
            at(self.nearer_disliked),
            at(self.vetoed),
            self.typical,
            at(self.unconfirmed),
            self.rare,
            self.limits,
        )

    def put(self, at, other: Judgement) -> None:
        """Write ``other`` (a judgement of the candidates at ``at``) into this one."""
        mine, theirs = self._arrays(), other._arrays()
        for name, array in mine.items():
            if array is not None and theirs.get(name) is not None:
                array[at] = theirs[name]


def archive_limits(kind: str, reference, model: str) -> tuple[float, ...] | None:
    """``kind``'s thresholds raised for this archive (:data:`TYPICAL`, :data:`SHIFT`):
    ``None`` when nothing raises them (no reference, or one of fewer than
    :data:`MIN_REFERENCE` items)."""
    here = typical_here(kind, reference, model)
    return None if here is None else _raised(kind, here, model)


def _raised(kind: str, here: float, model: str) -> tuple[float, ...]:
    excess = max(0.0, here - TYPICAL.get(model, TYPICAL[MINILM])[kind])
    return tuple(limit + SHIFT[kind] * excess for limit in thresholds(model)[kind])


def typical_here(kind: str, reference, model: str) -> float | None:
    """The figure an item of this archive typically reaches (the reference's median), for
    a kind the archive can raise; ``None`` otherwise."""
    return archive_median(reference) if raises(kind, model) else None


def raises(kind: str, model: str) -> bool:
    """Whether this archive's typical figure raises ``kind``'s thresholds."""
    return bool(
        TYPICAL.get(model, TYPICAL[MINILM]).get(kind) is not None and kind in thresholds(model) and SHIFT.get(kind)
    )


def judged_rare(kind: str, reference) -> bool:
    """Whether ``kind``'s levels also need its figure rare here: it has :data:`RARE` shares
    and a reference of :data:`MIN_REFERENCE` items or more to tell what is rare."""
    return bool(RARE.get(kind)) and reference is not None and len(reference) >= MIN_REFERENCE


def rare_limits(kind: str, limits: tuple[float, ...], reference) -> tuple[float, ...]:
    """``limits``, each at least the reference's :data:`RARE` quantile for ``kind`` where
    :func:`judged_rare` (as they are elsewhere)."""
    if not judged_rare(kind, reference):
        return limits
    shares = RARE[kind]
    values = np.asarray(reference, dtype=np.float64)
    # the k-th smallest by one partition (np.quantile's interpolation is not needed here)
    at = [min(len(values) - 1, int(share * len(values))) for share in shares]
    ordered = np.partition(values, at)[at]
    return tuple(
        limit if not share else max(limit, float(q)) for limit, share, q in zip(limits, shares, ordered, strict=True)
    )


def archive_median(reference) -> float | None:
    """The reference's median, or ``None`` for one of fewer than :data:`MIN_REFERENCE`
    items (too few to say what is typical here)."""
    if reference is None or len(reference) < MIN_REFERENCE:
        return None
    values = np.asarray(reference, dtype=np.float64)
    # np.median's own figure, by the same partition and mean of the middle pair; np.median
    # itself imports numpy.ma (NaN checks a reference never needs), ~17 ms of every ranking
    # command's start (issue 36)
    middle = (len(values) - 1) // 2, len(values) // 2
    return float(np.partition(values, middle)[list(middle)].mean())


def judge(components: Iterable[Component], size: int, model: str, n_clicks: int = 0) -> Judgement:
    """Each candidate's level (an index into :data:`LEVELS`): the best level any of its
    active components' evidence reaches against the thresholds as this archive raises them
    (:func:`archive_limits`) — a kind in :data:`COUNTS_FROM` only from there up, the liked
    figure only where no disliked item is as near (:data:`CLOSER`), ``strong`` by the
    interests text alone only before any click taught something (:data:`CONFIRMED_BY_CLICKS`)
    — and never above ``weak`` where a classifier fit on ``n_clicks`` >=
    :data:`VETO_CLICKS` leans to a dislike (:data:`VETO`), but for an item the interests text
    matches strongly while the clicks are fewer than :data:`SPARE_STRONG_INTEREST_BELOW`, and
    after that one no disliked item is as near as its nearest liked one
    (:data:`SPARE_UNLESS_DISLIKED_NEAR`)."""
    limits = thresholds(model)
    levels = np.zeros(size, dtype=np.int8)
    by_kind: dict[str, np.ndarray] = {}
    typical: dict[str, float] = {}
    figures: dict[str, np.ndarray] = {}
    rare: set[str] = set()
    judged_limits: dict[str, tuple[float, ...]] = {}
    for comp in components:
        if not comp.active:
            continue
        for kind, values in comp.evidence.items():
            figures[kind] = values
            if kind not in limits:
                continue
            median = archive_median(comp.reference.get(kind))
            if median is not None:
                # every kind's, the classifier's too: the explanation says where an item
                # stands here ("under an even 0.50, though above the 0.41 typical here")
                typical[kind] = median
            here = median if raises(kind, model) else None
            # one comparison per limit, against the limits as this archive raises them
            raised = limits[kind] if here is None else _raised(kind, here, model)
            reference = comp.reference.get(kind)
            if judged_rare(kind, reference):
                rare.add(kind)
            judged_limits[kind] = on_shown_grid(rare_limits(kind, raised, reference))
            by_kind[kind] = level_counts(judged_limits[kind], values)
    nearer = None
    if "liked" in by_kind and "disliked" in figures:
        # NaN (no dislike) compares False: nothing nearer
        nearer = np.asarray(figures["disliked"]) >= np.asarray(figures["liked"]) + CLOSER
        by_kind["liked"] = np.where(nearer, np.minimum(by_kind["liked"], BAR - 1), by_kind["liked"]).astype(
            np.int8, copy=False
        )
    for kind, reached in by_kind.items():
        if kind in COUNTS_FROM:
            reached = np.where(reached < COUNTS_FROM[kind], 0, reached).astype(np.int8, copy=False)
        np.maximum(levels, reached, out=levels)
    unconfirmed = None
    taught = [reached for kind, reached in by_kind.items() if kind != "interest"]
    if CONFIRMED_BY_CLICKS and "interest" in by_kind and taught:
        confirmed = np.logical_or.reduce([reached >= STRONG for reached in taught])
        unconfirmed = (levels >= STRONG) & ~confirmed
        levels[unconfirmed] = BAR
    vetoed = None
    if "classifier" in figures and VETO > 0 and n_clicks >= VETO_CLICKS:
        leans = np.asarray(figures["classifier"]) < VETO
        if n_clicks < SPARE_STRONG_INTEREST_BELOW and "interest" in by_kind:
            leans &= by_kind["interest"] < STRONG
        elif SPARE_UNLESS_DISLIKED_NEAR and "interest" in by_kind:
            near = nearer if nearer is not None else np.zeros(len(leans), dtype=bool)
            leans &= (by_kind["interest"] < STRONG) | near
        vetoed = leans & (levels >= BAR)
        levels[vetoed] = BAR - 1
    return Judgement(levels, by_kind, nearer, vetoed, typical, unconfirmed, frozenset(rare), judged_limits)


def level_counts(limits: tuple[float, ...], values) -> np.ndarray:
    """Per value, how many of ``limits`` it reaches (the one rule :func:`judge` and
    :func:`level_of` share); NaN reaches none. Compared in float64, so a float32 figure is judged by its exact value;
    one comparison per limit is many times faster than ``searchsorted`` on a short list."""
    values = np.asarray(values)
    if values.dtype == np.float32:
        # without the float64 copy: a float32 reaches the limit exactly when it reaches the
        # smallest float32 at or above it (the same answer, on every candidate of a ranking);
        # a column of a wider block is copied first (three strided comparisons cost more)
        values = np.ascontiguousarray(values)
        counts = np.zeros(values.shape, dtype=np.int8)
        for limit in limits:
            counts += values >= _float32_ceiling(limit)
        return counts
    values = values.astype(np.float64, copy=False)
    counts = np.zeros(values.shape, dtype=np.int8)
    for limit in limits:
        counts += values >= limit
    return counts


def _float32_ceiling(limit: float) -> np.float32:
    """The smallest float32 that is at least ``limit``."""
    nearest = np.float32(limit)
    if float(nearest) < limit:
        nearest = np.nextafter(nearest, np.float32(np.inf))
    return nearest
