"""The library component's handling of a real library (plugins/persona/library_scorer.py):
papers off the library's topics weigh less, and the interests text keeps a say in
proportion to how well it describes the library."""

from __future__ import annotations

import numpy as np
import pytest
from hermes_persona import library_scorer
from test_persona_support import make_persona, tool

from hermes.contract import CandidateQuery
from hermes.storage.records import require_user


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_a_paper_far_from_the_library_weighs_less(monkeypatch):
    monkeypatch.setattr(library_scorer, "OUTLIER_SPREAD", 2.0)
    monkeypatch.setattr(library_scorer, "OUTLIER_WEIGHT", 0.25)
    rng = np.random.default_rng(0)
    topic, other = np.eye(16)[0], np.eye(16)[1]
    library = _unit(np.vstack([topic + 0.3 * rng.standard_normal((12, 16)), other[None, :]]))
    weights = library_scorer._typicality(library)
    assert weights[-1] == 0.25
    assert (weights[:-1] == 1.0).all()


def test_a_library_of_one_topic_keeps_every_paper():
    rng = np.random.default_rng(1)
    library = _unit(np.eye(16)[0] + 0.3 * rng.standard_normal((20, 16)))
    assert library_scorer.OUTLIER_SPREAD == 0 or library_scorer._typicality(library).mean() > 0.8


def test_auc_counts_the_pairs_in_order():
    assert library_scorer._auc(np.array([3.0, 4.0]), np.array([1.0, 2.0])) == 1.0
    assert library_scorer._auc(np.array([1.0]), np.array([1.0])) == 0.5
    assert library_scorer._auc(np.array([1.0, 3.0]), np.array([2.0])) == 0.5
    assert library_scorer._auc(np.array([]), np.array([2.0])) == 0.5


def _library(db, name: str, interests: str, add_items) -> dict:
    add_items(
        [{"title": f"sourdough baking note {i}", "summary": "bread crumb and crust", "days_ago": 1} for i in range(6)]
    )
    make_persona(db, name, interests)
    text = "\n".join(
        f"@misc{{lens{i}, title = {{gravitational lensing study {i} of a galaxy cluster}}}}"
        for i in range(library_scorer.LIBRARY_MIN + 2)
    )
    assert tool(db, "import_library", name=name, text=text)["ok"]
    return require_user(db, name)


@pytest.mark.parametrize(
    "interests, coherent",
    [
        ("gravitational lensing of galaxy clusters", True),
        ("sourdough bread baking", False),
    ],
)
def test_the_interests_text_counts_as_far_as_it_describes_the_library(db, add_items, monkeypatch, interests, coherent):
    from hermes.ranking.rank import rank

    monkeypatch.setattr(library_scorer, "INTEREST_MIX", 1.0)
    user = _library(db, "ann", interests, add_items)
    comp = rank(db, user, CandidateQuery(since_days=None)).components["library"]
    assert (comp.detail["coherence"] > 0.5) is coherent
    assert comp.detail["coherence"] >= 0


def test_without_the_mix_the_component_says_nothing_of_coherence(db, add_items, monkeypatch):
    from hermes.ranking.rank import rank

    monkeypatch.setattr(library_scorer, "INTEREST_MIX", 0.0)
    user = _library(db, "ann", "gravitational lensing of galaxy clusters", add_items)
    comp = rank(db, user, CandidateQuery(since_days=None)).components["library"]
    assert "coherence" not in comp.detail


def test_a_large_library_is_summed_up_by_centroids_of_each_of_its_topics():
    rng = np.random.default_rng(2)
    big = _unit(np.eye(16)[0] + 0.2 * rng.standard_normal((400, 16)))
    small = _unit(np.eye(16)[1] + 0.2 * rng.standard_normal((20, 16)))
    centres = library_scorer._prototypes(np.vstack([big, small]), 16)
    assert centres.shape == (16, 16)
    assert (centres @ np.eye(16)[1] > 0.8).any()  # the small topic keeps a centroid
    assert library_scorer._prototypes(small, 64) is small or len(library_scorer._prototypes(small, 64)) == 20


def test_a_few_off_topic_library_papers_do_not_lift_their_neighbours_as_the_main_topic():
    # issue 38, fourth round: 30 papers on one topic and 6 off it (real libraries hold a few);
    # the kNN's KNN_K (10) nearest reach past the 6, so an item by them scores clearly below
    # one by the main topic (with the 5 nearest both scored alike)
    rng = np.random.default_rng(3)
    main = _unit(np.eye(16)[0] + 0.1 * rng.standard_normal((30, 16)))
    off = _unit(np.eye(16)[1] + 0.1 * rng.standard_normal((6, 16)))
    candidates = _unit(np.vstack([np.eye(16)[0], np.eye(16)[1]]))
    sims = np.vstack([main, off]) @ candidates.T
    assert len(off) < library_scorer.KNN_K
    knn = library_scorer._nearest_mean(sims, library_scorer.KNN_K)
    assert knn[0] - knn[1] > 0.2
    five = library_scorer._nearest_mean(sims, 5)
    assert abs(five[0] - five[1]) < 0.1
    assert library_scorer._nearest_mean(sims[:3], 10).tolist() == sims[:3].mean(axis=0).tolist()
