"""How well an item matches a persona in absolute terms: ``strong``, ``good``, ``weak`` or
``none``, whatever else happens to be a candidate.

The blend that orders a feed standardises every component over the candidates, so the best
of a poor lot always looks like a strong match. ``match`` is judged from figures that keep
their meaning from one ranking to the next (:attr:`hermes.contract.Component.evidence`):

- ``interest``: the cosine between the item and the clause of the interests text it matches
  best;
- ``liked``: the cosine between the item and the nearest item the persona liked;
- ``classifier``: the click classifier's probability of a like, once it is trained.

Each figure is placed against fixed thresholds and the item takes the best level any of
them reaches. The thresholds are cosines of one embedding model, so they are kept per model
(:data:`THRESHOLDS`); they were chosen on the labelled arXiv corpus with the real model
(``benchmarks/match_calibration.py``, figures in BENCHMARKS.md) and never on the items
being ranked. ``strong`` and ``good`` clear the persona's bar; ``weak`` and ``none`` sit
below it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..contract import Component

#: from worst to best; an item's level is an index into this tuple
LEVELS = ("none", "weak", "good", "strong")
#: the first level that clears the persona's bar
BAR = LEVELS.index("good")

MINILM = "sentence-transformers/all-MiniLM-L6-v2"

#: per embedding model and evidence kind: the lowest figure that reaches weak, good, strong
#: (chosen by benchmarks/match_calibration.py; see BENCHMARKS.md, "Match calibration")
THRESHOLDS: dict[str, dict[str, tuple[float, float, float]]] = {
    MINILM: {
        "interest": (0.12, 0.37, 0.47),
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
    if limits is None or not math.isfinite(value):
        return 0
    return int(level_counts(limits, [value])[0])


def judge(components: Iterable[Component], size: int, model: str) -> np.ndarray:
    """Each candidate's level (an index into :data:`LEVELS`): the best level any of its
    active components' evidence reaches (a kind in :data:`COUNTS_FROM` only from there up)."""
    limits = thresholds(model)
    levels = np.zeros(size, dtype=np.int8)
    for comp in components:
        if not comp.active:
            continue
        for kind, values in comp.evidence.items():
            if kind in limits:
                reached = level_counts(limits[kind], values)
                if kind in COUNTS_FROM:
                    reached[reached < COUNTS_FROM[kind]] = 0
                np.maximum(levels, reached, out=levels)
    return levels


def level_counts(limits: tuple[float, ...], values) -> np.ndarray:
    """Per value, how many of ``limits`` it reaches (the one rule :func:`judge` and
    :func:`level_of` share); NaN reaches none. Compared in float64, so a float32 figure is judged by its exact value;
    one comparison per limit is many times faster than ``searchsorted`` on a short list."""
    values = np.asarray(values, dtype=np.float64)
    counts = np.zeros(values.shape, dtype=np.int8)
    for limit in limits:
        counts += values >= limit
    return counts


def clears_bar(level: str) -> bool:
    return LEVELS.index(level) >= BAR
