"""``match``: the absolute judgement per ranked item, and the bar-first order of the feeds."""

from __future__ import annotations

import numpy as np
import pytest

from hermes.contract import CandidateQuery, Component
from hermes.hookspecs import hookimpl
from hermes.ranking import match
from hermes.ranking.rank import rank
from hermes.storage.records import create_user

HASH = "hermes/hash-384"


def comp(name, **evidence):
    return Component(name, "profile", np.zeros(3), evidence=evidence)


def test_an_item_takes_the_best_level_any_figure_reaches():
    interest = match.THRESHOLDS[match.MINILM]["interest"]
    liked = match.THRESHOLDS[match.MINILM]["liked"]
    components = [
        comp("profile", interest=np.array([interest[2], interest[1] - 0.01, 0.0])),
        comp("affinity", liked=np.array([liked[2], liked[1], np.nan])),
    ]
    levels = match.judge(components, 3, match.MINILM).levels
    assert [match.LEVELS[v] for v in levels] == ["strong", "good", "none"]
    # a figure exactly at a threshold reaches that level, the same way one at a time
    for kind, cuts in match.THRESHOLDS[match.MINILM].items():
        for level, cut in zip(("weak", "good", "strong"), cuts):
            assert match.LEVELS[match.level_of(kind, cut, match.MINILM)] == level
            assert match.LEVELS[match.level_of(kind, cut - 1e-6, match.MINILM)] != level


def test_judging_many_figures_counts_levels_as_one_figure_does():
    rng = np.random.default_rng(3)
    cuts = match.THRESHOLDS[match.MINILM]["interest"]
    values = np.concatenate([rng.uniform(-0.2, 0.9, 5000), cuts, np.nextafter(cuts, -1), [np.nan]])
    for dtype in (np.float64, np.float32):  # a float32 figure is judged by its exact value
        figures = values.astype(dtype)
        levels = match.judge([comp("profile", interest=figures)], len(figures), match.MINILM).levels
        expected = [match.level_of("interest", float(v), match.MINILM) for v in figures]
        assert levels.tolist() == expected


def test_an_undecided_classifier_lifts_no_item_to_weak():
    """Between its weak and good thresholds the classifier "does not tell either way": its
    own level says weak (the reason's words), the item's level stays what the rest says."""
    weak, good, strong = match.THRESHOLDS[match.MINILM]["classifier"]
    figures = np.array([weak, (weak + good) / 2, good, strong])
    levels = match.judge([comp("classifier", classifier=figures)], 4, match.MINILM).levels
    assert [match.LEVELS[v] for v in levels] == ["none", "none", "good", "strong"]
    assert match.LEVELS[match.level_of("classifier", weak, match.MINILM)] == "weak"
    interest = match.THRESHOLDS[match.MINILM]["interest"][0]  # weak from another figure
    both = [comp("classifier", classifier=figures[:1]), comp("profile", interest=np.array([interest]))]
    assert match.LEVELS[match.judge(both, 1, match.MINILM).levels[0]] == "weak"


def test_inactive_components_and_unknown_kinds_say_nothing():
    off = Component("profile", "profile", np.zeros(2), active=False, evidence={"interest": np.array([0.9, 0.9])})
    boost = Component("bread", "boost", np.zeros(2), evidence={"bread": np.array([9.0, 9.0])})
    assert match.judge([off, boost], 2, match.MINILM).levels.tolist() == [0, 0]


def test_a_model_nobody_calibrated_gets_minilm_s_thresholds():
    assert match.thresholds("someone/else") == match.THRESHOLDS[match.MINILM]
    assert match.thresholds(HASH) != match.THRESHOLDS[match.MINILM]


@pytest.fixture
def persona(db, add_items):
    ids = add_items(
        [
            {"title": "quantum error correction with surface codes", "summary": "qubits"},
            {"title": "Sourdough bread", "summary": "flour water salt"},
            {"title": "entanglement of qubits in quantum error correction", "summary": "codes"},
            {"title": "Tax forms", "summary": "returns deadlines"},
        ]
    )
    return create_user(db, "ann", "quantum error correction, qubits"), ids


class Boost:
    """A plugin pushing the bread item to the top of the blend (a boost, no evidence)."""

    @hookimpl
    def hermes_score(self, db, user, item_ids, vectors, context):
        titles = dict(db.execute("SELECT id, title FROM items").fetchall())
        return Component(
            "bread", "boost", np.array([10.0 if "Sourdough" in titles[int(i)] else 0.0 for i in item_ids]), weight=5.0
        )


def test_bar_first_puts_what_clears_the_bar_first_each_group_in_blend_order(db, pm, persona):
    user, ids = persona
    pm.register(Boost(), name="boost")
    plain = rank(db, user, CandidateQuery(since_days=None))
    assert int(plain.item_ids[0]) == ids[1]  # the boost wins the blend …
    assert plain.match(0) == "none"  # … but moves no match
    folded = rank(db, user, CandidateQuery(since_days=None), bar_first=True)
    above = [int(i) for p, i in enumerate(folded.item_ids) if folded.above_bar(p)]
    assert set(above) == {ids[0], ids[2]} and list(folded.item_ids[:2]) == above
    assert folded.n_above_bar == 2 and folded.n_below_bar == 2
    assert sum(folded.level_counts.values()) == folded.n_candidates == 4
    blend = {int(i): s for i, s in zip(plain.item_ids, plain.scores)}
    for group in (folded.item_ids[:2], folded.item_ids[2:]):
        scores = [blend[int(i)] for i in group]
        assert scores == sorted(scores, reverse=True)
    # the scores stay the blend's: only the order of the two groups changed
    assert {int(i): s for i, s in zip(folded.item_ids, folded.scores)} == blend
    top = rank(db, user, CandidateQuery(since_days=None), limit=1, bar_first=True)
    assert int(top.item_ids[0]) == above[0] and top.n_below_bar == 2  # counts cover all


@pytest.mark.parametrize(
    "figure, text",
    [
        (0.4744, "0.47"),
        (0.465, "0.46"),
        (0.47, "0.47"),
        (0.4699, "0.46"),
        (-0.123, "-0.13"),
        (float("nan"), "–"),
    ],
)
def test_a_figure_is_shown_on_the_same_side_of_every_threshold(figure, text):
    """Rounded, 0.4744 (strong) and 0.465 (good) both read 0.47 beside different verdicts."""
    assert match.shown(figure) == text
    for limits in match.THRESHOLDS[match.MINILM].values():
        for limit in limits:
            if figure == figure:  # not NaN
                assert (float(text) >= limit) == (figure >= limit)


def test_level_counts_of_float32_figures_equal_the_float64_comparison_at_every_limit():
    """The float32 path (no float64 copy of every candidate's figure) reaches a limit
    exactly where the figure's float64 value does, at the float32 neighbours of each
    limit too; level_of (Python floats) agrees with both."""
    from hermes.ranking.match import MINILM, level_counts, level_of, thresholds

    for kind, limits in thresholds(MINILM).items():
        near = [np.nextafter(np.float32(x), np.float32(d)) for x in limits for d in (-1, 2)]
        values = np.array([*near, *(np.float32(x) for x in limits), np.nan, 0.0, 1.0], dtype=np.float32)
        expected = np.zeros(len(values), dtype=np.int8)
        for limit in limits:
            expected += values.astype(np.float64) >= limit
        assert level_counts(limits, values).tolist() == expected.tolist()
        assert [level_of(kind, float(v), MINILM) for v in values] == expected.tolist()
